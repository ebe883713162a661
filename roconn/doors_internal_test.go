package roconn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// doorsPrivate are the private values of testdata/doors.sql: everything
// that contains "SECRET", and the salaries.
var doorsPrivate = []string{"SECRET", "9100011", "9100023", "9100037", "9100041", "9100059", "9100067"}

// leaked returns the first private value of doors.sql in out, or "".
func leaked(out string) string {
	for _, v := range doorsPrivate {
		if strings.Contains(out, v) {
			return v
		}
	}
	return ""
}

// scriptRW writes the script testdata/file to a new database and returns its
// path and a plain read-write pool on it with no authorizer.
func scriptRW(t *testing.T, file string) (string, *sql.DB) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", file))
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

// layersFor builds, as Open does, the authorizer's access and the program
// check for the database at path under testdata/policyFile.
func layersFor(t *testing.T, path, policyFile string) (*access, *programCheck) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", policyFile))
	if err != nil {
		t.Fatal(err)
	}
	return layersForPolicy(t, path, data)
}

// layersForPolicy is layersFor with the policy's text.
func layersForPolicy(t *testing.T, path string, data []byte) (*access, *programCheck) {
	t.Helper()
	ctx := context.Background()
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
	t.Cleanup(func() { check.Close() })
	return acc, check
}

// authorizerOnly returns a read-write pool on path whose only layer is the
// authorizer of acc, and that authorizer's state. Its connections run
// subqueries whole, as roconn's do (with the query flattener on, a view's
// rows could come in the order of an index over a column it leaves out).
func authorizerOnly(t *testing.T, path string, acc *access) (*sql.DB, *authState) {
	t.Helper()
	st := &authState{access: acc, modules: map[string]bool{}}
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(dc sqlite.ExecQuerierContext, _ string) error {
		mods, err := moduleNames(context.Background(), dc)
		if err != nil {
			return err
		}
		st.modules = mods
		return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(st.authorize)
	})
	pool := sql.OpenDB(&wholeConnector{plainConnector{driver: d, dsn: path}})
	pool.SetMaxOpenConns(1)
	t.Cleanup(func() { pool.Close() })
	return pool, st
}

// queryText runs q on pool and returns its rows as text, or the error.
func queryText(ctx context.Context, pool *sql.DB, q string) (string, error) {
	rows, err := pool.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return b.String(), err
		}
		for _, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprint(&b, v, " ")
		}
		b.WriteString("\n")
	}
	return b.String(), rows.Err()
}

// TestDoorsAuthorizerAlone: the authorizer, on a read-write connection with
// no program check in front, denies every statement of the doors corpus,
// and nothing private comes out.
func TestDoorsAuthorizerAlone(t *testing.T) {
	ctx := context.Background()
	path, rw := scriptRW(t, "doors.sql")
	rw.Close()
	acc, _ := layersFor(t, path, "doors_policy.yaml")
	before := fileHash(t, path)
	pool, st := authorizerOnly(t, path, acc)
	for _, r := range LoadCorpus(t, "doors_hostile.sql", t.TempDir()) {
		st.begin(r.SQL)
		out, err := queryText(ctx, pool, r.SQL)
		if err == nil || st.denial() == "" {
			t.Errorf("%s: err %v, denial %q; want a denial", r.Name, err, st.denial())
		}
		if v := leaked(out + fmt.Sprint(err)); v != "" {
			t.Errorf("%s: %q in the output", r.Name, v)
		}
	}
	pool.Close()
	if fileHash(t, path) != before {
		t.Fatal("the file changed")
	}
}

