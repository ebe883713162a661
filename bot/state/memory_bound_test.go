package state

import (
	"fmt"
	"testing"
	"time"
)

// Memory stays bounded while every item is live: 10,000 questions within
// their TTLs leave at most maxClaims claims, maxThreads threads and
// maxCached cache entries, those that expire first forgotten first, and
// limit windows no longer than the largest limit (issue 12: a bot's RSS
// grew with every question).
func TestMemoryBounded(t *testing.T) {
	now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	m := NewMemory(func() time.Time { return now })
	ctx := t.Context()
	l := Limits{PerMinute: 100} // one a second: never reached
	const n = 10_000
	for i := range n {
		now = now.Add(time.Second)
		k := fmt.Sprint("m", i)
		if first, _ := m.Claim(ctx, k, time.Hour*24); !first {
			t.Fatalf("claim %d: not first", i)
		}
		m.AddTurn(ctx, k, Turn{Question: "q"}, 8, 24*time.Hour)
		m.SetCached(ctx, k, []byte("x"), 30*24*time.Hour)
		if v, _ := m.Allow(ctx, fmt.Sprint("U", i%10), l); v.Rule != RuleNone {
			t.Fatalf("question %d limited: %+v", i, v)
		}
	}
	m.mu.Lock()
	counts := map[string][2]int{"claims": {len(m.claims), maxClaims}, "threads": {len(m.threads), maxThreads},
		"cache": {len(m.cache), maxCached}, "global": {len(m.global), 0}, "users": {len(m.users), 10}}
	for u, times := range m.users {
		counts["window of "+u] = [2]int{len(times), l.PerMinute}
	}
	_, newest := m.claims[fmt.Sprint("m", n-1)]
	_, oldest := m.claims["m0"]
	m.mu.Unlock()
	for name, c := range counts {
		if c[0] > c[1] {
			t.Errorf("%s: %d entries after %d questions, want at most %d", name, c[0], n, c[1])
		}
	}
	if !newest || oldest {
		t.Errorf("newest claim kept %v, oldest kept %v; want the oldest forgotten first", newest, oldest)
	}
	// The newest claims still turn a redelivery away.
	if first, _ := m.Claim(ctx, fmt.Sprint("m", n-1), time.Hour); first {
		t.Error("a redelivery of the last message was taken again")
	}
	if turns, _ := m.Turns(ctx, fmt.Sprint("m", n-1)); len(turns) != 1 {
		t.Errorf("newest thread: %d turns, want 1", len(turns))
	}
}
