package guard_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"

	"sqlbot/guard"
)

// ruleOf returns the Rule of the *guard.Refusal in err, 0 for a nil err, and
// fails the test for any other error.
func ruleOf(t *testing.T, err error) guard.Rule {
	t.Helper()
	if err == nil {
		return 0
	}
	var r *guard.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("error %v (%T) is not a *guard.Refusal", err, err)
	}
	if r.Reason == "" {
		t.Errorf("refusal %v has an empty Reason", r.Rule)
	}
	return r.Rule
}

// The keywords the guard forbids outside comments, strings and quoted names.
var forbiddenKeywords = []string{
	"insert", "update", "delete", "replace", "drop", "create", "alter", "attach", "detach",
	"pragma", "vacuum", "reindex", "analyze", "begin", "commit", "rollback", "savepoint", "release",
}

func TestCheckRules(t *testing.T) {
	tests := []struct {
		query string
		want  guard.Rule // 0: allowed
	}{
		// Plain reads, in the shapes a model writes them.
		{"SELECT 1", 0},
		{"select 1", 0},
		{"SeLeCt name FROM stores", 0},
		{"WITH x AS (SELECT 1 AS n) SELECT n FROM x", 0},
		{"with recursive c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 5) SELECT n FROM c", 0},
		{"  \n\t SELECT 1", 0},
		{"\n\n\nSELECT 1\n", 0},
		{"-- top note\nSELECT 1", 0},
		{"/* header */ SELECT 1", 0},
		{"/* a */ -- b\n /* c */ WITH x AS (SELECT 1) SELECT * FROM x", 0},
		{"SELECT count(*) OVER (PARTITION BY store_id ORDER BY day) FROM orders", 0},
		{"SELECT * FROM orders LIMIT 10", 0},
		{"SELECT json_extract(note, '$.a') ->> 'b' FROM orders", 0},
		{"SELECT random(), abs(-1), upper('x'), printf('%d', 1)", 0},
		{"SELECT 1.5e3, .5, 0x1F, 1_000, 3--1\n", 0},
		{"SELECT a - -b FROM t", 0},
		// One trailing ';', also followed by comments; and ';;' (an empty statement).
		{"SELECT 1;", 0},
		{"SELECT 1; -- done", 0},
		{"SELECT 1; /* done */", 0},
		{"SELECT 1 -- note\n;", 0},
		{"SELECT * FROM orders WHERE status = 'shipped'; \n-- that's all\n", 0},
		{"SELECT 1;;", 0},
		{"SELECT 1 ; ; \n-- x\n;", 0},
		// A name is not a verb.
		{"SELECT * FROM staff WHERE last_name = 'Delete'", 0},
		{`SELECT "delete" FROM t`, 0},
		{"SELECT `drop` FROM t", 0},
		{"SELECT [insert] FROM t", 0},
		{`SELECT "load_extension" FROM t`, 0},
		{"SELECT deleted_at, updated_by, created, begin_day, dropped$ FROM t", 0},
		{"SELECT 1 WHERE 'begin' = 'commit'", 0},
		{"SELECT note FROM orders WHERE note LIKE '%DELETE FROM orders%'", 0},
		{"SELECT 'it''s; DELETE FROM orders' AS s", 0},
		{"SELECT * FROM t WHERE a = :delete OR b = @drop OR c = $update", 0},
		// replace( is the string function, however it is spaced.
		{"SELECT replace(name, 'a', 'b') FROM products", 0},
		{"SELECT REPLACE (name, 'a', 'b') FROM products", 0},
		{"SELECT replace/* c */(name, 'a', 'b') FROM products", 0},
		{"SELECT replace -- c\n(name, 'a', 'b') FROM products", 0},
		// Comments and strings hide keywords and semicolons.
		{"SELECT 1 -- DELETE FROM orders", 0},
		{"SELECT 1 /* ; DROP TABLE orders; */", 0},
		{"SELECT ';' AS semi", 0},
		{`SELECT "a;b" FROM t`, 0},
		{"SELECT 1 /*/ still a comment; DROP */", 0},
		// A blob ends at its first quote, as in SQLite: x'ab' then the string ' DELETE'.
		{"SELECT x'00ff' AS b", 0},
		{"SELECT x'ab'' DELETE'", 0},
		// Unicode and odd names.
		{"SELECT 1 AS größe", 0},
		{"SELECT name AS 名前 FROM stores", 0},
		{"SELECT sqlite FROM t", 0},
		{"SELECT sqlite_x, edit FROM t", 0},
		{"SELECT pragma_y FROM t", guard.ForbiddenFunction}, // a bare pragma_ name is a table-valued PRAGMA

		{"", guard.Empty},
		{"   \n\t", guard.Empty},
		{"-- only a comment", guard.Empty},
		{"/* only */", guard.Empty},
		{";", guard.Empty},
		{" ; ;; ", guard.Empty},
		{"-- c\n;", guard.Empty},

		{"SELECT 1 /* open", guard.Unterminated},
		{"/*", guard.Unterminated},
		{"SELECT 1 /*/", guard.Unterminated},
		{"SELECT 'abc", guard.Unterminated},
		{"SELECT 'it''s", guard.Unterminated},
		{`SELECT "abc`, guard.Unterminated},
		{`SELECT "a""`, guard.Unterminated},
		{"SELECT `abc", guard.Unterminated},
		{"SELECT [abc", guard.Unterminated},
		{"SELECT x'ab", guard.Unterminated},
		{"SELECT 1; SELECT 'abc", guard.Unterminated},

		{"SELECT 1; SELECT 2", guard.MultipleStatements},
		{"SELECT 1; DELETE FROM orders", guard.MultipleStatements},
		{"SELECT 1;DROP TABLE orders", guard.MultipleStatements},
		{"SELECT 1; -- c\nSELECT 2", guard.MultipleStatements},
		{"SELECT 1 /* c */; SELECT 2", guard.MultipleStatements},
		{"SELECT ';'; SELECT 2", guard.MultipleStatements},
		{"SELECT 1;; SELECT 2", guard.MultipleStatements},
		{"DELETE FROM orders; SELECT 1", guard.MultipleStatements},
		{"SELECT 1 -- c\n; PRAGMA writable_schema = 1", guard.MultipleStatements},
		{"SELECT 1;\v", guard.MultipleStatements},
		{"SELECT 1; /* c */\v", guard.MultipleStatements},

		{"DELETE FROM orders", guard.NotSelect},
		{"delete from orders", guard.NotSelect},
		{"INSERT INTO orders (id) VALUES (1)", guard.NotSelect},
		{"UPDATE orders SET total = 0", guard.NotSelect},
		{"REPLACE INTO orders (id) VALUES (1)", guard.NotSelect},
		{"DROP TABLE orders", guard.NotSelect},
		{"CREATE TABLE t(a)", guard.NotSelect},
		{"PRAGMA table_info(orders)", guard.NotSelect},
		{"ATTACH DATABASE '/tmp/x.db' AS x", guard.NotSelect},
		{"VACUUM INTO '/tmp/copy.db'", guard.NotSelect},
		{"BEGIN", guard.NotSelect},
		{"EXPLAIN SELECT 1", guard.NotSelect},
		{"EXPLAIN QUERY PLAN SELECT 1", guard.NotSelect},
		{"VALUES (1)", guard.NotSelect},
		{"(SELECT 1)", guard.NotSelect},
		{"; SELECT 1", guard.NotSelect},
		{"SELECT1", guard.NotSelect},
		{"'SELECT' 1", guard.NotSelect},
		{`"SELECT" 1`, guard.NotSelect},
		{"\xffSELECT 1", guard.NotSelect},
		{"\vSELECT 1", guard.NotSelect},

		{"WITH x AS (SELECT 1) DELETE FROM orders", guard.ForbiddenKeyword},
		{"WITH x AS (SELECT 1) INSERT INTO orders SELECT * FROM x", guard.ForbiddenKeyword},
		{"WITH x AS (SELECT 1) UPDATE orders SET total = 0", guard.ForbiddenKeyword},
		{"WITH x AS (SELECT 1) REPLACE INTO orders SELECT * FROM x", guard.ForbiddenKeyword},
		{"with x as (select 1) replace into orders select 1", guard.ForbiddenKeyword},
		{"WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", guard.ForbiddenKeyword},
		{"SELECT 1 /* c */ DELETE", guard.ForbiddenKeyword},
		{"SELECT Delete FROM t", guard.ForbiddenKeyword},
		{"SELECT 1 FROM t WHERE 1 = 1 REPLACE", guard.ForbiddenKeyword},
		{"SELECT 1 AS begin", guard.ForbiddenKeyword}, // a bare name that is a keyword: quote it
		{"WITH x AS (SELECT randomblob(1)) DELETE FROM orders", guard.ForbiddenKeyword},

		{"SELECT load_extension('x')", guard.ForbiddenFunction},
		{"SELECT LOAD_EXTENSION ('x')", guard.ForbiddenFunction},
		{"SELECT load_extension/**/('x')", guard.ForbiddenFunction},
		{"SELECT load_extension -- c\n('x')", guard.ForbiddenFunction},
		{`SELECT "load_extension"('x')`, guard.ForbiddenFunction},
		{"SELECT `randomblob`(1)", guard.ForbiddenFunction},
		{"SELECT [sqlite_version]()", guard.ForbiddenFunction},
		{"SELECT randomblob(10)", guard.ForbiddenFunction},
		{"SELECT hex(zeroblob(10))", guard.ForbiddenFunction},
		{"SELECT readfile('/etc/passwd')", guard.ForbiddenFunction},
		{"SELECT writefile('/tmp/x', 'y')", guard.ForbiddenFunction},
		{"SELECT edit('x')", guard.ForbiddenFunction},
		{"SELECT fts3_tokenizer('simple')", guard.ForbiddenFunction},
		{"SELECT sqlite_version()", guard.ForbiddenFunction},
		{"SELECT SQLITE_SOURCE_ID()", guard.ForbiddenFunction},
		{"SELECT sqlite_compileoption_used('THREADSAFE')", guard.ForbiddenFunction},
		{"SELECT * FROM pragma_table_info('orders')", guard.ForbiddenFunction},
		{"SELECT name FROM pragma_table_list", guard.ForbiddenFunction},
		{"SELECT * FROM main.pragma_compile_options", guard.ForbiddenFunction},
		{"SELECT sqlite_" + strings.Repeat("\xff", 100) + "()", guard.ForbiddenFunction},

		{"SELECT 1\x00", guard.NulByte},
		{"SELECT 1\x00; DELETE FROM orders", guard.NulByte},
		{"SELECT '\x00'", guard.NulByte},
		{"\x00", guard.NulByte},
		// Trojan Source: the shown SQL would not read as it runs.
		{"SELECT * FROM orders WHERE status = 'shipped\u202e' -- \u2066", guard.HiddenText},
		{"SELECT 1 /* \u202e */", guard.HiddenText},
		{"SELECT '\u200f'", guard.HiddenText},
		{"SELECT 'Zoë 北京 🏕️'", 0}, // other Unicode is fine
	}
	g := guard.New(200)
	for _, tt := range tests {
		_, err := g.Check(tt.query)
		if got := ruleOf(t, err); got != tt.want {
			t.Errorf("Check(%q): rule %v, want %v", tt.query, got, tt.want)
		}
	}
}

