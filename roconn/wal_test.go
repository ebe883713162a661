package roconn_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"sqlbot/roconn"
)

// walOwner creates a WAL-mode database in a directory of its own through a
// plain read-write connection, the owner's application, and returns its path
// and that connection (one physical connection, kept open).
func walOwner(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	owner, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	owner.SetMaxOpenConns(1)
	t.Cleanup(func() { owner.Close() })
	var mode string
	if err := owner.QueryRow("PRAGMA journal_mode = WAL").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	if _, err := owner.Exec("CREATE TABLE events (id INTEGER PRIMARY KEY, what TEXT); INSERT INTO events (what) VALUES ('a'), ('b'), ('c')"); err != nil {
		t.Fatal(err)
	}
	return path, owner
}

// A fileMark is what the owner relies on in a file beside its database.
type fileMark struct {
	exists     bool
	uid, gid   uint32
	mode       os.FileMode
	ino        uint64
	sizeIsZero bool
}

func markOf(t *testing.T, path string) fileMark {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return fileMark{}
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fileMark{exists: true, uid: st.Uid, gid: st.Gid, mode: fi.Mode(), ino: st.Ino, sizeIsZero: fi.Size() == 0}
}

func count(t *testing.T, db *roconn.DB) int64 {
	t.Helper()
	res, err := db.Query(context.Background(), "SELECT count(*) FROM events")
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	return res.Rows[0][0].(int64)
}

