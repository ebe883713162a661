package roconn

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// fixtureRW writes testdata/fixture.sql to a new database and returns its
// path and a plain read-write pool on it with no authorizer.
func fixtureRW(t *testing.T) (string, *sql.DB) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", "fixture.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fixture.db")
	rw := sql.OpenDB(&plainConnector{driver: &sqlite.Driver{}, dsn: path})
	rw.SetMaxOpenConns(1)
	t.Cleanup(func() { rw.Close() })
	if _, err := rw.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	return path, rw
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// writeStatements returns the statements of testdata/writes.sql, which
// would change the fixture, for the tests of one layer alone; the files they
// would create are in dir.
func writeStatements(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, r := range LoadCorpus(t, "writes.sql", dir) {
		out = append(out, r.SQL)
	}
	return out
}

// TestProgramCheckAlone: the EXPLAIN check, given the program of each write
// compiled on a connection with no authorizer, refuses every one; and it
// passes the scratch-table shapes that honest queries compile to.
func TestProgramCheckAlone(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	dir := t.TempDir()
	before := fileHash(t, path)
	conn, err := rw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range writeStatements(t, dir) {
		prog, err := explain(ctx, conn, q)
		if err != nil {
			t.Errorf("EXPLAIN %s: %v", q, err)
			continue
		}
		r := checkProgram(prog).refusal(DefaultColumns)
		if r == nil || r.Layer != LayerReadOnly {
			t.Errorf("checkProgram(EXPLAIN %s) = %v, want a %q refusal", q, r, LayerReadOnly)
		}
	}
	for _, q := range []string{
		"SELECT * FROM orders",
		"SELECT DISTINCT status FROM orders",
		"SELECT status FROM orders UNION SELECT region FROM customers",
		"SELECT status FROM orders INTERSECT SELECT 'shipped'",
		"SELECT status FROM orders EXCEPT SELECT 'shipped'",
		"SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = 'west')",
		"SELECT id FROM orders WHERE status IN ('a', 'b', 'c', 'd')",
		"SELECT status, count(*) FROM orders GROUP BY status ORDER BY 2 DESC",
		"SELECT * FROM orders ORDER BY note, total LIMIT 3",
		"SELECT id, row_number() OVER (PARTITION BY customer_id ORDER BY total), sum(total) OVER (ORDER BY id ROWS 2 PRECEDING) FROM orders",
		"WITH RECURSIVE n(x) AS (SELECT 1 UNION SELECT x + 1 FROM n WHERE x < 10) SELECT * FROM n",
		"WITH m AS MATERIALIZED (SELECT * FROM orders) SELECT a.id FROM m a JOIN m b ON a.customer_id = b.customer_id",
		"SELECT o.id FROM orders o JOIN customers c ON c.region = o.status", // an automatic index
		"SELECT count(*) FROM orders",
		"SELECT group_concat(DISTINCT status) FROM orders",
	} {
		prog, err := explain(ctx, conn, q)
		if err != nil {
			t.Errorf("EXPLAIN %s: %v", q, err)
			continue
		}
		if r := checkProgram(prog).refusal(DefaultColumns); r != nil {
			t.Errorf("checkProgram(EXPLAIN %s) = %v, want nil", q, r)
		}
	}
	conn.Close()
	if fileHash(t, path) != before {
		t.Fatal("EXPLAIN changed the file")
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("EXPLAIN created files: %v", files)
	}
}

// TestCheckProgramCursors: Insert and friends pass on scratch cursors only.
func TestCheckProgramCursors(t *testing.T) {
	for _, tt := range []struct {
		prog  []instr
		write string
	}{
		{[]instr{{Opcode: "OpenEphemeral", P1: 1}, {Opcode: "IdxInsert", P1: 1}, {Opcode: "ResultRow", P2: 1}}, ""},
		{[]instr{{Opcode: "SorterOpen", P1: 2}, {Opcode: "SorterInsert", P1: 2}, {Opcode: "ResultRow", P2: 1}}, ""},
		{[]instr{{Opcode: "OpenRead", P1: 0}, {Opcode: "Insert", P1: 0}}, "Insert"},
		{[]instr{{Opcode: "Insert", P1: 3}}, "Insert"}, // a cursor nobody opened
		{[]instr{{Opcode: "OpenEphemeral", P1: 1}, {Opcode: "OpenRead", P1: 1}, {Opcode: "Delete", P1: 1}}, "Delete"},
		{[]instr{{Opcode: "Transaction", P2: 1}}, "Transaction"},
		{[]instr{{Opcode: "Transaction", P2: 0}, {Opcode: "ResultRow", P2: 1}}, ""},
		{[]instr{{Opcode: "TableLock", P3: 1}}, "TableLock"},
	} {
		if got := checkProgram(tt.prog).write; got != tt.write {
			t.Errorf("checkProgram(%v).write = %q, want %q", tt.prog, got, tt.write)
		}
	}
	if r := checkProgram([]instr{{Opcode: "ResultRow", P2: 41}}).refusal(40); r == nil || r.Layer != LayerLimit {
		t.Errorf("41 columns: %v, want a %q refusal", r, LayerLimit)
	}
	if r := checkProgram([]instr{{Opcode: "Halt"}}).refusal(40); r == nil || r.Layer != LayerReadOnly {
		t.Errorf("no ResultRow: %v, want a %q refusal", r, LayerReadOnly)
	}
}

