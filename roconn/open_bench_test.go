package roconn_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"sqlbot/roconn"
)

// buildWide writes a database of n tables to dir: table t0000 … of six
// columns each, every table after the first with a foreign key into the one
// before it, and rows rows in each. It returns the file's path.
func buildWide(tb testing.TB, dir string, n, rows int) string {
	tb.Helper()
	path := filepath.Join(dir, fmt.Sprintf("wide%d.db", n))
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer rw.Close()
	var b strings.Builder
	b.WriteString("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;\n")
	if rows > 0 {
		fmt.Fprintf(&b, "CREATE TEMP TABLE seq AS WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM s WHERE value < %d) SELECT value FROM s;\n", rows)
	}
	for i := range n {
		ref := ""
		if i > 0 {
			ref = fmt.Sprintf(" REFERENCES t%04d(id)", i-1)
		}
		fmt.Fprintf(&b, "CREATE TABLE t%04d (id INTEGER PRIMARY KEY, parent INTEGER%s, name TEXT, amount REAL, day TEXT, note TEXT);\n", i, ref)
		if rows > 0 {
			fmt.Fprintf(&b, "INSERT INTO t%04d SELECT value, value/2, 'name '||value, value*1.5, date('2025-01-01', '+'||(value%%365)||' days'), printf('%%.40c', 'x') FROM seq;\n", i)
		}
	}
	b.WriteString("COMMIT;\n")
	if _, err := rw.Exec(b.String()); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkOpen1000 opens a database of 1,000 tables of 1,000 rows each
// (built once in a temporary directory) with every table exposed: "open" is
// Open alone (Close, which waits for what Open left running, is not timed);
// "first-query" is Open and then one statement, which waits for the check's
// shadow schema that Open builds beside it.
func BenchmarkOpen1000(b *testing.B) {
	path := buildWide(b, b.TempDir(), 1000, 1000)
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			db, err := roconn.Open(b.Context(), path, nil, roconn.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			db.Close()
			b.StartTimer()
		}
	})
	b.Run("first-query", func(b *testing.B) {
		for b.Loop() {
			db, err := roconn.Open(b.Context(), path, nil, roconn.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Query(b.Context(), "SELECT name FROM t0500 WHERE id = 7"); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			db.Close()
			b.StartTimer()
		}
	})
}
