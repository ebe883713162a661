package state

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// A state file of schema version 1 is brought to version 2 with its
// verified answers, and a list read from the file is never older than the
// file, whoever wrote to it: here a plain connection, as an older sqlbot
// still running beside this one would, with no knowledge of verified_gen.
func TestSQLiteListSeesEveryWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	old, err := sql.Open("sqlite", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	v1, err := migration(0)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := old.ExecContext(t.Context(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(v1)
	exec("PRAGMA user_version = 1")
	vote := func(ts, user string, at int) {
		t.Helper()
		exec(`INSERT INTO verified (channel, ts, question, sql, checksum, source) VALUES ('C1', ?, 'q', 'SELECT 1', 'sum', 'src')
			ON CONFLICT DO NOTHING`, ts)
		exec("INSERT INTO votes (channel, ts, user, at) VALUES ('C1', ?, ?, ?)", ts, user, at)
	}
	vote("1.0", "U1", 1000)

	s, err := OpenSQLite(t.Context(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(want ...string) {
		t.Helper()
		for range 2 {
			got, err := s.ListVerified(t.Context(), 10)
			if err != nil {
				t.Fatal(err)
			}
			var ts []string
			for _, v := range got {
				ts = append(ts, v.TS)
				for _, o := range v.Votes {
					ts = append(ts, o.User)
				}
			}
			if len(ts) != len(want) {
				t.Fatalf("listed %v, want %v", ts, want)
			}
			for i := range ts {
				if ts[i] != want[i] {
					t.Fatalf("listed %v, want %v", ts, want)
				}
			}
		}
	}
	check("1.0", "U1")
	vote("2.0", "U1", 2000)
	check("2.0", "U1", "1.0", "U1")
	vote("1.0", "U2", 3000)
	check("2.0", "U1", "1.0", "U1", "U2")
	exec("DELETE FROM votes WHERE ts = '2.0'")
	exec("DELETE FROM verified WHERE ts = '2.0'")
	check("1.0", "U1", "U2")
	exec("DELETE FROM votes WHERE ts = '1.0' AND user = 'U1'")
	check("1.0", "U2")
	// And this Store's own writes, of course.
	if err := s.Verify(t.Context(), Verification{Channel: "C1", TS: "3.0", Question: "q", User: "U3", At: time.UnixMilli(4000)}); err != nil {
		t.Fatal(err)
	}
	check("3.0", "U3", "1.0", "U2")
}
