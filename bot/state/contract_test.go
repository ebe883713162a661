package state_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sqlbot/bot/state"
)

// clock is a settable time source shared by the stores of one test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A backend opens two Stores on one fresh backend, both on clock c. Stores
// that keep expiry on a clock of their own (Redis) need real time to pass
// too: see elapse.
type backend struct {
	name string
	open func(t *testing.T, c *clock) (a, b state.Store)
}

// elapse lets d pass on c and in real time, so that every backend's expiry
// sees it.
func elapse(c *clock, d time.Duration) {
	c.advance(d)
	time.Sleep(d)
}

// Short and long TTLs for expiry checks: a short one has passed after
// elapse(c, shortTTL+margin); a long one cannot pass during a test.
const (
	shortTTL = 150 * time.Millisecond
	margin   = 100 * time.Millisecond
	longTTL  = time.Hour
)

// runContract runs the contract on be, once with one Store value used as
// both replicas and once with two Store values on one backend: each shared
// item must behave the same.
func runContract(t *testing.T, be backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c *clock, a, b state.Store)
	}{
		{"Claim", testClaim},
		{"ClaimConcurrent", testClaimConcurrent},
		{"LimitPerMinute", testLimitPerMinute},
		{"LimitTellsOncePerWindow", testLimitTellsOnce},
		{"LimitPerDayAndGlobal", testLimitPerDayAndGlobal},
		{"LimitOff", testLimitOff},
		{"LimitConcurrent", testLimitConcurrent},
		{"Take", testTake},
		{"TakeConcurrent", testTakeConcurrent},
		{"Threads", testThreads},
		{"Cache", testCache},
		{"Verified", testVerified},
		{"VerifiedList", testVerifiedList},
		{"VerifiedListFresh", testVerifiedListFresh},
		{"Reports", testReports},
		{"Lock", testLock},
		{"LockConcurrent", testLockConcurrent},
	}
	for _, replicas := range []string{"one", "two"} {
		t.Run(replicas, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					c := newClock()
					a, b := be.open(t, c)
					if replicas == "one" {
						b = a
					}
					tt.fn(t, c, a, b)
				})
			}
		})
	}
}

func testClaim(t *testing.T, c *clock, a, b state.Store) {
	ctx := t.Context()
	claim := func(s state.Store, key string, ttl time.Duration) bool {
		t.Helper()
		first, err := s.Claim(ctx, key, ttl)
		if err != nil {
			t.Fatalf("Claim(%q): %v", key, err)
		}
		return first
	}
	if !claim(a, "C1:1.0", longTTL) {
		t.Fatal("first claim of C1:1.0: not first")
	}
	if claim(b, "C1:1.0", longTTL) || claim(a, "C1:1.0", longTTL) {
		t.Fatal("second claim of C1:1.0: first again")
	}
	if !claim(b, "C1:2.0", longTTL) {
		t.Error("another key: not first")
	}
	if !claim(a, "", longTTL) || !claim(b, "", longTTL) {
		t.Error("the empty key: not always first")
	}
	if !claim(a, "short", shortTTL) {
		t.Fatal("short: not first")
	}
	elapse(c, shortTTL+margin)
	if !claim(b, "short", longTTL) {
		t.Error("short: not first again after its TTL")
	}
	if claim(a, "C1:1.0", longTTL) {
		t.Error("C1:1.0 forgotten before its TTL")
	}
	if _, err := a.Claim(ctx, "x", 0); err == nil {
		t.Error("Claim with a zero TTL: no error")
	}
}

// stores returns a and b alternately, so that concurrent callers are spread
// over both replicas.
func stores(a, b state.Store) func(i int) state.Store {
	return func(i int) state.Store {
		if i%2 == 0 {
			return a
		}
		return b
	}
}

func testClaimConcurrent(t *testing.T, _ *clock, a, b state.Store) {
	pick := stores(a, b)
	for _, key := range []string{"Ev1", "Ev2", "Ev3"} {
		var firsts atomic.Int32
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				first, err := pick(i).Claim(t.Context(), key, longTTL)
				if err != nil {
					t.Errorf("Claim: %v", err)
				}
				if first {
					firsts.Add(1)
				}
			})
		}
		wg.Wait()
		if n := firsts.Load(); n != 1 {
			t.Errorf("%s: %d of 50 concurrent claims were first, want exactly 1", key, n)
		}
	}
}

