package state_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // only to inspect the file in tests, through the registered "sqlite" driver

	"sqlbot/bot/state"
)

// A restart (close, then open the same file) keeps verified answers,
// reports and thread memory.
func TestSQLiteRestart(t *testing.T) {
	ctx := t.Context()
	c := newClock()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := state.OpenSQLite(ctx, path, state.SQLiteOptions{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, verification("C1", "1.0", "U1", at(1))); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, verification("C1", "1.0", "U2", at(2))); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveReport(ctx, "demo", []byte("the report")); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTurn(ctx, "C1:1.0", state.Turn{Question: "q", Answer: "a", SQL: "SELECT 1"}, 8, time.Hour); err != nil {
		t.Fatal(err)
	}
	if first, err := s.Claim(ctx, "Ev1", time.Hour); err != nil || !first {
		t.Fatal(first, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openSQLite(t, path, c)
	got, err := s.ListVerified(ctx, 10)
	if err != nil || len(got) != 1 || got[0].Question != "how many orders in 1.0?" || len(got[0].Votes) != 2 {
		t.Errorf("verified answers after a restart: %+v, %v", got, err)
	}
	if r, ok, err := s.LatestReport(ctx, "demo"); err != nil || !ok || string(r.Data) != "the report" {
		t.Errorf("report after a restart: %q, %v, %v", r.Data, ok, err)
	}
	if turns, err := s.Turns(ctx, "C1:1.0"); err != nil || len(turns) != 1 || turns[0].SQL != "SELECT 1" {
		t.Errorf("thread memory after a restart: %v, %v", turns, err)
	}
	if first, err := s.Claim(ctx, "Ev1", time.Hour); err != nil || first {
		t.Errorf("a claim after a restart: first=%v, %v; want taken", first, err)
	}
}

// The state file is never the database sqlbot answers from, however its
// path is spelled.
func TestSQLiteRefusesAnsweredDatabase(t *testing.T) {
	dir := t.TempDir()
	answered := filepath.Join(dir, "shop.db")
	if err := os.WriteFile(answered, []byte("not touched"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(answered, filepath.Join(dir, "hardlink.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(answered, filepath.Join(dir, "symlink.db")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{answered, filepath.Join(dir, "sub", "..", "shop.db"), filepath.Join(dir, "hardlink.db"), filepath.Join(dir, "symlink.db")} {
		s, err := state.OpenSQLite(t.Context(), p, state.SQLiteOptions{Answered: answered})
		if !errors.Is(err, state.ErrAnsweredDatabase) {
			t.Errorf("OpenSQLite(%s): %v, want ErrAnsweredDatabase", p, err)
		}
		if s != nil {
			s.Close()
		}
	}
	// Relative spellings of the answered path count too.
	t.Chdir(dir)
	if _, err := state.OpenSQLite(t.Context(), filepath.Join(dir, "shop.db"), state.SQLiteOptions{Answered: "shop.db"}); !errors.Is(err, state.ErrAnsweredDatabase) {
		t.Errorf("answered given relative: %v, want ErrAnsweredDatabase", err)
	}
	if b, _ := os.ReadFile(answered); string(b) != "not touched" {
		t.Errorf("the answered database was changed: %q", b)
	}
	if _, err := os.Stat(answered + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a WAL file beside the answered database: %v", err)
	}
	s, err := state.OpenSQLite(t.Context(), filepath.Join(dir, "state.db"), state.SQLiteOptions{Answered: answered})
	if err != nil {
		t.Fatalf("another file: %v", err)
	}
	s.Close()
}

// A new file is private to its owner, in WAL mode, at the current schema
// version; a file from a newer schema is refused.
func TestSQLiteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "sqlbot")
	path := filepath.Join(dir, "state.db")
	s, err := state.OpenSQLite(t.Context(), path, state.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveReport(t.Context(), "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, path + "-wal": 0o600, dir: 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(p), got, want)
		}
	}
	s.Close()

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var version int
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q, %v; want wal", mode, err)
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != 2 {
		t.Errorf("user_version %d, %v; want 2", version, err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := state.OpenSQLite(t.Context(), path, state.SQLiteOptions{}); !errors.Is(err, state.ErrNewerSchema) {
		t.Errorf("a file from schema version 99: %v, want ErrNewerSchema", err)
	}
}

// Two processes on one file behave as one store: of 2 × 25 concurrent
// questions from one user only the per-minute limit is accepted, the user
// is told once, and one of 2 × 25 claims of an event wins.
func TestSQLiteTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	openSQLite(t, path, newClock()) // create the schema first, as one replica starting before the other would
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range outs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SQLBOT_STATE_HELPER="+path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("helper process %d: %v\n%s", i, err, out)
			}
			outs[i] = string(out)
		})
	}
	wg.Wait()
	var accepted, told, firsts int
	for _, out := range outs {
		var a, tl, f int
		for _, line := range strings.Split(out, "\n") {
			if _, err := fmt.Sscanf(line, "RESULT accepted=%d told=%d first=%d", &a, &tl, &f); err == nil {
				accepted, told, firsts = accepted+a, told+tl, firsts+f
			}
		}
	}
	t.Logf("two processes: accepted %d, told %d, first claims %d", accepted, told, firsts)
	if accepted != 6 || told != 1 || firsts != 1 {
		t.Errorf("accepted %d (want 6), told %d (want 1), first claims %d (want 1)", accepted, told, firsts)
	}
}

// TestSQLiteHelperProcess is one of TestSQLiteTwoProcesses's processes; it
// does nothing in a normal run.
func TestSQLiteHelperProcess(t *testing.T) {
	path := os.Getenv("SQLBOT_STATE_HELPER")
	if path == "" {
		t.Skip("a helper for TestSQLiteTwoProcesses")
	}
	fixed := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	s, err := state.OpenSQLite(context.Background(), path, state.SQLiteOptions{Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var accepted, told, firsts atomic.Int32
	var wg sync.WaitGroup
	for range 25 {
		wg.Go(func() {
			v, err := s.Allow(context.Background(), "U1", defaultLimits)
			if err != nil {
				t.Errorf("Allow: %v", err)
				return
			}
			if v.Rule == state.RuleNone {
				accepted.Add(1)
			} else if v.Tell {
				told.Add(1)
			}
			first, err := s.Claim(context.Background(), "Ev1", time.Hour)
			if err != nil {
				t.Errorf("Claim: %v", err)
			}
			if first {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Println("RESULT accepted=" + strconv.Itoa(int(accepted.Load())) + " told=" + strconv.Itoa(int(told.Load())) +
		" first=" + strconv.Itoa(int(firsts.Load())))
}

func TestDefaultPath(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/data", "HOME": "/home/ann"}, "/data/sqlbot/state.db"},
		{map[string]string{"HOME": "/home/ann"}, "/home/ann/.local/share/sqlbot/state.db"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/ann"}, "/home/ann/.local/share/sqlbot/state.db"},
	} {
		if got, err := state.DefaultPath(tt.env); err != nil || got != tt.want {
			t.Errorf("DefaultPath(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
	if _, err := state.DefaultPath(map[string]string{}); err == nil {
		t.Error("DefaultPath without HOME or XDG_DATA_HOME: no error")
	}
}
