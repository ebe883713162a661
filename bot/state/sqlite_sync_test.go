package state

import (
	"database/sql"
	"testing"
)

// Every connection to the state file syncs at checkpoints, not at every
// commit (synchronous=NORMAL, 1), and stays in WAL mode.
func TestSQLiteSynchronousNormal(t *testing.T) {
	s := openTemp(t, SQLiteOptions{})
	// The writer, and every reader at once, so that each is asked.
	dbs := []*sql.DB{s.wdb}
	for range maxReaders {
		dbs = append(dbs, s.rdb)
	}
	for i, db := range dbs {
		c, err := db.Conn(t.Context())
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
