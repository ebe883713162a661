// Package statetest runs a real redis-server for tests: on a loopback port
// of its own, keeping nothing on disk, stopped when the test ends. Tests of
// bot/state, bot and cmd share it.
//
// Without redis-server installed a test fails, saying how to install it,
// unless SQLBOT_TEST_NO_REDIS=1 asks to skip the tests that need it.
package statetest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A Redis is a redis-server of a test's own.
type Redis struct {
	t    testing.TB
	port int
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartRedis starts a redis-server on a free loopback port, killed when t
// ends.
func StartRedis(t testing.TB) *Redis {
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
	s := &Redis{t: t, port: port, dir: t.TempDir()}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Redis) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// Addr is the server's host:port.
func (s *Redis) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Start starts the server (again) on its port, empty, and waits until it
// answers (10 s at most).
func (s *Redis) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "yes")
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for !s.ping() {
		if time.Now().After(deadline) {
			s.kill()
			s.t.Fatalf("redis-server on port %d did not answer within 10 s", s.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server, as a crash would, and waits for it to exit.
func (s *Redis) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kill()
}

// kill kills the server; s.mu is held.
func (s *Redis) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Pause stops the server's process (SIGSTOP) without closing its sockets,
// as a hung server would; Resume continues it.
func (s *Redis) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Redis) Resume() { s.signal(syscall.SIGCONT) }

func (s *Redis) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatal("redis-server is not running")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
}

// ping reports whether the server answers PING.
func (s *Redis) ping() bool {
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
