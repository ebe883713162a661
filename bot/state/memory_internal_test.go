package state

import (
	"fmt"
	"testing"
	"time"
)

// Memory forgets what has expired: idle users, claims, threads, cache
// entries, locks and refusal notices are swept, so that a long run, or a
// long outage under Failover, does not grow it without bound.
func TestMemorySweeps(t *testing.T) {
	now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	m := NewMemory(func() time.Time { return now })
	ctx := t.Context()
	l := Limits{PerMinute: 1, PerDay: 40, GlobalPerDay: -1}
	for i := range 300 {
		u := fmt.Sprint("U", i)
		m.Allow(ctx, u, l)
		m.Allow(ctx, u, l) // refused: a notice remembered
		m.Claim(ctx, u, time.Hour)
		m.AddTurn(ctx, u, Turn{}, 8, time.Hour)
		m.SetCached(ctx, u, []byte("x"), time.Hour)
		m.TryLock(ctx, u, time.Hour)
	}
	now = now.Add(25 * time.Hour)
	for range sweepEvery {
		m.Claim(ctx, "new", time.Hour)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, n := range map[string]int{"users": len(m.users), "told": len(m.told), "claims": len(m.claims),
		"threads": len(m.threads), "cache": len(m.cache), "locks": len(m.locks), "global": len(m.global)} {
		want := 0
		if name == "claims" {
			want = 1 // "new"
		}
		if n != want {
			t.Errorf("%s: %d kept after a day, want %d", name, n, want)
		}
	}
}