// TestDoorsProgramCheckAlone: the check of the compiled program, given the
// program of each statement of the doors corpus compiled on a connection
// with no authorizer, refuses every one.
func TestDoorsProgramCheckAlone(t *testing.T) {
	ctx := context.Background()
	path, rw := scriptRW(t, "doors.sql")
	_, check := layersFor(t, path, "doors_policy.yaml")
	before := fileHash(t, path)
	conn, err := rw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, r := range LoadCorpus(t, "doors_hostile.sql", t.TempDir()) {
		prog, err := explain(ctx, conn, r.SQL)
		if err != nil {
			t.Errorf("%s does not compile: %v", r.Name, err)
			continue
		}
		var ref *Refusal
		err = programOnly(ctx, check, r.SQL, prog)
		if !errors.As(err, &ref) || ref.Layer != LayerReadOnly {
			t.Errorf("%s: %v, want a %q refusal", r.Name, err, LayerReadOnly)
			continue
		}
		if v := leaked(ref.Reason); v != "" {
			t.Errorf("%s: %q in the reason %q", r.Name, v, ref.Reason)
		}
	}
	conn.Close()
	if fileHash(t, path) != before {
		t.Fatal("the file changed")
	}
}

// programOnly is the check of the compiled program as Query makes it.
func programOnly(ctx context.Context, check *programCheck, stmt string, prog []instr) error {
	if r := checkProgram(prog).refusal(DefaultColumns); r != nil {
		return r
	}
	return check.check(ctx, stmt, prog)
}

// TestDoorsCorpusRunsWithNoLayer: with neither layer, every statement of
// the doors corpus runs, and many return private values outright (the
// others are oracles: counts, orders, ids that answer a question about a
// hidden value). So the corpus tests can fail: a layer that let everything
// through would be caught.
func TestDoorsCorpusRunsWithNoLayer(t *testing.T) {
	ctx := context.Background()
	_, rw := scriptRW(t, "doors.sql")
	recs := LoadCorpus(t, "doors_hostile.sql", t.TempDir())
	ran, leaks := 0, 0
	for _, r := range recs {
		out, err := queryText(ctx, rw, r.SQL)
		if err != nil && leaked(err.Error()) == "" { // an error can leak too: bad JSON path: 'WV78SECRET0004'
			t.Errorf("%s does not run even with no layer: %v", r.Name, err)
			continue
		}
		ran++
		if leaked(out+fmt.Sprint(err)) != "" {
			leaks++
		}
	}
	t.Logf("with no layer: %d of %d statements run, %d return private values", ran, len(recs), leaks)
	if leaks < len(recs)/3 {
		t.Errorf("only %d of %d statements return private values with no layer", leaks, len(recs))
	}
}

// TestTextRefusalDeepNesting: the authorizer's look at a statement's text
// goes through it once, however deeply it nests (a scan from every "(" to
// its ")" would take hours here).
func TestTextRefusalDeepNesting(t *testing.T) {
	path, rw := scriptRW(t, "doors.sql")
	rw.Close()
	acc, _ := layersFor(t, path, "doors_policy.yaml")
	const depth = 200_000
	stmt := "SELECT " + strings.Repeat("abs(", depth) + "1" + strings.Repeat(")", depth) + " FROM departments NATURAL JOIN west_staff"
	start := time.Now()
	why := acc.textRefusal(stmt, nil)
	t.Logf("%d bytes in %v: %q", len(stmt), time.Since(start), why)
	if why != "" {
		t.Errorf("refused: %s", why)
	}
}