// TestCheckKeywords drives every forbidden keyword, in upper and lower case,
// as a bare word (refused) and inside a string, a quoted name, a comment and
// a longer name (allowed).
func TestCheckKeywords(t *testing.T) {
	g := guard.New(200)
	for _, kw := range forbiddenKeywords {
		for _, w := range []string{kw, strings.ToUpper(kw)} {
			tests := []struct {
				query string
				want  guard.Rule
			}{
				{"SELECT a FROM t WHERE " + w, guard.ForbiddenKeyword},
				{"WITH x AS (SELECT 1) " + w + " x", guard.ForbiddenKeyword},
				{"SELECT a FROM t WHERE b = '" + w + "'", 0},
				{`SELECT "` + w + `" FROM t`, 0},
				{"SELECT a FROM t -- " + w, 0},
				{"SELECT a /* " + w + " */ FROM t", 0},
				{"SELECT " + w + "s_at, x" + w + " FROM t", 0}, // pragma_at would be a table-valued PRAGMA
			}
			for _, tt := range tests {
				_, err := g.Check(tt.query)
				if got := ruleOf(t, err); got != tt.want {
					t.Errorf("Check(%q): rule %v, want %v", tt.query, got, tt.want)
				}
			}
		}
	}
}

// TestCheckLimit checks what Check returns: the statement without its
// trailing semicolons, with "\nLIMIT 201" appended exactly when it has no
// top-level LIMIT.
func TestCheckLimit(t *testing.T) {
	const suffix = "\nLIMIT 201"
	tests := []struct {
		query  string
		body   string // what Check must return before any appended LIMIT
		append bool
	}{
		{"SELECT 1", "SELECT 1", true},
		{"SELECT 1;", "SELECT 1", true},
		{"SELECT 1;;", "SELECT 1", true},
		{"SELECT 1 ;  -- bye", "SELECT 1", true},
		{"SELECT 1 /* c */ ;", "SELECT 1 /* c */", true},
		{"SELECT 1\n\n", "SELECT 1", true},
		{"SELECT 1 -- note", "SELECT 1 -- note", true}, // the cap on a line of its own, after the comment
		{"SELECT 1 -- LIMIT 5", "SELECT 1 -- LIMIT 5", true},
		{"SELECT 'LIMIT 5'", "SELECT 'LIMIT 5'", true},
		{`SELECT "limit" FROM t`, `SELECT "limit" FROM t`, true},
		{"WITH x AS (SELECT n FROM t LIMIT 3) SELECT * FROM x", "WITH x AS (SELECT n FROM t LIMIT 3) SELECT * FROM x", true},
		{"SELECT * FROM (SELECT 1 LIMIT 1)", "SELECT * FROM (SELECT 1 LIMIT 1)", true},
		{"SELECT (SELECT max(x) FROM t LIMIT 1) AS m", "SELECT (SELECT max(x) FROM t LIMIT 1) AS m", true},
		{"SELECT 1 LIMIT 5", "SELECT 1 LIMIT 5", false},
		{"SELECT 1 limit 5;", "SELECT 1 limit 5", false},
		{"SELECT 1 LIMIT 5 OFFSET 2 -- x", "SELECT 1 LIMIT 5 OFFSET 2 -- x", false},
		{"SELECT 1 UNION ALL SELECT 2 LIMIT 1", "SELECT 1 UNION ALL SELECT 2 LIMIT 1", false},
		{"SELECT a FROM t ORDER BY (a) LIMIT (1);\n-- end", "SELECT a FROM t ORDER BY (a) LIMIT (1)", false},
	}
	g := guard.New(200)
	for _, tt := range tests {
		got, err := g.Check(tt.query)
		if err != nil {
			t.Errorf("Check(%q): %v", tt.query, err)
			continue
		}
		want := tt.body
		if tt.append {
			want += suffix
		}
		if got != want {
			t.Errorf("Check(%q) = %q, want %q", tt.query, got, want)
		}
	}
	// The zero Guard caps too, at one row (LIMIT 2).
	var zero guard.Guard
	if got, err := zero.Check("SELECT 1"); err != nil || got != "SELECT 1\nLIMIT 2" {
		t.Errorf("zero Guard: Check(%q) = %q, %v; want %q", "SELECT 1", got, err, "SELECT 1\nLIMIT 2")
	}
}

