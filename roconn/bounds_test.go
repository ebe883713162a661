package roconn

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// The bound the issue names for control to come back to the caller. Under
// the race detector, everything runs several times slower: the bounds are
// not checked then (see late).
const overrun = 100 * time.Millisecond

// late reports whether took is over bound, in a run where timing counts.
func late(took, bound time.Duration) bool { return !raceDetector && took > bound }

// timerLate starts plain timers beside the work under test, as a stopped
// statement's caller waits (the time limit d, then the grace), and returns
// a function that waits for them and says how late they fired in all: what
// the machine and the Go scheduler alone add to those wake-ups at that
// moment, which a bound on sqlbot's own overrun does not count.
func timerLate(d time.Duration) func() time.Duration {
	start := time.Now()
	late := make(chan time.Duration, 1)
	go func() {
		time.Sleep(d)
		time.Sleep(grace)
		late <- time.Since(start) - d - grace
	}()
	return func() time.Duration { return <-late }
}

// timely runs try up to three times, until one try reports no late
// measurement, and fails the test with the last try's when none did. A
// loaded machine (CI runs several test binaries on two cores) can delay
// one run's goroutines past a bound; a mechanism that does not keep the
// bound misses it on every try. try makes its other checks itself, on every
// try, with t.Errorf.
func timely(t *testing.T, try func() (lateness []string)) {
	t.Helper()
	var lateness []string
	for n := 1; n <= 3; n++ {
		if lateness = try(); len(lateness) == 0 {
			return
		}
		t.Logf("try %d of 3 was late: %s", n, strings.Join(lateness, "; "))
	}
	for _, l := range lateness {
		t.Error(l)
	}
}

// idleWithin waits until no statement runs on db's pool and every slot is
// free, and returns how long that took, or fails the test after max.
func idleWithin(t *testing.T, db *DB, max time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		db.pool.mu.Lock()
		n := len(db.pool.running)
		db.pool.mu.Unlock()
		if n == 0 && len(db.pool.slots) == 0 && len(db.pool.strays) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > max {
			t.Fatalf("%d statements still running %v after their callers returned", n, max)
		}
		time.Sleep(time.Millisecond)
	}
}

// valueMax is the longest text SQL can build under the default value limit
// (printf needs one byte more, for its terminating NUL).
const valueMax = DefaultValueBytes - 1

// oneMiB builds, in SQL, a text of c as long as the value limit allows.
func oneMiB(c string) string { return fmt.Sprintf("printf('%%.*c', %d, '%s')", valueMax, c) }

// endless returns a statement that calls expr (built with oneMiB) again for
// each of an endless series of rows. Subtracting i % 2 from the length
// keeps SQLite from computing expr once for all rows.
func endless(expr string) string {
	return "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r WHERE " +
		strings.Replace(expr, fmt.Sprintf("%d, '", valueMax), fmt.Sprintf("%d - (i %% 2), '", valueMax), 1) + " IS NOT NULL"
}

// quadratics are the calls that cost SQLite's built-ins the product of their
// arguments' lengths, each with its worst input at the value limit: a 1 MiB
// text, and a pattern, needle or character set as long as the limits allow
// that almost matches everywhere.
var quadratics = []struct{ name, expr string }{
	// The pattern (999 bytes, under the limit of 1000) is the worst for
	// roconn's LIKE: one segment of 997 positions with wildcards in it.
	{"LIKE", oneMiB("a") + " LIKE '%' || replace(printf('%.*c', 498, 'a'), 'a', 'a_') || 'b%'"},
	{"GLOB", oneMiB("a") + " GLOB '*' || replace(printf('%.*c', 498, 'a'), 'a', 'a?') || 'b*'"},
	{"instr", "instr(" + oneMiB("a") + ", printf('%.*c', 524288, 'a') || 'b')"},
	{"replace", "length(replace(" + oneMiB("a") + ", printf('%.*c', 524288, 'a') || 'b', 'x'))"},
	// A set of 87,001 characters is the most the length limit allows (the
	// built-in refuses a set whose table would exceed it).
	{"trim", "length(trim(" + oneMiB("b") + ", printf('%.*c', 87000, 'a') || 'b'))"},
	{"ltrim", "length(ltrim(" + oneMiB("b") + ", printf('%.*c', 87000, 'a') || 'b'))"},
	{"rtrim", "length(rtrim(" + oneMiB("b") + ", printf('%.*c', 87000, 'a') || 'b'))"},
}

