package roconn_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sqlbot/guard"
	"sqlbot/roconn"
)

// doorsPrivate are the private values of testdata/doors.sql.
var doorsPrivate = []string{"SECRET", "9100011", "9100023", "9100037", "9100041", "9100059", "9100067"}

// openDoors writes testdata/doors.sql to a new database and opens it under
// testdata/doors_policy.yaml.
func openDoors(t *testing.T) (*roconn.DB, string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", "doors.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "doors.db")
	execScript(t, path, string(script))
	data, err := os.ReadFile(filepath.Join("testdata", "doors_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := roconn.ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// TestDoorsWholePath: every statement of the doors corpus is refused on the
// whole path, the file is unchanged and nothing private comes out.
func TestDoorsWholePath(t *testing.T) {
	db, path := openDoors(t)
	before := fileSum(t, path)
	g := guard.New(db.Limits().Rows)
	by := map[string]int{}
	for _, r := range roconn.LoadCorpus(t, "doors_hostile.sql", t.TempDir()) {
		res, err := whole(g, db, r.SQL)
		noLeak(t, r.Name, describe(res, err), doorsPrivate)
		var gr *guard.Refusal
		var rr *roconn.Refusal
		switch {
		case err == nil:
			t.Errorf("%s ran and returned %d rows; want it refused", r.Name, len(res.Rows))
		case errors.As(err, &gr):
			by["guard"]++
		case errors.As(err, &rr):
			by[string(rr.Layer)]++
		default:
			t.Errorf("%s: %v; want a refusal", r.Name, err)
		}
	}
	t.Logf("refused by: %v", by)
	if fileSum(t, path) != before {
		t.Fatal("the database file changed")
	}
}

// doorsBeside opens the doors fixture as openDoors does, with the guard in
// front of it and a plain read-only connection on the same file beside it.
func doorsBeside(t *testing.T) (*roconn.DB, *guard.Guard, *sql.DB) {
	t.Helper()
	db, path := openDoors(t)
	plain, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	return db, guard.New(db.Limits().Rows), plain
}

// TestDoorsBenign: what the doors policy exposes can be read, through every
// kind of door, with the same rows as a plain connection.
func TestDoorsBenign(t *testing.T) {
	db, g, plain := doorsBeside(t)
	for _, q := range []string{
		"SELECT * FROM dept_pay ORDER BY dept_id",
		"SELECT d.name, p.avg_salary, p.headcount FROM departments d JOIN dept_pay p ON p.dept_id = d.id ORDER BY d.id",
		"SELECT * FROM west_staff ORDER BY id",
		"SELECT count(*) FROM west_staff",
		"SELECT * FROM salary_rank ORDER BY dept_id, pay_rank",
		"SELECT count(*) FROM staff_dir",
		"SELECT dept_id, count(*) FROM staff_dir GROUP BY dept_id",
		"SELECT 1 FROM staff_dir WHERE dept_id = 1",
		"SELECT domain, count(*) FROM email_domains GROUP BY domain",
		"SELECT * FROM review_scores ORDER BY employee_id",
		"SELECT dept_id, avg(score) FROM review_scores GROUP BY dept_id",
		"SELECT * FROM senior ORDER BY id",
		"SELECT count(*) FROM senior",
		"SELECT id, balance, opened, kind, band, dept_id FROM accounts ORDER BY id",
		"SELECT kind, sum(balance), count(*) FROM accounts GROUP BY kind ORDER BY kind",
		"SELECT a.id, d.name FROM accounts a JOIN departments d ON d.id = a.dept_id ORDER BY a.id",
		"SELECT count(*) FROM accounts",
		"SELECT rowid, balance FROM accounts ORDER BY rowid",
		"SELECT id FROM accounts WHERE balance > 100 ORDER BY balance",
		"SELECT max(balance) FROM accounts",
		"SELECT id FROM accounts INDEXED BY accounts_balance WHERE balance > 0",
		"WITH x AS (SELECT * FROM west_staff) SELECT count(*) FROM x",
		"WITH accounts AS (SELECT id, kind FROM main.accounts) SELECT * FROM accounts ORDER BY id",
		"SELECT w.id, s.dept_id FROM west_staff w JOIN staff_dir s USING (id) ORDER BY w.id",
		"SELECT * FROM west_staff NATURAL JOIN staff_dir ORDER BY id",
		"SELECT s.id, r.pay_rank FROM staff_dir s LEFT JOIN salary_rank r ON r.id = s.id ORDER BY s.id",
		"SELECT d.id, w.name FROM west_staff w RIGHT JOIN departments d ON d.id = w.dept_id ORDER BY d.id, w.id",
		"SELECT d.id, w.name FROM departments d FULL JOIN west_staff w ON d.id = w.dept_id ORDER BY d.id, w.id",
		"SELECT dept_id FROM west_staff UNION SELECT dept_id FROM senior ORDER BY 1",
		"SELECT id, sum(balance) OVER (ORDER BY id) FROM accounts",
		"SELECT id FROM staff_dir WHERE id IN (SELECT id FROM senior) ORDER BY id",
		"SELECT (SELECT count(*) FROM west_staff), (SELECT count(*) FROM staff_dir)",
		"SELECT coalesce(s.id, departments.id) AS id, name FROM (SELECT 2 AS id, 'x' AS k) AS s FULL JOIN departments USING (id) ORDER BY id",
		"SELECT id FROM (SELECT 9 AS id WHERE 0) RIGHT JOIN west_staff USING (id) ORDER BY id",
		"WITH c AS (SELECT 3 AS dept_id) SELECT coalesce(c.dept_id, dept_pay.dept_id) AS dept_id, headcount FROM c NATURAL FULL JOIN dept_pay ORDER BY dept_id",
		"SELECT id, balance FROM accounts FULL JOIN (SELECT 1 AS id, 'z' AS k) USING (id) ORDER BY id",
		"SELECT count(*) FROM west_staff NATURAL JOIN (SELECT 'West Ada' AS name, 1 AS id)",
		"SELECT coalesce(s.name, west_staff.name) AS name FROM (SELECT NULL AS name WHERE 0) AS s FULL JOIN west_staff USING (name) ORDER BY name",
		"SELECT coalesce(s.domain, email_domains.domain) AS domain, count(*) FROM (SELECT NULL AS domain WHERE 0) AS s FULL JOIN email_domains USING (domain) GROUP BY 1",
		"SELECT coalesce(s.dept_id, senior.dept_id) AS dept_id, count(*) FROM (SELECT NULL AS dept_id WHERE 0) AS s FULL JOIN senior USING (dept_id) GROUP BY 1",
		"SELECT id, dept_id FROM staff_dir NATURAL JOIN (SELECT 2 AS id UNION ALL SELECT 4) ORDER BY id",
	} {
		res, err := whole(g, db, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		cols, rows := plainQuery(t, plain, q)
		if got, want := fmt.Sprint(res.Columns, res.Rows), fmt.Sprint(cols, rows); got != want {
			t.Errorf("%s: rows differ from a plain connection\n got %.300s\nwant %.300s", q, got, want)
		}
		noLeak(t, q, describe(res, err), doorsPrivate)
	}
}

// TestDoorsObjects: hidden columns, and foreign keys from or into them, are
// not described; nor are tables the policy does not expose.
func TestDoorsObjects(t *testing.T) {
	db, _ := openDoors(t)
	var names []string
	for _, o := range db.Objects() {
		names = append(names, o.Name)
	}
	want := []string{"accounts", "departments", "dept_pay", "email_domains", "review_scores", "salary_rank", "senior", "staff_dir", "west_staff"}
	if !slices.Equal(names, want) {
		t.Errorf("objects %v, want %v", names, want)
	}
	acc, ok := db.Object("accounts")
	if !ok {
		t.Fatal("accounts is not described")
	}
	var cols []string
	for _, c := range acc.Columns {
		cols = append(cols, c.Name)
	}
	if want := []string{"id", "balance", "opened", "kind", "band", "dept_id"}; !slices.Equal(cols, want) {
		t.Errorf("accounts columns %v, want %v", cols, want)
	}
	if want := []roconn.ForeignKey{{Column: "dept_id", RefTable: "departments", RefColumn: "id"}}; !slices.Equal(acc.Foreign, want) {
		t.Errorf("accounts foreign keys %v, want %v", acc.Foreign, want)
	}
	if acc.RowCount != 4 || len(acc.Sample) != 3 || len(acc.Sample[0]) != len(cols) {
		t.Errorf("accounts: %d rows, sample %v", acc.RowCount, acc.Sample)
	}
	noLeak(t, "objects", fmt.Sprint(db.Objects()), doorsPrivate)
}

// TestHidePolicyErrors: what hide: cannot do is an error at Open that names
// the table and column.
func TestHidePolicyErrors(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("testdata", "doors.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "doors.db")
	execScript(t, path, string(script)+`CREATE TABLE wr (a TEXT, b TEXT, c TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;`)
	for _, tt := range []struct{ policy, want string }{
		{"expose: {accounts: {hide: [nope]}}", `table "accounts" has no column "nope" to hide`},
		{"expose: {accounts: {hide: [id]}}", `cannot hide "id": it is the table's rowid`},
		{"expose: {accounts: {hide: [balance]}}", `generated column "band" is computed from the hidden column "balance"`},
		// country is substr(iban, 1, 2), STORED: its program reads its own slot.
		{"expose: {accounts: {hide: [owner, iban, pin, initial, manager_email]}}", `the stored generated column "country" may be computed from a hidden column`},
		{"expose: {wr: {hide: [b]}}", `cannot hide "b": it is part of the primary key`},
		{"expose: {dept_pay: {hide: [headcount]}}", `view "dept_pay" cannot hide columns`},
		{"expose: {wr: {hide: [a, b, c]}}", `cannot hide "a"`},
		{"expose: {departments: {hide: [name, Name]}}", `"name" and "Name" are the same hidden column`},
		{"expose: {departments: {hide: [name], columns: {name: x}}}", `"name" is both described and hidden`},
	} {
		p, err := roconn.ParsePolicy([]byte(tt.policy))
		if err == nil {
			var db *roconn.DB
			db, err = roconn.Open(context.Background(), path, p, roconn.Limits{})
			if err == nil {
				db.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.policy, err, tt.want)
		}
	}
}

// TestIndexOrderOracle: a covering index scan through a view returns rows
// in the order of every column of the index. SELECT id FROM staff_dir, if
// SQLite scans employees_salary for it, lists ids by salary, and the check
// of the compiled program refuses it; if SQLite reads it otherwise (roconn
// runs views whole, so it reads the view's own rows), it runs; with an ORDER
// BY of its own, it runs.
func TestIndexOrderOracle(t *testing.T) {
	db, path := openDoors(t)
	plain, err := roconn.PlainWithFunctions(path)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	_, plan := plainQuery(t, plain, "EXPLAIN QUERY PLAN SELECT id FROM staff_dir")
	res, err := db.Query(context.Background(), "SELECT id FROM staff_dir")
	if strings.Contains(fmt.Sprint(plan), "employees_salary") {
		if got := layerOf(err); got != roconn.LayerReadOnly {
			t.Errorf("SELECT id FROM staff_dir, which scans employees_salary: %v, want a %q refusal", err, roconn.LayerReadOnly)
		}
	} else if err != nil || len(res.Rows) != 6 {
		t.Errorf("SELECT id FROM staff_dir, planned as %v: %v, %v; want its 6 rows", plan, res, err)
	}
	if res, err := db.Query(context.Background(), "SELECT id FROM staff_dir ORDER BY id"); err != nil || len(res.Rows) != 6 {
		t.Errorf("with ORDER BY id: %v, %v", res, err)
	}
}

// TestSchemaChangeFailsClosed: when the database's owner changes the schema
// while roconn has it open, nothing new becomes readable, and once a
// connection has seen the new schema, its programs are refused until
// roconn is opened again; streamed too.
func TestSchemaChangeFailsClosed(t *testing.T) {
	db, path := openDoors(t)
	ctx := context.Background()
	if _, err := db.Query(ctx, "SELECT id FROM departments"); err != nil {
		t.Fatal(err)
	}
	execScript(t, path, `ALTER TABLE departments ADD COLUMN budget TEXT DEFAULT 'SECRET budget';
		DROP VIEW west_staff; CREATE VIEW west_staff AS SELECT id, email AS name, dept_id FROM employees;`)
	schemaRefusals := 0
	for range 8 { // more than the pool has connections
		for _, q := range []string{"SELECT id FROM departments", "SELECT budget FROM departments", "SELECT * FROM west_staff"} {
			res, err := db.Query(ctx, q)
			noLeak(t, q, describe(res, err), doorsPrivate)
			if strings.Contains(fmt.Sprint(err), "schema changed") {
				schemaRefusals++
			}
			_, given, err := streamAll(ctx, db, q)
			noLeak(t, "streamed "+q, fmt.Sprint(given, err), doorsPrivate)
		}
	}
	if schemaRefusals == 0 {
		t.Error("no statement was refused for the changed schema")
	}
}

// TestFullJoinDerivedUsingRefused: a RIGHT or FULL JOIN's USING column
// named unqualified, whose left side is a subquery or CTE, is read by
// SQLite as coalesce(left, right), and it asks the authorizer about the
// left column by the subquery's name. The authorizer cannot tell that name
// from a table created after start that the statement reads as main.name,
// so it refuses, saying how to write it; written so, it runs with the rows
// plain SQLite gives the unqualified form.
func TestFullJoinDerivedUsingRefused(t *testing.T) {
	db, g, plain := doorsBeside(t)
	for unqualified, written := range map[string]string{
		"SELECT id, name FROM (SELECT 2 AS id, 'x' AS k) AS s FULL JOIN departments USING (id) ORDER BY id":                        "SELECT coalesce(s.id, departments.id) AS id, name FROM (SELECT 2 AS id, 'x' AS k) AS s FULL JOIN departments USING (id) ORDER BY id",
		"WITH c AS (SELECT 3 AS dept_id) SELECT dept_id, headcount FROM c NATURAL FULL JOIN dept_pay ORDER BY dept_id":             "WITH c AS (SELECT 3 AS dept_id) SELECT coalesce(c.dept_id, dept_pay.dept_id) AS dept_id, headcount FROM c NATURAL FULL JOIN dept_pay ORDER BY dept_id",
		"SELECT name FROM (SELECT NULL AS name WHERE 0) AS s FULL JOIN west_staff USING (name) ORDER BY name":                      "SELECT coalesce(s.name, west_staff.name) AS name FROM (SELECT NULL AS name WHERE 0) AS s FULL JOIN west_staff USING (name) ORDER BY name",
		"SELECT domain, count(*) FROM (SELECT NULL AS domain WHERE 0) AS s FULL JOIN email_domains USING (domain) GROUP BY domain": "SELECT coalesce(s.domain, email_domains.domain) AS domain, count(*) FROM (SELECT NULL AS domain WHERE 0) AS s FULL JOIN email_domains USING (domain) GROUP BY 1",
		"SELECT dept_id, count(*) FROM (SELECT NULL AS dept_id WHERE 0) AS s FULL JOIN senior USING (dept_id) GROUP BY dept_id":    "SELECT coalesce(s.dept_id, senior.dept_id) AS dept_id, count(*) FROM (SELECT NULL AS dept_id WHERE 0) AS s FULL JOIN senior USING (dept_id) GROUP BY 1",
	} {
		_, err := whole(g, db, unqualified)
		var r *roconn.Refusal
		if !errors.As(err, &r) || r.Layer != roconn.LayerAuthorizer || !strings.Contains(r.Reason, "name the side it comes from") {
			t.Errorf("%s: %v, want the authorizer's refusal saying how to write it", unqualified, err)
		}
		res, err := whole(g, db, written)
		if err != nil {
			t.Errorf("%s: %v", written, err)
			continue
		}
		_, rows := plainQuery(t, plain, unqualified)
		if got, want := fmt.Sprint(res.Rows), fmt.Sprint(rows); got != want {
			t.Errorf("%s: rows differ from the unqualified form on a plain connection\n got %.300s\nwant %.300s", written, got, want)
		}
	}
}

// TestTableAfterOpenFailsClosed: a table the file's owner creates after
// Open is refused on the whole path, however a statement reaches it, even
// where the authorizer alone cannot tell it from a subquery or common table
// expression of the statement that bears its name (its reads are asked
// about by that name): the program check refuses every statement once the
// schema has changed.
func TestTableAfterOpenFailsClosed(t *testing.T) {
	db, path := openDoors(t)
	ctx := context.Background()
	if _, err := db.Query(ctx, "SELECT id FROM departments"); err != nil {
		t.Fatal(err)
	}
	execScript(t, path, `CREATE TABLE later (id INTEGER PRIMARY KEY, note TEXT);
		INSERT INTO later VALUES (1, 'SECRET later'), (2, 'SECRET later 2');`)
	for range 8 { // more than the pool has connections
		for _, q := range []string{
			"SELECT note FROM later",
			"WITH later AS (SELECT 1 AS x) SELECT note FROM main.later",
			"SELECT note FROM later, (WITH later AS (SELECT 1 AS x) SELECT x FROM later) AS q",
			"SELECT l.note FROM main.later AS l, (SELECT 1 AS x) AS later",
		} {
			res, err := db.Query(ctx, q)
			noLeak(t, q, describe(res, err), doorsPrivate)
			var r *roconn.Refusal
			if !errors.As(err, &r) {
				t.Errorf("%s: %v, want a refusal", q, err)
			}
		}
	}
}

// TestShadowFallback: a table whose CREATE statement cannot run on a bare
// connection (it names a collation only the owner's application registers)
// still opens; what can be read of it reads, and its hidden column stays
// hidden.
func TestShadowFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coll.db")
	execScript(t, path, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT COLLATE NOCASE, secret TEXT);
		INSERT INTO notes VALUES (1, 'hello', 'SECRET one'), (2, 'world', 'SECRET two');
		PRAGMA writable_schema = ON;
		UPDATE sqlite_schema SET sql = replace(sql, 'NOCASE', 'app_collation') WHERE name = 'notes';`)
	p, err := roconn.ParsePolicy([]byte("expose: {notes: {hide: [secret]}}"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if res, err := db.Query(context.Background(), "SELECT id, length(body) FROM notes ORDER BY id"); err != nil || fmt.Sprint(res.Rows) != "[[1 5] [2 5]]" {
		t.Errorf("visible columns: %v, %v", res, err)
	}
	for _, q := range []string{"SELECT secret FROM notes", "SELECT * FROM notes", "SELECT count(*) FROM notes JOIN (SELECT 'SECRET one' AS secret) USING (secret)"} {
		res, err := db.Query(context.Background(), q)
		noLeak(t, q, describe(res, err), []string{"SECRET"})
		if layerOf(err) == "" {
			t.Errorf("%s: %v, want a refusal", q, err)
		}
	}
}

// TestUnexposedNameInDroppedColumn: a table the policy does not expose,
// named only in a subquery's result column that nothing reads, is dropped
// by SQLite before any read of it is compiled, so the authorizer is never
// asked and the program opens no cursor on it; the statement would run,
// and tell that the table exists. The program check sends every statement
// that names an object the policy does not expose to the shadow, where it
// is refused. (Found by TestGeneratedSelects, seed 99011712.)
func TestUnexposedNameInDroppedColumn(t *testing.T) {
	db, _ := openDoors(t)
	for _, q := range []string{
		"SELECT x FROM (SELECT 1 AS x, (SELECT 1 FROM employees) AS y)",
		"SELECT x FROM (SELECT id AS x, (SELECT count(*) FROM reviews) AS y FROM departments)",
		`SELECT x FROM (SELECT 1 AS x, (SELECT 1 FROM "Employees") AS y)`,
	} {
		res, err := db.Query(context.Background(), q)
		if layerOf(err) == "" {
			t.Errorf("%s: %v, %v; want a refusal", q, describe(res, nil), err)
		}
	}
}

// TestHiddenColumnNamedRowid: a hidden column named rowid stays hidden
// from the authorizer alone, which SQLite asks about it by the same name
// as the rowid itself. (Found by a red team: with the program check off,
// the column's values came out.)
func TestHiddenColumnNamedRowid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	execScript(t, path, `CREATE TABLE vault (id INTEGER PRIMARY KEY, rowid TEXT, note TEXT);
		INSERT INTO vault VALUES (1, 'SECRET-1', 'n1'), (2, 'SECRET-2', 'n2');`)
	p, err := roconn.ParsePolicy([]byte("expose:\n  vault: {hide: [rowid]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, noReadCheck := range []bool{true, false} {
		db, err := roconn.OpenWithout(context.Background(), path, p, roconn.Limits{}, false, noReadCheck)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SELECT rowid FROM vault", `SELECT "rowid" FROM vault`, "SELECT vault.rowid FROM vault",
			"SELECT * FROM vault", "SELECT id FROM vault WHERE rowid LIKE 'SECRET%'"} {
			res, err := db.Query(context.Background(), q)
			noLeak(t, q, describe(res, err), []string{"SECRET"})
			if q == "SELECT id FROM vault WHERE rowid LIKE 'SECRET%'" && err == nil {
				t.Errorf("%s ran (program check off: %v)", q, noReadCheck)
			}
		}
		if res, err := db.Query(context.Background(), "SELECT id, note FROM vault ORDER BY id"); err != nil || len(res.Rows) != 2 {
			t.Errorf("the visible columns: %v, %v", describe(res, nil), err)
		}
		db.Close()
	}
}
