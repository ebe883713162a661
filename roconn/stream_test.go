package roconn_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"sqlbot/guard"
	"sqlbot/roconn"
)

// streamAll runs query through Stream and returns the rows it gave, and
// what it returned: a Result with those rows as its Rows when it ran, nil
// (with the rows still returned) when it did not.
func streamAll(ctx context.Context, db *roconn.DB, query string) (*roconn.Result, [][]any, error) {
	var rows [][]any
	var heads []*roconn.Result
	res, err := db.Stream(ctx, query, func(head *roconn.Result, row []any) error {
		rows = append(rows, row)
		heads = append(heads, head)
		return nil
	})
	for _, h := range heads {
		if h.Rows != nil || h.SQL == "" || h.Columns == nil {
			return nil, rows, fmt.Errorf("a row came with the head %+v", h)
		}
	}
	if res != nil {
		if res.Rows != nil {
			return nil, rows, fmt.Errorf("Stream kept %d rows in its Result", len(res.Rows))
		}
		res.Rows = rows
		if res.Rows == nil {
			res.Rows = [][]any{}
		}
	}
	return res, rows, err
}

// outcomeOf is what a statement came to, for comparing Query with Stream:
// its refusal or error, and its columns and rows.
func outcomeOf(res *roconn.Result, err error) string {
	var b strings.Builder
	var ref *roconn.Refusal
	switch {
	case errors.As(err, &ref):
		fmt.Fprintf(&b, "refused by %s: %s", ref.Layer, ref.Reason)
	case err != nil:
		b.WriteString(err.Error())
	}
	if res != nil {
		fmt.Fprint(&b, " ", res.SQL, res.Columns, res.Rows, res.Truncated)
	}
	return b.String()
}

// TestStreamSameAsQuery: on every corpus, honest and hostile, Stream comes
// to what Query comes to: the same rows, columns and cut, or the same
// refusal with no row given. Nothing private is in any row it gives.
func TestStreamSameAsQuery(t *testing.T) {
	ctx := context.Background()
	type corpus struct {
		name   string
		whole  bool // also as the guard passes it on
		db     *roconn.DB
		recs   []roconn.Record
		secret []string
	}
	var all []corpus
	path, p := shop(t)
	all = append(all, corpus{"benign", true, openShop(t, path, p, 5*time.Second), roconn.LoadCorpus(t, "benign.sql", t.TempDir()), privateValues(t, path)})
	for _, policy := range shopPolicies {
		path, p := shopUnder(t, policy)
		all = append(all, corpus{"hostile under " + policy, false, openShop(t, path, p, 300*time.Millisecond),
			roconn.LoadCorpus(t, "hostile.sql", t.TempDir()), privateValues(t, path)})
	}
	doors, _ := openDoors(t)
	all = append(all, corpus{"doors hostile", false, doors, roconn.LoadCorpus(t, "doors_hostile.sql", t.TempDir()), doorsPrivate})
	ran := 0
	for _, c := range all {
		g := guard.New(c.db.Limits().Rows)
		for _, r := range c.recs {
			// As the bot runs it (the guard's row cap added), and as it came.
			forms := []string{r.SQL}
			if c.whole {
				forms = append(forms, guarded(g, r.SQL))
			}
			for _, q := range forms {
				qres, qerr := c.db.Query(ctx, q)
				sres, given, serr := streamAll(ctx, c.db, q)
				noLeak(t, c.name+" "+r.Name, fmt.Sprint(given, serr), c.secret)
				if timedOut(qerr) || timedOut(serr) {
					continue // a loaded machine can stall either
				}
				if got, want := outcomeOf(sres, serr), outcomeOf(qres, qerr); got != want {
					t.Errorf("%s %s:\nStream %.300s\n Query %.300s", c.name, r.Name, got, want)
				}
				if (qerr != nil && !errors.Is(qerr, roconn.ErrRowLimit)) && len(given) > 0 {
					t.Errorf("%s %s: Stream gave %d rows of a statement Query refused (%v)", c.name, r.Name, len(given), qerr)
				}
				if qerr == nil {
					ran++
				}
			}
		}
	}
	if ran < 150 {
		t.Errorf("only %d statements ran; the corpora should give more", ran)
	}
}

