package state

import (
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
