package evalrun

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A ResultSet is a query's output as the scorer sees it: column names and
// rows, each row holding one value per column. Values are what SQLite
// returns: nil, int64, float64 or string. Score also reads []byte as a
// string, time.Time (modernc.org/sqlite's reading of a DATE, DATETIME or
// TIMESTAMP column) as SQLite's text for it, other integer and float types
// as numbers, and anything else as its fmt.Sprint text.
type ResultSet struct {
	Columns []string
	Rows    [][]any
	// Truncated reports that the query returned more rows than the row cap
	// and Rows holds only the first ones (roconn.Result.Truncated,
	// agent.Result.Truncated).
	Truncated bool
}

// A Verdict is Score's judgement of one candidate result, with its reason.
type Verdict struct {
	// Correct reports whether the candidate's result answers the question
	// as the reference's does.
	Correct bool
	// Reason is one sentence for the people reading a report, starting with
	// "correct:" or "wrong:". Do not branch on its text.
	Reason string
	// Mapping holds, when Correct, one entry per reference column: the
	// candidate column that matched it ("total"), or the two adjacent
	// candidate columns joined to form it ("first_name+last_name"). A
	// candidate column whose name is empty or shared with another column is
	// named with its 1-based position as well ("id#2"). Mapping is nil when
	// the candidate is wrong, and when both results are empty.
	Mapping []string
}

// searchBudget bounds the search for a consistent column mapping, counted in
// rows examined: about 20,000 mappings tried at 200 rows, tens of
// milliseconds at worst. Real results settle in a few hundred rows examined
// per column; only results built to defeat the search reach the bound.
const searchBudget = 4_000_000

// Score reports whether cand, a candidate query's result, answers the
// question whose reference query returned ref. The rule is execution
// accuracy by containment:
//
//   - The row counts must be equal.
//   - Every reference column must appear among the candidate's columns,
//     compared by its values over all rows, never by its name: aliases and
//     column order do not matter, and extra candidate columns (an added
//     COUNT, an id) are allowed. Two adjacent candidate columns may be joined
//     with a space to form one reference column (first_name, last_name for
//     first_name || ' ' || last_name), with SQL's NULL rule for ||: a join
//     with a NULL is NULL. Two reference columns may match the same
//     candidate column only when their values are identical.
//   - The columns must match together, on one pairing of reference rows to
//     candidate rows: with ordered false rows are compared as multisets
//     (duplicates count) in any order; with ordered true row i must match
//     row i.
//
// Values are compared after canonicalisation. NULL equals only NULL.
// Numbers are compared at 2 decimal places: int64 and float64 compare
// numerically (13 equals 13.0), and a float is rounded half away from zero
// on its exact binary value, as SQLite's round() and printf('%.2f') do, so
// avg(x) matches round(avg(x), 2). A string that is a decimal number after
// trimming ("13", "13.00", "-1.5e3") is read as that number, because SQLite
// hands numbers back as text through printf(), CAST, || and TEXT columns;
// other strings are compared exactly (case and Unicode form matter) after
// trimming Unicode white space. Integers beyond ±9e15 are compared exactly.
//
// A float within 1e-9 (relative) of a half-hundredth, such as 1.005 stored
// as 1.00499999999999989, is ambiguous: two correct computations of one
// figure can land on either side. When the exact reading fails and such a
// value is present, Score tries again reading every such value rounded away
// from zero, and accepts the candidate if that matches.
//
// When both results have no rows, no value can be compared, so Score accepts
// the candidate when it has at least as many columns as the reference.
//
// A result cut at the row cap (Truncated) is never scored correct: the rows
// past the cap were never seen, so a match of the first ones proves nothing.
// A truncated candidate is wrong, and so is any candidate for a truncated
// reference; a caller should check the reference first and report that its
// question cannot be scored.
//
// The search for a consistent mapping is bounded (a few tens of
// milliseconds); a candidate whose mapping is not found within the bound is
// scored wrong, and its Reason says so. Score never fails: a row whose width
// differs from its ResultSet's Columns makes the verdict wrong.
func Score(ref, cand ResultSet, ordered bool) Verdict {
	if msg := malformed("reference", ref); msg != "" {
		return wrong(msg)
	}
	if msg := malformed("candidate", cand); msg != "" {
		return wrong(msg)
	}
	switch {
	case ref.Truncated:
		return wrong(fmt.Sprintf("the reference has more rows than the row cap (%d kept), so it cannot be scored", len(ref.Rows)))
	case cand.Truncated:
		return wrong(fmt.Sprintf("the candidate has more rows than the row cap (%d kept), the reference %d", len(cand.Rows), len(ref.Rows)))
	}
	n := len(ref.Rows)
	if len(cand.Rows) != n {
		return wrong(fmt.Sprintf("row count %d, want %d", len(cand.Rows), n))
	}
	if n == 0 {
		if len(cand.Columns) < len(ref.Columns) {
			return wrong(fmt.Sprintf("both results are empty, but the candidate has %d columns, want at least %d",
				len(cand.Columns), len(ref.Columns)))
		}
		return Verdict{Correct: true, Reason: fmt.Sprintf(
			"correct: both results are empty and the candidate has at least the reference's %d columns", len(ref.Columns))}
	}

	in := newInterner()
	refs := make([]column, len(ref.Columns))
	hasText := false
	for j := range refs {
		refs[j], _ = canonColumn(in, ref.Rows, j)
		hasText = hasText || refs[j].hasText
	}
	in.frozen = true
	srcs := sources(in, cand, hasText)

	v := match(n, ref.Columns, refs, srcs, ordered, false)
	if v.Correct || !anyFixes(refs, srcs) {
		return v
	}
	if v2 := match(n, ref.Columns, refs, srcs, ordered, true); v2.Correct {
		v2.Reason += " (reading values on a half-hundredth boundary as rounded away from zero)"
		return v2
	}
	return v
}