// TestCheckRunsOnSQLite runs what Check returns on a real SQLite and counts
// the rows: the statements parse, and the appended LIMIT caps them at rowCap+1.
func TestCheckRunsOnSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const series = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 500) "
	tests := []struct {
		rowCap int
		query  string
		want   int
	}{
		{200, series + "SELECT n FROM c", 201},
		{200, series + "SELECT n FROM c -- every n", 201},
		{200, series + "SELECT n FROM c; -- done", 201},
		{200, series + "SELECT n FROM c;;", 201},
		{200, "/* header */ -- note\n" + series + "SELECT n FROM c", 201},
		{200, series + "SELECT n, sum(n) OVER (ORDER BY n) FROM c ORDER BY n DESC /* newest first */", 201},
		{200, series + "SELECT n FROM c UNION ALL SELECT -n FROM c", 201},
		{200, series + ", d AS (SELECT n FROM c LIMIT 300) SELECT n FROM d -- inner limit only", 201},
		{200, series + ", d AS (SELECT n FROM c LIMIT 3) SELECT n FROM d", 3},
		{200, series + "SELECT n FROM c LIMIT 7", 7},
		{200, series + "SELECT n FROM c LIMIT 7 -- own limit", 7},
		{200, series + "SELECT replace('a;b', ';', '') FROM c WHERE n <= 10", 10},
		{200, "SELECT 1 -- note", 1},
		{1, series + "SELECT n FROM c", 2},
		{0, series + "SELECT n FROM c", 2}, // a cap below 1 counts as 1
		{-5, series + "SELECT n FROM c", 2},
	}
	for _, tt := range tests {
		stmt, err := guard.New(tt.rowCap).Check(tt.query)
		if err != nil {
			t.Errorf("Check(%q): %v", tt.query, err)
			continue
		}
		rows, err := db.Query(stmt)
		if err != nil {
			t.Errorf("Check(%q) = %q, which SQLite refuses: %v", tt.query, stmt, err)
			continue
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("running %q: %v", stmt, err)
		}
		rows.Close()
		if n != tt.want {
			t.Errorf("Check(%q) with cap %d ran to %d rows, want %d", tt.query, tt.rowCap, n, tt.want)
		}
	}
}