// take calls s.Take and fails the test on error.
func take(t *testing.T, s state.Store, key, user string, l state.Limits) (bool, state.Verdict) {
	t.Helper()
	first, v, err := s.Take(t.Context(), key, longTTL, user, l)
	if err != nil {
		t.Fatalf("Take(%q, %q): %v", key, user, err)
	}
	return first, v
}

// Take is Claim and then, for the first, Allow: a question delivered again
// is neither counted nor told again, a refused one keeps its claim, and
// Take and Claim share one set of claims.
func testTake(t *testing.T, c *clock, a, b state.Store) {
	l := state.Limits{PerMinute: 2, PerDay: 40, GlobalPerDay: 600}
	if first, v := take(t, a, "m1", "U1", l); !first || v != (state.Verdict{}) {
		t.Fatalf("first take of m1: first=%v, %+v; want first, accepted", first, v)
	}
	for _, s := range []state.Store{a, b} {
		if first, v := take(t, s, "m1", "U1", l); first || v != (state.Verdict{}) {
			t.Fatalf("m1 again: first=%v, %+v; want taken, the zero verdict", first, v)
		}
	}
	if first, v := take(t, b, "m2", "U1", l); !first || v.Rule != state.RuleNone {
		t.Fatalf("m2: first=%v, %+v; want first, accepted (U1's second)", first, v)
	}
	// Redeliveries counted no question: U1 is at its limit only now.
	first, v := take(t, a, "m3", "U1", l)
	if !first || v.Rule != state.RuleUserMinute || !v.Tell {
		t.Fatalf("m3: first=%v, %+v; want first, user_minute, to be told", first, v)
	}
	if first, v := take(t, b, "m3", "U1", l); first || v != (state.Verdict{}) {
		t.Errorf("m3 again: first=%v, %+v; want taken, not told again", first, v)
	}
	if first := claim(t, b, "m3"); first {
		t.Error("Claim of m3 after a refused Take: first; the claim was not kept")
	}
	if !claim(t, a, "m4") {
		t.Fatal("Claim of m4: not first")
	}
	if first, v := take(t, b, "m4", "U2", l); first || v != (state.Verdict{}) {
		t.Errorf("Take of m4 after its Claim: first=%v, %+v; want taken", first, v)
	}
	// The empty key is always first, and its question counted.
	for i, s := range []state.Store{a, b} {
		if first, v := take(t, s, "", "U3", l); !first || v.Rule != state.RuleNone {
			t.Errorf("the empty key, %d: first=%v, %+v; want first, accepted", i, first, v)
		}
	}
	if first, v := take(t, a, "", "U3", l); !first || v.Rule != state.RuleUserMinute {
		t.Errorf("the empty key, third: first=%v, %+v; want first, user_minute", first, v)
	}
	// Limits off: first, accepted.
	if first, v := take(t, b, "m5", "U4", state.Limits{}); !first || v.Rule != state.RuleNone {
		t.Errorf("limits off: first=%v, %+v; want first, accepted", first, v)
	}
	if _, _, err := a.Take(t.Context(), "x", 0, "U1", l); err == nil {
		t.Error("Take with a zero TTL: no error")
	}
	// A claim's expiry frees its key for another Take.
	if first, _, err := a.Take(t.Context(), "short", shortTTL, "U5", l); err != nil || !first {
		t.Fatalf("short: first=%v, %v; want first", first, err)
	}
	elapse(c, shortTTL+margin)
	if first, v := take(t, b, "short", "U5", l); !first || v.Rule != state.RuleNone {
		t.Errorf("short after its TTL: first=%v, %+v; want first, accepted", first, v)
	}
}