func wrong(why string) Verdict { return Verdict{Reason: "wrong: " + why} }

func malformed(which string, rs ResultSet) string {
	for i, row := range rs.Rows {
		if len(row) != len(rs.Columns) {
			return fmt.Sprintf("%s row %d has %d values for %d columns", which, i+1, len(row), len(rs.Columns))
		}
	}
	return ""
}

// A source is a candidate column, or two adjacent ones joined, that a
// reference column may match.
type source struct {
	name string
	col  column
	pair bool
}

// sources returns the candidate's columns, then, when withPairs, each
// adjacent pair joined with a space, leaving out those holding a value that
// no reference column holds.
func sources(in *interner, cand ResultSet, withPairs bool) []source {
	names := candNames(cand.Columns)
	srcs := make([]source, 0, 2*len(names))
	for j, name := range names {
		if c, ok := canonColumn(in, cand.Rows, j); ok {
			srcs = append(srcs, source{name: name, col: c})
		}
	}
	if withPairs {
		for j := 0; j+1 < len(names); j++ {
			if c, ok := canonPair(in, cand.Rows, j); ok {
				srcs = append(srcs, source{name: names[j] + "+" + names[j+1], col: c, pair: true})
			}
		}
	}
	return srcs
}

func candNames(cols []string) []string {
	seen := make(map[string]int, len(cols))
	for _, c := range cols {
		seen[c]++
	}
	names := make([]string, len(cols))
	for j, c := range cols {
		names[j] = c
		if c == "" || seen[c] > 1 {
			names[j] = fmt.Sprintf("%s#%d", c, j+1)
		}
	}
	return names
}

func anyFixes(refs []column, srcs []source) bool {
	for _, c := range refs {
		if len(c.fixes) > 0 {
			return true
		}
	}
	for _, s := range srcs {
		if len(s.col.fixes) > 0 {
			return true
		}
	}
	return false
}

