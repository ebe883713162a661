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
