package state_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"sqlbot/bot/state"
)

// BenchmarkAllowAtScale measures one limit decision with everyone's 24-hour
// window full, at today's limits (6/min, 40/day per user, 600/day for all)
// and at 10x and 100x: the global window then holds 600, 6,000 or 60,000
// accepted questions, and each decision reads its oldest that counts.
func BenchmarkAllowAtScale(b *testing.B) {
	for _, scale := range []int{1, 10, 100} {
		l := state.Limits{PerMinute: 6 * scale, PerDay: 40 * scale, GlobalPerDay: 600 * scale}
		for _, name := range []string{"memory", "sqlite", "redis"} {
			b.Run(fmt.Sprintf("%s/x%d", name, scale), func(b *testing.B) {
				c := newClock()
				s := fullWindow(b, name, c, l.GlobalPerDay)
				i := 0
				for b.Loop() {
					i++
					v, err := s.Allow(b.Context(), fmt.Sprint("B", i), l)
					if err != nil || v.Rule != state.RuleGlobalDay {
						b.Fatalf("Allow: %+v, %v; want refused by the global limit", v, err)
					}
				}
			})
		}
	}
}

// fullWindow returns a store of the named backend on c whose global window
// holds n accepted questions, spread over the 23 hours before c's time.
// SQLite and Redis are filled directly (the table and key of the layout in
// docs/STATE.md), as n questions through Allow would take minutes.
func fullWindow(b *testing.B, name string, c *clock, n int) state.Store {
	start := c.now().Add(-23 * time.Hour)
	step := 23 * time.Hour / time.Duration(n)
	switch name {
	case "memory":
		m := state.NewMemory(c.now)
		c.advance(-23 * time.Hour)
		for i := range n {
			m.Allow(b.Context(), fmt.Sprint("P", i), state.Limits{GlobalPerDay: n})
			c.advance(step)
		}
		c.advance(start.Add(23 * time.Hour).Sub(c.now())) // back to the start time
		return m
	case "sqlite":
		path := filepath.Join(b.TempDir(), "state.db")
		s, err := state.OpenSQLite(b.Context(), path, state.SQLiteOptions{Now: c.now})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		db, err := sql.Open("sqlite", path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		_, err = db.Exec(`WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n+1 FROM i WHERE n+1 < ?)
			INSERT INTO hits (user, at) SELECT 'P' || n, ? + n * ? FROM i`,
			n, start.UnixMilli(), step.Milliseconds())
		if err != nil {
			b.Fatal(err)
		}
		return s
	case "redis":
		srv := startRedis(b)
		p := prefix(b)
		r := newRedis(b, srv, p, c)
		cl := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		defer cl.Close()
		for lo := 0; lo < n; lo += 1000 {
			var zs []redis.Z
			for i := lo; i < min(lo+1000, n); i++ {
				zs = append(zs, redis.Z{Score: float64(start.Add(time.Duration(i) * step).UnixMilli()), Member: fmt.Sprint("P", i)})
			}
			if err := cl.ZAdd(b.Context(), p+"limit:global", zs...).Err(); err != nil {
				b.Fatal(err)
			}
		}
		return r
	}
	b.Fatalf("no backend %q", name)
	return nil
}

// BenchmarkQuestion measures the Store calls of one answered question, in
// the bot's order: the claim of its message and the limit decision, in one
// Take (on the decider), its thread and the verified answers (before the
// agent), its thread turn and its answer record (after). At the default limits, with
// 1,000 people taking turns and the clock moving 150 s a question, every
// question is accepted and the global window holds about 576 of them; 20
// answers are verified. Besides ns/op it reports each call's share, in
// µs a question.
func BenchmarkQuestion(b *testing.B) {
	for _, name := range []string{"memory", "sqlite", "redis"} {
		b.Run(name, func(b *testing.B) {
			c := newClock()
			s := benchStore(b, name, c)
			ctx := b.Context()
			for i := range 20 {
				if err := s.Verify(ctx, verification("C1", fmt.Sprintf("%d.0", i), "U1", c.now())); err != nil {
					b.Fatal(err)
				}
			}
			calls := []string{"take", "turns", "verified", "turn", "record"}
			var spent [5]time.Duration
			timed := func(k int, err error) {
				if err != nil {
					b.Fatalf("%s: %v", calls[k], err)
				}
			}
			i := 0
			for b.Loop() {
				i++
				c.advance(150 * time.Second)
				user, conv, ts := fmt.Sprint("U", i%1000), fmt.Sprintf("C%d:%d.0", i%5, i), fmt.Sprintf("%d.5", i)
				t := [6]time.Time{time.Now()}
				first, v, err := s.Take(ctx, "message:C1:"+ts, time.Hour, user, defaultLimits)
				if err == nil && (!first || v.Rule != state.RuleNone) {
					err = fmt.Errorf("first=%v, %+v; want first, accepted", first, v)
				}
				timed(0, err)
				t[1] = time.Now()
				_, err = s.Turns(ctx, conv)
				timed(1, err)
				t[2] = time.Now()
				_, err = s.ListVerified(ctx, 500)
				timed(2, err)
				t[3] = time.Now()
				timed(3, s.AddTurn(ctx, conv, state.Turn{Question: "how many orders?", Answer: "There are 3,000 orders.",
					SQL: "SELECT count(*) FROM orders"}, 8, 24*time.Hour))
				t[4] = time.Now()
				timed(4, s.SetCached(ctx, "answer:C1:"+ts, []byte(`{"q":"how many orders?","sql":"SELECT count(*) FROM orders","sum":"sha256:0"}`), 30*24*time.Hour))
				t[5] = time.Now()
				for k := range spent {
					spent[k] += t[k+1].Sub(t[k])
				}
			}
			for k, d := range spent {
				b.ReportMetric(float64(d.Microseconds())/float64(i), calls[k]+"-µs/op")
			}
		})
	}
}

// benchStore returns an empty store of the named backend on c.
func benchStore(b *testing.B, name string, c *clock) state.Store {
	switch name {
	case "memory":
		return state.NewMemory(c.now)
	case "sqlite":
		s, err := state.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "state.db"), state.SQLiteOptions{Now: c.now})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	case "redis":
		return newRedis(b, startRedis(b), prefix(b), c)
	}
	b.Fatalf("no backend %q", name)
	return nil
}