// guarded is query as the guard passes it on, or "" if the guard refuses it.
func guarded(g *guard.Guard, query string) string {
	stmt, err := g.Check(query)
	if err != nil {
		return ""
	}
	return stmt
}

// TestStreamChinook: the analysts' queries on Chinook stream the rows that
// Query returns.
func TestStreamChinook(t *testing.T) {
	path, p := chinook(t)
	db := openShop(t, path, p, 5*time.Second)
	ctx := context.Background()
	for _, r := range roconn.LoadCorpus(t, "chinook.sql", t.TempDir()) {
		qres, qerr := db.Query(ctx, r.SQL)
		sres, _, serr := streamAll(ctx, db, r.SQL)
		if got, want := outcomeOf(sres, serr), outcomeOf(qres, qerr); got != want {
			t.Errorf("%s:\nStream %.300s\n Query %.300s", r.Name, got, want)
		}
	}
}

// TestStreamLimits: a streamed statement has every limit Query has. The row
// cap gives the first rows and ErrRowLimit; the result's byte cap and the
// time limit stop it after the rows given so far; the time limit counts the
// time the caller takes over the rows, since the statement holds its
// connection meanwhile; a caller that fails stops the statement, whose
// connection then serves the next one.
func TestStreamLimits(t *testing.T) {
	ctx := context.Background()
	db, _ := openFixture(t, roconn.Limits{Rows: 11, ResultBytes: 64 << 10, Timeout: time.Second})
	res, given, err := streamAll(ctx, db, "SELECT id FROM orders ORDER BY id") // 12 rows
	if !errors.Is(err, roconn.ErrRowLimit) || res == nil || !res.Truncated || len(given) != 11 || given[10][0] != int64(11) {
		t.Errorf("row cap: %d rows, %+v, %v; want the first 11, truncated, ErrRowLimit", len(given), res, err)
	}

	// Ten rows of 10,000 bytes pass 64 KiB at the seventh.
	res, given, err = streamAll(ctx, db, "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) SELECT printf('%.*c', 10000, 'x') FROM n")
	if layerOf(err) != roconn.LayerLimit || res != nil || len(given) != 6 {
		t.Errorf("byte cap: %d rows given, %v; want 6, then a %q refusal", len(given), err, roconn.LayerLimit)
	}

	// One row, then a search that never ends.
	slow := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c WHERE x = 1 OR x = 0"
	start := time.Now()
	res, given, err = streamAll(ctx, db, slow)
	if layerOf(err) != roconn.LayerTimeout || res != nil || len(given) != 1 {
		t.Errorf("time limit: %d rows given, %v; want 1, then a %q refusal", len(given), err, roconn.LayerTimeout)
	}
	if bound := 1100 * time.Millisecond; time.Since(start) > bound && !roconn.RaceDetector {
		t.Errorf("the time limit stopped it after %v, want at most %v", time.Since(start), bound)
	}

	// A caller that takes 50 ms a row holds the statement past its limit
	// once the rows read ahead fill their buffer; the same rows all arrive
	// when the statement ends within the buffer.
	wide, _ := openFixture(t, roconn.Limits{Rows: 200, Timeout: time.Second})
	for _, tt := range []struct {
		rows    int
		stopped bool
	}{{100, true}, {10, false}} {
		n := 0
		_, err = wide.Stream(ctx, fmt.Sprintf("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < %d) SELECT x FROM n", tt.rows),
			func(*roconn.Result, []any) error {
				n++
				time.Sleep(50 * time.Millisecond)
				return nil
			})
		if tt.stopped && (layerOf(err) != roconn.LayerTimeout || n >= tt.rows) {
			t.Errorf("slow caller, %d rows: %d taken, %v; want a %q refusal before the last", tt.rows, n, err, roconn.LayerTimeout)
		}
		if !tt.stopped && (err != nil || n != tt.rows) {
			t.Errorf("slow caller, %d rows: %d taken, %v; want all", tt.rows, n, err)
		}
	}

	// A caller that fails at the first row stops a statement that would run
	// to its limit.
	boom := errors.New("the terminal went away")
	start = time.Now()
	_, err = db.Stream(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c", func(*roconn.Result, []any) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("failing caller: %v, want its error", err)
	}
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond && !roconn.RaceDetector {
		t.Errorf("failing caller: the statement ran on for %v", elapsed)
	}
	for range 2 * runtime.GOMAXPROCS(0) {
		if _, err := db.Query(ctx, "SELECT count(*) FROM orders"); err != nil {
			t.Fatalf("after a stopped stream: %v", err)
		}
	}

	// The caller's context ends the stream with its error.
	cctx, cancel := context.WithCancel(ctx)
	_, err = wide.Stream(cctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c", func(*roconn.Result, []any) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || layerOf(err) != "" {
		t.Errorf("cancelled caller: %v, want context.Canceled and no refusal", err)
	}
}

