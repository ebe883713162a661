package state

import (
	"path/filepath"
	"testing"
)

// Every connection to the state file syncs at checkpoints, not at every
// commit (synchronous=NORMAL, 1), and stays in WAL mode.
func TestSQLiteSynchronousNormal(t *testing.T) {
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "state.db"), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Hold several connections at once, so that more than one is asked.
	const n = 4
	for i := range n {
		c, err := s.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var sync int
		var mode string
		if err := c.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if sync != 1 || mode != "wal" {
			t.Errorf("connection %d: synchronous %d, journal_mode %q; want 1 (NORMAL), wal", i, sync, mode)
		}
	}
}