// testAccess builds the restricted access for the fixture and the test
// policy, the way Open does.
func testAccess(t *testing.T, path string) *access {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	priv := openPrivileged(dsnFor(path))
	defer priv.pool.Close()
	sch, err := priv.readSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := resolvePolicy(p, sch)
	if err != nil {
		t.Fatal(err)
	}
	acc, check, _, err := buildAccess(ctx, priv, sch, exp, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	check.Close()
	return acc
}

// TestAuthorizerAlone: the authorizer, installed on a read-WRITE connection
// with no EXPLAIN check in front, denies every write and every private read,
// and the file is unchanged.
func TestAuthorizerAlone(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	rw.Close()
	acc := testAccess(t, path)
	dir := t.TempDir()
	before := fileHash(t, path)

	st := &authState{access: acc, modules: map[string]bool{}}
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(dc sqlite.ExecQuerierContext, _ string) error {
		return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(st.authorize)
	})
	pool := sql.OpenDB(&plainConnector{driver: d, dsn: path}) // read-write
	defer pool.Close()
	pool.SetMaxOpenConns(1)

	for _, q := range writeStatements(t, dir) {
		st.begin(q)
		_, err := pool.ExecContext(ctx, q)
		if err == nil || st.denial() == "" {
			t.Errorf("Exec(%s): err %v, denial %q; want a denial", q, err, st.denial())
		}
	}
	for _, q := range []string{
		"SELECT token FROM secrets",
		"SELECT count(*) FROM secrets",
		"SELECT email FROM customers",
		"WITH customer_regions AS (SELECT email AS region FROM customers) SELECT region FROM customer_regions",
		"SELECT sql FROM sqlite_schema",
		"SELECT name FROM pragma_table_info('secrets')",
		"SELECT count(*) FROM json_each('[1]')",
		"SELECT count(*) FROM dbstat",
	} {
		st.begin(q)
		rows, err := pool.QueryContext(ctx, q)
		if err == nil {
			rows.Close()
		}
		if err == nil || st.denial() == "" {
			t.Errorf("Query(%s): err %v, denial %q; want a denial", q, err, st.denial())
		}
	}
	st.reset()
	var n int
	if err := pool.QueryRowContext(ctx, "SELECT count(*) FROM orders o JOIN customer_regions c ON c.id = o.customer_id").Scan(&n); err != nil || n != 12 {
		t.Errorf("an allowed read: %d, %v (denial %q)", n, err, st.denial())
	}
	pool.Close()
	if fileHash(t, path) != before {
		t.Fatal("the file changed under the authorizer alone")
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("files were created: %v", files)
	}
}

