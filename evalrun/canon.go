package evalrun

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// The scorer compares values after canonicalisation (see Score): each value
// of a result is read once into a key, and keys are interned as dense ids so
// that columns compare as slices of int32.

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

// canon reads v, a value of a roconn result (nil, int64, float64 or
// string); anything else is read as its fmt.Sprint text.
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
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return floatText(v), true
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
