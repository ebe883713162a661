package roconn_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"sqlbot/roconn"
)

// distinctPad is a statement whose DISTINCT keeps n rows of about 110 bytes
// in a temporary index: past the 2 MiB page cache it goes to a temporary
// file.
func distinctPad(n int) string {
	return fmt.Sprintf("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT %d) "+
		"SELECT count(*), sum(i) FROM (SELECT DISTINCT i, printf('%%.*c', 100, 'x') AS pad FROM r)", n)
}

// orderPad sorts n rows of about 110 bytes (a window's ORDER BY: all of
// them): past the sorter's memory its runs go to a temporary file, and are
// merged back. The sum depends on the order.
func orderPad(n int) string {
	return fmt.Sprintf("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT %d) "+
		"SELECT sum(rn * i) FROM (SELECT i, row_number() OVER (ORDER BY pad DESC, i) AS rn FROM "+
		"(SELECT i, printf('%%.*c', 100, char(65 + i %% 26)) AS pad FROM r))", n)
}

// TestTempFilesBounded: a statement whose temporary files would hold more
// than Limits.TempBytes is refused by the limit layer, saying so, every
// time it is run; the same statement under a larger budget runs and returns
// plain SQLite's rows (so the temporary files are read back right, and the
// refusal was about them); and a refused statement leaves its connection's
// budget whole for the next one.
func TestTempFilesBounded(t *testing.T) {
	ctx := context.Background()
	n, budget, named := 120_000, int64(1<<20), "1 MiB"
	if roconn.RaceDetector {
		n, budget, named = 30_000, 256<<10, "256 KiB" // still past the 2 MiB page cache
	}
	small, path := openFixture(t, roconn.Limits{TempBytes: budget, Concurrent: 1, Timeout: time.Minute})
	big, err := roconn.Open(ctx, path, testPolicy(t), roconn.Limits{Concurrent: 1, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	plain, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, q := range []string{distinctPad(n), orderPad(n)} {
		for range 3 {
			_, err := small.Query(ctx, q)
			if layerOf(err) != roconn.LayerLimit || !strings.Contains(err.Error(), "temporary disk space") || !strings.Contains(err.Error(), named) {
				t.Errorf("%.70s… with %s of temporary files: %v; want refused by the limit layer for its temporary files", q, named, err)
			}
		}
		res, err := big.Query(ctx, q)
		if err != nil {
			t.Fatalf("%.70s… with the default 64 MiB: %v", q, err)
		}
		_, want, err := plainRows(plain, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(res.Rows); got != fmt.Sprint(want) {
			t.Errorf("%.70s…: got %s, want %s", q, got, fmt.Sprint(want))
		}
	}
	// Under the small budget, a statement that fits still runs after the
	// refusals: they gave their bytes back.
	res, err := small.Query(ctx, distinctPad(2000))
	if err != nil || fmt.Sprint(res.Rows) != "[[2000 2001000]]" {
		t.Errorf("a small DISTINCT after the refusals: %v, %v", res, err)
	}
}

// TestTempFilesPerConnection: the budget is each connection's own. Four
// statements run side by side, on four connections; each materializes a
// CTE of about 14 MB into a temporary file and holds it while it counts a
// long series, so all four hold theirs at once: under a 24 MiB budget each
// fits, where one budget shared by the four would refuse some. Each
// returns plain SQLite's rows.
func TestTempFilesPerConnection(t *testing.T) {
	ctx := context.Background()
	db, path := openFixture(t, roconn.Limits{TempBytes: 24 << 20, Concurrent: 4, Timeout: time.Minute})
	plain, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	n, loop := 120_000, 1_000_000
	if roconn.RaceDetector {
		n, loop = 30_000, 300_000 // 3.5 MB each: under a 6 MiB budget below
	}
	q := fmt.Sprintf("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT %d), "+
		"m AS MATERIALIZED (SELECT i, printf('%%.*c', 100, 'x') AS pad FROM r), "+
		"s(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM s LIMIT %d) "+
		"SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM s), (SELECT sum(length(pad)) FROM m)", n, loop)
	if roconn.RaceDetector {
		db, _ = openFixture(t, roconn.Limits{TempBytes: 6 << 20, Concurrent: 4, Timeout: time.Minute})
	}
	_, want, err := plainRows(plain, q)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			res, err := db.Query(ctx, q)
			if err != nil {
				t.Errorf("%v", err)
				return
			}
			if fmt.Sprint(res.Rows) != fmt.Sprint(want) {
				t.Errorf("got %v, want %v", res.Rows, want)
			}
		})
	}
	wg.Wait()
}

var sortTail = flag.Bool("sort.tail", false, "run TestAbandonedSortEnds (about 35 s, and a few hundred MB of temporary files)")

// TestAbandonedSortEnds measures what a big sort stopped at its limit still
// burns: a cross join of two 600-row series ordered by 200 terms, with room
// for its temporary files, stopped at 5 s. When sorts were kept in memory,
// SQLite sorted them in one call that looked for no interrupt, and this one
// kept a core busy for about 20 s after its caller had its refusal. It logs
// the process's CPU time in the 25 s after the refusal, and fails if it is
// over a second. Behind -sort.tail: see docs/BENCHMARKS.md.
func TestAbandonedSortEnds(t *testing.T) {
	if !*sortTail {
		t.Skip("needs -sort.tail")
	}
	db, _ := openFixture(t, roconn.Limits{Timeout: 5 * time.Second, TempBytes: 4 << 30})
	var terms []string
	for k := 1; k <= 200; k++ {
		terms = append(terms, fmt.Sprintf("(x.i * %d + y.i) %% 997", k))
	}
	q := "WITH RECURSIVE a(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM a LIMIT 600) SELECT x.i, y.i FROM a x, a y ORDER BY " + strings.Join(terms, ", ")
	start := time.Now()
	_, err := db.Query(context.Background(), q)
	back := time.Since(start)
	if layerOf(err) != roconn.LayerTimeout {
		t.Fatalf("%v; want stopped at its time limit", err)
	}
	before := cpuTime()
	time.Sleep(25 * time.Second)
	burnt := cpuTime() - before
	t.Logf("refused after %v; CPU in the 25 s after: %v", back.Round(time.Millisecond), burnt)
	if burnt > time.Second {
		t.Errorf("the stopped statement burnt %v of CPU after its refusal", burnt)
	}
}