// TestStreamCallerPanics: a caller whose each panics (or ends its goroutine)
// leaves no statement behind holding the connection: with one connection,
// the next statement runs. (Found by a red team: the statement waited for
// its caller forever, and after Concurrent such panics nothing ran.)
func TestStreamCallerPanics(t *testing.T) {
	db, _ := openFixture(t, roconn.Limits{Concurrent: 1, Rows: 200, Timeout: 10 * time.Second})
	many := "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 100) SELECT x FROM r" // more rows than are read ahead
	for _, end := range []func(){func() { panic("a bug in the caller") }, runtime.Goexit} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { recover() }()
			db.Stream(context.Background(), many, func(*roconn.Result, []any) error { end(); return nil })
		}()
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := db.Query(ctx, "SELECT 1")
		cancel()
		if err != nil {
			t.Fatalf("after a caller that did not return: %v", err)
		}
	}
}

// TestStreamCallerStuck: a caller stuck in each does not keep the
// statement past its limit: the statement is stopped at it and lets its
// connection go, so that, with one connection, another statement runs
// while the caller is still stuck; when the caller comes back, Stream
// returns the time limit's refusal.
func TestStreamCallerStuck(t *testing.T) {
	db, _ := openFixture(t, roconn.Limits{Concurrent: 1, Rows: 200, Timeout: 300 * time.Millisecond})
	many := "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 100) SELECT x FROM r"
	other := make(chan error, 1)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		_, err = db.Stream(context.Background(), many, func(*roconn.Result, []any) error {
			if !first {
				return nil
			}
			first = false
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := db.Query(ctx, "SELECT 1") // needs the one connection
			other <- err
			return nil
		})
	}()
	if err := <-other; err != nil {
		t.Errorf("another statement while the caller was stuck: %v", err)
	}
	<-done
	if layerOf(err) != roconn.LayerTimeout {
		t.Errorf("Stream: %v, want the time limit's refusal", err)
	}
}

// BenchmarkStream: what giving rows as they are read costs against
// keeping them, on one row and on the row cap's 200.
//
//	go test -run '^$' -bench BenchmarkStream -benchtime 5000x ./roconn
func BenchmarkStream(b *testing.B) {
	path, p := shop(b)
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for name, q := range map[string]string{
		"rows=1":   "SELECT 1",
		"rows=200": "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200) SELECT x, 'row ' || x FROM n",
	} {
		b.Run(name+"/mode=query", func(b *testing.B) {
			for b.Loop() {
				if _, err := db.Query(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/mode=stream", func(b *testing.B) {
			for b.Loop() {
				if _, err := db.Stream(ctx, q, func(*roconn.Result, []any) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