// TestNaturalJoinUnwrittenNames: a NATURAL join compares the names its
// sides share, and SQLite's own tables and table-valued functions have
// columns (value, key, name, type, data, ...) that no statement has to
// write. A table that hides columns of such names, joined NATURAL to one
// of them, would be an equality oracle whose compared name never appears
// in the text; the authorizer alone refuses it, as does the program check
// alone.
func TestNaturalJoinUnwrittenNames(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "notes.db")
	rw := sql.OpenDB(&plainConnector{driver: &sqlite.Driver{}, dsn: path})
	if _, err := rw.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, value TEXT, key TEXT, name TEXT, type TEXT, data BLOB, pgno INTEGER);
		INSERT INTO notes VALUES (1, 'SECRET one', 'SECRET key', 'departments', 'table', NULL, 1)`); err != nil {
		t.Fatal(err)
	}
	rw.SetMaxOpenConns(1)
	defer rw.Close()
	acc, check := layersForPolicy(t, path, []byte("expose: {notes: {hide: [value, key, name, type, data, pgno]}}"))
	pool, st := authorizerOnly(t, path, acc)
	conn, err := rw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		`SELECT count(*) FROM notes NATURAL JOIN json_each('["SECRET one"]')`,
		`SELECT id FROM notes NATURAL JOIN json_tree('{"SECRET key": 1}')`,
		`SELECT count(*) FROM notes NATURAL JOIN sqlite_master`,
		`SELECT count(*) FROM notes NATURAL JOIN pragma_table_list`,
		`SELECT count(*) FROM notes NATURAL LEFT JOIN sqlite_dbpage`,
	} {
		prog, err := explain(ctx, conn, q)
		if err != nil {
			t.Fatalf("%s does not compile: %v", q, err)
		}
		if err := programOnly(ctx, check, q, prog); layerOfErr(err) != LayerReadOnly {
			t.Errorf("program check alone: %s: %v, want a refusal", q, err)
		}
		st.begin(q)
		out, err := queryText(ctx, pool, q)
		if err == nil || st.denial() == "" {
			t.Errorf("authorizer alone: %s: %q, %v; want a denial", q, out, err)
		}
	}
}

// layerOfErr returns the Layer of a *Refusal in err's chain, or "".
func layerOfErr(err error) Layer {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Layer
	}
	return ""
}

// TestAuthorizerTableAfterOpen: a table the file's owner creates after
// Open is no table the authorizer knows; alone, it still denies reading
// its columns, whatever alias the statement gives it, and when a subquery
// or common table expression of the statement bears its name (SQLite asks
// about both by that name). So a subquery's or common table expression's
// column that SQLite asks about by its name, as the left side of a RIGHT
// or FULL JOIN's unqualified USING column, is denied too, with a reason
// that says how to write it.
func TestAuthorizerTableAfterOpen(t *testing.T) {
	ctx := context.Background()
	path, rw := scriptRW(t, "doors.sql")
	acc, _ := layersFor(t, path, "doors_policy.yaml")
	if _, err := rw.Exec(`CREATE TABLE later (id INTEGER PRIMARY KEY, note TEXT);
		INSERT INTO later VALUES (1, 'SECRET later'), (2, 'SECRET later 2')`); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	pool, st := authorizerOnly(t, path, acc)
	for _, q := range []string{
		"SELECT note FROM later",
		"SELECT s.note FROM later AS s",
		"SELECT note FROM (later) AS s",
		"SELECT note FROM (later) AS later",
		"SELECT id FROM (later) AS s FULL JOIN departments USING (id)",
		"SELECT id FROM (SELECT 1 AS id) AS s FULL JOIN later USING (id)",
		"WITH later AS (SELECT 1 AS x) SELECT note FROM main.later",
		"SELECT note FROM later, (WITH later AS (SELECT 1 AS x) SELECT x FROM later) AS q",
		"SELECT l.note FROM main.later AS l, (SELECT 1 AS x) AS later",
	} {
		st.begin(q)
		out, err := queryText(ctx, pool, q)
		if err == nil || st.denial() == "" {
			t.Errorf("%s: %q, %v; want a denial", q, out, err)
		}
		if v := leaked(out + fmt.Sprint(err)); v != "" {
			t.Errorf("%s: %q in the output", q, v)
		}
	}
	for _, q := range []string{
		"SELECT id FROM (SELECT 2 AS id) AS s FULL JOIN departments USING (id)",
		"SELECT id FROM (SELECT 2 AS id) FULL JOIN departments USING (id)",
		"SELECT id FROM ((SELECT 2 AS id) AS [s q]) FULL JOIN departments USING (id)",
		"WITH c(id) AS (VALUES (3)) SELECT id FROM c AS x FULL JOIN departments USING (id)",
		"WITH RECURSIVE r(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM r WHERE id < 3) SELECT id FROM r FULL JOIN departments USING (id)",
	} {
		st.begin(q)
		out, err := queryText(ctx, pool, q)
		if err == nil || st.denial() == "" {
			t.Errorf("%s: %q, %v; want a denial", q, out, err)
		}
		if d := st.denial(); strings.Contains(q, "(SELECT 2 AS id) AS") && !strings.Contains(d, "name the side it comes from") {
			t.Errorf("%s: denial %q, want it to say how to write it", q, d)
		}
	}
}