// Of 50 concurrent Takes of one message exactly one is first and only its
// question is counted; of 50 concurrent Takes of distinct messages from one
// user, all are first and exactly the per-minute limit is accepted.
func testTakeConcurrent(t *testing.T, _ *clock, a, b state.Store) {
	pick := stores(a, b)
	l := state.Limits{PerMinute: 6, PerDay: 40, GlobalPerDay: 600}
	// takeAll makes 50 concurrent Takes by user, of the keys key(i), and
	// counts those first and those accepted.
	takeAll := func(key func(i int) string, user string) (firsts, accepted int32) {
		var f, n atomic.Int32
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				first, v, err := pick(i).Take(t.Context(), key(i), longTTL, user, l)
				if err != nil {
					t.Errorf("Take: %v", err)
				}
				if first {
					f.Add(1)
				}
				if first && v.Rule == state.RuleNone {
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return f.Load(), n.Load()
	}
	if f, n := takeAll(func(int) string { return "Ev1" }, "U1"); f != 1 || n != 1 {
		t.Errorf("one message, 50 Takes: %d first, %d accepted; want 1, 1", f, n)
	}
	// U1 has one question counted: five more are accepted, then none.
	for i := range 5 {
		if v := allow(t, pick(i), "U1", l); v.Rule != state.RuleNone {
			t.Fatalf("U1's question %d after the Takes: %+v; want accepted", i+2, v)
		}
	}
	if v := allow(t, a, "U1", l); v.Rule != state.RuleUserMinute {
		t.Errorf("U1's 7th question: %+v; want user_minute", v)
	}
	if f, n := takeAll(func(i int) string { return fmt.Sprint("Ev-U2-", i) }, "U2"); f != 50 || n != 6 {
		t.Errorf("50 messages of one user: %d first, %d accepted; want 50, 6", f, n)
	}
}

// claim calls s.Claim for longTTL and fails the test on error.
func claim(t *testing.T, s state.Store, key string) bool {
	t.Helper()
	first, err := s.Claim(t.Context(), key, longTTL)
	if err != nil {
		t.Fatalf("Claim(%q): %v", key, err)
	}
	return first
}

// allow calls s.Allow and fails the test on error.
func allow(t *testing.T, s state.Store, user string, l state.Limits) state.Verdict {
	t.Helper()
	v, err := s.Allow(t.Context(), user, l)
	if err != nil {
		t.Fatalf("Allow(%q): %v", user, err)
	}
	return v
}

var defaultLimits = state.Limits{PerMinute: 6, PerDay: 40, GlobalPerDay: 600}

func testLimitPerMinute(t *testing.T, c *clock, a, b state.Store) {
	pick := stores(a, b)
	for i := range 6 {
		if v := allow(t, pick(i), "U1", defaultLimits); v.Rule != state.RuleNone {
			t.Fatalf("question %d: limited by %s, want accepted", i+1, v.Rule)
		}
		c.advance(3 * time.Second) // the 6th is at +15 s
	}
	// Now at +18 s: the first question (at +0) leaves the window at +60 s.
	v := allow(t, a, "U1", defaultLimits)
	if v.Rule != state.RuleUserMinute || v.Count != 6 || v.Wait != 42*time.Second || !v.Tell {
		t.Fatalf("7th question: %+v, want user_minute, 6, 42s, to be told", v)
	}
	if v := allow(t, b, "U2", defaultLimits); v.Rule != state.RuleNone {
		t.Errorf("another user limited by %s", v.Rule)
	}
	c.advance(41 * time.Second)
	if v := allow(t, b, "U1", defaultLimits); v.Rule != state.RuleUserMinute || v.Wait != time.Second || v.Tell {
		t.Errorf("at +59 s: %+v, want user_minute with 1s to wait, silent", v)
	}
	c.advance(time.Second)
	if v := allow(t, a, "U1", defaultLimits); v.Rule != state.RuleNone {
		t.Errorf("at +60 s: limited by %s, want accepted (the first question left the window)", v.Rule)
	}
}

// A user over a limit is told once per window: until the wait that the
// notice named has passed, further refusals are silent, whichever replica
// decides.
func testLimitTellsOnce(t *testing.T, c *clock, a, b state.Store) {
	l := state.Limits{PerMinute: 1, PerDay: 40, GlobalPerDay: 600}
	if v := allow(t, a, "U1", l); v.Rule != state.RuleNone {
		t.Fatalf("first question limited by %s", v.Rule)
	}
	v := allow(t, b, "U1", l)
	if v.Rule != state.RuleUserMinute || !v.Tell {
		t.Fatalf("2nd question: %+v, want user_minute, to be told", v)
	}
	pick := stores(a, b)
	for i := range 5 {
		c.advance(10 * time.Second)
		if v := allow(t, pick(i), "U1", l); v.Rule != state.RuleUserMinute || v.Tell {
			t.Fatalf("at +%d0 s: %+v, want user_minute, silent (told already)", i+1, v)
		}
	}
	if v := allow(t, a, "U2", l); v.Rule != state.RuleNone {
		t.Errorf("another user limited by %s", v.Rule)
	}
	c.advance(10 * time.Second) // +60 s: the window has passed
	if v := allow(t, b, "U1", l); v.Rule != state.RuleNone {
		t.Fatalf("after the window: limited by %s", v.Rule)
	}
	if v := allow(t, a, "U1", l); v.Rule != state.RuleUserMinute || !v.Tell {
		t.Errorf("over the limit in the next window: %+v, want to be told again", v)
	}
}

func testLimitPerDayAndGlobal(t *testing.T, c *clock, a, b state.Store) {
	l := state.Limits{PerMinute: 6, PerDay: 3, GlobalPerDay: 5}
	pick := stores(a, b)
	for i := range 3 {
		if v := allow(t, pick(i), "U1", l); v.Rule != state.RuleNone {
			t.Fatalf("limited by %s", v.Rule)
		}
		c.advance(time.Hour)
	}
	v := allow(t, a, "U1", l)
	if v.Rule != state.RuleUserDay || v.Count != 3 || v.Wait != 21*time.Hour {
		t.Fatalf("4th question of the day: %+v, want user_day, 3, 21h", v)
	}
	allow(t, b, "U2", l)
	allow(t, a, "U3", l) // 5 accepted in all
	v = allow(t, b, "U4", l)
	if v.Rule != state.RuleGlobalDay || v.Count != 5 || v.Wait != 21*time.Hour || !v.Tell {
		t.Fatalf("6th question from everyone: %+v, want global_day, 5, 21h, to be told", v)
	}
	// Refused questions are not counted: U1 comes back after the window.
	c.advance(21 * time.Hour)
	if v := allow(t, a, "U1", l); v.Rule != state.RuleNone {
		t.Errorf("after 24 h: limited by %s", v.Rule)
	}
}

func testLimitOff(t *testing.T, _ *clock, a, b state.Store) {
	pick := stores(a, b)
	for i := range 200 {
		if v := allow(t, pick(i), "U1", state.Limits{PerMinute: -1, PerDay: 0, GlobalPerDay: -1}); v.Rule != state.RuleNone {
			t.Fatalf("limited by %s with every limit off", v.Rule)
		}
	}
}

// 50 goroutines over both replicas ask for one user at one instant: exactly
// the per-minute limit is accepted, and the user is told exactly once.
func testLimitConcurrent(t *testing.T, c *clock, a, b state.Store) {
	pick := stores(a, b)
	var accepted, told atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			v, err := pick(i).Allow(t.Context(), "U1", defaultLimits)
			if err != nil {
				t.Errorf("Allow: %v", err)
				return
			}
			switch {
			case v.Rule == state.RuleNone:
				accepted.Add(1)
			case v.Rule != state.RuleUserMinute:
				t.Errorf("limited by %s, want user_minute", v.Rule)
			case v.Tell:
				told.Add(1)
			}
		})
	}
	wg.Wait()
	if n := accepted.Load(); n != 6 {
		t.Errorf("%d of 50 concurrent questions accepted, want exactly 6 (the per-minute limit)", n)
	}
	if n := told.Load(); n != 1 {
		t.Errorf("told %d times, want once", n)
	}
	c.advance(time.Minute)
	if v := allow(t, a, "U1", defaultLimits); v.Rule != state.RuleNone {
		t.Errorf("a minute later: limited by %s", v.Rule)
	}
}

