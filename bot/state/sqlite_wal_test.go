package state

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The write-ahead log is checkpointed as it goes and stays bounded however
// steadily it is written: 8 writers making 1,000 writes each (about 125 MiB
// of log if it were never checkpointed) leave a log of at most 16 MiB.
func TestSQLiteLogStaysBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := OpenSQLite(t.Context(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if err := s.SetCached(t.Context(), fmt.Sprintf("answer:C%d:%d", g, i), []byte("a record of an answer, of some length, like a question and its SQL"), time.Hour); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if max := int64(16 << 20); fi.Size() > max {
		t.Errorf("log of %d KiB after 8,000 writes, want at most %d KiB", fi.Size()>>10, max>>10)
	}
	t.Logf("log of %d KiB after 8,000 writes", fi.Size()>>10)
}

// A new state file has pages of 1 KiB and is checkpointed at about 4 MiB of
// log (4,000 pages); a file made with SQLite's 4 KiB pages keeps them, and
// is checkpointed at SQLite's default of 1,000 pages, the same 4 MiB.
func TestSQLitePageSize(t *testing.T) {
	pageAndCheckpoint := func(s *SQLite) (page, pages int) {
		t.Helper()
		if err := s.wdb.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&page); err != nil {
			t.Fatal(err)
		}
		if err := s.wdb.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		return page, pages
	}
	if page, pages := pageAndCheckpoint(openTemp(t, SQLiteOptions{})); page != 1024 || pages != 4000 {
		t.Errorf("new file: page size %d, checkpoint at %d pages; want 1024, 4000", page, pages)
	}

	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(4096)&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(t.Context(), "CREATE TABLE x (y)"); err != nil {
		t.Fatal(err)
	}
	old.Close()
	s, err := OpenSQLite(t.Context(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if page, pages := pageAndCheckpoint(s); page != 4096 || pages != 1000 {
		t.Errorf("file of 4 KiB pages: page size %d, checkpoint at %d pages; want 4096, 1000", page, pages)
	}
}