func TestScan(t *testing.T) {
	for _, tt := range []struct {
		query  string
		stmts  int
		first  string
		params bool
	}{
		{"SELECT 1", 1, "select", false},
		{"  select 1;  ", 1, "select", false},
		{"SELECT 1; SELECT 2", 2, "select", false},
		{"SELECT ';' ; ", 1, "select", false},
		{`SELECT "a;b", [c;d], ` + "`e;f`" + ` FROM t`, 1, "select", false},
		{"SELECT 'it''s;' -- ; \n", 1, "select", false},
		{"SELECT 1 /* ; */", 1, "select", false},
		{"SELECT 1 /* ; unterminated", 1, "select", false},
		{"SELECT 1 /*", 1, "select", false},
		{"SELECT x'00'; DELETE FROM t", 2, "select", false},
		{"-- c\n/* d */ Explain SELECT 1", 1, "explain", false},
		{";;", 0, "", false},
		{"", 0, "", false},
		{"WITH a AS (SELECT 1) SELECT * FROM a", 1, "with", false},
		// SQLite reads $a(') as one variable and then sees a second
		// statement; the scanner sees a string. That is why Query refuses
		// every parameter character.
		{"SELECT $a(');')", 1, "select", true},
		{"SELECT :a", 1, "select", true},
		{"SELECT ':a', '?', '$x'", 1, "select", false},
		{"SELECT [a]]; x", 2, "select", false},
		// '$' continues a name, as in SQLite; only at the start of a token
		// is it a parameter.
		{"SELECT a$b FROM t", 1, "select", false},
		{"SELECT 1 AS a$b; SELECT c$$", 2, "select", false},
		{"SELECT é$, _$x FROM t", 1, "select", false},
		{"SELECT x$'a'; y", 2, "select", false}, // the name x$, then a string
		{"SELECT 1$", 1, "select", false},       // SQLite: an illegal token, one statement
		{"SELECT a $b", 1, "select", true},
		{"SELECT a.$b", 1, "select", true},
		{"SELECT 'a'$b", 1, "select", true},
		{"SELECT a$(';')", 1, "select", false}, // a$, then a call: the string is a string
		{"select$ 1", 1, "select$", false},
		// SQLite's tokenizer treats \v as space only inside a run of
		// whitespace that another space character starts; a token that
		// starts with \v is illegal (and so a statement of its own).
		{"SELECT 1 \v", 1, "select", false},
		{"SELECT 1; \v\v", 1, "select", false},
		{"SELECT 1; -- c\n\v", 1, "select", false},
		{"SELECT 1;\v", 2, "select", false},
		{"SELECT 1; /* c */\v", 2, "select", false},
		{"\v", 1, "", false},
	} {
		sh := scan(tt.query)
		if len(sh.stmts) != tt.stmts || sh.first != tt.first || sh.params != tt.params {
			t.Errorf("scan(%q) = %d statements %q, first %q, params %v; want %d, %q, %v",
				tt.query, len(sh.stmts), sh.stmts, sh.first, sh.params, tt.stmts, tt.first, tt.params)
		}
	}
	if !scan("SELECT 1\x00; DROP TABLE t").nul {
		t.Error("scan missed a NUL byte")
	}
}

// TestValues: values come back as Result documents them, through the whole
// Query path: TEXT as stored whatever the declared type, a blob as text if it
// is UTF-8 and as hex if not.
func TestValues(t *testing.T) {
	path, rw := fixtureRW(t)
	if _, err := rw.Exec(`CREATE TABLE vals (d DATE, dt DATETIME, ts TIMESTAMP, b BLOB, i INTEGER, r REAL, n);
		INSERT INTO vals VALUES ('2024-01-05', '2024-01-05T10:30:00Z', '2024-01-05 10:30:00.5+01:00', x'00ff', 3, 2.5, NULL),
		                        ('not a date', '2021-01-01 00:00:00', 1704450600, CAST('héllo' AS BLOB), -1, 1e300, 'x')`); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	db, err := Open(context.Background(), path, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Query(context.Background(), "SELECT * FROM vals ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"2024-01-05", "2024-01-05T10:30:00Z", "2024-01-05 10:30:00.5+01:00", "x'00ff'", int64(3), 2.5, nil},
		{"not a date", "2021-01-01 00:00:00", int64(1704450600), "héllo", int64(-1), 1e300, "x"},
	}
	if fmt.Sprintf("%#v", res.Rows) != fmt.Sprintf("%#v", want) {
		t.Errorf("rows\n got %#v\nwant %#v", res.Rows, want)
	}
}

// TestConnectFailsClosed: a connection whose hook did not run, that can
// write, or that cannot be interrupted never reaches the pool.
func TestConnectFailsClosed(t *testing.T) {
	path, rw := fixtureRW(t)
	rw.Close()
	c := &connector{}
	if _, err := c.wrap(nil, nil, false); err == nil {
		t.Error("wrap of an unhooked connection succeeded")
	}
	if _, err := sqliteHandle(nil); err == nil {
		t.Error("sqliteHandle(nil) succeeded")
	}

	open := func(dsn string) driver.Conn {
		t.Helper()
		dc, err := (&sqlite.Driver{}).Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dc.Close() })
		return dc
	}
	st := &authState{access: &access{}}
	if _, err := c.wrap(open(path), st, true); !errors.Is(err, errWritable) {
		t.Errorf("wrap of a read-write connection: %v, want %v", err, errWritable)
	}
	// The same file opened read-only passes, so the refusal above was for
	// being writable and nothing else.
	if pc, err := c.wrap(open(dsnFor(path)), st, true); err != nil || pc.auth != st {
		t.Errorf("wrap of a read-only connection: %v, %v", pc, err)
	}
}

