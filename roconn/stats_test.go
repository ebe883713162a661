package roconn_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"sqlbot/roconn"
)

// TestOpenReadsNoData: Open of a database of 1,000 tables (and one large
// table, and a view that takes longer to count than any limit allows) runs
// no statement that reads a table or view: row counts and samples are read
// later, per object, by Describe, bounded, and then cached for Known.
func TestOpenReadsNoData(t *testing.T) {
	path := buildWide(t, t.TempDir(), 1000, 50)
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(`CREATE TABLE big AS WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x < 200000)
			SELECT x AS id, printf('%.100c', 'b') AS pad FROM s;
		CREATE VIEW slow AS WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x < 1000000000) SELECT x FROM s`); err != nil {
		t.Fatal(err)
	}
	rw.Close()

	db, during, err := roconn.OpenRecording(t.Context(), path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range during {
		if q != "VACUUM" && !strings.Contains(q, "roconn_probe") {
			t.Errorf("Open ran %q; want only its read-only probes", q)
		}
	}
	objs := db.Objects()
	if len(objs) != 1002 {
		t.Fatalf("%d objects, want 1002", len(objs))
	}
	for _, o := range objs {
		if o.Counted || o.RowCount != -1 || o.Sample != nil {
			t.Fatalf("%s: counted %v, %d rows, sample %v at Open; want nothing read", o.Name, o.Counted, o.RowCount, o.Sample)
		}
	}

	if o, _ := db.Known("t0005"); o.Counted {
		t.Errorf("Known(t0005) before Describe: counted")
	}
	// A caller gone before the read begins leaves the object unread, not
	// unknown for good: the next Describe reads it.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if o, ok := db.Describe(gone, "t0007"); !ok || o.Counted {
		t.Errorf("Describe(t0007) by a caller already gone: counted %v, %v", o.Counted, ok)
	}
	if o, _ := db.Known("t0007"); o.Counted {
		t.Errorf("Known(t0007) after a caller already gone: counted %d rows; want nothing read for it", o.RowCount)
	}
	if o, _ := db.Describe(t.Context(), "t0007"); !o.Counted || o.RowCount != 50 {
		t.Errorf("Describe(t0007) after a caller gave up: counted %v, %d rows; want 50", o.Counted, o.RowCount)
	}
	var wg sync.WaitGroup
	got := make([]roconn.Object, 4)
	for i := range got { // concurrent callers share one read
		wg.Go(func() { got[i], _ = db.Describe(t.Context(), "big") })
	}
	wg.Wait()
	for _, o := range got {
		if !o.Counted || o.RowCount != 200000 || len(o.Sample) != 3 {
			t.Errorf("Describe(big): counted %v, %d rows, %d sample rows; want 200000 and 3", o.Counted, o.RowCount, len(o.Sample))
		}
	}
	if o, ok := db.Describe(t.Context(), "T0005"); !ok || !o.Counted || o.RowCount != 50 || len(o.Sample) != 3 || len(o.Columns) != 6 {
		t.Errorf("Describe(T0005) = %+v, %v; want 50 rows, 3 sample rows, 6 columns", o, ok)
	}
	if o, _ := db.Known("t0005"); !o.Counted || o.RowCount != 50 {
		t.Errorf("Known(t0005) after Describe: counted %v, %d rows", o.Counted, o.RowCount)
	}
	// A count no limit allows is stopped, and stays unknown.
	if o, _ := db.Describe(t.Context(), "slow"); !o.Counted || o.RowCount != -1 {
		t.Errorf("Describe(slow): counted %v, %d rows; want tried, and unknown (-1)", o.Counted, o.RowCount)
	}
	if _, ok := db.Describe(t.Context(), "sqlite_schema"); ok {
		t.Error("Describe(sqlite_schema) found an object")
	}
}
