package state

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// Connections to the state file stay open once made: given back after a
// burst that used all of them, none is closed for being idle (it would be
// opened again at the next burst, its schema read and its statements
// compiled anew).
func TestSQLiteKeepsItsConnections(t *testing.T) {
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "state.db"), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var conns []*sql.Conn
	for range maxConns {
		c, err := s.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	if st := s.db.Stats(); st.Idle != maxConns || st.MaxIdleClosed != 0 {
		t.Errorf("after a burst of %d connections: %d idle, %d closed for being idle; want %d, 0", maxConns, st.Idle, st.MaxIdleClosed, maxConns)
	}
}
