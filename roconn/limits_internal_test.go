package roconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestRecompileFailsClosed: when the file's owner changes the schema between
// the check of a program and its run, SQLite would re-prepare the statement
// into a program nobody checked; Query refuses instead, at the readonly
// layer, and returns nothing the new program read. Here the owner redefines
// the exposed view to read the customers' e-mail addresses.
func TestRecompileFailsClosed(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	db, err := Open(ctx, path, testPolicyOf(t), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.at = func(phase string) {
		if phase != "checked" {
			return
		}
		if _, err := rw.Exec("DROP VIEW customer_regions; CREATE VIEW customer_regions AS SELECT id, email AS region, signup FROM customers"); err != nil {
			t.Error(err)
		}
	}
	res, err := db.Query(ctx, "SELECT region FROM customer_regions")
	var r *Refusal
	if !errors.As(err, &r) || r.Layer != LayerReadOnly || res != nil {
		t.Fatalf("Query after a schema change: %v, %v; want a %q refusal and no rows", res, err, LayerReadOnly)
	}
	if out := fmt.Sprint(res, err); strings.Contains(out, "SECRET") {
		t.Fatalf("the re-prepared program's rows leaked: %s", out)
	}
	db.at = nil
	// Compiled afresh against the new schema, the view is refused by the
	// authorizer: it reads a column the policy never exposed.
	if _, err := db.Query(ctx, "SELECT region FROM customer_regions"); !errors.As(err, &r) || r.Layer != LayerAuthorizer {
		t.Errorf("Query of the redefined view: %v, want an authorizer refusal", err)
	}
	// The checks were built from the schema read at Open: after a change,
	// every statement is refused until sqlbot reads the schema again.
	if _, err := db.Query(ctx, "SELECT count(*) FROM orders"); !errors.As(err, &r) || r.Layer != LayerReadOnly {
		t.Errorf("an unrelated query afterwards: %v, want a %q refusal", err, LayerReadOnly)
	}
}

// TestRecompileEachCheckAlone: of the two records that tell roconn that
// SQLite compiled a statement again after its program was checked (the
// sealed authorizer, and the statement's re-prepare count), each alone
// refuses the re-prepared program, through Query and through Stream, with
// nothing it read; with neither, the redefined view's e-mail addresses come
// out, so the test reaches what they guard. The authorizer's own checks,
// which would refuse the new program's read of the addresses, are off.
func TestRecompileEachCheckAlone(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name               string
		noSeal, noReprepCk bool
	}{
		{"both", false, false},
		{"the seal alone", false, true},
		{"the re-prepare count alone", true, false},
		{"neither", true, true},
	} {
		for _, stream := range []bool{false, true} {
			path, rw := fixtureRW(t)
			db, err := open(ctx, path, testPolicyOf(t), Limits{}, testHooks{noSeal: tt.noSeal, noRepreparedCheck: tt.noReprepCk, noAuthorizer: true})
			if err != nil {
				t.Fatal(err)
			}
			db.at = func(phase string) {
				if phase == "checked" {
					if _, err := rw.Exec("DROP VIEW customer_regions; CREATE VIEW customer_regions AS SELECT id, email AS region, signup FROM customers"); err != nil {
						t.Error(err)
					}
				}
			}
			var out string
			if stream {
				var given [][]any
				res, err := db.Stream(ctx, "SELECT region FROM customer_regions", func(_ *Result, row []any) error {
					given = append(given, row)
					return nil
				})
				out = fmt.Sprint(given, res, err)
			} else {
				res, err := db.Query(ctx, "SELECT region FROM customer_regions")
				var r *Refusal
				if res != nil && !errors.As(err, &r) {
					out = fmt.Sprint(res.Rows)
				}
				out += fmt.Sprint(err)
			}
			db.Close()
			leaked := strings.Contains(out, "SECRET")
			if leaked != (tt.name == "neither") {
				t.Errorf("%s, streamed %v: the re-prepared program's rows leaked %v, want %v: %.200s", tt.name, stream, leaked, tt.name == "neither", out)
			}
		}
	}
}

