package state_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"sqlbot/bot/state"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Bounds that hold on a machine loaded by other work: Redis's timeouts in
// these tests, long enough that a healthy but slow Redis is never taken for
// a lost one (which would log an extra transition), and how much longer
// than its timeout a call may take before the test calls it unbounded.
const (
	slowMachine = 2 * time.Second
	hangBound   = 10 * time.Second
)

// logBuffer collects log lines from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitHealth polls f until its health's OK is want, and returns how long
// that took; it fails the test after limit.
func waitHealth(t *testing.T, f *state.Failover, want bool, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for f.Health().OK != want {
		if time.Since(start) > limit {
			t.Fatalf("health still %v after %v, want ok=%v", f.Health(), limit, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// checkTransitions asserts that the log holds each transition exactly
// once, and prints the log.
func checkTransitions(t *testing.T, logs *logBuffer) {
	t.Helper()
	out := logs.String()
	t.Logf("log:\n%s", out)
	for _, msg := range []string{"redis unavailable", "redis is back"} {
		if n := strings.Count(out, msg); n != 1 {
			t.Errorf("%q logged %d times, want once", msg, n)
		}
	}
}

// Redis is killed in the middle: calls keep answering from per-process
// state, health says degraded and why; Redis starts again on the same port:
// health returns to ok within the probe interval, what must reach Redis
// does, and shared behaviour resumes.
func TestFailoverRedisDiesAndReturns(t *testing.T) {
	ctx := t.Context()
	srv := startRedis(t)
	p := prefix(t)
	logs := &logBuffer{}
	r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: p, Timeout: slowMachine})
	if err != nil {
		t.Fatal(err)
	}
	const probe, callTimeout = 200 * time.Millisecond, slowMachine
	f := state.NewFailover(ctx, r, slog.New(slog.NewTextHandler(logs, nil)),
		state.FailoverOptions{Probe: probe, CallTimeout: callTimeout})
	defer f.Close()
	other := newRedis(t, srv, p, nil) // another replica, on Redis alone
	claim := func(s state.Store, key string) bool {
		t.Helper()
		first, err := s.Claim(ctx, key, time.Hour)
		if err != nil {
			t.Fatalf("Claim(%q): %v", key, err)
		}
		return first
	}
	l := state.Limits{PerMinute: 2, PerDay: 40, GlobalPerDay: 600}
	rule := func(s state.Store, user string) state.Rule {
		t.Helper()
		v, err := s.Allow(ctx, user, l)
		if err != nil {
			t.Fatalf("Allow(%q): %v", user, err)
		}
		return v.Rule
	}

	if h := f.Health(); !h.OK {
		t.Fatalf("health before: %v", h)
	}
	if !claim(f, "Ev1") || claim(other, "Ev1") {
		t.Fatal("Ev1: want first on the failover, then taken for the other replica")
	}
	if rule(f, "U1") != state.RuleNone || rule(other, "U1") != state.RuleNone || rule(f, "U1") != state.RuleUserMinute {
		t.Fatal("U1: the limit is not shared before Redis dies")
	}

	srv.Stop()
	start := time.Now()
	first := claim(f, "Ev2")
	took := time.Since(start)
	t.Logf("first call after Redis died: answered in %v (call timeout %v)", took, callTimeout)
	if !first {
		t.Error("Ev2 while degraded: not first")
	}
	if took > callTimeout+hangBound {
		t.Errorf("the first call after Redis died took %v: the call timeout %v does not bound it", took, callTimeout)
	}
	h := f.Health()
	t.Logf("health after Redis died: %v", h)
	if h.OK || h.Reason == "" || h.Since.IsZero() {
		t.Fatalf("health = %+v, want degraded with a reason and a time", h)
	}
	for range 100 {
		if claim(f, "Ev2") {
			t.Fatal("Ev2 claimed twice while degraded: de-duplication is per process, not off")
		}
	}
	if rule(f, "U2") != state.RuleNone || rule(f, "U2") != state.RuleNone || rule(f, "U2") != state.RuleUserMinute {
		t.Error("U2: per-process limits do not hold while degraded")
	}
	if err := f.AddTurn(ctx, "C1:1.0", state.Turn{Question: "q"}, 8, time.Hour); err != nil {
		t.Fatal(err)
	}
	if turns, err := f.Turns(ctx, "C1:1.0"); err != nil || len(turns) != 1 {
		t.Errorf("thread memory while degraded: %v, %v", turns, err)
	}
	answer := verification("C1", "9.0", "U1", at(9))
	if err := f.Verify(ctx, answer); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveReport(ctx, "demo", []byte("made while away")); err != nil {
		t.Fatal(err)
	}
	if got, err := f.ListVerified(ctx, 10); err != nil || len(got) != 1 {
		t.Errorf("ListVerified while degraded: %v, %v; want the answer verified here", got, err)
	}

	srv.Start() // the same port, and empty: the server kept nothing
	back := waitHealth(t, f, true, 10*time.Second)
	t.Logf("health back to ok %v after Redis restarted (probe interval %v): %v", back, probe, f.Health())
	if claim(other, "Ev2") {
		t.Error("Ev2, claimed while degraded, is free in Redis: it would be answered twice")
	}
	if !claim(f, "Ev3") || claim(other, "Ev3") {
		t.Error("Ev3: claims are not shared after the return")
	}
	if got, err := other.ListVerified(ctx, 10); err != nil || len(got) != 1 || got[0].TS != "9.0" {
		t.Errorf("the answer verified while degraded, seen by the other replica: %+v, %v", got, err)
	}
	if rep, ok, err := other.LatestReport(ctx, "demo"); err != nil || !ok || string(rep.Data) != "made while away" {
		t.Errorf("the report saved while degraded, seen by the other replica: %q, %v, %v", rep.Data, ok, err)
	}
	if rule(f, "U3") != state.RuleNone || rule(other, "U3") != state.RuleNone || rule(f, "U3") != state.RuleUserMinute {
		t.Error("U3: the limit is not shared after the return")
	}
	checkTransitions(t, logs)
}

// A Redis that hangs (stopped, not dead) costs a call at most the call
// timeout; later calls do not wait for it at all.
func TestFailoverRedisHangs(t *testing.T) {
	ctx := t.Context()
	srv := startRedis(t)
	logs := &logBuffer{}
	r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: prefix(t), Timeout: slowMachine})
	if err != nil {
		t.Fatal(err)
	}
	const probe, callTimeout = 100 * time.Millisecond, slowMachine
	f := state.NewFailover(ctx, r, slog.New(slog.NewTextHandler(logs, nil)),
		state.FailoverOptions{Probe: probe, CallTimeout: callTimeout})
	defer f.Close()
	if _, err := f.Claim(ctx, "warm", time.Hour); err != nil { // a pooled connection, as in service
		t.Fatal(err)
	}
	srv.Pause()
	resumed := false
	resume := func() {
		if !resumed {
			srv.Resume()
			resumed = true
		}
	}
	defer resume()
	start := time.Now()
	v, err := f.Allow(ctx, "U1", state.Limits{PerMinute: 1})
	took := time.Since(start)
	t.Logf("a call to a hung Redis returned in %v (call timeout %v), health %v", took, callTimeout, f.Health())
	if err != nil || v.Rule != state.RuleNone {
		t.Fatalf("Allow: %+v, %v; want accepted locally", v, err)
	}
	if took > callTimeout+hangBound {
		t.Errorf("took %v: the call timeout %v does not bound it", took, callTimeout)
	}
	if h := f.Health(); h.OK {
		t.Fatal("health ok while Redis hangs")
	}
	// While degraded a call does not go to Redis at all: with a context
	// already cancelled, a call that did would fail.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if v, err := f.Allow(done, "U1", state.Limits{PerMinute: 1}); err != nil || v.Rule != state.RuleUserMinute {
		t.Errorf("second question: %+v, %v; want user_minute (per process), answered without Redis", v, err)
	}
	resume()
	waitHealth(t, f, true, 10*time.Second)
	checkTransitions(t, logs)
}