// match scores the canonical columns; tolerant selects the reading of
// ambiguous numbers as rounded away from zero.
func match(n int, refNames []string, refs []column, srcs []source, ordered, tolerant bool) Verdict {
	rv := make([][]int32, len(refs))
	for i, c := range refs {
		rv[i] = c.values(tolerant)
	}
	sv := make([][]int32, len(srcs))
	for i, s := range srcs {
		sv[i] = s.col.values(tolerant)
	}

	// Sources with identical values are interchangeable: each reference
	// column tries only the one it prefers.
	class := make([]int, len(sv))
	byHash := map[uint64][]int{}
	for i, v := range sv {
		h := hashIDs(v)
		class[i] = i
		for _, j := range byHash[h] {
			if slices.Equal(sv[j], v) {
				class[i] = j
				break
			}
		}
		if class[i] == i {
			byHash[h] = append(byHash[h], i)
		}
	}
	// Multisets of each source, for the per-column check.
	sortedHash := make([]uint64, len(sv))
	sorted := make([][]int32, len(sv))
	for i, v := range sv {
		if class[i] != i {
			continue
		}
		sorted[i] = slices.Clone(v)
		slices.Sort(sorted[i])
		sortedHash[i] = hashIDs(sorted[i])
	}

	// A reference column identical to an earlier one must map where that one
	// maps (any other source would break the row pairing), so only the first
	// of each is searched.
	rep := make([]int, len(rv))
	opts := make([][]int, len(rv))
	distinct := make([]int, len(rv))
	for r, v := range rv {
		rep[r] = r
		for q := range r {
			if rep[q] == q && slices.Equal(rv[q], v) {
				rep[r] = q
				break
			}
		}
		if rep[r] != r {
			continue
		}
		s := slices.Clone(v)
		slices.Sort(s)
		distinct[r] = len(slices.Compact(slices.Clone(s)))
		h := hashIDs(s)
		tried := map[int]bool{}
		for _, i := range preference(refNames[r], srcs) {
			if c := class[i]; !tried[c] && sortedHash[c] == h && slices.Equal(sorted[c], s) {
				tried[c] = true
				opts[r] = append(opts[r], i)
			}
		}
		if len(opts[r]) == 0 {
			return wrong(fmt.Sprintf("reference column %d (%s) not found among candidate columns", r+1, refNames[r]))
		}
	}

	choice := make([]int, len(rv))
	if ordered {
		inOrder := true
		for r := range rv {
			if rep[r] != r {
				continue
			}
			choice[r] = -1
			for _, i := range opts[r] {
				if slices.Equal(sv[i], rv[r]) {
					choice[r] = i
					break
				}
			}
			inOrder = inOrder && choice[r] >= 0
		}
		if inOrder {
			return correct(refNames, srcs, rep, choice, " in order")
		}
	}

	var order []int
	for r := range rv {
		if rep[r] == r {
			order = append(order, r)
		}
	}
	// Most constrained first, then the columns that split rows finest: a
	// wrong choice is then refuted at a shallow level.
	slices.SortStableFunc(order, func(a, b int) int {
		if d := len(opts[a]) - len(opts[b]); d != 0 {
			return d
		}
		return distinct[b] - distinct[a]
	})
	s := newSearcher(n, rv, order, opts, sv)
	switch s.solve(0, make([]int32, n)) {
	case exhausted:
		return wrong(fmt.Sprintf("no consistent column mapping found within the search limit of %d rows examined", searchBudget))
	case none:
		return wrong("each reference column matches some candidate column, but not all of them on the same rows")
	}
	if ordered {
		return wrong("rows differ in order (ordered question)")
	}
	for k, r := range order {
		choice[r] = s.choice[k]
	}
	return correct(refNames, srcs, rep, choice, "")
}

// preference lists srcs in the order they are tried for a reference column
// named name: a column of the same name, the other columns left to right,
// then the joined pairs. The order decides only which of several equally
// good sources Mapping reports.
func preference(name string, srcs []source) []int {
	idx := make([]int, 0, len(srcs))
	for i, s := range srcs {
		if !s.pair && strings.EqualFold(strings.TrimSpace(s.name), strings.TrimSpace(name)) {
			idx = append(idx, i)
		}
	}
	for i, s := range srcs {
		if !s.pair && !strings.EqualFold(strings.TrimSpace(s.name), strings.TrimSpace(name)) {
			idx = append(idx, i)
		}
	}
	for i, s := range srcs {
		if s.pair {
			idx = append(idx, i)
		}
	}
	return idx
}

func correct(refNames []string, srcs []source, rep, choice []int, how string) Verdict {
	m := make([]string, len(refNames))
	parts := make([]string, len(refNames))
	for r := range refNames {
		m[r] = srcs[choice[rep[r]]].name
		parts[r] = refNames[r] + "=" + m[r]
	}
	return Verdict{
		Correct: true,
		Reason:  fmt.Sprintf("correct: every reference column matched a candidate column%s (%s)", how, strings.Join(parts, ", ")),
		Mapping: m,
	}
}