// TestCheckOddInput: strange bytes, huge and deeply nested input neither
// panic nor get past the rules.
func TestCheckOddInput(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name  string
		query string
		want  guard.Rule
	}{
		{"invalid UTF-8 in a string", "SELECT '\xff\xfe'", 0},
		{"invalid UTF-8 as a name", "SELECT \xff\xfe FROM t", 0},
		{"control byte", "SELECT 1\x01", 0},
		{"1 MB expression", "SELECT " + strings.Repeat("1+", mb/2) + "1", 0},
		{"1 MB of open parens", "SELECT " + strings.Repeat("(", mb), 0},
		{"1 MB of close parens", "SELECT 1" + strings.Repeat(")", mb) + " LIMIT 1", 0},
		{"deep nesting", "SELECT " + strings.Repeat("(", mb/4) + "1" + strings.Repeat(")", mb/4), 0},
		{"1 MB of semicolons", "SELECT 1" + strings.Repeat(";", mb), 0},
		{"1 MB of comments", "SELECT 1 " + strings.Repeat("/**/--\n", mb/7), 0},
		{"1 MB string", "SELECT '" + strings.Repeat("x", mb) + "'", 0},
		{"1 MB unterminated string", "SELECT '" + strings.Repeat("x", mb), guard.Unterminated},
		{"1 MB of comment openers", "SELECT 1 " + strings.Repeat("/*", mb/2), guard.Unterminated},
		{"1 MB of statements", strings.Repeat("SELECT 1;", mb/9), guard.MultipleStatements},
		{"1 MB of quotes, one string", strings.Repeat("'", mb), guard.NotSelect},
		{"1 MB of quotes, open", strings.Repeat("'", mb+1), guard.Unterminated},
		{"1 MB word", "SELECT " + strings.Repeat("a", mb), 0},
		{"NUL at the end of 1 MB", "SELECT " + strings.Repeat("a", mb) + "\x00", guard.NulByte},
	}
	g := guard.New(200)
	for _, tt := range tests {
		_, err := g.Check(tt.query)
		if got := ruleOf(t, err); got != tt.want {
			t.Errorf("Check(%s): rule %v, want %v", tt.name, got, tt.want)
		}
	}
	// Random bytes from a small alphabet of tokenizer edge characters: Check must
	// be total, and what it accepts starts with SELECT or WITH.
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "-/*'\"`[]x;()\n \x00\xffsSeElLcCtTwWiIhH0.e+$:?"
	for range 5000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		q := string(b)
		if rng.IntN(2) == 0 {
			q = "SELECT " + q
		}
		out, err := g.Check(q)
		if err != nil {
			ruleOf(t, err)
			continue
		}
		if !strings.Contains(strings.ToUpper(out), "SELECT") && !strings.Contains(strings.ToUpper(out), "WITH") {
			t.Errorf("Check(%q) = %q, accepted without SELECT or WITH", q, out)
		}
		if first := guard.FirstToken(out); !strings.EqualFold(first, "SELECT") && !strings.EqualFold(first, "WITH") {
			t.Errorf("Check(%q) = %q, accepted with first token %q", q, out, first)
		}
	}
}