// A Failover started while Redis is down starts degraded, and becomes ok
// when Redis comes.
func TestFailoverStartsDegraded(t *testing.T) {
	srv := startRedis(t)
	srv.Stop()
	logs := &logBuffer{}
	r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	f := state.NewFailover(t.Context(), r, slog.New(slog.NewTextHandler(logs, nil)),
		state.FailoverOptions{Probe: 100 * time.Millisecond, CallTimeout: slowMachine})
	defer f.Close()
	if h := f.Health(); h.OK {
		t.Fatalf("health with Redis down at start: %v", h)
	}
	if first, err := f.Claim(t.Context(), "Ev1", time.Hour); err != nil || !first {
		t.Fatalf("Claim while degraded: %v, %v", first, err)
	}
	srv.Start()
	waitHealth(t, f, true, 10*time.Second)
	checkTransitions(t, logs)
}

// Close stops the probe: no goroutine outlives it, and it returns promptly
// even when Redis is away.
func TestFailoverClose(t *testing.T) {
	srv := startRedis(t)
	r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	f := state.NewFailover(context.Background(), r, discard(), state.FailoverOptions{Probe: 10 * time.Millisecond})
	srv.Stop()
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		f.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5 s")
	}
}

// Take goes to Redis in one call while Redis is there and is answered from
// per-process state while it is away (the first Take after it died
// included); the claims taken meanwhile reach Redis when it returns.
func TestFailoverTakeWhileRedisAway(t *testing.T) {
	ctx := t.Context()
	srv := startRedis(t)
	p := prefix(t)
	r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: p, Timeout: slowMachine})
	if err != nil {
		t.Fatal(err)
	}
	f := state.NewFailover(ctx, r, discard(), state.FailoverOptions{Probe: 200 * time.Millisecond, CallTimeout: slowMachine})
	defer f.Close()
	other := newRedis(t, srv, p, nil) // another replica, on Redis alone
	l := state.Limits{PerMinute: 2, PerDay: 40, GlobalPerDay: 600}
	take := func(s state.Store, key, user string) (bool, state.Rule) {
		t.Helper()
		first, v, err := s.Take(ctx, key, time.Hour, user, l)
		if err != nil {
			t.Fatalf("Take(%q): %v", key, err)
		}
		return first, v.Rule
	}
	if first, rule := take(f, "m1", "U1"); !first || rule != state.RuleNone {
		t.Fatalf("m1: first=%v, rule %q; want first, accepted", first, rule)
	}
	if first, _ := take(other, "m1", "U1"); first {
		t.Fatal("m1 taken again by the other replica")
	}
	if first, rule := take(other, "m2", "U1"); !first || rule != state.RuleNone {
		t.Fatalf("m2 on the other replica: first=%v, rule %q; want first, accepted (U1's second)", first, rule)
	}
	if _, rule := take(f, "m3", "U1"); rule != state.RuleUserMinute {
		t.Fatalf("m3: rule %q, want user_minute: the limit is not shared", rule)
	}

	srv.Stop()
	if first, rule := take(f, "m4", "U2"); !first || rule != state.RuleNone {
		t.Fatalf("m4, the first Take after Redis died: first=%v, rule %q; want first, accepted", first, rule)
	}
	if f.Health().OK {
		t.Fatal("healthy after Redis died")
	}
	if first, _ := take(f, "m4", "U2"); first {
		t.Error("m4 taken twice while degraded")
	}
	if first, rule := take(f, "m5", "U2"); !first || rule != state.RuleNone {
		t.Errorf("m5: first=%v, rule %q; want first, accepted", first, rule)
	}
	if _, rule := take(f, "m6", "U2"); rule != state.RuleUserMinute {
		t.Errorf("m6: rule %q, want user_minute: per-process limits do not hold", rule)
	}

	srv.Start()
	waitHealth(t, f, true, 10*time.Second)
	for _, key := range []string{"m4", "m5", "m6"} {
		if first, _ := take(other, key, "U3"); first {
			t.Errorf("%s, taken while degraded, is free in Redis: it would be answered twice", key)
		}
	}
	if first, _ := take(f, "m7", "U4"); !first {
		t.Error("m7 after the return: not first")
	}
	if first, _ := take(other, "m7", "U4"); first {
		t.Error("m7: claims are not shared after the return")
	}
}