func testThreads(t *testing.T, c *clock, a, b state.Store) {
	ctx := t.Context()
	turns := func(s state.Store, conv string) []state.Turn {
		t.Helper()
		ts, err := s.Turns(ctx, conv)
		if err != nil {
			t.Fatalf("Turns(%q): %v", conv, err)
		}
		return ts
	}
	add := func(s state.Store, conv string, tr state.Turn, keep int, ttl time.Duration) {
		t.Helper()
		if err := s.AddTurn(ctx, conv, tr, keep, ttl); err != nil {
			t.Fatalf("AddTurn(%q): %v", conv, err)
		}
	}
	if got := turns(a, "C1:1.0"); len(got) != 0 {
		t.Fatalf("unknown conversation: %d turns", len(got))
	}
	pick := stores(a, b)
	for i := range 5 {
		add(pick(i), "C1:1.0", state.Turn{Question: fmt.Sprint("q", i), Answer: fmt.Sprint("a", i), SQL: fmt.Sprint("SELECT ", i)}, 3, longTTL)
	}
	want := []state.Turn{{"q2", "a2", "SELECT 2"}, {"q3", "a3", "SELECT 3"}, {"q4", "a4", "SELECT 4"}}
	for _, s := range []state.Store{a, b} {
		if got := turns(s, "C1:1.0"); !slices.Equal(got, want) {
			t.Errorf("turns = %v, want the newest 3: %v", got, want)
		}
	}
	got := turns(a, "C1:1.0")
	got[0].Question = "changed"
	if turns(b, "C1:1.0")[0].Question == "changed" {
		t.Error("Turns returned stored turns, not a copy")
	}
	// Activity keeps a conversation: each AddTurn starts its TTL again.
	const ttl, step = 1200 * time.Millisecond, 700 * time.Millisecond // a margin of 500 ms for the calls between, on a loaded machine
	add(a, "dm:D1", state.Turn{Question: "q", Answer: "a"}, 8, ttl)
	add(b, "dm:D2", state.Turn{Question: "q", Answer: "a"}, 8, ttl)
	elapse(c, step)
	add(a, "dm:D2", state.Turn{Question: "q2", Answer: "a2"}, 8, ttl)
	elapse(c, step)
	if got := turns(b, "dm:D1"); len(got) != 0 {
		t.Errorf("a conversation outlived its TTL: %v", got)
	}
	if got := turns(b, "dm:D2"); len(got) != 2 {
		t.Errorf("an active conversation: %d turns, want 2", len(got))
	}
	elapse(c, ttl)
	add(b, "dm:D2", state.Turn{Question: "q3"}, 8, longTTL)
	if got := turns(a, "dm:D2"); !slices.Equal(got, []state.Turn{{Question: "q3"}}) {
		t.Errorf("an expired conversation did not start afresh: %v", got)
	}
	if got := turns(a, "C1:1.0"); len(got) != 3 {
		t.Errorf("a thread forgotten before its TTL: %d turns", len(got))
	}
	if err := a.AddTurn(ctx, "x", state.Turn{}, 0, longTTL); err == nil {
		t.Error("AddTurn keeping 0 turns: no error")
	}
}