func TestRuleNames(t *testing.T) {
	seen := map[string]guard.Rule{}
	for r := guard.Empty; r <= guard.HiddenText; r++ {
		name := r.String()
		if name == "" || strings.ContainsAny(name, " ()") {
			t.Errorf("Rule(%d).String() = %q, want a snake_case name", r, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("rules %d and %d share the name %q", other, r, name)
		}
		seen[name] = r
	}
}

// refusalMix is a set of queries; refusalMixWant counts the refusals they cause.
var refusalMix = []string{
	"SELECT 1",
	"DELETE FROM orders",
	"EXPLAIN SELECT 1",
	"SELECT 1; SELECT 2",
	"WITH x AS (SELECT 1) DELETE FROM orders",
	"SELECT load_extension('x')",
	"SELECT sqlite_version()",
	"SELECT sqlite_version()",
	"",
	"SELECT 'open",
	"SELECT 1\x00",
	"SELECT 2 LIMIT 3",
}

func refusalMixWant(times int64) map[string]int64 {
	return map[string]int64{
		guard.NotSelect.String():          2 * times,
		guard.MultipleStatements.String(): 1 * times,
		guard.ForbiddenKeyword.String():   1 * times,
		guard.ForbiddenFunction.String():  3 * times,
		guard.Empty.String():              1 * times,
		guard.Unterminated.String():       1 * times,
		guard.NulByte.String():            1 * times,
	}
}

func sameCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRefusals(t *testing.T) {
	g := guard.New(200)
	if got := g.Refusals(); len(got) != 0 {
		t.Errorf("new guard: Refusals() = %v, want none", got)
	}
	for _, q := range refusalMix {
		g.Check(q)
	}
	if got, want := g.Refusals(), refusalMixWant(1); !sameCounts(got, want) {
		t.Errorf("Refusals() = %v, want %v", got, want)
	}
}

// TestRefusalsConcurrent is meant for -race: one Guard, checked and read from many goroutines.
func TestRefusalsConcurrent(t *testing.T) {
	g := guard.New(200)
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				for _, q := range refusalMix {
					g.Check(q)
				}
				g.Refusals()
			}
		}()
	}
	wg.Wait()
	if got, want := g.Refusals(), refusalMixWant(workers*rounds); !sameCounts(got, want) {
		t.Errorf("Refusals() = %v, want %v", got, want)
	}
}

