package state_test

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"sqlbot/bot/state"
	"sqlbot/bot/state/statetest"
)

// startRedis starts a redis-server of t's own.
func startRedis(t testing.TB) *statetest.Redis { return statetest.StartRedis(t) }

// prefix returns a key prefix of its own, so that tests sharing a server
// do not see each other's keys.
func prefix(testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:]) + ":"
}

// newRedis returns a Redis store on srv under prefix p, closed when t ends.
func newRedis(t testing.TB, srv *statetest.Redis, p string, c *clock) *state.Redis {
	t.Helper()
	var now func() time.Time
	if c != nil {
		now = c.now
	}
	r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: p, Now: now})
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRedisContract(t *testing.T) {
	srv := startRedis(t)
	runContract(t, backend{name: "redis", open: func(t *testing.T, c *clock) (state.Store, state.Store) {
		p := prefix(t)
		return newRedis(t, srv, p, c), newRedis(t, srv, p, c)
	}})
}

// Failover while Redis is up is Redis.
func TestFailoverContract(t *testing.T) {
	srv := startRedis(t)
	runContract(t, backend{name: "failover", open: func(t *testing.T, c *clock) (state.Store, state.Store) {
		p := prefix(t)
		open := func() state.Store {
			r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: p, Now: c.now, Timeout: slowMachine})
			if err != nil {
				t.Fatal(err)
			}
			f := state.NewFailover(t.Context(), r, discard(), state.FailoverOptions{Now: c.now, CallTimeout: slowMachine})
			t.Cleanup(func() {
				if h := f.Health(); !h.OK {
					t.Errorf("health: %v, want ok", h)
				}
				f.Close()
			})
			return f
		}
		return open(), open()
	}})
}

// Without a Now, limits follow the Redis server's clock.
func TestRedisServerClock(t *testing.T) {
	srv := startRedis(t)
	r := newRedis(t, srv, prefix(t), nil)
	l := state.Limits{PerMinute: 2, PerDay: 40, GlobalPerDay: 600}
	for i := range 2 {
		if v, err := r.Allow(t.Context(), "U1", l); err != nil || v.Rule != state.RuleNone {
			t.Fatalf("question %d: %+v, %v", i+1, v, err)
		}
	}
	v, err := r.Allow(t.Context(), "U1", l)
	if err != nil || v.Rule != state.RuleUserMinute || v.Wait <= 50*time.Second || v.Wait > time.Minute || !v.Tell {
		t.Fatalf("3rd question: %+v, %v; want user_minute, a wait just under a minute, told", v, err)
	}
}

func TestNewRedisURL(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:6379", "rediss://user:secret@cache.example:6380/2", "redis://h:1/0?dial_timeout=2s"} {
		r, err := state.NewRedis(u, state.RedisOptions{})
		if err != nil {
			t.Errorf("NewRedis(%q): %v", u, err)
			continue
		}
		r.Close()
	}
	for _, u := range []string{"", "http://127.0.0.1:6379", "127.0.0.1:6379", "redis://:hunter2@h:1/notanumber"} {
		_, err := state.NewRedis(u, state.RedisOptions{})
		if err == nil {
			t.Errorf("NewRedis(%q): no error", u)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("NewRedis(%q): the error shows the password: %v", u, err)
		}
	}
}
