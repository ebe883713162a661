package state_test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"sqlbot/bot/state"
)

// A redisServer is a redis-server of a test's own, on a loopback port,
// keeping nothing on disk.
type redisServer struct {
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
}

// startRedis starts a redis-server on a free loopback port, stopped when t
// ends. Without redis-server the test fails, saying how to install it,
// unless SQLBOT_TEST_NO_REDIS=1 asks to skip the Redis tests.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("SQLBOT_TEST_NO_REDIS") == "1" {
			t.Skip("redis-server is not installed and SQLBOT_TEST_NO_REDIS=1: skipping the Redis tests")
		}
		t.Fatal("redis-server is not installed: install it (Debian: apt-get install -y redis-server), " +
			"or set SQLBOT_TEST_NO_REDIS=1 to skip the Redis tests")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &redisServer{t: t, port: port, dir: t.TempDir()}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// URL is the server's redis:// URL.
func (s *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// start starts the server (again) on its port and waits until it answers.
func (s *redisServer) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "yes")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s.ping() {
			return
		}
		if time.Now().After(deadline) {
			s.stop()
			s.t.Fatalf("redis-server on port %d did not answer within 10 s", s.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping reports whether the server answers PING.
func (s *redisServer) ping() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// stop kills the server, as a crash would, and waits for it to exit.
func (s *redisServer) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// prefix returns a key prefix of its own, so that tests sharing a server
// do not see each other's keys.
func prefix(testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:]) + ":"
}

// newRedis returns a Redis store on srv under prefix p, closed when t ends.
func newRedis(t testing.TB, srv *redisServer, p string, c *clock) *state.Redis {
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
			r, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: p, Now: c.now})
			if err != nil {
				t.Fatal(err)
			}
			f := state.NewFailover(t.Context(), r, discard(), state.FailoverOptions{Now: c.now})
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
