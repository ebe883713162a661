package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// funcPair returns two single connections to an in-memory database, one
// with SQLite's built-in functions and one with roconn's replacements, with
// the same LIKE pattern and length limits.
func funcPair(t testing.TB, patternLimit, valueLimit int) (builtin, ours *sql.Conn) {
	t.Helper()
	open := func(d *sqlite.Driver) *sql.Conn {
		pool := sql.OpenDB(&plainConnector{driver: d, dsn: ":memory:"})
		t.Cleanup(func() { pool.Close() })
		conn, err := pool.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		err = conn.Raw(func(dc any) error {
			h, err := sqliteHandle(dc.(driver.Conn))
			if err != nil {
				return err
			}
			tls := libc.NewTLS()
			defer tls.Close()
			sqlite3.Xsqlite3_limit(tls, h, sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, int32(patternLimit))
			sqlite3.Xsqlite3_limit(tls, h, sqlite3.SQLITE_LIMIT_LENGTH, int32(valueLimit))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	d := &sqlite.Driver{}
	if err := registerFunctions(d, patternLimit, valueLimit); err != nil {
		t.Fatal(err)
	}
	return open(&sqlite.Driver{}), open(d)
}

// TestReplacementsInstalled: the replacements are the functions the
// connection calls, for every name: registered for any number of
// arguments, they compile with a count the built-in refuses at compile
// time, and the count is then refused when the call runs.
func TestReplacementsInstalled(t *testing.T) {
	builtin, ours := funcPair(t, maxLikePattern, 1<<20)
	ctx := context.Background()
	for _, name := range replacements {
		q := "SELECT " + name + "('a', 'b', 'c', 'd')"
		if st, err := builtin.PrepareContext(ctx, q); err == nil {
			st.Close()
			t.Errorf("built-in: %s compiled", q)
		}
		st, err := ours.PrepareContext(ctx, q)
		if err != nil {
			t.Errorf("replacement: %s: %v", q, err)
			continue
		}
		var v any
		err = st.QueryRowContext(ctx).Scan(&v)
		st.Close()
		if err == nil {
			t.Errorf("replacement: %s ran", q)
		}
	}
}

// eval runs query with args and describes its one value (type and quoted
// value) or its error.
func eval(conn *sql.Conn, query string, args ...any) string {
	var typ string
	var val any
	err := conn.QueryRowContext(context.Background(), "SELECT typeof(v), quote(v) FROM (SELECT "+query+" AS v)", args...).Scan(&typ, &val)
	if err != nil {
		return "error: " + err.Error()
	}
	if b, ok := val.([]byte); ok {
		val = string(b)
	}
	return fmt.Sprintf("%s %v", typ, val)
}

// pieces are what generated strings are made of: wildcards and class syntax
// of both LIKE and GLOB, letters of both cases, NUL, multi-byte characters,
// and byte sequences that are not UTF-8 (a stray continuation byte, a lone
// lead byte, an overlong form, a surrogate, U+FFFF, 0xFF).
var pieces = []string{
	"a", "b", "A", "B", "z", "Z", "%", "_", "*", "?", "[", "]", "^", "-", "\\", "!", " ", "x",
	"\x00", "é", "É", "ß", "😀", "\uFFFD", "\x80", "\xc3", "\xc0\x80", "\xed\xa0\x80", "\xef\xbf\xbf", "\xff", "\xe2\x82",
}

func genString(r *rand.Rand, max int) string {
	var b strings.Builder
	for range r.IntN(max + 1) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// genPattern makes a pattern likely to match s: a few pieces of s, some
// characters replaced by wildcards, joined by runs of wildcards.
func genPattern(r *rand.Rand, s string) string {
	if r.IntN(4) == 0 || s == "" {
		return genString(r, 8)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch r.IntN(6) {
		case 0:
			b.WriteString([]string{"%", "*", "%%", "_", "?", "[a-z]", "[^a]", "[]x]", "\\%", "\\_"}[r.IntN(10)])
			i += r.IntN(3)
		case 1:
			i++ // drop a byte
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// genValue returns a value of any storage class, text most often.
func genValue(r *rand.Rand, max int) any {
	switch r.IntN(12) {
	case 0:
		return nil
	case 1:
		return []byte(genString(r, max))
	case 2:
		return int64(r.IntN(2000) - 1000)
	case 3:
		return []float64{0.1, 1.0, -2.5, 1e300, 1e-7, 123456789012345678.0, math.Inf(1), math.Inf(-1), -0.0, 3.0e15}[r.IntN(10)]
	}
	return genString(r, max)
}

// TestFunctionsMatchSQLite is a differential test: over generated inputs,
// each replacement returns exactly what SQLite's built-in returns (type and
// value), or fails where it fails.
func TestFunctionsMatchSQLite(t *testing.T) {
	const patternLimit, valueLimit = 40, 200
	builtin, ours := funcPair(t, patternLimit, valueLimit)
	r := rand.New(rand.NewPCG(8, 12))
	cases := 0
	check := func(query string, args ...any) {
		t.Helper()
		cases++
		want, got := eval(builtin, query, args...), eval(ours, query, args...)
		if got != want {
			t.Errorf("%s %q:\n got %s\nwant %s", query, args, got, want)
		}
	}
	n := 4000
	if testing.Short() {
		n = 500
	}
	for range n {
		s := genValue(r, 12)
		var pat any = genPattern(r, fmt.Sprint(s))
		if r.IntN(8) == 0 {
			pat = genValue(r, 6)
		}
		esc := []any{"\\", "%", "_", "é", "a", "", "ab", nil, []byte("\\"), int64(1), "\x00"}[r.IntN(11)]
		check("? LIKE ?", s, pat)
		check("like(?, ?)", pat, s)
		check("? NOT LIKE ?", s, pat)
		check("? LIKE ? ESCAPE ?", s, pat, esc)
		check("? GLOB ?", s, pat)
		check("glob(?, ?)", pat, s)
		check("instr(?, ?)", s, genValue(r, 3))
		if str, ok := s.(string); ok && len(str) > 2 {
			check("instr(?, ?)", s, str[r.IntN(len(str)):])
		}
		check("replace(?, ?, ?)", s, genValue(r, 2), genValue(r, 4))
		check("replace(?, ?, ?)", s, genString(r, 1), strings.Repeat("long", 20))
		for _, f := range []string{"trim", "ltrim", "rtrim"} {
			check(f+"(?)", s)
			check(f+"(?, ?)", s, genValue(r, 4))
			check(f+"(?, ?)", s, genString(r, 20))
		}
	}
	// Cases a generator finds rarely.
	for _, c := range []struct {
		q    string
		args []any
	}{
		{"? LIKE ?", []any{"abc", strings.Repeat("%", patternLimit+1)}},
		{"? LIKE ?", []any{nil, strings.Repeat("%", patternLimit+1)}},
		{"? LIKE ?", []any{[]byte("abc"), nil}},
		{"? LIKE ?", []any{"ABC", "abc"}},
		{"? LIKE ?", []any{"ÉA", "éa"}},
		{"? GLOB ?", []any{"ABC", "abc"}},
		{"? GLOB ?", []any{"a]", "a[]]"}},
		{"? GLOB ?", []any{"b", "[a-c]"}},
		{"? GLOB ?", []any{"-", "[a-]"}},
		{"? GLOB ?", []any{"b", "[^a-c]"}},
		{"? GLOB ?", []any{"b", "[a-c"}},
		{"? GLOB ?", []any{"xb", "*[a-c]"}},
		{"? LIKE ? ESCAPE ?", []any{"a%", "a\\%", "\\"}},
		{"? LIKE ? ESCAPE ?", []any{"a", "a\\", "\\"}},
		{"? LIKE ? ESCAPE ?", []any{"a%", "%\\", "\\"}},
		{"? LIKE ? ESCAPE ?", []any{"a_", "a__", "_"}},
		{"? LIKE ? ESCAPE ?", []any{"a%", "a%%", "%"}},
		{"like(?, ?, ?)", []any{"a", "a", "éé"}},
		{"like(?)", []any{"a"}},
		{"instr(?, ?)", []any{"é", []byte{0xa9}}},
		{"instr(?, ?)", []any{"\x80abc", "a"}},
		{"instr(?, ?)", []any{[]byte("ab\x00c"), []byte("\x00c")}},
		{"instr(?, ?)", []any{int64(12345), int64(34)}},
		{"instr(?, ?)", []any{1.5, "5"}},
		{"replace(?, ?, ?)", []any{"abc", "", nil}},
		{"replace(?, ?, ?)", []any{"abc", "\x00b", "x"}},
		{"replace(?, ?, ?)", []any{"aaaa", "aa", "b"}},
		{"replace(?, ?, ?)", []any{strings.Repeat("a", 150), "a", "aa"}},
		{"replace(?, ?, ?)", []any{strings.Repeat("a", 100), "a", "aa"}},
		{"replace(?, ?, ?)", []any{int64(1001), int64(0), 2.5}},
		{"trim(?, ?)", []any{"\xc3\xa9\xc3x\xc3", "\xc3\xc3\xa9"}},
		{"rtrim(?, ?)", []any{"abcabc", "cb"}},
		{"trim(?, ?)", []any{"xxhixx", "x\x00h"}},
		{"trim(?, ?)", []any{"  hi ", ""}},
		{"trim(?, ?)", []any{12.5, int64(15)}},
		{"trim(?, ?)", []any{[]byte("\x00\x01ab\x00"), []byte("\x01")}},
		{"trim(?, ?, ?)", []any{"a", "b", "c"}},
	} {
		check(c.q, c.args...)
	}
	// A set of more than eight characters takes the trie.
	for range n / 4 {
		s := genString(r, 30)
		check("trim(?, ?)", s, genString(r, 30))
		check("rtrim(?, ?)", s, genString(r, 30))
	}
	t.Logf("%d cases compared", cases)
}

// TestFunctionsMatchSQLiteLong compares long texts and patterns, where the
// replacements take their linear paths (the shift-and search with segments
// of more than 64 positions, the trie of a large trim set).
func TestFunctionsMatchSQLiteLong(t *testing.T) {
	const patternLimit, valueLimit = 5000, 1 << 20
	builtin, ours := funcPair(t, patternLimit, valueLimit)
	r := rand.New(rand.NewPCG(12, 8))
	check := func(query string, args ...any) {
		t.Helper()
		want, got := eval(builtin, query, args...), eval(ours, query, args...)
		if got != want {
			t.Errorf("%s (%d-byte arguments):\n got %.200s\nwant %.200s", query, len(fmt.Sprint(args...)), got, want)
		}
	}
	alphabets := [][]string{{"a", "b"}, {"a", "A", "é"}, {"x", "\xc3", "\x80", "😀"}, pieces}
	n := 150
	if testing.Short() {
		n = 30
	}
	for range n {
		alpha := alphabets[r.IntN(len(alphabets))]
		var b strings.Builder
		for range 500 + r.IntN(3000) {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		s := b.String()
		// Patterns of long pieces of s, some characters made wildcards.
		for _, w := range []struct{ query, all, one, class string }{
			{"? LIKE ?", "%", "_", "_"},
			{"? GLOB ?", "*", "?", "[^\x01]"},
		} {
			var p strings.Builder
			for range 1 + r.IntN(3) {
				p.WriteString(w.all)
				i := r.IntN(len(s))
				for i > 0 && s[i]&0xc0 == 0x80 {
					i--
				}
				piece := s[i:min(len(s), i+60+r.IntN(200))]
				for k := 0; k < len(piece); k++ {
					ascii := piece[k] < 0x80
					switch r.IntN(20) {
					case 0:
						if !ascii {
							p.WriteByte(piece[k])
							continue
						}
						p.WriteString(w.one)
					case 1:
						if !ascii {
							p.WriteByte(piece[k])
							continue
						}
						p.WriteString(w.class)
					default:
						p.WriteByte(piece[k])
					}
				}
			}
			if r.IntN(4) > 0 {
				p.WriteString(w.all)
			}
			check(w.query, s, p.String())
		}
		i := r.IntN(len(s))
		needle := s[i:min(len(s), i+1+r.IntN(300))]
		check("instr(?, ?)", s, needle)
		check("instr(?, ?)", s+"!", needle+"!")
		check("replace(?, ?, ?)", s, needle, "<>")
		check("replace(?, ?, ?)", s, alpha[0], strings.Repeat("+", r.IntN(4)))
		check("trim(?, ?)", s, strings.Join(alpha, "")+genString(r, 20))
		check("rtrim(?, ?)", s, genString(r, 40))
	}
}

// FuzzFunctionsMatchSQLite extends the differential test to fuzzed texts:
// go test -run='^$' -fuzz=FuzzFunctionsMatchSQLite ./roconn
func FuzzFunctionsMatchSQLite(f *testing.F) {
	f.Add("abcabc", "%b_c", "b")
	f.Add("é\x80\xc3z", "*[^a-z]?", "\xc3")
	builtin, ours := funcPair(f, 64, 4096)
	f.Fuzz(func(t *testing.T, s, p, x string) {
		for _, c := range []struct {
			q    string
			args []any
		}{
			{"? LIKE ?", []any{s, p}}, {"? LIKE ? ESCAPE ?", []any{s, p, x}}, {"? GLOB ?", []any{s, p}},
			{"instr(?, ?)", []any{s, p}}, {"instr(?, ?)", []any{[]byte(s), []byte(p)}}, {"replace(?, ?, ?)", []any{s, p, x}},
			{"trim(?, ?)", []any{s, p}}, {"ltrim(?, ?)", []any{s, x}}, {"rtrim(?, ?)", []any{s, p}},
		} {
			if want, got := eval(builtin, c.q, c.args...), eval(ours, c.q, c.args...); got != want {
				t.Errorf("%s %q:\n got %s\nwant %s", c.q, c.args, got, want)
			}
		}
	})
}

// TestPatternPathsAgree: fnLike matches short inputs with a transcription of
// SQLite's patternCompare and long ones with compiled tokens; the two agree
// on every generated input (the differential tests above compare each path
// with SQLite on the inputs that reach it).
func TestPatternPathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 30000
	if testing.Short() {
		n = 3000
	}
	for range n {
		s := cString(genString(r, 10))
		p := cString(genPattern(r, s))
		for _, c := range []struct {
			rules  patternRules
			escape uint32
		}{
			{likeRules, 0}, {globRules, '['}, {likeRules, '\\'}, {patternRules{name: "like", all: '%', noCase: true}, '_'},
		} {
			direct := patternCompare(p, s, c.rules, c.escape) == likeMatch
			compiled := matchPattern(compilePattern(p, c.rules, c.escape), s, c.rules.noCase)
			if direct != compiled {
				t.Errorf("%q %s %q (escape %q): patternCompare %v, compiled %v", s, c.rules.name, p, rune(c.escape), direct, compiled)
			}
		}
	}
}