// TestQuadraticFunctionsBounded: one call of each function on its worst
// input at the value limit returns in milliseconds (SQLite's built-in runs
// for minutes); a statement that makes such calls without end is stopped at
// its time limit, control comes back within the limit plus 100 ms, and the
// statement's work ends soon after, within the bound printed.
func TestQuadraticFunctionsBounded(t *testing.T) {
	const limit = time.Second
	path, rw := fixtureRW(t)
	rw.Close()
	db, err := Open(context.Background(), path, nil, Limits{Timeout: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range quadratics {
		t.Run(q.name, func(t *testing.T) {
			start := time.Now()
			res, err := db.Query(context.Background(), "SELECT "+q.expr)
			one := time.Since(start)
			if err != nil || len(res.Rows) != 1 {
				t.Fatalf("one call: %v", err)
			}
			if late(one, limit) {
				t.Errorf("one call took %v, more than the time limit", one)
			}

			timely(t, func() []string {
				machine := timerLate(limit)
				start := time.Now()
				_, err := db.Query(context.Background(), endless(q.expr))
				back := time.Since(start)
				slack := machine()
				var r *Refusal
				if !errors.As(err, &r) || r.Layer != LayerTimeout {
					t.Fatalf("endless calls: %v, want a timeout refusal", err)
				}
				after := idleWithin(t, db, 10*time.Second)
				t.Logf("one call on 1 MiB: %v; endless calls: control back after %v, work ended %v later", one.Round(time.Millisecond), back.Round(time.Millisecond), after.Round(time.Millisecond))
				if late(back, limit+overrun+slack) {
					return []string{fmt.Sprintf("control came back after %v, more than %v + %v (+ %v a plain timer was late)", back, limit, overrun, slack)}
				}
				return nil
			})
		})
	}
}

// stubbornDB opens the fixture like Open, with the restricted connections'
// soundex() replaced by a function that sleeps for its argument in
// milliseconds and never looks for an interrupt, as a built-in's long call
// does. It counts the calls running at once.
func stubbornDB(t *testing.T, lim Limits) (*DB, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	path, rw := fixtureRW(t)
	rw.Close()
	lim, err := effectiveLimits(lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	acc, check := layersFor(t, path, "policy.yaml")
	c := newConnector(dsnFor(path), lim.ValueBytes, func(modules map[string]bool) (sqlite.AuthorizerFn, *authState) {
		st := &authState{access: acc, modules: modules}
		return st.authorize, st
	})
	var running, most atomic.Int32
	err = c.driver.RegisterFunction("soundex", &sqlite.FunctionImpl{NArgs: 1, Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Duration(args[0].(int64)) * time.Millisecond)
		return "slept", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.restrict(lim.TempBytes); err != nil {
		t.Fatal(err)
	}
	db := &DB{lim: lim, byName: map[string]int{}, health: openPrivileged(dsnFor(path)), check: check}
	db.pool = newPool(lim.Concurrent, lim.Concurrent, c.open)
	t.Cleanup(func() { db.Close() })
	return db, &running, &most
}

// TestAbandonedStatementsBounded: a statement whose SQLite call ignores the
// interrupt is abandoned at its limit plus the grace: its caller gets the
// timeout refusal in time, its slot goes to the next statement, and its
// connection is closed, not reused, when the call ends. At most Concurrent
// abandoned statements run beside Concurrent live ones; past that, new
// statements wait for a slot, without their time limit running.
func TestAbandonedStatementsBounded(t *testing.T) {
	const limit, sleep = 200 * time.Millisecond, 1500 * time.Millisecond
	timely(t, func() (lateness []string) {
		db, running, most := stubbornDB(t, Limits{Timeout: limit, Concurrent: 2})
		var wg sync.WaitGroup
		backs := make([]time.Duration, 6)
		errs := make([]error, 6)
		for i := range 6 {
			wg.Go(func() {
				start := time.Now()
				_, errs[i] = db.Query(context.Background(), fmt.Sprintf("SELECT soundex(%d)", sleep.Milliseconds()))
				backs[i] = time.Since(start)
			})
			time.Sleep(10 * time.Millisecond) // in order
		}
		wg.Wait()
		for i, err := range errs {
			var r *Refusal
			if !errors.As(err, &r) || r.Layer != LayerTimeout {
				t.Errorf("statement %d: %v, want a timeout refusal", i, err)
			}
		}
		// Two run at once; when they are abandoned, two more take their slots;
		// when those are abandoned too, the strays are full, so the last two
		// wait for the first two to end.
		t.Logf("control back after %v; at most %d calls ran at once", backs, most.Load())
		if m := most.Load(); m > 4 {
			t.Errorf("%d stubborn calls ran at once, want at most 2 live + 2 abandoned", m)
		}
		// Statements 0 and 1 run at once; 2 and 3 take their slots when 0 and 1
		// are abandoned (the strays are then full); 4 and 5 wait until the
		// stubborn calls of 2 and 3 end and free their slots. None takes more
		// than its wait plus its limit plus 100 ms.
		for i, b := range backs[:4] {
			if max := time.Duration(i/2+1)*(limit+grace) + overrun; late(b, max) {
				lateness = append(lateness, fmt.Sprintf("statement %d: control back after %v, want at most %v", i, b, max))
			}
		}
		for i, b := range backs[4:] {
			if b < sleep {
				t.Errorf("statement %d came back after %v: it should have waited for a slot until a stubborn call ended (%v), then run to its limit", i+4, b, sleep)
			}
			if late(b, sleep+2*(limit+grace)+overrun) {
				lateness = append(lateness, fmt.Sprintf("statement %d came back after %v, want at most %v", i+4, b, sleep+2*(limit+grace)+overrun))
			}
		}
		after := idleWithin(t, db, 3*sleep)
		if running.Load() != 0 {
			t.Errorf("%d calls still running", running.Load())
		}
		t.Logf("the last abandoned call ended %v after the last caller returned", after)
		db.pool.mu.Lock()
		idle := len(db.pool.idle)
		db.pool.mu.Unlock()
		if idle != 0 {
			t.Errorf("%d connections went back to the pool; an abandoned connection is never reused", idle)
		}
		if len(db.pool.strays) != 0 || len(db.pool.slots) != 0 {
			t.Errorf("tokens left: %d strays, %d slots", len(db.pool.strays), len(db.pool.slots))
		}
		// The pool still serves.
		if res, err := db.Query(context.Background(), "SELECT soundex(1)"); err != nil || res.Rows[0][0] != "slept" {
			t.Errorf("after: %v, %v", res, err)
		}
		return lateness
	})
}

// TestHonestBesideRunaways: with the pool full of four runaway statements,
// an honest statement waits for a connection (its time limit not running)
// and is answered, while the runaways are stopped at their limit; /healthz's
// check (Ping) does not wait at all.
func TestHonestBesideRunaways(t *testing.T) {
	const limit = time.Second
	timely(t, func() (lateness []string) {
		path, rw := fixtureRW(t)
		rw.Close()
		db, err := Open(context.Background(), path, nil, Limits{Timeout: limit, Concurrent: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var wg sync.WaitGroup
		errs := make([]error, 4)
		backs := make([]time.Duration, 4)
		machine := timerLate(limit)
		for i := range 4 {
			wg.Go(func() {
				start := time.Now()
				_, errs[i] = db.Query(context.Background(), endless(quadratics[i].expr))
				backs[i] = time.Since(start)
			})
		}
		for deadline := time.Now().Add(limit / 2); len(db.pool.slots) < 4; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the runaways hold %d connections, want 4", len(db.pool.slots))
			}
		}
		start := time.Now()
		if err := db.Ping(context.Background()); err != nil {
			t.Errorf("Ping with the pool full: %v", err)
		}
		ping := time.Since(start)
		// Behind the runaways, Ping would wait until one was stopped, at
		// their limit.
		if late(ping, limit/2) {
			t.Errorf("Ping took %v with the pool full: it waited for a connection", ping)
		}
		start = time.Now()
		res, err := db.Query(context.Background(), "SELECT count(*) FROM orders")
		honest := time.Since(start)
		if err != nil || fmt.Sprint(res.Rows) != "[[12]]" {
			t.Errorf("honest statement beside four runaways: %v, %v", res, err)
		}
		wg.Wait()
		slack := machine()
		for i, err := range errs {
			var r *Refusal
			if !errors.As(err, &r) || r.Layer != LayerTimeout {
				t.Errorf("runaway %d: %v, want a timeout refusal", i, err)
			}
			if late(backs[i], limit+overrun+slack) {
				lateness = append(lateness, fmt.Sprintf("runaway %d: control back after %v, want at most %v + %v (+ %v a plain timer was late)", i, backs[i], limit, overrun, slack))
			}
		}
		t.Logf("Ping %v; honest statement answered after %v (waiting for a connection); runaways stopped after %v; a plain timer beside them was %v late", ping, honest, backs, slack)
		idleWithin(t, db, 10*time.Second)
		return lateness
	})
}