// TestConnectSetsLimits: every physical connection gets the length and
// attach limits when it is opened, before any Query. The connections here
// allow everything, so only the limits can stop the statements.
func TestConnectSetsLimits(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	rw.Close()
	const valueBytes = 1000
	allowAll := func(sqlite.AuthorizerActionCode, string, string, string, string) sqlite.AuthorizerReturnCode {
		return sqlite.AuthorizerOK
	}
	c := newConnector(dsnFor(path), valueBytes, func(map[string]bool) (sqlite.AuthorizerFn, *authState) {
		return allowAll, &authState{access: &access{}}
	})
	pool := openPool(c, 1)
	defer pool.Close()
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pc, err := physOf(conn)
	if err != nil {
		t.Fatal(err)
	}
	tls := libc.NewTLS()
	defer tls.Close()
	if got := sqlite3.Xsqlite3_limit(tls, pc.handle, sqlite3.SQLITE_LIMIT_LENGTH, -1); got != valueBytes {
		t.Errorf("length limit %d, want %d", got, valueBytes)
	}
	if got := sqlite3.Xsqlite3_limit(tls, pc.handle, sqlite3.SQLITE_LIMIT_ATTACHED, -1); got != 0 {
		t.Errorf("attached limit %d, want 0", got)
	}
	var s string
	if err := conn.QueryRowContext(ctx, "SELECT printf('%.*c', 999, 'x')").Scan(&s); err != nil {
		t.Errorf("a value under the limit: %v", err)
	}
	var se *sqlite.Error
	if err := conn.QueryRowContext(ctx, "SELECT printf('%.*c', 1001, 'x')").Scan(&s); !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_TOOBIG {
		t.Errorf("a value over the limit: %v, want SQLITE_TOOBIG", err)
	}
	dir := t.TempDir()
	for _, q := range []string{"ATTACH ':memory:' AS m", "VACUUM INTO '" + dir + "/copy.db'"} {
		if _, err := conn.ExecContext(ctx, q); err == nil {
			t.Errorf("%s succeeded with no attach slots", q)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("files were created: %v", files)
	}
}

// TestOpenProbes: Open's second probe reaches the program check and only it:
// compiling VACUUM asks the authorizer nothing, and the check refuses its
// program. A probe that Query lets through fails Open's proof.
func TestOpenProbes(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	rw.Close()
	db, err := Open(ctx, path, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prog, denial, err := pooledProgram(ctx, db, "VACUUM")
	if err != nil || denial != "" {
		t.Fatalf("EXPLAIN VACUUM: %v, denial %q; want it compiled with no denial", err, denial)
	}
	if r := checkProgram(prog).refusal(DefaultColumns); r == nil || r.Layer != LayerReadOnly {
		t.Errorf("checkProgram(EXPLAIN VACUUM) = %v, want a %q refusal", r, LayerReadOnly)
	}
	if err := db.proveReadOnly(ctx); err != nil {
		t.Errorf("proveReadOnly: %v", err)
	}
	if err := db.probeRefused(ctx, "SELECT 1", LayerReadOnly); err == nil {
		t.Error("probeRefused(SELECT 1) succeeded; want Open to fail closed")
	}
	if err := db.probeRefused(ctx, "DELETE FROM orders", LayerReadOnly); err == nil {
		t.Error("probeRefused of an authorizer refusal as a program refusal succeeded")
	}
}

// pooledProgram compiles query as Query does on a connection of db's pool
// and returns its program, unchecked, and the authorizer's denial if any.
func pooledProgram(ctx context.Context, db *DB, query string) (prog []instr, denial string, err error) {
	j, err := db.pool.start(ctx, func(_ context.Context, pc *physConn) (*Result, error) {
		pc.auth.reset()
		st, err := prepare(&pc.capi, query)
		denial = pc.auth.denial()
		if err != nil {
			return nil, err
		}
		defer sqlite3.Xsqlite3_finalize(pc.tls, st)
		prog, err = readProgram(&pc.capi, st)
		prog = slices.Clone(prog) // the connection's buffer is reused
		return nil, err
	})
	if err != nil {
		return nil, "", err
	}
	<-j.done
	return prog, denial, j.err
}