func testPolicyOf(t *testing.T) *Policy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResultBytes: a result larger than ResultBytes is refused by the limit
// layer as its rows arrive, before it is all read; one under it is returned.
// 200 rows of ten 1 MiB values would be 2 GB.
func TestResultBytes(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	rw.Close()
	db, err := Open(ctx, path, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	big := strings.TrimSuffix(strings.Repeat(oneMiB("x")+", ", 10), ", ")
	q := "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT 200) SELECT " + big + " FROM r"
	start := time.Now()
	res, err := db.Query(ctx, q)
	took := time.Since(start)
	var r *Refusal
	if !errors.As(err, &r) || r.Layer != LayerLimit || res != nil {
		t.Fatalf("200 × 10 × 1 MiB: %v, %v; want a %q refusal", res, err, LayerLimit)
	}
	t.Logf("refused after %v: %s", took, r.Reason)

	small, err := Open(ctx, path, nil, Limits{ResultBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	// 12 rows of (id, day): 12×8 + 12×10 bytes, and 5 bytes of names.
	if _, err := small.Query(ctx, "SELECT id, day FROM orders"); err != nil {
		t.Errorf("a 221-byte result under a 1000-byte cap: %v", err)
	}
	if _, err := small.Query(ctx, "SELECT printf('%.*c', 600, 'x') AS x FROM orders LIMIT 2"); !errors.As(err, &r) || r.Layer != LayerLimit {
		t.Errorf("a 1201-byte result over a 1000-byte cap: %v, want a %q refusal", err, LayerLimit)
	}
}

// withHeapLimit sets SQLite's process-wide heap limit to n bytes for the
// rest of the test, and puts the old one back after it.
func withHeapLimit(t *testing.T, n int64) {
	t.Helper()
	tls := libc.NewTLS()
	defer tls.Close()
	old := sqlite3.Xsqlite3_hard_heap_limit64(tls, n)
	t.Cleanup(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		sqlite3.Xsqlite3_hard_heap_limit64(tls, old)
	})
}

// TestMemoryLimit: SQLite counts its memory (roconn turns the accounting
// on), and a statement that needs more than the heap limit is refused by the
// limit layer with a reason, while an honest statement that runs beside it
// is answered: the hog is stopped when the heap is nearly full, before the
// honest statement's allocations can fail.
func TestMemoryLimit(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	rw.Close()
	db, err := Open(ctx, path, nil, Limits{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tls := libc.NewTLS()
	used, _ := heapInUse(tls)
	tls.Close()
	if used <= 0 {
		t.Fatal("SQLite does not count its memory")
	}
	withHeapLimit(t, used+48<<20)
	db.lim.Memory = used + 48<<20
	// Sorting 100,000 rows of 1 KB needs 100 MB (with no LIMIT: SQLite
	// keeps only the first rows of a sort with one).
	hog := "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT 100000) SELECT i, printf('%.*c', 1000, 'x') FROM r ORDER BY -i"
	honest := "SELECT status, count(*), sum(total) FROM orders GROUP BY status ORDER BY status"
	var wg sync.WaitGroup
	var hogErr error
	stop := make(chan struct{})
	wg.Go(func() {
		defer close(stop)
		_, hogErr = db.Query(ctx, hog)
	})
	answered := 0
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		if _, err := db.Query(ctx, honest); err != nil {
			t.Fatalf("honest statement beside the hog: %v", err)
		}
		answered++
	}
	wg.Wait()
	var r *Refusal
	if !errors.As(hogErr, &r) || r.Layer != LayerLimit {
		t.Fatalf("hog: %v, want a %q refusal", hogErr, LayerLimit)
	}
	t.Logf("hog refused: %s; %d honest statements answered beside it", r.Reason, answered)
	if _, err := db.Query(ctx, honest); err != nil {
		t.Errorf("after the hog: %v", err)
	}
}

// TestClassifyLimits: SQLite's out-of-memory, disk-full and too-big results
// are refusals by the limit layer with a reason; other errors are not.
func TestClassifyLimits(t *testing.T) {
	db := &DB{lim: Limits{Memory: 256 << 20, ValueBytes: 1 << 20}}
	for code, want := range map[int32]Layer{
		sqlite3.SQLITE_NOMEM: LayerLimit, sqlite3.SQLITE_FULL: LayerLimit, sqlite3.SQLITE_TOOBIG: LayerLimit,
		sqlite3.SQLITE_READONLY: LayerReadOnly, sqlite3.SQLITE_AUTH: LayerAuthorizer, sqlite3.SQLITE_ERROR: "",
	} {
		err := db.classify(&authState{}, &SQLError{Code: int(code), Message: "x", text: "x"})
		var r *Refusal
		got := Layer("")
		if errors.As(err, &r) {
			got = r.Layer
			if r.Reason == "" {
				t.Errorf("code %d: a refusal with no reason", code)
			}
		}
		if got != want {
			t.Errorf("classify(code %d) = %v, want layer %q", code, err, want)
		}
	}
}
