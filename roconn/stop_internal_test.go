package roconn

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// runaway is a statement that never ends on its own: it counts an endless
// series.
const runaway = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"

// TestStoppedStaysStopped: a statement whose time limit passes before its
// program starts (while it is compiled, while its program is checked,
// while the shadow compile runs, or between the check and the first step)
// or after all that, just before its first step) is stopped all the same. SQLite forgets an interrupt that arrives while
// none of the connection's statements is running, so one interrupt at the
// limit is not enough: control comes back within the limit plus 100 ms,
// and the statement's work ends within a short while, instead of running
// on with nothing left to stop it.
func TestStoppedStaysStopped(t *testing.T) {
	const limit = 100 * time.Millisecond
	// Each phase is held up past the limit, but for less than the grace
	// after it, so the caller is still waiting when the phase ends.
	const hold = limit + grace/2
	sleep := func() { time.Sleep(hold) }
	for _, phase := range []string{"compiled", "shadow", "checked", "run"} {
		t.Run(phase, func(t *testing.T) {
			path, rw := fixtureRW(t)
			rw.Close()
			db, err := Open(context.Background(), path, nil, Limits{Timeout: limit})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if phase == "shadow" {
				db.check.beforeShadow = sleep
			} else {
				db.at = func(p string) {
					if p == phase {
						sleep()
					}
				}
			}
			timely(t, func() []string {
				start := time.Now()
				_, err := db.Query(context.Background(), runaway)
				back := time.Since(start)
				var r *Refusal
				if !errors.As(err, &r) || r.Layer != LayerTimeout {
					t.Fatalf("a runaway held up while %s: %v, want a timeout refusal", phase, err)
				}
				after := idleWithin(t, db, 2*time.Second)
				t.Logf("control back after %v, work ended %v later", back.Round(time.Millisecond), after.Round(time.Millisecond))
				if late(back, limit+overrun) {
					return []string{fmt.Sprintf("control came back after %v, more than %v + %v", back, limit, overrun)}
				}
				return nil
			})
			db.at, db.check.beforeShadow = nil, nil
			if res, err := db.Query(context.Background(), "SELECT count(*) FROM orders"); err != nil || len(res.Rows) != 1 {
				t.Errorf("the next statement: %v, %v", res, err)
			}
		})
	}
}

// TestCallerGoneNeverStarts: a statement whose caller's context has ended
// by the time its program would start is not started: the work ends with
// the caller's error, and the pool is idle at once.
func TestCallerGoneNeverStarts(t *testing.T) {
	path, rw := fixtureRW(t)
	rw.Close()
	db, err := Open(context.Background(), path, nil, Limits{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	db.at = func(phase string) {
		if phase == "checked" {
			cancel()
			time.Sleep(grace / 2)
		}
	}
	_, err = db.Query(ctx, runaway)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Query after its caller went: %v, want context.Canceled", err)
	}
	idleWithin(t, db, 2*time.Second)
}