// hashIDs hashes ids (FNV-1a over whole values); equal hashes are
// confirmed by comparing the slices.
func hashIDs(ids []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, id := range ids {
		h = (h ^ uint64(uint32(id))) * 1099511628211
	}
	return h
}

type outcome int

const (
	none outcome = iota
	found
	exhausted
)

// A searcher looks for one source per reference column such that the
// candidate's rows, projected onto the chosen sources, equal the reference's
// rows as a multiset. It assigns columns one level at a time and checks the
// projection so far at each level: rows are tracked as tuple ids, interned
// per level over the reference's rows, so a candidate row whose partial tuple
// the reference lacks, or one tuple too many, refutes a choice at once.
type searcher struct {
	n      int
	cols   [][]int32          // reference columns, in search order
	opts   [][]int            // sources to try for each level
	src    [][]int32          // every source's values
	next   []map[uint64]int32 // per level: (tuple id before, value) → tuple id after
	want   [][]int32          // per level: reference rows per tuple id
	tuples [][]int32          // per level: the candidate rows' tuple ids
	count  []int32
	choice []int // per level: the chosen source
	budget int
}

func newSearcher(n int, rv [][]int32, order []int, opts [][]int, sv [][]int32) *searcher {
	s := &searcher{
		n: n, src: sv, budget: searchBudget,
		count:  make([]int32, n),
		choice: make([]int, len(order)),
	}
	prev := make([]int32, n)
	for _, r := range order {
		s.cols = append(s.cols, rv[r])
		s.opts = append(s.opts, opts[r])
		m := make(map[uint64]int32, n)
		cur := make([]int32, n)
		var want []int32
		for row, v := range rv[r] {
			k := pairKey(prev[row], v)
			id, ok := m[k]
			if !ok {
				id = int32(len(want))
				m[k] = id
				want = append(want, 0)
			}
			want[id]++
			cur[row] = id
		}
		s.next = append(s.next, m)
		s.want = append(s.want, want)
		s.tuples = append(s.tuples, make([]int32, n))
		prev = cur
	}
	return s
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (s *searcher) solve(level int, prev []int32) outcome {
	if level == len(s.cols) {
		return found
	}
	cur := s.tuples[level]
	for _, o := range s.opts[level] {
		if s.budget < s.n {
			return exhausted
		}
		s.budget -= s.n
		if !s.extend(level, prev, s.src[o], cur) {
			continue
		}
		s.choice[level] = o
		if r := s.solve(level+1, cur); r != none {
			return r
		}
	}
	return none
}

// extend projects the candidate rows one column further and reports whether
// they still equal the reference rows as a multiset.
func (s *searcher) extend(level int, prev, src, cur []int32) bool {
	want := s.want[level]
	cnt := s.count[:len(want)]
	clear(cnt)
	m := s.next[level]
	for row, p := range prev {
		id, ok := m[pairKey(p, src[row])]
		if !ok {
			return false
		}
		// Both sides have n rows, so no tuple above its reference count
		// means every count is equal.
		if cnt[id]++; cnt[id] > want[id] {
			return false
		}
		cur[row] = id
	}
	return true
}

// A column is one column's canonical values as interned ids, in row order.
type column struct {
	ids     []int32
	fixes   []fix // rows whose value reads differently when rounded away from zero
	hasText bool  // some value is text that is not a number
}

type fix struct {
	row int
	id  int32
}

func (c column) values(tolerant bool) []int32 {
	if !tolerant || len(c.fixes) == 0 {
		return c.ids
	}
	v := slices.Clone(c.ids)
	for _, f := range c.fixes {
		v[f.row] = f.id
	}
	return v
}

// canonColumn reads column j of rows. Once in is frozen, it gives up, with
// ok false, at the first value that is not among the reference's: such a
// column cannot match any reference column.
func canonColumn(in *interner, rows [][]any, j int) (c column, ok bool) {
	c.ids = make([]int32, len(rows))
	for i, row := range rows {
		if !c.add(in, i, canon(row[j])) {
			return column{}, false
		}
	}
	return c, true
}

// canonPair joins columns j and j+1 as SQL's a || ' ' || b would, and gives
// up as canonColumn does.
func canonPair(in *interner, rows [][]any, j int) (c column, ok bool) {
	c.ids = make([]int32, len(rows))
	for i, row := range rows {
		v := canonical{exact: key{kind: kindNull}}
		a, okA := text(row[j])
		b, okB := text(row[j+1])
		if okA && okB {
			v = canonString(a + " " + b)
		}
		if !c.add(in, i, v) {
			return column{}, false
		}
	}
	return c, true
}

// add records v at row, and reports false when in is frozen and neither
// reading of v is known to it.
func (c *column) add(in *interner, row int, v canonical) bool {
	id, known := in.id(v.exact)
	c.ids[row] = id
	c.hasText = c.hasText || v.exact.kind == kindText
	if v.ambiguous {
		away, ok := in.id(v.away)
		if ok {
			c.fixes = append(c.fixes, fix{row, away})
		}
		known = known || ok
	}
	return known
}

// An interner numbers canonical values densely, one map per kind so that
// numbers, the common case, hash as plain integers. Score interns the
// reference's values, then freezes it: a value it has not seen then reads
// as -1, which matches no reference value.
type interner struct {
	num     map[int64]int32
	text    map[string]int32
	other   map[key]int32
	next    int32
	sawNull bool
	frozen  bool
}

func newInterner() *interner {
	return &interner{num: map[int64]int32{}, text: map[string]int32{}, other: map[key]int32{}, next: 1}
}

func (in *interner) id(k key) (int32, bool) {
	switch k.kind {
	case kindNull:
		in.sawNull = in.sawNull || !in.frozen
		return 0, in.sawNull
	case kindNumber:
		return intern(in, in.num, k.n)
	case kindText:
		return intern(in, in.text, k.s)
	default:
		return intern(in, in.other, k)
	}
}

func intern[K comparable](in *interner, m map[K]int32, k K) (int32, bool) {
	if id, ok := m[k]; ok {
		return id, true
	}
	if in.frozen {
		return -1, false
	}
	id := in.next
	in.next++
	m[k] = id
	return id, true
}

type kind uint8

const (
	kindNull   kind = iota
	kindNumber      // n: hundredths, rounded half away from zero
	kindBig         // s: an integer beyond ±maxExact, in decimal
	kindText        // s: trimmed text that is not a number
	kindOther       // s: NaN, +Inf, -Inf
)

type key struct {
	kind kind
	n    int64
	s    string
}

// A canonical value: exact is its reading; when ambiguous, away is its
// reading with a half-hundredth boundary, missed by rounding noise, rounded
// away from zero.
type canonical struct {
	exact, away key
	ambiguous   bool
}

// maxExact bounds the numbers held as hundredths in an int64; every float64
// at or beyond it is an integer.
const maxExact = 9e15

func canon(v any) canonical {
	switch v := v.(type) {
	case nil:
		return canonical{exact: key{kind: kindNull}}
	case int64:
		return intKey(v)
	case float64:
		return floatKey(v)
	case string:
		return canonString(v)
	case []byte:
		return canonString(string(v))
	case time.Time:
		return canonical{exact: key{kind: kindText, s: timeText(v)}}
	case int:
		return intKey(int64(v))
	case int32:
		return intKey(int64(v))
	case int16:
		return intKey(int64(v))
	case int8:
		return intKey(int64(v))
	case uint32:
		return intKey(int64(v))
	case uint16:
		return intKey(int64(v))
	case uint8:
		return intKey(int64(v))
	case uint:
		return uintKey(uint64(v))
	case uint64:
		return uintKey(v)
	case float32:
		return floatKey(float64(v))
	case bool:
		if v {
			return intKey(1)
		}
		return intKey(0)
	default:
		return canonString(fmt.Sprint(v))
	}
}

func intKey(i int64) canonical {
	if i > -maxExact && i < maxExact {
		return canonical{exact: key{kind: kindNumber, n: i * 100}}
	}
	return canonical{exact: key{kind: kindBig, s: strconv.FormatInt(i, 10)}}
}

func uintKey(u uint64) canonical {
	if u <= math.MaxInt64 {
		return intKey(int64(u))
	}
	return canonical{exact: key{kind: kindBig, s: strconv.FormatUint(u, 10)}}
}

func floatKey(f float64) canonical {
	switch {
	case math.IsNaN(f):
		return canonical{exact: key{kind: kindOther, s: "NaN"}}
	case math.IsInf(f, 1):
		return canonical{exact: key{kind: kindOther, s: "+Inf"}}
	case math.IsInf(f, -1):
		return canonical{exact: key{kind: kindOther, s: "-Inf"}}
	case math.Abs(f) >= maxExact:
		i, _ := big.NewFloat(f).Int(nil) // exact: f is an integer
		return canonical{exact: key{kind: kindBig, s: i.String()}}
	}
	c, near := hundredths(f)
	v := canonical{exact: key{kind: kindNumber, n: c}}
	if near {
		away := c + 1
		if f < 0 {
			away = c - 1
		}
		v.away, v.ambiguous = key{kind: kindNumber, n: away}, true
	}
	return v
}

// hundredths returns f in hundredths rounded half away from zero, deciding
// on f's exact binary value as SQLite's round(f, 2) does, and reports whether
// f lies within 1e-9 (relative) below a half-hundredth, so that rounding
// noise may have moved it there. |f| must be below maxExact.
func hundredths(f float64) (c int64, near bool) {
	a := math.Abs(f)
	window := 1e-7 * math.Max(1, a) // 1e-9 of the value, in hundredths
	if x := a * 100; x < 1<<40 {
		// Far from a half, a*100's own rounding error (at most 2^-12 here)
		// cannot change the result.
		if d := x - math.Floor(x); math.Abs(d-0.5) > math.Max(1e-3, 2*window) {
			c = int64(math.Floor(x))
			if d > 0.5 {
				c++
			}
			return sign(f, c), false
		}
	}
	x := new(big.Float).SetPrec(128).SetFloat64(a)
	x.Mul(x, big.NewFloat(100)) // exact: 53+7 bits
	c, _ = x.Int64()            // truncates: x ≥ 0, so this is the floor
	frac := new(big.Float).SetPrec(128).Sub(x, new(big.Float).SetInt64(c))
	if frac.Cmp(big.NewFloat(0.5)) >= 0 {
		return sign(f, c+1), false
	}
	fr, _ := frac.Float64()
	return sign(f, c), 0.5-fr <= window
}

func sign(f float64, c int64) int64 {
	if f < 0 {
		return -c
	}
	return c
}

// canonString trims s and reads it as a number when it is one.
func canonString(s string) canonical {
	s = strings.TrimSpace(s)
	switch numberSyntax(s) {
	case integer:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return intKey(i)
		}
		fallthrough
	case decimal:
		if f, err := strconv.ParseFloat(s, 64); err == nil || math.IsInf(f, 0) {
			return floatKey(f)
		}
	}
	return canonical{exact: key{kind: kindText, s: s}}
}