func testCache(t *testing.T, c *clock, a, b state.Store) {
	ctx := t.Context()
	get := func(s state.Store, key string) ([]byte, bool) {
		t.Helper()
		v, ok, err := s.Cached(ctx, key)
		if err != nil {
			t.Fatalf("Cached(%q): %v", key, err)
		}
		return v, ok
	}
	set := func(s state.Store, key string, val []byte, ttl time.Duration) {
		t.Helper()
		if err := s.SetCached(ctx, key, val, ttl); err != nil {
			t.Fatalf("SetCached(%q): %v", key, err)
		}
	}
	if _, ok := get(a, "k"); ok {
		t.Fatal("a missing key was found")
	}
	bin := []byte{0, 1, 2, 0xff, '\n', 0}
	set(a, "k", bin, longTTL)
	if v, ok := get(b, "k"); !ok || !bytes.Equal(v, bin) {
		t.Fatalf("Cached = %q, %v; want %q", v, ok, bin)
	}
	set(b, "k", []byte("new"), longTTL)
	if v, _ := get(a, "k"); string(v) != "new" {
		t.Errorf("after a replace: %q", v)
	}
	set(a, "empty", []byte{}, longTTL)
	if v, ok := get(b, "empty"); !ok || len(v) != 0 {
		t.Errorf("an empty value: %q, %v", v, ok)
	}
	set(b, "short", []byte("x"), shortTTL)
	elapse(c, shortTTL+margin)
	if _, ok := get(a, "short"); ok {
		t.Error("a value outlived its TTL")
	}
	if _, ok := get(b, "k"); !ok {
		t.Error("a value forgotten before its TTL")
	}
}

// at is a fixed instant plus s seconds, at millisecond precision.
func at(s int) time.Time { return time.Date(2025, 6, 1, 10, 0, s, 0, time.UTC) }

