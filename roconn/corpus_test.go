package roconn_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver for the plain comparison connection

	"sqlbot/guard"
	"sqlbot/roconn"
)

// shop writes the corpora's database (testdata/shop.sql, shaped like
// sqlbot's demo) into a temporary directory and returns its path and policy.
func shop(t testing.TB) (string, *roconn.Policy) {
	t.Helper()
	return shopUnder(t, "shop_policy.yaml")
}

// shopPolicies are the policies the hostile corpus runs under: the private
// tables left out behind views, and the same tables exposed with their
// private columns hidden.
var shopPolicies = []string{"shop_policy.yaml", "shop_hide_policy.yaml"}

// shopUnder is shop with the policy testdata/policyFile.
func shopUnder(t testing.TB, policyFile string) (string, *roconn.Policy) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", "shop.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shop.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rw.Exec(string(script))
	if cerr := rw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("build the shop: %v", err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", policyFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := roconn.ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	return path, p
}

// privateValues returns the shop's private values that are distinctive
// enough to search any output for: every customer's full name, e-mail
// address and phone number, and every employee's e-mail address. It reads
// them through a plain read-only connection.
func privateValues(t testing.TB, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT first_name || ' ' || last_name FROM customers
		UNION ALL SELECT email FROM customers UNION ALL SELECT phone FROM customers WHERE phone IS NOT NULL
		UNION ALL SELECT email FROM employees`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vals []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(vals) < 100 {
		t.Fatalf("only %d private values found; the shop should have hundreds", len(vals))
	}
	return vals
}

// noLeak fails the test if out contains any private value.
func noLeak(t *testing.T, where, out string, private []string) {
	t.Helper()
	for _, v := range private {
		if strings.Contains(out, v) {
			t.Errorf("%s: output contains the private value %q", where, v)
			return
		}
	}
}

// Which layers must refuse each category on their own (each layer
// alone must stop a write; the guard cannot know the policy or the cost).
var guardRefuses = map[string]bool{"write": true, "stacked": true, "hidden": true, "pragma": true, "attach": true, "function": true}

func openShop(t *testing.T, path string, p *roconn.Policy, timeout time.Duration) *roconn.DB {
	t.Helper()
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func describe(res *roconn.Result, err error) string {
	var b strings.Builder
	if err != nil {
		b.WriteString(err.Error())
	}
	if res != nil {
		fmt.Fprint(&b, res.Columns, res.Rows)
	}
	return b.String()
}

// TestHostileGuardAlone: the guard refuses every statement it can judge.
func TestHostileGuardAlone(t *testing.T) {
	g := guard.New(roconn.DefaultRows)
	for _, r := range roconn.LoadCorpus(t, "hostile.sql", t.TempDir()) {
		_, err := g.Check(r.SQL)
		var ref *guard.Refusal
		if guardRefuses[r.Category] && !errors.As(err, &ref) {
			t.Errorf("guard.Check(%s): err %v, want a *guard.Refusal", r.Name, err)
		}
	}
}

// TestHostileROConnAlone: with the guard skipped, roconn refuses or stops
// every hostile statement, the file is unchanged and nothing private leaks.
func TestHostileROConnAlone(t *testing.T) {
	for _, policy := range shopPolicies {
		t.Run(policy, func(t *testing.T) { hostileROConnAlone(t, policy) })
	}
}

func hostileROConnAlone(t *testing.T, policy string) {
	path, p := shopUnder(t, policy)
	private := privateValues(t, path)
	before := fileSum(t, path)
	db := openShop(t, path, p, 300*time.Millisecond)
	tmp := t.TempDir()
	for _, r := range roconn.LoadCorpus(t, "hostile.sql", tmp) {
		res, err := db.Query(context.Background(), r.SQL)
		noLeak(t, "roconn "+r.Name, describe(res, err), private)
		// An unterminated comment is the guard's concern: to SQLite the
		// rest of the text is a comment, and what remains is a harmless SELECT.
		harmless := strings.HasPrefix(r.Name, "hidden/unterminated-block")
		if err == nil && !harmless {
			t.Errorf("roconn.Query(%s) ran and returned %d rows; want it stopped", r.Name, len(res.Rows))
			continue
		}
		// Stopped means refused by a named layer, or not compiled at all
		// (SQLite rejects a function or table that does not exist before
		// asking the authorizer): either way nothing ran.
		if err != nil && res != nil && !errors.Is(err, roconn.ErrRowLimit) {
			t.Errorf("roconn.Query(%s): rows returned alongside %v", r.Name, err)
		}
	}
	if fileSum(t, path) != before {
		t.Fatal("the database file changed")
	}
	if files, _ := os.ReadDir(tmp); len(files) > 0 {
		t.Errorf("hostile statements created files: %v", files)
	}
}

// TestHostilePlainReadOnly: a connection opened as roconn opens the file
// (mode=ro), but with no authorizer and no guard, still cannot change it: the
// file handle is the boundary.
func TestHostilePlainReadOnly(t *testing.T) {
	path, _ := shop(t)
	before := fileSum(t, path)
	db, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// These touch no table of the file: transaction control, a TEMP table, and
	// VACUUM INTO (which writes a copy elsewhere). They may succeed.
	mayRun := map[string]bool{"write/begin": true, "write/begin-exclusive": true, "write/commit": true,
		"write/rollback": true, "write/savepoint": true, "write/release": true, "write/create-temp-table": true, "write/vacuum-into": true}
	n := 0
	for _, r := range roconn.LoadCorpus(t, "hostile.sql", t.TempDir()) {
		if r.Category != "write" {
			continue
		}
		n++
		_, err := db.ExecContext(context.Background(), r.SQL)
		if err == nil && !mayRun[r.Name] {
			t.Errorf("plain mode=ro Exec(%s) succeeded; want SQLITE_READONLY", r.Name)
		}
	}
	db.ExecContext(context.Background(), "ROLLBACK") // leave no transaction open
	if fileSum(t, path) != before {
		t.Fatalf("the database file changed after %d writes on a mode=ro connection", n)
	}
}

// TestHostileWholePath: guard then roconn, as every model statement goes.
func TestHostileWholePath(t *testing.T) {
	for _, policy := range shopPolicies {
		t.Run(policy, func(t *testing.T) { hostileWholePath(t, policy) })
	}
}

func hostileWholePath(t *testing.T, policy string) {
	path, p := shopUnder(t, policy)
	private := privateValues(t, path)
	before := fileSum(t, path)
	db := openShop(t, path, p, 300*time.Millisecond)
	g := guard.New(db.Limits().Rows)
	tmp := t.TempDir()
	refusedBy := map[string]int{}
	for _, r := range roconn.LoadCorpus(t, "hostile.sql", tmp) {
		res, err := whole(g, db, r.SQL)
		noLeak(t, "whole "+r.Name, describe(res, err), private)
		var gr *guard.Refusal
		var rr *roconn.Refusal
		if err == nil {
			t.Errorf("whole path (%s) ran and returned %d rows; want it stopped", r.Name, len(res.Rows))
		} else if !errors.As(err, &gr) && !errors.As(err, &rr) {
			refusedBy["sqlite"]++ // did not compile: nothing ran
		} else if gr != nil {
			refusedBy["guard"]++
		} else {
			refusedBy[string(rr.Layer)]++
		}
	}
	if fileSum(t, path) != before {
		t.Fatal("the database file changed")
	}
	if files, _ := os.ReadDir(tmp); len(files) > 0 {
		t.Errorf("hostile statements created files: %v", files)
	}
	t.Logf("stopped by: %v", refusedBy)
	if refusedBy["sqlite"] > 3 {
		t.Errorf("%d hostile statements were stopped only by SQLite's compiler; want the layers to stop them", refusedBy["sqlite"])
	}
}

// whole runs query on the production path, as agent.Checked does: the
// guard, then roconn with the guard's statement.
func whole(g *guard.Guard, db *roconn.DB, query string) (*roconn.Result, error) {
	stmt, err := g.Check(query)
	if err != nil {
		return nil, err
	}
	return db.Query(context.Background(), stmt)
}

// TestBenign: honest statements run through the whole path and return the
// same rows as a plain read-only connection, cut at the row cap.
func TestBenign(t *testing.T) {
	path, p := shop(t)
	recs := roconn.LoadCorpus(t, "benign.sql", t.TempDir())
	if len(recs) < 80 {
		t.Fatalf("benign corpus has %d statements, want at least 80", len(recs))
	}
	sameAsPlain(t, path, p, recs)
}

// chinook returns the path of Chinook and its policy from cmd/sqlbot's
// test data, or skips the test: the database is not in this repository.
func chinook(t testing.TB) (string, *roconn.Policy) {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	data, err := os.ReadFile(filepath.Join("..", "cmd", "sqlbot", "testdata", "chinook", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := roconn.ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	return path, p
}

// TestChinookAnalysts: analysts' queries on Chinook, a database nobody here
// designed, return the same rows through the whole path as through a plain
// connection.
func TestChinookAnalysts(t *testing.T) {
	path, p := chinook(t)
	sameAsPlain(t, path, p, roconn.LoadCorpus(t, "chinook.sql", t.TempDir()))
}

// sameAsPlain runs recs through the whole path on the database at path and
// requires each to return the rows a plain read-only connection returns,
// cut at the row cap, and the file to be unchanged.
func sameAsPlain(t *testing.T, path string, p *roconn.Policy, recs []roconn.Record) {
	t.Helper()
	before := fileSum(t, path)
	db := openShop(t, path, p, 5*time.Second)
	g := guard.New(db.Limits().Rows)
	plain, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, r := range recs {
		res, err := whole(g, db, r.SQL)
		if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		wantCols, wantRows := plainQuery(t, plain, r.SQL)
		capped := strings.HasSuffix(r.Name, "-capped")
		if capped != res.Truncated || capped != errors.Is(err, roconn.ErrRowLimit) {
			t.Errorf("%s: truncated %v (err %v), want %v", r.Name, res.Truncated, err, capped)
		}
		if len(wantRows) > len(res.Rows) {
			wantRows = wantRows[:len(res.Rows)]
		}
		if got, want := fmt.Sprint(res.Columns, res.Rows), fmt.Sprint(wantCols, wantRows); got != want {
			t.Errorf("%s: rows differ from a plain connection\n got %.300s\nwant %.300s", r.Name, got, want)
		}
		if len(res.Rows) > db.Limits().Rows {
			t.Errorf("%s: %d rows, more than the cap %d", r.Name, len(res.Rows), db.Limits().Rows)
		}
	}
	if fileSum(t, path) != before {
		t.Fatal("the database file changed")
	}
}

// TestRowCapAfterLineComment: the cap holds when a statement ends in a
// line comment, which an appended LIMIT must not land inside.
func TestRowCapAfterLineComment(t *testing.T) {
	path, p := shop(t)
	db := openShop(t, path, p, 5*time.Second)
	g := guard.New(db.Limits().Rows)
	for _, q := range []string{
		"SELECT * FROM order_lines -- every line",
		"SELECT * FROM order_lines; -- every line",
		"SELECT id FROM order_lines /* all */",
	} {
		res, err := whole(g, db, q)
		if !errors.Is(err, roconn.ErrRowLimit) || res == nil || len(res.Rows) != db.Limits().Rows || !res.Truncated {
			n := -1
			if res != nil {
				n = len(res.Rows)
			}
			t.Errorf("%q: %d rows, err %v; want exactly %d rows and ErrRowLimit", q, n, err, db.Limits().Rows)
		}
	}
}

// plainQuery runs query on a plain connection and returns its columns and
// rows, with each []byte value made a string. roconn's other conversions (a
// blob that is not UTF-8 to hex, a declared date to text) are not made: the
// benign corpus returns no such value, and the comparison would show one.
func plainQuery(t *testing.T, db *sql.DB, query string) ([]string, [][]any) {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("plain %q: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return cols, out
}

// FuzzGuard: whatever passes the guard runs on roconn without changing the
// file and without a panic, and never returns more rows than the cap.
//
// Hashing the shop file (about 1 MB) on every input would cost more than the
// query: each input compares the file's size and modification time, and the
// whole file's hash is compared once, when fuzzing ends.
func FuzzGuard(f *testing.F) {
	for _, file := range []string{"hostile.sql", "benign.sql"} {
		for _, r := range roconn.LoadCorpus(f, file, f.TempDir()) {
			f.Add(r.SQL)
		}
	}
	path, p := shop(f)
	before, beforeStat := fileSum(f, path), statOf(f, path)
	f.Cleanup(func() {
		if fileSum(f, path) != before {
			f.Error("the fuzzed statements changed the database file")
		}
	})
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{Timeout: 200 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	g := guard.New(db.Limits().Rows)
	f.Fuzz(func(t *testing.T, query string) {
		res, _ := whole(g, db, query)
		if res != nil && len(res.Rows) > db.Limits().Rows {
			t.Errorf("%q: %d rows, over the cap", query, len(res.Rows))
		}
		if statOf(t, path) != beforeStat {
			t.Fatalf("%q changed the database file", query)
		}
	})
}

// A fileStat is what a cheap check of a file compares: its size and
// modification time.
type fileStat struct {
	size  int64
	mtime time.Time
}

func statOf(t testing.TB, path string) fileStat {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileStat{fi.Size(), fi.ModTime()}
}

// BenchmarkBenign runs the benign corpus through a plain mode=ro connection
// and through the whole safe path (guard, then roconn). Both run the same
// text (the guard's output, with its LIMIT), so the ratio is the cost of the
// checks alone: the guard, reading back and checking the compiled program,
// the authorizer, the limits, running on a goroutine of the connection's own.
func BenchmarkBenign(b *testing.B) {
	path, p := shop(b)
	benchCorpus(b, path, p, roconn.LoadCorpus(b, "benign.sql", b.TempDir()))
}

// BenchmarkChinook is BenchmarkBenign on Chinook's analyst queries.
func BenchmarkChinook(b *testing.B) {
	path, p := chinook(b)
	benchCorpus(b, path, p, roconn.LoadCorpus(b, "chinook.sql", b.TempDir()))
}

func benchCorpus(b *testing.B, path string, p *roconn.Policy, recs []roconn.Record) {
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := guard.New(db.Limits().Rows)
	stmts := make([]string, len(recs))
	for i, r := range recs {
		if stmts[i], err = g.Check(r.SQL); err != nil {
			b.Fatal(err)
		}
	}
	plain, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	wholeDB, err := roconn.PlainWithFunctions(path)
	if err != nil {
		b.Fatal(err)
	}
	defer wholeDB.Close()
	passOn := func(plain *sql.DB) func() {
		return func() {
			for _, s := range stmts {
				rows, err := plain.Query(s)
				if err != nil {
					b.Fatal(err)
				}
				cols, _ := rows.Columns()
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				for rows.Next() {
					rows.Scan(ptrs...)
				}
				rows.Close()
			}
		}
	}
	plainPass, wholePass := passOn(plain), passOn(wholeDB)
	safePass := func() {
		for _, r := range recs {
			if _, err := whole(g, db, r.SQL); err != nil && !errors.Is(err, roconn.ErrRowLimit) {
				b.Fatal(err)
			}
		}
	}
	// One pass of each first, and a collection before each, so that
	// neither runs on the other's (or Open's) garbage or cold caches.
	plainPass()
	safePass()
	for _, path := range []struct {
		name string
		pass func()
	}{{"path=plain", plainPass}, {"path=safe", safePass}} {
		runtime.GC()
		b.Run(path.name, func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				path.pass()
			}
		})
	}
	// On a shared machine, the load other processes put on it drifts
	// between one sub-benchmark and the next. Here each iteration times a
	// plain pass and a safe pass back to back (in turn first), and the
	// median of their ratios is reported as "safe/plain". The plain pass
	// runs on the same driver's mode=ro connection; with floor=whole, on
	// one that plans as roconn's connections do (subqueries and views run
	// whole, roconn's LIKE, GLOB, instr, replace and trim), so that the
	// ratio is the checks' cost alone, without what running views whole
	// costs.
	alternate(b, "path=alternating", plainPass, safePass)
	alternate(b, "path=alternating,floor=whole", wholePass, safePass)
}

// alternate runs a sub-benchmark name that times plainPass and safePass
// back to back, in turn first, and reports the median of safe/plain.
func alternate(b *testing.B, name string, plainPass, safePass func()) {
	b.Run(name, func(b *testing.B) {
		var ratios []float64
		i := 0
		for b.Loop() {
			first, second := plainPass, safePass
			if i%2 == 1 {
				first, second = safePass, plainPass
			}
			start := time.Now()
			first()
			mid := time.Now()
			second()
			end := time.Now()
			plain, safe := mid.Sub(start), end.Sub(mid)
			if i%2 == 1 {
				plain, safe = safe, plain
			}
			ratios = append(ratios, float64(safe)/float64(plain))
			i++
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "safe/plain")
	})
}

// BenchmarkSelect1 is the fixed cost of one statement: SELECT 1 through
// roconn.Query against the same driver's plain mode=ro connection (through
// database/sql, reading the row as values).
func BenchmarkSelect1(b *testing.B) {
	path, p := shop(b)
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	plain, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	b.Run("path=plain", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			var v any
			if err := plain.QueryRow("SELECT 1").Scan(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=safe", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := db.Query(context.Background(), "SELECT 1"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU reports the process's CPU time (user and system, every thread:
// the statement's goroutines and the collector's) per iteration, as
// "cpu-ns/op". On a shared machine, wall time also counts the time other
// processes had the CPU; CPU time does not. Call it as defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