// check500 is a realistic analyst query of about 500 bytes: a comment, a CTE,
// joins, strings and a string function.
const check500 = `-- Revenue by region, June 2025
WITH june AS (
  SELECT o.id, o.customer_id, o.store_id
  FROM orders o
  WHERE o.status = 'shipped'
    AND o.day >= '2025-06-01' AND o.day < '2025-07-01'
)
SELECT cr.region,
       round(sum(ol.line_total), 2) AS revenue,
       count(*) AS n,
       replace(s.name, 'Ridgeline ', '') AS store
FROM june j
JOIN order_lines ol ON ol.order_id = j.id
JOIN customer_regions cr ON cr.id = j.customer_id
LEFT JOIN stores s ON s.id = j.store_id
GROUP BY 1, 4 ORDER BY revenue DESC;`

func BenchmarkCheck500(b *testing.B) {
	g := guard.New(200)
	if _, err := g.Check(check500); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(check500)))
	b.ReportAllocs()
	for b.Loop() {
		g.Check(check500)
	}
}

func BenchmarkCheck1MB(b *testing.B) {
	g := guard.New(200)
	q := "SELECT " + strings.Repeat("'x', (a + 1) /* c */, ", 1<<20/22) + "1"
	if _, err := g.Check(q); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		g.Check(q)
	}
}

func ExampleGuard_Check() {
	g := guard.New(200)
	stmt, err := g.Check("SELECT name FROM stores -- all of them\n;")
	fmt.Printf("%q %v\n", stmt, err)
	_, err = g.Check("WITH x AS (SELECT 1) DELETE FROM orders")
	var r *guard.Refusal
	if errors.As(err, &r) {
		fmt.Println(r.Rule) // r.Reason is the sentence to show: "forbidden keyword: delete"
	}
	// Output:
	// "SELECT name FROM stores -- all of them\nLIMIT 201" <nil>
	// forbidden_keyword
}