// TestWALOwnerWrites: the owner writes before, during and after roconn
// reads; roconn sees each committed write, never blocks one, and leaves the
// owner's -wal and -shm files as they were (same files, owner, mode); the
// owner can checkpoint while roconn is open and, once it closes its last
// connection, remove them as usual.
func TestWALOwnerWrites(t *testing.T) {
	ctx := context.Background()
	path, owner := walOwner(t)
	walBefore, shmBefore := markOf(t, path+"-wal"), markOf(t, path+"-shm")
	if !walBefore.exists || !shmBefore.exists {
		t.Fatal("the owner's -wal and -shm files should exist while it has the database open")
	}
	db, err := roconn.Open(ctx, path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db); n != 3 {
		t.Fatalf("count = %d, want 3 (written before roconn opened)", n)
	}

	// During: the owner writes 200 rows, one transaction each, while roconn
	// counts them; every count is a committed state, and none goes back.
	var wg sync.WaitGroup
	var ownerErr error
	wg.Go(func() {
		for i := range 200 {
			if _, err := owner.Exec("INSERT INTO events (what) VALUES (?)", fmt.Sprint("during ", i)); err != nil {
				ownerErr = err
				return
			}
		}
	})
	last := int64(3)
	for range 50 {
		n := count(t, db)
		if n < last || n > 203 {
			t.Fatalf("count went from %d to %d", last, n)
		}
		last = n
	}
	wg.Wait()
	if ownerErr != nil {
		t.Fatalf("the owner's write while roconn read: %v", ownerErr)
	}
	if n := count(t, db); n != 203 {
		t.Fatalf("count = %d after the owner's writes, want 203", n)
	}

	// After: the owner writes and checkpoints while roconn is open.
	if _, err := owner.Exec("INSERT INTO events (what) VALUES ('after')"); err != nil {
		t.Fatalf("the owner's write after roconn read: %v", err)
	}
	var busy, logged, checkpointed int
	if err := owner.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &checkpointed); err != nil || busy != 0 {
		t.Fatalf("the owner's checkpoint: busy %d, %v", busy, err)
	}
	if n := count(t, db); n != 204 {
		t.Fatalf("count = %d after the checkpoint, want 204", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fileMark{path + "-wal": walBefore, path + "-shm": shmBefore} {
		got := markOf(t, name)
		if got.exists != want.exists || got.uid != want.uid || got.gid != want.gid || got.mode != want.mode || got.ino != want.ino {
			t.Errorf("%s changed: %+v, was %+v", filepath.Base(name), got, want)
		}
	}
	if _, err := owner.Exec("INSERT INTO events (what) VALUES ('after close')"); err != nil {
		t.Fatalf("the owner's write after roconn closed: %v", err)
	}
	owner.Close()
	for _, name := range []string{path + "-wal", path + "-shm"} {
		if markOf(t, name).exists {
			t.Errorf("%s is still there after the owner's last connection closed", filepath.Base(name))
		}
	}
}

// TestWALNothingOpen: a WAL-mode database that nothing has open has no -wal
// or -shm file. roconn, running as the file's owner, reads it; SQLite
// creates the two files to do so, owned by the database's owner, with the
// database's mode, and (being read-only) leaves them. The owner's
// application then opens, writes and closes as usual, and removes them.
func TestWALNothingOpen(t *testing.T) {
	ctx := context.Background()
	path, owner := walOwner(t)
	owner.Close()
	if markOf(t, path+"-wal").exists || markOf(t, path+"-shm").exists {
		t.Fatal("the -wal and -shm files should be gone once the owner closed")
	}
	dbMark := markOf(t, path)
	db, err := roconn.Open(ctx, path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db); n != 3 {
		t.Errorf("count = %d, want 3", n)
	}
	db.Close()
	var beside []string
	for _, name := range []string{path + "-wal", path + "-shm"} {
		m := markOf(t, name)
		if !m.exists {
			continue
		}
		beside = append(beside, filepath.Base(name))
		if m.uid != dbMark.uid || m.gid != dbMark.gid || m.mode.Perm() != dbMark.mode.Perm() {
			t.Errorf("%s: owner %d:%d mode %v; the database's owner %d:%d mode %v", filepath.Base(name), m.uid, m.gid, m.mode, dbMark.uid, dbMark.gid, dbMark.mode)
		}
	}
	t.Logf("left beside the database after roconn closed: %v", beside)

	again, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Exec("INSERT INTO events (what) VALUES ('later')"); err != nil {
		t.Fatalf("the owner's write after roconn read: %v", err)
	}
	var n int
	if err := again.QueryRow("SELECT count(*) FROM events").Scan(&n); err != nil || n != 4 {
		t.Errorf("owner's count = %d, %v; want 4", n, err)
	}
	again.Close()
	if markOf(t, path+"-wal").exists || markOf(t, path+"-shm").exists {
		t.Error("the owner's last close did not remove the -wal and -shm files")
	}
}

// TestWALRefusalNamesTheFix: where reading could change what the owner can
// do, Open says so and says how to give sqlbot a copy. (That needs another
// user: see cmd/sqlbot's TestWALOtherUser; here, the words only.)
func TestWALRefusalNamesTheFix(t *testing.T) {
	for _, facts := range []roconn.WALFacts{
		{WAL: true, EUID: 1000, Owner: 0, DirCreates: true, WALExists: true, SHMExists: true},
		{WAL: true, EUID: 1000, Owner: 0, DirCreates: false},
	} {
		err := facts.Verdict("/data/app.db")
		if err == nil || !strings.Contains(err.Error(), ".backup") || !strings.Contains(err.Error(), "WAL") {
			t.Errorf("%+v: %v, want a refusal that says how to give a copy", facts, err)
		}
	}
	for _, facts := range []roconn.WALFacts{
		{WAL: false, EUID: 1000, Owner: 0, DirCreates: true},
		{WAL: true, EUID: 0, Owner: 1000, DirCreates: true},
		{WAL: true, EUID: 1000, Owner: 1000, DirCreates: true},
		{WAL: true, EUID: 1000, Owner: 0, DirCreates: false, WALExists: true, SHMExists: true},
	} {
		if err := facts.Verdict("/data/app.db"); err != nil {
			t.Errorf("%+v: %v, want it allowed", facts, err)
		}
	}
}
