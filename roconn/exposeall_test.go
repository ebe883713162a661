package roconn_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"sqlbot/roconn"
)

// TestExposeAll: `expose: all` is the explicit way to expose everything. It
// parses with rules and limits beside it, and Open then offers every user
// table and view, and still no schema table.
func TestExposeAll(t *testing.T) {
	p, err := roconn.ParsePolicy([]byte("expose: all\nrules:\n  - Sales means shipped orders.\nlimits: {rows: 7, timeout: 3s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.All || len(p.Expose) != 0 {
		t.Fatalf("parsed %+v, want All and no listed objects", p)
	}
	if len(p.Rules) != 1 || p.Limits != (roconn.PolicyLimits{Rows: 7, Timeout: 3 * time.Second}) {
		t.Errorf("rules %q, limits %+v: want both kept", p.Rules, p.Limits)
	}

	path := newFixture(t)
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	for _, o := range db.Objects() {
		names = append(names, o.Name)
	}
	if want := []string{"customer_regions", "customers", "orders", "secrets"}; !slices.Equal(names, want) {
		t.Errorf("exposes %v, want every user table and view %v", names, want)
	}
	if got := db.Rules(); len(got) != 1 || got[0] != "Sales means shipped orders." {
		t.Errorf("rules %q, want the file's", got)
	}
	if db.Limits().Rows != 7 {
		t.Errorf("row limit %d, want the file's 7", db.Limits().Rows)
	}
	res, err := db.Query(context.Background(), "SELECT token FROM secrets")
	if err != nil || len(res.Rows) == 0 {
		t.Errorf("a user table is not readable under expose: all: %v", err)
	}
	for _, q := range []string{"SELECT name FROM sqlite_master", "SELECT * FROM sqlite_schema", "SELECT * FROM pragma_table_info('orders')"} {
		_, err := db.Query(context.Background(), q)
		var r *roconn.Refusal
		if !errors.As(err, &r) {
			t.Errorf("%s under expose: all: %v, want a refusal", q, err)
		}
	}
}

// TestExposeAllErrors: anything else in place of a list is an error that
// says what expose takes.
func TestExposeAllErrors(t *testing.T) {
	for _, tt := range []struct {
		doc      string
		sayWhere bool // the error must say what expose takes
	}{
		{"expose: everything\n", true},
		{"expose: ALL\n", true},
		{"expose: 3\n", true},
		{"expose: all\nextra: 1\n", false},
		{"expose: all\nlimits: {rows: -1}\n", false},
	} {
		p, err := roconn.ParsePolicy([]byte(tt.doc))
		if err == nil {
			t.Errorf("ParsePolicy(%q) = %+v, want an error", tt.doc, p)
			continue
		}
		if tt.sayWhere && !strings.Contains(err.Error(), "all") {
			t.Errorf("ParsePolicy(%q): %v; want it to say that expose takes a list or all", tt.doc, err)
		}
	}
	_, err := roconn.ParsePolicy([]byte("expose:\n"))
	if err == nil || !strings.Contains(err.Error(), "expose: all") {
		t.Errorf("an empty expose: %v; want it to mention expose: all", err)
	}
}
