package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// rawCapi returns the C API of one connection of db (which has no
// authorizer), held until the test ends.
func rawCapi(t *testing.T, db *sql.DB) *capi {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var c *capi
	err = conn.Raw(func(dc any) error {
		h, err := sqliteHandle(dc.(driver.Conn))
		if err != nil {
			return err
		}
		c = &capi{handle: h, tls: libc.NewTLS()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.tls.Close() })
	if err := viewsWhole(c.tls, c.handle); err != nil { // compile as the restricted connections do
		t.Fatal(err)
	}
	return c
}

// listProgram steps st, compiled in EXPLAIN mode, and returns the program
// EXPLAIN lists: of every row the opcode, P1, P2, P3 and P5.
func listProgram(c *capi, st uintptr) ([]instr, error) {
	var prog []instr
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, st); rc {
		case sqlite3.SQLITE_DONE:
			return prog, nil
		case sqlite3.SQLITE_ROW:
		default:
			return nil, errorOf(c, rc)
		}
		prog = append(prog, instr{
			Opcode: strings.Clone(cText(c.tls, st, 1)),
			P1:     sqlite3.Xsqlite3_column_int64(c.tls, st, 2),
			P2:     sqlite3.Xsqlite3_column_int64(c.tls, st, 3),
			P3:     sqlite3.Xsqlite3_column_int64(c.tls, st, 4),
			P5:     sqlite3.Xsqlite3_column_int64(c.tls, st, 6),
		})
	}
}

// TestOpcodeNames checks opcodeNames against SQLite's own names: it makes
// one instruction of a compiled EXPLAIN statement each opcode in turn, and
// reads the name EXPLAIN lists for it. The names are the opcodes 0 to n-1,
// with none missing.
func TestOpcodeNames(t *testing.T) {
	_, rw := scriptRW(t, "fixture.sql")
	c := rawCapi(t, rw)
	st, err := prepare(c, "EXPLAIN SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, st)
	v := (*sqlite3.TVdbe)(cMem(st))
	if v.FnOp < 2 {
		t.Fatalf("EXPLAIN SELECT 1 has %d instructions", v.FnOp)
	}
	op := &unsafe.Slice((*sqlite3.TVdbeOp)(cMem(v.FaOp)), v.FnOp)[1]
	saved := op.Fopcode
	defer func() { op.Fopcode = saved }()
	n := 0
	for n < len(opcodeNames) && opcodeNames[n] != "" {
		n++
	}
	if n < 150 {
		t.Fatalf("opcodeNames names only opcodes 0 to %d", n-1)
	}
	for i := n; i < len(opcodeNames); i++ {
		if opcodeNames[i] != "" {
			t.Errorf("opcodeNames[%d] = %q after the gap at %d", i, opcodeNames[i], n)
		}
	}
	for i := range n {
		op.Fopcode = uint8(i)
		sqlite3.Xsqlite3_reset(c.tls, st)
		prog, err := listProgram(c, st)
		if err != nil {
			t.Fatal(err)
		}
		if got := prog[1].Opcode; got != opcodeNames[i] {
			t.Errorf("opcode %d: EXPLAIN names it %q, opcodeNames %q", i, got, opcodeNames[i])
		}
	}
}

// TestReadProgramIsExplain: the program readProgram reads from a compiled
// statement is, instruction for instruction, what EXPLAIN lists for the
// same compiled statement, and what EXPLAIN lists for the statement
// compiled with the EXPLAIN prefix (as Open's privileged reads compile it).
// The statements are every corpus of testdata, writes included, compiled
// on a read-write connection with no authorizer.
func TestReadProgramIsExplain(t *testing.T) {
	for _, c := range []struct {
		db      string
		corpora []string
	}{
		{"shop.sql", []string{"benign.sql", "hostile.sql"}},
		{"fixture.sql", []string{"writes.sql"}},
		{"doors.sql", []string{"doors_hostile.sql"}},
	} {
		t.Run(c.db, func(t *testing.T) {
			_, rw := scriptRW(t, c.db)
			if c.db == "fixture.sql" {
				// A trigger, so that a write has a subprogram to list.
				if _, err := rw.Exec("CREATE TEMP TRIGGER roconn_t AFTER DELETE ON main.orders BEGIN SELECT 1; END"); err != nil {
					t.Fatal(err)
				}
			}
			capi := rawCapi(t, rw)
			compared, subprograms := 0, 0
			for _, corpus := range c.corpora {
				for _, r := range LoadCorpus(t, corpus, t.TempDir()) {
					stmt := r.SQL
					if sh := scan(stmt); len(sh.stmts) == 1 {
						stmt = sh.stmts[0]
					}
					listed, ok, err := compileBoth(capi, stmt)
					if err != nil {
						t.Errorf("%s: %v", r.Name, err)
						continue
					}
					if !ok {
						continue // does not compile here (or is more than one statement)
					}
					st, err := prepare(capi, stmt)
					if err != nil {
						t.Errorf("%s: compiles with the EXPLAIN prefix, not without: %v", r.Name, err)
						continue
					}
					plain, err := readProgram(capi, st)
					plain = slices.Clone(plain)
					sqlite3.Xsqlite3_finalize(capi.tls, st)
					var ref *Refusal
					if errors.As(err, &ref) && slices.ContainsFunc(listed, func(in instr) bool { return in.Opcode == "Program" }) {
						subprograms++
						continue
					}
					if err != nil {
						t.Errorf("%s: readProgram: %v", r.Name, err)
						continue
					}
					if !slices.Equal(plain, listed) {
						t.Errorf("%s: compiled plainly, readProgram reads\n%v\nEXPLAIN lists\n%v", r.Name, plain, listed)
					}
					compared++
				}
			}
			if compared < 20 {
				t.Errorf("only %d statements compared", compared)
			}
			if c.db == "fixture.sql" && subprograms == 0 {
				t.Error("no statement had a trigger program")
			}
		})
	}
}

// compileBoth compiles stmt with the EXPLAIN prefix and returns its
// program as EXPLAIN lists it, after checking that readProgram reads the
// same from that compiled statement (or refuses it for its trigger
// program). ok is false if stmt does not compile.
func compileBoth(c *capi, stmt string) (listed []instr, ok bool, err error) {
	st, err := prepare(c, explainPrefix+stmt)
	if err != nil {
		return nil, false, nil
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, st)
	direct, derr := readProgram(c, st)
	direct = slices.Clone(direct)
	listed, err = listProgram(c, st)
	if err != nil {
		return nil, false, err
	}
	var ref *Refusal
	switch {
	case errors.As(derr, &ref) && slices.ContainsFunc(listed, func(in instr) bool { return in.Opcode == "Program" }):
		// A trigger program, which EXPLAIN lists after the main one.
	case derr != nil:
		return nil, false, fmt.Errorf("readProgram of the EXPLAIN statement: %w", derr)
	case !slices.Equal(direct, listed):
		return nil, false, fmt.Errorf("on one compiled statement, readProgram reads\n%v\nEXPLAIN lists\n%v", direct, listed)
	}
	return listed, true, nil
}