func verification(channel, ts, user string, when time.Time) state.Verification {
	return state.Verification{Channel: channel, TS: ts, Question: "how many orders in " + ts + "?",
		SQL: "SELECT count(*) FROM orders", Checksum: "sha256:" + ts, Source: "demo@policy1", User: user, At: when}
}

func list(t *testing.T, s state.Store, n int) []state.Verified {
	t.Helper()
	out, err := s.ListVerified(t.Context(), n)
	if err != nil {
		t.Fatalf("ListVerified: %v", err)
	}
	return out
}

// An answer stays verified while at least one verifier's mark remains.
func testVerified(t *testing.T, _ *clock, a, b state.Store) {
	ctx := t.Context()
	verify := func(s state.Store, v state.Verification) {
		t.Helper()
		if err := s.Verify(ctx, v); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	unverify := func(s state.Store, user string) bool {
		t.Helper()
		still, err := s.Unverify(ctx, "C1", "1.0", user)
		if err != nil {
			t.Fatalf("Unverify: %v", err)
		}
		return still
	}
	first := verification("C1", "1.0", "U1", at(1))
	verify(a, first)
	got := list(t, b, 10)
	if len(got) != 1 {
		t.Fatalf("listed %d answers, want 1", len(got))
	}
	g := got[0]
	if g.Channel != "C1" || g.TS != "1.0" || g.Question != first.Question || g.SQL != first.SQL ||
		g.Checksum != first.Checksum || g.Source != first.Source || !g.Since.Equal(at(1)) ||
		len(g.Votes) != 1 || g.Votes[0].User != "U1" || !g.Votes[0].At.Equal(at(1)) {
		t.Fatalf("listed %+v, want the answer as verified by U1 at %v", g, at(1))
	}
	second := verification("C1", "1.0", "U2", at(5))
	second.Question = "a later mark does not change the answer"
	verify(b, second)
	verify(a, verification("C1", "1.0", "U1", at(9))) // U1 again: no second vote, first time kept
	g = list(t, a, 10)[0]
	if len(g.Votes) != 2 || g.Votes[0].User != "U1" || !g.Votes[0].At.Equal(at(1)) || g.Votes[1].User != "U2" ||
		!g.Since.Equal(at(1)) || g.Question != first.Question {
		t.Fatalf("after U2's mark: %+v, want U1 at %v then U2, the first question", g, at(1))
	}
	if !unverify(b, "U3") {
		t.Error("a mark that is not there removed the answer")
	}
	if !unverify(b, "U1") {
		t.Fatal("U1 withdrew, U2 remains: not still verified")
	}
	g = list(t, a, 10)[0]
	if len(g.Votes) != 1 || g.Votes[0].User != "U2" || !g.Since.Equal(at(5)) {
		t.Errorf("after U1 withdrew: %+v, want only U2, since %v", g, at(5))
	}
	if unverify(a, "U2") {
		t.Error("the last verifier withdrew: still verified")
	}
	if got := list(t, b, 10); len(got) != 0 {
		t.Errorf("after every mark was removed: %+v", got)
	}
	if unverify(a, "U2") {
		t.Error("unverifying an unknown answer: still verified")
	}
	// Verified again after a withdrawal: a new record from the new mark.
	verify(b, second)
	if g := list(t, a, 10); len(g) != 1 || g[0].Question != second.Question {
		t.Errorf("verified again: %+v, want the new mark's answer", g)
	}
}

func testVerifiedList(t *testing.T, _ *clock, a, b state.Store) {
	ctx := t.Context()
	pick := stores(a, b)
	for i, ts := range []string{"3.0", "1.0", "4.0", "2.0"} { // verified at 30, 10, 40, 20 s
		s := map[string]int{"1.0": 10, "2.0": 20, "3.0": 30, "4.0": 40}[ts]
		if err := pick(i).Verify(ctx, verification("C1", ts, "U1", at(s))); err != nil {
			t.Fatal(err)
		}
	}
	tsOf := func(vs []state.Verified) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.TS)
		}
		return out
	}
	if got := tsOf(list(t, b, 10)); !slices.Equal(got, []string{"4.0", "3.0", "2.0", "1.0"}) {
		t.Errorf("ListVerified(10) = %v, want newest first", got)
	}
	if got := tsOf(list(t, a, 2)); !slices.Equal(got, []string{"4.0", "3.0"}) {
		t.Errorf("ListVerified(2) = %v, want the newest 2", got)
	}
	if got := list(t, a, 0); len(got) != 0 {
		t.Errorf("ListVerified(0) = %d answers", len(got))
	}
	// A channel and ts that would collide if joined naively stay apart.
	if err := a.Verify(ctx, verification("C/1", "5.0", "U1", at(50))); err != nil {
		t.Fatal(err)
	}
	if err := b.Verify(ctx, verification("C", "1/5.0", "U1", at(51))); err != nil {
		t.Fatal(err)
	}
	if got := list(t, a, 2); len(got) != 2 || got[0].Channel != "C" || got[1].Channel != "C/1" {
		t.Errorf("answers with '/' in their ids: %+v", got)
	}
}

