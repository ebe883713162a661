package roconn_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sqlbot/roconn"
	"sqlbot/roconn/draft"
)

func objectOf(t *testing.T, s *draft.Schema, name string) draft.Object {
	t.Helper()
	for _, o := range s.Objects {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("Inspect did not return %s (skipped: %v)", name, s.Skipped)
	return draft.Object{}
}

// TestInspectBounds: a large table is read in windows spread over its
// rowids, up to the row limit; samples and distinct counts stay within their
// bounds; a WITHOUT ROWID table and a view are read from the start; a view's
// base columns are listed; a view that cannot be read is skipped with the
// reason; and the file is unchanged.
func TestInspectBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.db")
	execScript(t, path, `
		CREATE TABLE big (id INTEGER PRIMARY KEY, v TEXT, n REAL);
		WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000)
		INSERT INTO big SELECT x, 'value ' || (x % 700), x / 3.0 FROM c;
		CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
		WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
		INSERT INTO kv SELECT 'key' || x, 'v' || (x % 5) FROM c;
		CREATE VIEW big_v AS SELECT id, v AS label FROM big WHERE n > 10;
		CREATE TABLE gone (x);
		CREATE VIEW broken AS SELECT x FROM gone;
		DROP TABLE gone;`)
	before := fileSum(t, path)
	s, err := roconn.Inspect(context.Background(), path, roconn.InspectOptions{Rows: 1000, Samples: 50})
	if err != nil {
		t.Fatal(err)
	}
	big := objectOf(t, s, "big")
	if big.Rows != 50000 || big.Scanned != 1000 || big.Partial {
		t.Errorf("big: %d rows, %d scanned, partial %v; want 50000, 1000, false", big.Rows, big.Scanned, big.Partial)
	}
	id := big.Columns[0]
	if !id.PrimaryKey || id.Distinct != 1000 || len(id.Samples) != 50 {
		t.Errorf("big.id: pk %v, %d distinct, %d samples; want true, 1000, 50", id.PrimaryKey, id.Distinct, len(id.Samples))
	}
	var maxID int64
	for _, v := range id.Samples {
		maxID = max(maxID, v.(int64))
	}
	if maxID < 40000 {
		t.Errorf("the samples of big.id reach only %d: not spread over the table", maxID)
	}
	if v := big.Columns[1]; v.Distinct > 700 || v.NonNull != 1000 {
		t.Errorf("big.v: %d distinct, %d non-null; want at most 700 and 1000", v.Distinct, v.NonNull)
	}
	kv := objectOf(t, s, "kv")
	if kv.Rows != 3000 || kv.Scanned != 1000 || kv.Columns[1].Distinct != 5 {
		t.Errorf("kv: %d rows, %d scanned, %d distinct values; want 3000, 1000, 5", kv.Rows, kv.Scanned, kv.Columns[1].Distinct)
	}
	view := objectOf(t, s, "big_v")
	for _, want := range []draft.ColumnRef{{Table: "big", Column: "v"}, {Table: "big", Column: "n"}} {
		if !slices.Contains(view.Reads, want) {
			t.Errorf("big_v reads %v, want %v among them", view.Reads, want)
		}
	}
	if !view.View || view.Scanned != 1000 {
		t.Errorf("big_v: view %v, %d scanned", view.View, view.Scanned)
	}
	if len(s.Skipped) != 1 || s.Skipped[0].Name != "broken" {
		t.Errorf("skipped %v, want the broken view", s.Skipped)
	}
	if fileSum(t, path) != before {
		t.Error("Inspect changed the file")
	}
}

// TestInspectTimeout: a view that never finishes counting, or never yields
// its rows, is stopped at the statement limit; the draft gets an unknown row
// count and what was read, marked partial.
func TestInspectTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slow.db")
	execScript(t, path, `
		CREATE TABLE t (x INTEGER);
		INSERT INTO t VALUES (1), (2);
		CREATE VIEW endless AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x % 1000000000 = 0 OR x < 3;`)
	const limit = 300 * time.Millisecond
	start := time.Now()
	s, err := roconn.Inspect(context.Background(), path, roconn.InspectOptions{Timeout: limit})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Inspect with a %v statement limit took %v", limit, took)
	e := objectOf(t, s, "endless")
	if e.Rows != -1 || !e.Partial || e.Scanned != 2 {
		t.Errorf("endless: rows %d, partial %v, scanned %d; want -1, true, 2", e.Rows, e.Partial, e.Scanned)
	}
	if tbl := objectOf(t, s, "t"); tbl.Rows != 2 || tbl.Partial {
		t.Errorf("t: rows %d, partial %v; want 2, false", tbl.Rows, tbl.Partial)
	}
}
