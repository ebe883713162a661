package state

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// openTemp opens a state file in t's temporary directory, closed when t
// ends.
func openTemp(t *testing.T, opt SQLiteOptions) *SQLite {
	t.Helper()
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "state.db"), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Connections to the state file stay open once made: given back after a
// burst that used all of them, no reader is closed for being idle (it
// would be opened again at the next burst, its schema read and its
// statements compiled anew), and every write goes through the one writer.
func TestSQLiteKeepsItsConnections(t *testing.T) {
	s := openTemp(t, SQLiteOptions{})
	var conns []*sql.Conn
	for range maxReaders {
		c, err := s.rdb.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	if st := s.rdb.Stats(); st.Idle != maxReaders || st.MaxIdleClosed != 0 {
		t.Errorf("after a burst of %d readers: %d idle, %d closed for being idle; want %d, 0", maxReaders, st.Idle, st.MaxIdleClosed, maxReaders)
	}
	for range 10 {
		if _, err := s.Claim(t.Context(), "k", time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.wdb.Stats(); st.OpenConnections != 1 || st.MaxIdleClosed != 0 {
		t.Errorf("after 10 writes: %d writer connections, %d closed for being idle; want 1, 0", st.OpenConnections, st.MaxIdleClosed)
	}
}

// A read does not wait for a write: one made while a write transaction is
// open returns, and sees what was committed before it.
func TestSQLiteReadsBesideAWrite(t *testing.T) {
	s := openTemp(t, SQLiteOptions{})
	if err := s.SetCached(t.Context(), "k", []byte("before"), time.Hour); err != nil {
		t.Fatal(err)
	}
	err := s.write(t.Context(), func(w *wtx) error {
		if _, err := w.exec(qSetCached, "k", []byte("during"), w.now+time.Hour.Milliseconds()); err != nil {
			return err
		}
		// Bounded only so that a read that waits for the writer fails the
		// test rather than hanging it.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		val, ok, err := s.Cached(ctx, "k")
		if err != nil || !ok || string(val) != "before" {
			t.Errorf("a read during a write: %q, %v, %v; want the committed value, before", val, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if val, _, err := s.Cached(t.Context(), "k"); err != nil || string(val) != "during" {
		t.Errorf("after the write: %q, %v; want during", val, err)
	}
}

// A reader's page cache is bounded at readerCacheKiB (SQLite drops it
// whenever another connection has written since, so a large one seldom
// serves); the writer keeps SQLite's default, 2,000 KiB, which stays warm.
func TestSQLiteCacheSizes(t *testing.T) {
	s := openTemp(t, SQLiteOptions{})
	for _, c := range []struct {
		name string
		db   *sql.DB
		want int
	}{{"writer", s.wdb, -2000}, {"reader", s.rdb, -readerCacheKiB}} {
		var got int
		if err := c.db.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: cache_size %d, want %d", c.name, got, c.want)
		}
	}
}
