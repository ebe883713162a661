package roconn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sqlbot/roconn"
)

func TestParsePolicy(t *testing.T) {
	p := testPolicy(t) // testdata/policy.yaml
	if len(p.Expose) != 2 || p.Expose[0].Name != "customer_regions" || p.Expose[1].Name != "orders" {
		t.Fatalf("Expose = %+v, want customer_regions then orders (sorted)", p.Expose)
	}
	if got := p.Expose[1].Columns["status"]; got != "shipped, returned, pending or canceled" {
		t.Errorf("orders.status meaning = %q", got)
	}
	if p.Expose[0].About != "One row per customer, without contact details." {
		t.Errorf("customer_regions about = %q", p.Expose[0].About)
	}
	if len(p.Rules) != 2 || !strings.HasPrefix(p.Rules[1], "A month is") {
		t.Errorf("Rules = %q, want both, in file order", p.Rules)
	}
	if p.Limits != (roconn.PolicyLimits{Rows: 50, Timeout: 2 * time.Second}) {
		t.Errorf("Limits = %+v", p.Limits)
	}

	p, err := roconn.ParsePolicy([]byte("expose:\n  orders:\n  regions: {}\n"))
	if err != nil || len(p.Expose) != 2 || p.Limits != (roconn.PolicyLimits{}) {
		t.Errorf("minimal policy: %+v, %v", p, err)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for _, doc := range []string{
		"",
		"expose: {}",
		"rules: [a]",
		"expose:\n  orders: {}\nextra: 1\n", // unknown top-level key
		"expose:\n  orders: {about: x, colums: {a: b}}\n",      // unknown key in an object
		"expose:\n  orders: {}\nlimits: {rows: 5, time: 5s}\n", // unknown key in limits
		"expose:\n  orders: {}\nlimits: {timeout: fast}\n",     // bad timeout
		"expose:\n  orders: {}\nlimits: {timeout: 5}\n",        // a number is not a duration
		"expose:\n  orders: {}\nlimits: {timeout: -1s}\n",      // not positive
		"expose:\n  orders: {}\nlimits: {rows: -1}\n",          // negative rows
		"expose:\n  orders: {}\n  ORDERS: {}\n",                // the same object twice
		"expose:\n  orders: {columns: {id: a, ID: b}}\n",       // the same column twice
		"expose:\n  orders: {}\nrules: ['']\n",                 // an empty rule
		"expose:\n  orders: {}\n---\nexpose:\n  secrets: {}\n", // a second document
		"expose: [orders]\n",                                   // a list, not a map
		"expose:\n  orders: {}\n  orders: {}\n",                // a duplicate key
	} {
		if p, err := roconn.ParsePolicy([]byte(doc)); err == nil {
			t.Errorf("ParsePolicy(%q) = %+v, want an error", doc, p)
		}
	}
}

// TestOpenPolicyErrors: Open names what the policy gets wrong.
func TestOpenPolicyErrors(t *testing.T) {
	path := newFixture(t)
	for _, tt := range []struct {
		policy string
		names  string // what the error must mention
	}{
		{"expose:\n  ordrs: {}\n", `"ordrs"`},
		{"expose:\n  orders: {columns: {stauts: x}}\n", `"stauts"`},
		{"expose:\n  customer_regions: {columns: {email: x}}\n", `"email"`},
		{"expose:\n  sqlite_schema: {}\n", `"sqlite_schema"`},
	} {
		p, err := roconn.ParsePolicy([]byte(tt.policy))
		if err != nil {
			t.Fatal(err)
		}
		db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
		if err == nil {
			db.Close()
			t.Errorf("Open with %q succeeded", tt.policy)
			continue
		}
		if !strings.Contains(err.Error(), tt.names) {
			t.Errorf("Open with %q: %v; want an error naming %s", tt.policy, err, tt.names)
		}
	}
}

// TestOpenUnreadableView: an exposed view that cannot be read through the
// restricted connection is an error at Open that names it.
func TestOpenUnreadableView(t *testing.T) {
	path := newFixture(t)
	execScript(t, path, `CREATE VIEW tokens AS SELECT id, randomblob(4) AS r FROM orders;`)
	p, err := roconn.ParsePolicy([]byte("expose:\n  tokens: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded")
	}
	if !strings.Contains(err.Error(), `"tokens"`) {
		t.Errorf("Open: %v; want an error naming the view", err)
	}
	// Without a policy the view is simply not offered.
	db, err = roconn.Open(context.Background(), path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok := db.Object("tokens"); ok {
		t.Error("nil policy offers a view it cannot read")
	}
}

// TestViewCountsPrivateTable: a view may read a table only to count it; that
// makes the count readable, and still no column.
func TestViewCountsPrivateTable(t *testing.T) {
	path := newFixture(t)
	execScript(t, path, `CREATE VIEW secret_count AS SELECT count(*) AS n FROM secrets;`)
	p, err := roconn.ParsePolicy([]byte("expose:\n  secret_count: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if o, _ := db.Object("secret_count"); o.RowCount != 1 || len(o.Sample) != 1 || o.Sample[0][0] != int64(2) {
		t.Errorf("secret_count = %+v", o)
	}
	if got := layerOf(queryErr(db, "SELECT token FROM secrets")); got != roconn.LayerAuthorizer {
		t.Errorf("token: layer %q, want %q", got, roconn.LayerAuthorizer)
	}
}

// TestBrokenView: a view over a missing table does not stop Open unless the
// policy exposes it, and then the error names it.
func TestBrokenView(t *testing.T) {
	path := newFixture(t)
	execScript(t, path, `CREATE TABLE gone(a); CREATE VIEW broken AS SELECT a FROM gone; DROP TABLE gone;`)
	db, err := roconn.Open(context.Background(), path, testPolicy(t), roconn.Limits{})
	if err != nil {
		t.Fatalf("Open with a broken view not exposed: %v", err)
	}
	db.Close()
	db, err = roconn.Open(context.Background(), path, nil, roconn.Limits{})
	if err != nil {
		t.Fatalf("Open(nil policy) with a broken view: %v", err)
	}
	if _, ok := db.Object("broken"); ok {
		t.Error("nil policy offers a broken view")
	}
	db.Close()
	p, err := roconn.ParsePolicy([]byte("expose:\n  broken: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if db, err := roconn.Open(context.Background(), path, p, roconn.Limits{}); err == nil || !strings.Contains(err.Error(), `"broken"`) {
		if db != nil {
			db.Close()
		}
		t.Errorf("Open exposing a broken view: %v, want an error naming it", err)
	}
}

// TestNameCase: names compare the way SQLite compares them, ignoring ASCII
// case only, so a private table whose name differs from an exposed one only
// in the case of a non-ASCII letter stays private.
func TestNameCase(t *testing.T) {
	path := newFixture(t)
	execScript(t, path, `CREATE TABLE "é" (v TEXT); INSERT INTO "é" VALUES ('open');
		CREATE TABLE "É" (v TEXT); INSERT INTO "É" VALUES ('SECRET');`)
	p, err := roconn.ParsePolicy([]byte("expose:\n  \"é\": {}\n  ORDERS: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.Query(context.Background(), `SELECT v FROM "é"`); err != nil || res.Rows[0][0] != "open" {
		t.Errorf(`SELECT v FROM "é" = %v, %v`, res, err)
	}
	if err := queryErr(db, `SELECT count(*) FROM Orders`); err != nil {
		t.Errorf("ASCII case is ignored: %v", err)
	}
	if got := layerOf(queryErr(db, `SELECT v FROM "É"`)); got != roconn.LayerAuthorizer {
		t.Errorf(`SELECT v FROM "É": layer %q, want %q`, got, roconn.LayerAuthorizer)
	}
}