// A list is never older than the last change through either replica: each
// read after a mark, a withdrawal or a new answer, through one replica or
// the other, shows it at once, a shorter list after a longer one is its
// first answers, and what a caller does to a list it was given changes
// nothing for later callers.
func testVerifiedListFresh(t *testing.T, _ *clock, a, b state.Store) {
	ctx := t.Context()
	tsOf := func(vs []state.Verified) string {
		var out []string
		for _, v := range vs {
			out = append(out, v.TS+"/"+strconv.Itoa(len(v.Votes)))
		}
		return strings.Join(out, " ")
	}
	check := func(s state.Store, n int, want string) {
		t.Helper()
		for range 2 { // again, unchanged
			if got := tsOf(list(t, s, n)); got != want {
				t.Fatalf("ListVerified(%d) = %q, want %q", n, got, want)
			}
		}
	}
	check(a, 10, "")
	check(b, 10, "")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Verify(ctx, verification("C1", "1.0", "U1", at(10))))
	check(b, 10, "1.0/1")
	check(a, 10, "1.0/1")
	must(b.Verify(ctx, verification("C1", "2.0", "U1", at(20))))
	check(a, 10, "2.0/1 1.0/1")
	check(a, 1, "2.0/1")
	must(a.Verify(ctx, verification("C1", "1.0", "U2", at(30)))) // a second mark: same order, two votes
	check(b, 10, "2.0/1 1.0/2")
	check(b, 1, "2.0/1")
	must(b.Verify(ctx, verification("C1", "3.0", "U1", at(40))))
	check(a, 2, "3.0/1 2.0/1")
	check(a, 10, "3.0/1 2.0/1 1.0/2")
	if _, err := a.Unverify(ctx, "C1", "2.0", "U1"); err != nil {
		t.Fatal(err)
	}
	check(b, 10, "3.0/1 1.0/2")
	check(a, 10, "3.0/1 1.0/2")
	if _, err := b.Unverify(ctx, "C1", "1.0", "U1"); err != nil {
		t.Fatal(err)
	}
	check(a, 10, "3.0/1 1.0/1")

	got := list(t, a, 10)
	got[0].TS = "changed"
	got[1].Votes[0].User = "changed"
	if again := list(t, a, 10); again[0].TS != "3.0" || again[1].Votes[0].User != "U2" {
		t.Errorf("a caller's change to its list showed in the next: %+v", again)
	}
}

func testReports(t *testing.T, c *clock, a, b state.Store) {
	ctx := t.Context()
	latest := func(s state.Store, key string) (state.Report, bool) {
		t.Helper()
		r, ok, err := s.LatestReport(ctx, key)
		if err != nil {
			t.Fatalf("LatestReport: %v", err)
		}
		return r, ok
	}
	if _, ok := latest(a, "demo"); ok {
		t.Fatal("a report before any was saved")
	}
	if err := a.SaveReport(ctx, "demo", []byte("report 1\x00")); err != nil {
		t.Fatal(err)
	}
	r, ok := latest(b, "demo")
	if !ok || string(r.Data) != "report 1\x00" || r.At.IsZero() {
		t.Fatalf("latest = %q at %v, %v; want report 1", r.Data, r.At, ok)
	}
	c.advance(time.Minute)
	if err := b.SaveReport(ctx, "demo", []byte("report 2")); err != nil {
		t.Fatal(err)
	}
	if r, _ := latest(a, "demo"); string(r.Data) != "report 2" {
		t.Errorf("after a second save: %q", r.Data)
	}
	if _, ok := latest(a, "other"); ok {
		t.Error("a report under another key")
	}
}