type syntax int

const (
	notNumber syntax = iota
	integer
	decimal
)

// numberSyntax reports whether s is a decimal number as SQL writes one:
// [+-] digits [. digits] [e [+-] digits], with digits on at least one side of
// the point. Hex, "Inf", "NaN", underscores and thousands separators are not
// numbers here.
func numberSyntax(s string) syntax {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	kind := integer
	if i < len(s) && s[i] == '.' {
		kind = decimal
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return notNumber
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		kind = decimal
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return notNumber
		}
	}
	if i != len(s) {
		return notNumber
	}
	return kind
}

// text returns v as SQLite's || would write it, and false for NULL.
func text(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case []byte:
		return string(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return floatText(v), true
	case float32:
		return floatText(float64(v)), true
	case time.Time:
		return timeText(v), true
	default:
		return fmt.Sprint(v), true
	}
}

// floatText writes f as SQLite does when it turns a REAL into text: 15
// significant digits, always with a point ("13.0", "1.0e+20").
func floatText(f float64) string {
	s := strconv.FormatFloat(f, 'g', 15, 64)
	if strings.ContainsAny(s, ".IN") {
		return s
	}
	if e := strings.IndexByte(s, 'e'); e >= 0 {
		return s[:e] + ".0" + s[e:]
	}
	return s + ".0"
}

// timeText writes t as SQLite's date and time functions do: the date alone
// at midnight UTC, else "YYYY-MM-DD HH:MM:SS" with any fraction and offset.
func timeText(t time.Time) string {
	_, off := t.Zone()
	if off == 0 && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02")
	}
	if off == 0 {
		return t.Format("2006-01-02 15:04:05.999999999")
	}
	return t.Format("2006-01-02 15:04:05.999999999-07:00")
}
