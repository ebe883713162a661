package main

import (
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// nobody is the user the other-user test runs sqlbot as.
const nobody = 65534

// TestWALOtherUser runs `sqlbot sql` as another user (nobody) on a WAL-mode
// database that root owns, as when sqlbot reads an application's database
// from a container. Where the directory lets nobody create files, reading
// could leave -wal/-shm files owned by nobody that the application can no
// longer write: sqlbot refuses at start and says how to give it a copy.
// Where it does not, sqlbot reads through the owner's files while the
// application has the database open, changes none of them, and refuses,
// with the same advice, when nothing has it open (SQLite could not read it).
func TestWALOtherUser(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root, to run sqlbot as another user")
	}
	// A copy of this binary that nobody may run, in a directory nobody may enter.
	bin := filepath.Join(openDir(t, 0o755), "sqlbot")
	copyFile(t, os.Args[0], bin, 0o755)
	run := func(db string) (string, int) {
		cmd := exec.Command(bin, "sql", "--db", db, "SELECT count(*) AS n FROM events")
		cmd.Env = []string{"SQLBOT_TEST_MAIN=1", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatal(err)
			}
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	newDB := func(dirMode os.FileMode) (string, *sql.DB) {
		path := filepath.Join(openDir(t, dirMode), "app.db")
		owner, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		owner.SetMaxOpenConns(1)
		t.Cleanup(func() { owner.Close() })
		if _, err := owner.Exec("PRAGMA journal_mode = WAL; CREATE TABLE events (id INTEGER PRIMARY KEY); INSERT INTO events VALUES (1), (2)"); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644)
		return path, owner
	}
	unchanged := func(path string) func() {
		before := map[string]fileStat{}
		for _, f := range []string{"-wal", "-shm"} {
			before[f] = statFile(path + f)
		}
		return func() {
			for f, was := range before {
				if now := statFile(path + f); now != was {
					t.Errorf("%s%s changed: %+v, was %+v", filepath.Base(path), f, now, was)
				}
			}
		}
	}

	// A directory nobody may write: refused at start, nothing created.
	path, owner := newDB(0o777)
	check := unchanged(path)
	out, code := run(path)
	t.Log(out)
	if code != exitError || !strings.Contains(out, "WAL") || !strings.Contains(out, ".backup") {
		t.Errorf("writable directory: exit %d\n%s\nwant a refusal at start that says how to give a copy", code, out)
	}
	check()
	if _, err := owner.Exec("INSERT INTO events VALUES (3)"); err != nil {
		t.Errorf("the owner's write afterwards: %v", err)
	}

	// A directory nobody may not write, the owner's application running:
	// read through its files, which stay as they were.
	path, owner = newDB(0o755)
	check = unchanged(path)
	out, code = run(path)
	t.Log(out)
	if code != exitOK || !strings.Contains(out, "2") {
		t.Errorf("read-only directory, owner running: exit %d\n%s", code, out)
	}
	check()
	if _, err := owner.Exec("INSERT INTO events VALUES (3)"); err != nil {
		t.Errorf("the owner's write afterwards: %v", err)
	}

	// The same directory, nothing running: SQLite could not read it.
	owner.Close()
	out, code = run(path)
	t.Log(out)
	if code != exitError || !strings.Contains(out, ".backup") {
		t.Errorf("read-only directory, nothing open: exit %d\n%s\nwant a refusal that says how to give a copy", code, out)
	}
	for _, f := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + f); err == nil {
			t.Errorf("%s%s was created", filepath.Base(path), f)
		}
	}
}

// A fileStat is what the owner's application relies on in a file.
type fileStat struct {
	exists   bool
	uid, gid uint32
	mode     os.FileMode
	ino      uint64
}

func statFile(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fileStat{true, st.Uid, st.Gid, fi.Mode(), st.Ino}
}

// openDir makes a directory with mode (t.TempDir's parents shut other users
// out: this one lives directly under the system's temporary directory).
func openDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sqlbot-wal-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