func testLock(t *testing.T, c *clock, a, b state.Store) {
	ctx := t.Context()
	tok, ok, err := a.TryLock(ctx, "eval", longTTL)
	if err != nil || !ok || tok == "" {
		t.Fatalf("TryLock = %q, %v, %v; want the lock", tok, ok, err)
	}
	if _, ok, err := b.TryLock(ctx, "eval", longTTL); ok || err != nil {
		t.Fatalf("a second TryLock: %v, %v; want refused", ok, err)
	}
	if _, ok, err := b.TryLock(ctx, "other", longTTL); !ok || err != nil {
		t.Errorf("another lock: %v, %v", ok, err)
	}
	if err := b.Unlock(ctx, "eval", "not-the-token"); !errors.Is(err, state.ErrNotHeld) {
		t.Errorf("Unlock by another: %v, want ErrNotHeld", err)
	}
	if err := b.ExtendLock(ctx, "eval", "not-the-token", longTTL); !errors.Is(err, state.ErrNotHeld) {
		t.Errorf("ExtendLock by another: %v, want ErrNotHeld", err)
	}
	if _, ok, _ := b.TryLock(ctx, "eval", longTTL); ok {
		t.Fatal("the lock was taken after a wrong Unlock")
	}
	if err := a.Unlock(ctx, "eval", tok); err != nil {
		t.Fatalf("Unlock by the holder: %v", err)
	}
	if err := a.Unlock(ctx, "eval", tok); !errors.Is(err, state.ErrNotHeld) {
		t.Errorf("a second Unlock: %v, want ErrNotHeld", err)
	}
	tok2, ok, err := b.TryLock(ctx, "eval", shortTTL)
	if !ok || err != nil {
		t.Fatalf("TryLock after the release: %v, %v", ok, err)
	}
	if err := b.ExtendLock(ctx, "eval", tok2, shortTTL); err != nil {
		t.Fatalf("ExtendLock by the holder: %v", err)
	}
	elapse(c, shortTTL+margin) // the holder died
	if err := b.ExtendLock(ctx, "eval", tok2, longTTL); !errors.Is(err, state.ErrNotHeld) {
		t.Errorf("ExtendLock after expiry: %v, want ErrNotHeld", err)
	}
	tok3, ok, err := a.TryLock(ctx, "eval", longTTL)
	if !ok || err != nil {
		t.Fatalf("TryLock after the holder's lock expired: %v, %v", ok, err)
	}
	if err := b.Unlock(ctx, "eval", tok2); !errors.Is(err, state.ErrNotHeld) {
		t.Errorf("Unlock by the expired holder: %v, want ErrNotHeld", err)
	}
	if err := a.Unlock(ctx, "eval", tok3); err != nil {
		t.Errorf("Unlock by the new holder: %v", err)
	}
}

func testLockConcurrent(t *testing.T, _ *clock, a, b state.Store) {
	pick := stores(a, b)
	var holders atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			_, ok, err := pick(i).TryLock(t.Context(), "eval", longTTL)
			if err != nil {
				t.Errorf("TryLock: %v", err)
			}
			if ok {
				holders.Add(1)
			}
		})
	}
	wg.Wait()
	if n := holders.Load(); n != 1 {
		t.Errorf("%d of 50 concurrent TryLocks got the lock, want exactly 1", n)
	}
}

func TestMemoryContract(t *testing.T) {
	runContract(t, backend{name: "memory", open: func(t *testing.T, c *clock) (state.Store, state.Store) {
		// A Memory is per process: two replicas in one process share it.
		m := state.NewMemory(c.now)
		return m, m
	}})
}

func TestSQLiteContract(t *testing.T) {
	runContract(t, backend{name: "sqlite", open: func(t *testing.T, c *clock) (state.Store, state.Store) {
		path := t.TempDir() + "/state.db"
		return openSQLite(t, path, c), openSQLite(t, path, c)
	}})
}

// openSQLite opens the state file at path on clock c, closed when t ends.
func openSQLite(t *testing.T, path string, c *clock) *state.SQLite {
	t.Helper()
	s, err := state.OpenSQLite(context.Background(), path, state.SQLiteOptions{Now: c.now})
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
