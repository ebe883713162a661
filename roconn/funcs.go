package roconn

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's LIKE, GLOB, instr, replace and trim (with ltrim and rtrim) cost
// time proportional to the product of their arguments' lengths: one call on
// two 1 MB strings runs for minutes, and SQLite checks for an interrupt only
// between the calls. roconn replaces them, on its own driver, with Go
// functions of the same names whose cost is linear in their input (LIKE and
// GLOB: linear times the pattern length over 64), and whose results are
// SQLite's to the byte: NULLs, the text SQLite makes of numbers and blobs,
// blobs that never match LIKE, characters read as SQLite reads UTF-8
// (invalid sequences included), LIKE's ASCII-only case folding and ESCAPE,
// GLOB's [...] classes, ranges and ^, trim's character sets split as SQLite
// splits them, and the text stopping at a NUL byte where SQLite's C strings
// stop. A function registered on a driver with a built-in's name replaces
// the built-in on that driver's connections, the LIKE and GLOB operators
// included (they call like() and glob()).
//
// The replacements are registered for any number of arguments, so a wrong
// count is reported when the statement runs rather than when it compiles,
// with SQLite's message.

// registerFunctions registers the replacements on d: a connection hook of
// d's installs them on each connection it opens (see installFunctions).
// patternLimit is the LIKE_PATTERN_LENGTH limit and valueLimit the LENGTH
// limit its connections get (see setLimits).
func registerFunctions(d *sqlite.Driver, patternLimit, valueLimit int) error {
	d.RegisterConnectionHook(func(dc sqlite.ExecQuerierContext, _ string) error {
		h, err := sqliteHandle(dc.(driver.Conn))
		if err != nil {
			return err
		}
		tls := libc.NewTLS()
		defer tls.Close()
		return installFunctions(tls, h, patternLimit, valueLimit)
	})
	return nil
}

// The replacement functions, as fnSpec.fn numbers them.
const (
	fnLikeID = iota
	fnGlobID
	fnInstrID
	fnReplaceID
	fnTrimID
	fnLtrimID
	fnRtrimID
)

// replacements names each replacement function by its fnSpec.fn.
var replacements = [...]string{fnLikeID: "like", fnGlobID: "glob", fnInstrID: "instr", fnReplaceID: "replace", fnTrimID: "trim", fnLtrimID: "ltrim", fnRtrimID: "rtrim"}

// An fnSpec is the user data SQLite keeps for one replacement function on
// one connection: which function, and its connection's limits. It lives in
// SQLite's memory, which SQLite frees when the function goes (with the
// connection), so it holds no Go pointer.
type fnSpec struct {
	fn, patternLimit, valueLimit int64
}

// installFunctions installs the replacements on the connection handle,
// calling SQLite through tls, with sqlite3_create_function_v2, as
// modernc.org/sqlite's RegisterFunction does (any number of arguments,
// SQLITE_UTF8 | SQLITE_DETERMINISTIC) but with a callback of roconn's own,
// callFunction, which reads the arguments as views of SQLite's memory
// without boxing each as a driver.Value (that was most of the safe path's
// allocations on a query that calls LIKE on every row).
func installFunctions(tls *libc.TLS, handle uintptr, patternLimit, valueLimit int) error {
	var xFunc, xDestroy uintptr
	*(*func(*libc.TLS, uintptr, int32, uintptr))(unsafe.Pointer(&xFunc)) = callFunction
	*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&xDestroy)) = sqlite3.Xsqlite3_free
	for id, name := range replacements {
		p := sqlite3.Xsqlite3_malloc(tls, int32(unsafe.Sizeof(fnSpec{})))
		if p == 0 {
			return fmt.Errorf("register %s: out of memory", name)
		}
		*(*fnSpec)(cMem(p)) = fnSpec{fn: int64(id), patternLimit: int64(patternLimit), valueLimit: int64(valueLimit)}
		z, err := libc.CString(name)
		if err != nil {
			sqlite3.Xsqlite3_free(tls, p)
			return fmt.Errorf("register %s: %w", name, err)
		}
		// On failure SQLite calls xDestroy on p itself.
		rc := sqlite3.Xsqlite3_create_function_v2(tls, handle, z, -1, sqlite3.SQLITE_UTF8|sqlite3.SQLITE_DETERMINISTIC, p, xFunc, 0, 0, xDestroy)
		libc.Xfree(tls, z)
		if rc != sqlite3.SQLITE_OK {
			return fmt.Errorf("register %s: SQLite result %d", name, rc)
		}
	}
	return nil
}

// callFunction is the SQLite callback of every replacement function: it
// reads the arguments as modernc.org/sqlite's funcTrampoline reads them for
// a function with VolatileArgs (text and blobs as views of SQLite's memory,
// valid during the call), runs the function, and sets its result as
// funcTrampoline does, an error as SQLITE_ERROR with its text.
func callFunction(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr) {
	spec := *(*fnSpec)(cMem(sqlite3.Xsqlite3_user_data(tls, ctx)))
	var buf [3]value
	args := buf[:0]
	if argc > int32(len(buf)) {
		args = make([]value, 0, argc)
	}
	for i := range argc {
		args = append(args, valueOf(tls, *(*uintptr)(cMem(argv + uintptr(i)*unsafe.Sizeof(uintptr(0))))))
	}
	res, err := runFunction(spec, args)
	if err != nil {
		msg, cerr := libc.CString(err.Error())
		if cerr != nil {
			sqlite3.Xsqlite3_result_error_nomem(tls, ctx)
			return
		}
		sqlite3.Xsqlite3_result_error(tls, ctx, msg, -1)
		sqlite3.Xsqlite3_result_error_code(tls, ctx, sqlite3.SQLITE_ERROR)
		libc.Xfree(tls, msg)
		return
	}
	switch r := res.(type) {
	case nil:
		sqlite3.Xsqlite3_result_null(tls, ctx)
	case int64:
		sqlite3.Xsqlite3_result_int64(tls, ctx, r)
	case string:
		cstr, cerr := libc.CString(r)
		if cerr != nil {
			sqlite3.Xsqlite3_result_error_nomem(tls, ctx)
			return
		}
		sqlite3.Xsqlite3_result_text(tls, ctx, cstr, int32(len(r)), sqlite3.SQLITE_TRANSIENT)
		libc.Xfree(tls, cstr)
	default: // no function returns anything else
		sqlite3.Xsqlite3_result_error_code(tls, ctx, sqlite3.SQLITE_ERROR)
	}
}

// runFunction runs the replacement spec names on args, and turns a panic in
// it, which would end the process (SQLite's callbacks do not recover), into
// an SQL error.
func runFunction(spec fnSpec, args []value) (v any, err error) {
	name := "function"
	if spec.fn >= 0 && spec.fn < int64(len(replacements)) {
		name = replacements[spec.fn]
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("internal error in %s()", name)
		}
	}()
	patternLimit, valueLimit := int(spec.patternLimit), int(spec.valueLimit)
	switch spec.fn {
	case fnLikeID:
		return fnLike(args, likeRules, patternLimit)
	case fnGlobID:
		return fnLike(args, globRules, patternLimit)
	case fnInstrID:
		return fnInstr(args)
	case fnReplaceID:
		return fnReplace(args, valueLimit)
	case fnTrimID:
		return fnTrim(args, "trim", trimLeft|trimRight, valueLimit)
	case fnLtrimID:
		return fnTrim(args, "ltrim", trimLeft, valueLimit)
	case fnRtrimID:
		return fnTrim(args, "rtrim", trimRight, valueLimit)
	}
	return nil, fmt.Errorf("internal error in %s()", name)
}

func wrongArgs(name string) error {
	return fmt.Errorf("wrong number of arguments to function %s()", name)
}

// A value is one argument of a replacement function, as SQLite passed it.
type value struct {
	typ int32   // sqlite3.SQLITE_TEXT, _BLOB, _INTEGER, _FLOAT or _NULL
	s   string  // TEXT and BLOB: a view of SQLite's memory, valid during the call
	i   int64   // INTEGER
	f   float64 // FLOAT
}

// valueOf reads the sqlite3_value at p as modernc.org/sqlite reads a
// volatile argument: a TEXT by sqlite3_value_text then _bytes, a BLOB by
// _bytes then _blob.
func valueOf(tls *libc.TLS, p uintptr) value {
	switch typ := sqlite3.Xsqlite3_value_type(tls, p); typ {
	case sqlite3.SQLITE_TEXT:
		t := sqlite3.Xsqlite3_value_text(tls, p)
		n := sqlite3.Xsqlite3_value_bytes(tls, p)
		if t == 0 || n == 0 {
			return value{typ: typ}
		}
		return value{typ: typ, s: unsafe.String((*byte)(cMem(t)), n)}
	case sqlite3.SQLITE_BLOB:
		n := sqlite3.Xsqlite3_value_bytes(tls, p)
		b := sqlite3.Xsqlite3_value_blob(tls, p)
		if b == 0 || n == 0 {
			return value{typ: typ}
		}
		return value{typ: typ, s: unsafe.String((*byte)(cMem(b)), n)}
	case sqlite3.SQLITE_INTEGER:
		return value{typ: typ, i: sqlite3.Xsqlite3_value_int64(tls, p)}
	case sqlite3.SQLITE_FLOAT:
		return value{typ: typ, f: sqlite3.Xsqlite3_value_double(tls, p)}
	default:
		return value{typ: sqlite3.SQLITE_NULL}
	}
}

// isNull reports whether v is NULL.
func (v value) isNull() bool { return v.typ == sqlite3.SQLITE_NULL }

// isBlob reports whether v is a BLOB argument.
func isBlob(v value) bool { return v.typ == sqlite3.SQLITE_BLOB }

// textOf returns the text SQLite's sqlite3_value_text gives for v, and false
// for NULL. A blob's text is its bytes; a text or blob argument is a view
// of SQLite's memory and so is the result.
func textOf(v value) (string, bool) {
	switch v.typ {
	case sqlite3.SQLITE_NULL:
		return "", false
	case sqlite3.SQLITE_INTEGER:
		return strconv.FormatInt(v.i, 10), true
	case sqlite3.SQLITE_FLOAT:
		return realText(v.f), true
	}
	return v.s, true
}

// realText renders f as SQLite renders a REAL as TEXT ("%!.17g" with its own
// printf), by asking SQLite.
func realText(f float64) string {
	tls := libc.NewTLS()
	defer tls.Close()
	const bufSize = 64
	buf := libc.Xmalloc(tls, bufSize+24)
	if buf == 0 {
		return strconv.FormatFloat(f, 'g', 17, 64)
	}
	defer libc.Xfree(tls, buf)
	format, _ := libc.CString("%!.17g")
	defer libc.Xfree(tls, format)
	va := buf + bufSize
	sqlite3.Xsqlite3_snprintf(tls, bufSize, buf, format, libc.VaList(va, f))
	return libc.GoString(buf)
}

// cString cuts s at its first NUL byte, where SQLite's C string ends.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// utf8Trans1 is SQLite's table of the payload bits of a UTF-8 lead byte.
var utf8Trans1 = [64]uint32{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
}

// utf8Read decodes one character of s at i as sqlite3Utf8Read does, and
// returns it with the index of the next one: a lead byte takes every
// continuation byte that follows, and an overlong form or a surrogate
// becomes U+FFFD; a stray continuation byte is a character of its own.
func utf8Read(s string, i int) (uint32, int) {
	c := uint32(s[i])
	i++
	if c >= 0xc0 {
		c = utf8Trans1[c-0xc0]
		for i < len(s) && s[i]&0xc0 == 0x80 {
			c = c<<6 + uint32(s[i]&0x3f)
			i++
		}
		if c < 0x80 || c&0xFFFFF800 == 0xD800 {
			c = 0xFFFD
		}
	}
	return c, i
}

// skipUTF8 returns the index after the character at i, split as
// SQLITE_SKIP_UTF8 splits: a byte of 0xc0 or more takes the continuation
// bytes that follow it.
func skipUTF8(s string, i int) int {
	c := s[i]
	i++
	if c >= 0xc0 {
		for i < len(s) && s[i]&0xc0 == 0x80 {
			i++
		}
	}
	return i
}

// chars decodes s with utf8Read.
func chars(s string) []uint32 {
	out := make([]uint32, 0, len(s))
	for i := 0; i < len(s); {
		var c uint32
		c, i = utf8Read(s, i)
		out = append(out, c)
	}
	return out
}

// --- LIKE and GLOB

// patternRules are the wildcards of LIKE or GLOB (SQLite's compareInfo).
type patternRules struct {
	name     string
	all, one uint32 // '%' and '_', or '*' and '?'; 0 when ESCAPE disables one
	set      bool   // GLOB: '[' opens a character class
	noCase   bool   // LIKE: ASCII letters match either case
}

var (
	likeRules = patternRules{name: "like", all: '%', one: '_', noCase: true}
	globRules = patternRules{name: "glob", all: '*', one: '?', set: true}
)

// A patKind is what one pattern token matches.
type patKind uint8

const (
	tokChar  patKind = iota // one character equal to c (folded, for LIKE)
	tokOne                  // any one character
	tokSet                  // one character in (or, inverted, not in) a GLOB class
	tokNever                // nothing: an unterminated class or a trailing escape
	tokAll                  // any run of characters
)

type patToken struct {
	kind patKind
	c    uint32
	set  *charSet
}

// A charSet is a GLOB class [...]: characters and ranges, maybe inverted.
type charSet struct {
	invert bool
	ranges [][2]uint32
}

func (s *charSet) has(c uint32) bool {
	seen := false
	for _, r := range s.ranges {
		if c >= r[0] && c <= r[1] {
			seen = true
			break
		}
	}
	return seen != s.invert
}

// fnLike implements like(pattern, string[, escape]) and glob(pattern, string)
// as SQLite's likeFunc does, with the pattern compiled to tokens and matched
// without backtracking.
func fnLike(args []value, rules patternRules, patternLimit int) (any, error) {
	if len(args) != 2 && (rules.set || len(args) != 3) {
		return nil, wrongArgs(rules.name)
	}
	// SQLITE_LIKE_DOESNT_MATCH_BLOBS: a blob on either side never matches,
	// even against NULL.
	if isBlob(args[0]) || isBlob(args[1]) {
		return int64(0), nil
	}
	pat, patOK := textOf(args[0])
	if len(pat) > patternLimit {
		return nil, errors.New("LIKE or GLOB pattern too complex")
	}
	var escape uint32
	if rules.set {
		escape = '['
	}
	if len(args) == 3 {
		esc, ok := textOf(args[2])
		if !ok {
			return nil, nil
		}
		esc = cString(esc)
		if esc == "" || skipUTF8(esc, 0) != len(esc) {
			return nil, errors.New("ESCAPE expression must be a single character")
		}
		escape, _ = utf8Read(esc, 0)
		if escape == rules.all {
			rules.all = 0
		}
		if escape == rules.one {
			rules.one = 0
		}
	}
	str, strOK := textOf(args[1])
	if !patOK || !strOK {
		return nil, nil
	}
	pat, str = cString(pat), cString(str)
	var match bool
	if len(pat)*len(str) <= directWork {
		match = patternCompare(pat, str, rules, escape) == likeMatch
	} else {
		match = matchPattern(compilePattern(pat, rules, escape), str, rules.noCase)
	}
	if match {
		return int64(1), nil
	}
	return int64(0), nil
}

// directWork bounds the work of patternCompare, whose cost grows with the
// product of the lengths: below it, on the short texts of most rows, it is
// the fastest way and allocates nothing; above it, the pattern is compiled
// and matched in linear time.
const directWork = 1 << 14

// The results of patternCompare.
const (
	likeMatch      = 0
	likeNoMatch    = 1
	likeNoWildcard = 2 // no match here, and none further along after a wildcard
)

// patternCompare is SQLite's patternCompare, statement for statement, on Go
// strings that end where SQLite's C strings end (see cString). Its cost can
// grow with the product of the lengths; fnLike calls it only on short
// inputs.
func patternCompare(pat, str string, r patternRules, matchOther uint32) int {
	read := func(s string, i int) (uint32, int) {
		if i >= len(s) {
			return 0, i
		}
		return utf8Read(s, i)
	}
	zp, zs, zEscaped := 0, 0, -1
	for {
		var c uint32
		if c, zp = read(pat, zp); c == 0 {
			break
		}
		if c == r.all {
			// Skip the wildcards that follow, and take one character of
			// str for each "_" among them.
			for {
				if c, zp = read(pat, zp); c != r.all && (c != r.one || r.one == 0) {
					break
				}
				if c == r.one {
					var c2 uint32
					if c2, zs = read(str, zs); c2 == 0 {
						return likeNoWildcard
					}
				}
			}
			if c == 0 {
				return likeMatch
			}
			if c == matchOther {
				if !r.set {
					if c, zp = read(pat, zp); c == 0 {
						return likeNoWildcard
					}
				} else {
					// "[...]" right after the wildcard: try every place.
					for zs < len(str) {
						if m := patternCompare(pat[zp-1:], str[zs:], r, matchOther); m != likeNoMatch {
							return m
						}
						zs = skipUTF8(str, zs)
					}
					return likeNoWildcard
				}
			}
			if c < 0x80 {
				for {
					for zs < len(str) && !asciiStop(str[zs], c, r.noCase) {
						zs++
					}
					if zs >= len(str) {
						break
					}
					zs++
					if m := patternCompare(pat[zp:], str[zs:], r, matchOther); m != likeNoMatch {
						return m
					}
				}
			} else {
				for {
					var c2 uint32
					if c2, zs = read(str, zs); c2 == 0 {
						break
					}
					if c2 != c {
						continue
					}
					if m := patternCompare(pat[zp:], str[zs:], r, matchOther); m != likeNoMatch {
						return m
					}
				}
			}
			return likeNoWildcard
		}
		if c == matchOther {
			if !r.set {
				if c, zp = read(pat, zp); c == 0 {
					return likeNoMatch
				}
				zEscaped = zp
			} else {
				var ch uint32
				if ch, zs = read(str, zs); ch == 0 {
					return likeNoMatch
				}
				var prior uint32
				seen, invert := false, false
				c2, zp2 := read(pat, zp)
				zp = zp2
				if c2 == '^' {
					invert = true
					c2, zp = read(pat, zp)
				}
				if c2 == ']' {
					if ch == ']' {
						seen = true
					}
					c2, zp = read(pat, zp)
				}
				for c2 != 0 && c2 != ']' {
					if c2 == '-' && zp < len(pat) && pat[zp] != ']' && prior > 0 {
						c2, zp = read(pat, zp)
						if ch >= prior && ch <= c2 {
							seen = true
						}
						prior = 0
					} else {
						if ch == c2 {
							seen = true
						}
						prior = c2
					}
					c2, zp = read(pat, zp)
				}
				if c2 == 0 || seen == invert {
					return likeNoMatch
				}
				continue
			}
		}
		var c2 uint32
		c2, zs = read(str, zs)
		if c == c2 {
			continue
		}
		if r.noCase && c < 0x80 && c2 < 0x80 && lowerASCII(c) == lowerASCII(c2) {
			continue
		}
		if c == r.one && zp != zEscaped && c2 != 0 {
			continue
		}
		return likeNoMatch
	}
	if zs >= len(str) {
		return likeMatch
	}
	return likeNoMatch
}

// asciiStop reports whether byte b is the ASCII character c, or for LIKE
// either case of it: where patternCompare's strcspn stops.
func asciiStop(b byte, c uint32, noCase bool) bool {
	if noCase {
		return lowerASCII(uint32(b)) == lowerASCII(c)
	}
	return uint32(b) == c
}

// compilePattern reads pat as SQLite's patternCompare does and returns its
// tokens; escape is the ESCAPE character (LIKE) or '[' (GLOB), 0 for none.
func compilePattern(pat string, rules patternRules, escape uint32) []patToken {
	var toks []patToken
	for i := 0; i < len(pat); {
		var c uint32
		c, i = utf8Read(pat, i)
		switch {
		case c == rules.all && c != 0:
			toks = append(toks, patToken{kind: tokAll})
		case c == escape && escape != 0 && !rules.set:
			if i >= len(pat) {
				return append(toks, patToken{kind: tokNever})
			}
			c, i = utf8Read(pat, i)
			toks = append(toks, patToken{kind: tokChar, c: c})
		case c == escape && rules.set:
			var t patToken
			t, i = compileSet(pat, i)
			toks = append(toks, t)
		case c == rules.one && c != 0:
			toks = append(toks, patToken{kind: tokOne})
		default:
			toks = append(toks, patToken{kind: tokChar, c: c})
		}
	}
	return toks
}

// compileSet reads the GLOB class whose '[' ends just before pat[i], as
// patternCompare's class loop does, and returns it with the index after it.
func compileSet(pat string, i int) (patToken, int) {
	next := func() uint32 {
		if i >= len(pat) {
			return 0
		}
		var c uint32
		c, i = utf8Read(pat, i)
		return c
	}
	peek := func() byte {
		if i >= len(pat) {
			return 0
		}
		return pat[i]
	}
	s := &charSet{}
	c2 := next()
	if c2 == '^' {
		s.invert = true
		c2 = next()
	}
	if c2 == ']' {
		s.ranges = append(s.ranges, [2]uint32{']', ']'})
		c2 = next()
	}
	var prior uint32
	for c2 != 0 && c2 != ']' {
		if c2 == '-' && peek() != ']' && peek() != 0 && prior > 0 {
			c2 = next()
			s.ranges = append(s.ranges, [2]uint32{prior, c2})
			prior = 0
		} else {
			s.ranges = append(s.ranges, [2]uint32{c2, c2})
			prior = c2
		}
		c2 = next()
	}
	if c2 == 0 {
		return patToken{kind: tokNever}, i
	}
	return patToken{kind: tokSet, set: s}, i
}

// tokMatches reports whether t matches the character c.
func tokMatches(t patToken, c uint32, noCase bool) bool {
	switch t.kind {
	case tokChar:
		return c == t.c || noCase && c < 0x80 && t.c < 0x80 && lowerASCII(c) == lowerASCII(t.c)
	case tokOne:
		return true
	case tokSet:
		return t.set.has(c)
	}
	return false
}

func lowerASCII(c uint32) uint32 {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// matchPattern reports whether str matches toks. Every token but tokAll
// takes exactly one character, so with the pattern cut into segments at its
// tokAll runs, the first segment must match at the start, the last at the
// end, and each one between at its leftmost place after the one before:
// taking the leftmost place never loses a match.
func matchPattern(toks []patToken, str string, noCase bool) bool {
	var segs [][]patToken
	start, all := 0, false
	for i, t := range toks {
		if t.kind == tokAll {
			segs = append(segs, toks[start:i])
			start, all = i+1, true
		}
	}
	segs = append(segs, toks[start:])

	// The text as characters: the bytes of an ASCII text, else decoded
	// (and, for a long search, widened; see below).
	var text []uint32
	ascii := isASCII(str)
	n := len(str)
	if !ascii {
		text = chars(str)
		n = len(text)
	}
	at := func(i int) uint32 {
		if text == nil {
			return uint32(str[i])
		}
		return text[i]
	}
	matchAt := func(seg []patToken, pos int) bool {
		for k, t := range seg {
			if !tokMatches(t, at(pos+k), noCase) {
				return false
			}
		}
		return true
	}

	first, last := segs[0], segs[len(segs)-1]
	if !all {
		return n == len(first) && matchAt(first, 0)
	}
	if n < len(first) || !matchAt(first, 0) {
		return false
	}
	pos := len(first)
	for _, seg := range segs[1 : len(segs)-1] {
		var j int
		switch m := len(seg); {
		case m == 0:
			j = pos
		case n-pos < m:
			j = -1
		case (n-pos)*m <= 1<<12: // short: trying each place is cheaper
			j = -1
			for p := pos; p+m <= n && j < 0; p++ {
				if matchAt(seg, p) {
					j = p
				}
			}
		default:
			if text == nil {
				text = make([]uint32, n)
				for i := range n {
					text[i] = uint32(str[i])
				}
			}
			j = findSegment(seg, noCase, text, pos)
		}
		if j < 0 {
			return false
		}
		pos = j + len(seg)
	}
	end := n - len(last)
	return end >= pos && matchAt(last, end)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// findSegment returns the leftmost j >= from at which seg matches text, or
// -1. A segment of plain characters is found with Knuth-Morris-Pratt, any
// other with the shift-and (bitap) algorithm, one pass with a bit per
// segment position: it costs O(len(text) × ⌈len(seg)/64⌉) whatever the text
// and the segment hold.
func findSegment(seg []patToken, noCase bool, text []uint32, from int) int {
	m := len(seg)
	if j := findLiteral(seg, noCase, text, from); j != -2 {
		return j
	}
	masks := newMaskTable(seg, noCase)
	if m <= 64 {
		var state uint64
		last := uint64(1) << uint(m-1)
		for i := from; i < len(text); i++ {
			state = (state<<1 | 1) & masks.get(text[i])[0]
			if state&last != 0 {
				return i - m + 1
			}
		}
		return -1
	}
	state := make([]uint64, masks.words)
	lastWord, lastBit := (m-1)/64, uint64(1)<<uint((m-1)%64)
	for i := from; i < len(text); i++ {
		mask := masks.get(text[i])
		// state = ((state << 1) | 1) & mask, over the words.
		carry := uint64(1)
		for w, s := range state {
			state[w] = (s<<1 | carry) & mask[w]
			carry = s >> 63
		}
		if state[lastWord]&lastBit != 0 {
			return i - m + 1
		}
	}
	return -1
}

// findLiteral is findSegment for a segment of plain characters only, by
// Knuth-Morris-Pratt over characters (ASCII letters folded for LIKE); it
// returns -2 if the segment holds a wildcard or a class.
func findLiteral(seg []patToken, noCase bool, text []uint32, from int) int {
	fold := func(c uint32) uint32 {
		if noCase {
			return lowerASCII(c)
		}
		return c
	}
	pat := make([]uint32, len(seg))
	for k, t := range seg {
		if t.kind != tokChar {
			return -2
		}
		pat[k] = fold(t.c)
	}
	m := len(pat)
	fail := make([]int, m)
	for i, k := 1, 0; i < m; i++ {
		for k > 0 && pat[i] != pat[k] {
			k = fail[k-1]
		}
		if pat[i] == pat[k] {
			k++
		}
		fail[i] = k
	}
	for i, k := from, 0; i < len(text); i++ {
		c := fold(text[i])
		for k > 0 && c != pat[k] {
			k = fail[k-1]
		}
		if c == pat[k] {
			k++
		}
		if k == m {
			return i - m + 1
		}
	}
	return -1
}

// A maskTable gives, for a character, the set of segment positions whose
// token matches it, as a bit mask of words uint64s.
type maskTable struct {
	words int
	ascii []uint64            // 128 masks, for the characters below 0x80
	other map[uint32][]uint64 // positions of each literal non-ASCII character
	any   []uint64            // positions that match every character (tokOne)
	seg   []patToken
	sets  []int               // positions holding a class
	cache map[uint32][]uint64 // masks of the non-ASCII characters seen, when there are classes
}

func newMaskTable(seg []patToken, noCase bool) *maskTable {
	words := (len(seg) + 63) / 64
	t := &maskTable{words: words, any: make([]uint64, words), seg: seg, ascii: make([]uint64, 128*words)}
	set := func(m []uint64, k int) { m[k/64] |= 1 << uint(k%64) }
	asciiMask := func(c uint32) []uint64 { return t.ascii[int(c)*words : int(c+1)*words] }
	for k, tok := range seg {
		switch tok.kind {
		case tokOne:
			set(t.any, k)
		case tokSet:
			t.sets = append(t.sets, k)
			for c := range uint32(128) {
				if tok.set.has(c) {
					set(asciiMask(c), k)
				}
			}
		case tokChar:
			switch {
			case tok.c < 0x80:
				set(asciiMask(tok.c), k)
				if noCase && lowerASCII(tok.c) != tok.c {
					set(asciiMask(lowerASCII(tok.c)), k)
				} else if noCase && tok.c >= 'a' && tok.c <= 'z' {
					set(asciiMask(tok.c-'a'+'A'), k)
				}
			default:
				if t.other == nil {
					t.other = map[uint32][]uint64{}
				}
				m := t.other[tok.c]
				if m == nil {
					m = make([]uint64, words)
					t.other[tok.c] = m
				}
				set(m, k)
			}
		}
	}
	for c := range 128 {
		for w := range words {
			t.ascii[c*words+w] |= t.any[w]
		}
	}
	if len(t.sets) > 0 {
		t.cache = map[uint32][]uint64{}
	}
	return t
}

// get returns the mask of c; the caller does not change it.
func (t *maskTable) get(c uint32) []uint64 {
	if c < 0x80 {
		return t.ascii[int(c)*t.words : int(c+1)*t.words]
	}
	if t.cache != nil {
		if m, ok := t.cache[c]; ok {
			return m
		}
	}
	lit, isLit := t.other[c]
	if t.cache == nil && !isLit {
		return t.any
	}
	out := slices.Clone(t.any)
	if isLit {
		for w := range out {
			out[w] |= lit[w]
		}
	}
	if t.cache != nil {
		for _, k := range t.sets {
			if t.seg[k].set.has(c) {
				out[k/64] |= 1 << uint(k%64)
			}
		}
		// Each class is tested once per distinct character: a text of
		// 1 MB holds at most a quarter of a million of them.
		t.cache[c] = out
	}
	return out
}

// --- instr

// fnInstr implements instr(haystack, needle) as SQLite's instrFunc does: the
// 1-based character position of the first occurrence, 0 if none, 1 for an
// empty needle; byte positions when both are blobs.
func fnInstr(args []value) (any, error) {
	if len(args) != 2 {
		return nil, wrongArgs("instr")
	}
	if args[0].isNull() || args[1].isNull() {
		return nil, nil
	}
	hay, _ := textOf(args[0])
	needle, _ := textOf(args[1])
	if len(needle) == 0 {
		return int64(1), nil
	}
	isText := !(isBlob(args[0]) && isBlob(args[1]))
	// A match counts only where SQLite's scan looks: at byte 0, and for
	// text at every byte that does not continue a UTF-8 character.
	start := -1
	search(hay, needle, func(s int) bool {
		if !isText || s == 0 || hay[s]&0xc0 != 0x80 {
			start = s
			return false
		}
		return true
	})
	if start < 0 {
		return int64(0), nil
	}
	if !isText {
		return int64(start + 1), nil
	}
	n := int64(1)
	for p := 1; p <= start; p++ {
		if hay[p]&0xc0 != 0x80 {
			n++
		}
	}
	return n, nil
}

// search calls found with the start of every occurrence of needle in hay,
// overlapping ones included, left to right, until found returns false. It
// is Knuth-Morris-Pratt: linear in len(hay)+len(needle) whatever they hold.
func search(hay, needle string, found func(start int) bool) {
	m := len(needle)
	if m == 0 || m > len(hay) {
		return
	}
	fail := make([]int, m)
	for i, k := 1, 0; i < m; i++ {
		for k > 0 && needle[i] != needle[k] {
			k = fail[k-1]
		}
		if needle[i] == needle[k] {
			k++
		}
		fail[i] = k
	}
	for i, k := 0, 0; i < len(hay); i++ {
		for k > 0 && hay[i] != needle[k] {
			k = fail[k-1]
		}
		if hay[i] == needle[k] {
			k++
		}
		if k == m {
			if !found(i - m + 1) {
				return
			}
			k = fail[k-1]
		}
	}
}

// --- replace

// fnReplace implements replace(X, Y, Z) as SQLite's replaceFunc does: every
// non-overlapping occurrence of Y in X, left to right, replaced by Z, byte
// for byte; X unchanged (as text) when Y is empty or starts with a NUL byte.
// A result longer than valueLimit bytes is SQLite's "string or blob too big".
func fnReplace(args []value, valueLimit int) (any, error) {
	if len(args) != 3 {
		return nil, wrongArgs("replace")
	}
	str, ok := textOf(args[0])
	if !ok {
		return nil, nil
	}
	pat, ok := textOf(args[1])
	if !ok {
		return nil, nil
	}
	if pat == "" || pat[0] == 0 {
		return strings.Clone(str), nil
	}
	rep, ok := textOf(args[2])
	if !ok {
		return nil, nil
	}
	if len(str)+1 > valueLimit { // the built-in's first buffer is one byte longer than X
		return tooBig(valueLimit), nil
	}
	var at []int
	next := 0
	search(str, pat, func(s int) bool {
		if s >= next {
			at = append(at, s)
			next = s + len(pat)
		}
		return true
	})
	size := len(str) + len(at)*(len(rep)-len(pat))
	if len(rep) > len(pat) && size > valueLimit {
		// Only SQLite can report SQLITE_TOOBIG: hand it a result one byte
		// over its limit, as the built-in's own buffer would have grown.
		return tooBig(valueLimit), nil
	}
	var b strings.Builder
	b.Grow(size)
	prev := 0
	for _, s := range at {
		b.WriteString(str[prev:s])
		b.WriteString(rep)
		prev = s + len(pat)
	}
	b.WriteString(str[prev:])
	return b.String(), nil
}

// tooBig returns a text one byte longer than limit, which SQLite refuses
// with SQLITE_TOOBIG when the function returns it.
func tooBig(limit int) string {
	return strings.Repeat(" ", limit+1)
}

// --- trim, ltrim, rtrim

const (
	trimLeft  = 1
	trimRight = 2
)

// fnTrim implements trim, ltrim and rtrim with one or two arguments as
// SQLite's trimFunc does: the character set is split into characters with
// SQLITE_SKIP_UTF8 (up to a NUL byte), and at each end the first of them in
// set order that the text starts (or ends) with is removed, byte for byte,
// until none does. Like the built-in, it fails with "string or blob too big"
// when the set has more than valueLimit/12 characters (the built-in's table
// of them would be larger than the length limit).
func fnTrim(args []value, name string, flags, valueLimit int) (any, error) {
	if len(args) != 1 && len(args) != 2 {
		return nil, wrongArgs(name)
	}
	in, ok := textOf(args[0])
	if !ok {
		return nil, nil
	}
	set := " "
	if len(args) == 2 {
		if set, ok = textOf(args[1]); !ok {
			return nil, nil
		}
		set = cString(set)
	}
	if set == "" {
		return strings.Clone(in), nil
	}
	var setChars []string
	for i := 0; i < len(set); {
		j := skipUTF8(set, i)
		setChars = append(setChars, set[i:j])
		i = j
	}
	if len(args) == 2 && len(setChars)*12 > valueLimit {
		return tooBig(valueLimit), nil
	}
	// With a few characters, trying each in set order at each step is
	// linear; with more, a trie finds the first in set order in one walk.
	first := func(s string, fromEnd bool) int {
		for _, ch := range setChars {
			if fromEnd && strings.HasSuffix(s, ch) || !fromEnd && strings.HasPrefix(s, ch) {
				return len(ch)
			}
		}
		return 0
	}
	if len(setChars) > 8 {
		first = newTrimSet(setChars).first
	}
	lo, hi := 0, len(in)
	if flags&trimLeft != 0 {
		for lo < hi {
			n := first(in[lo:hi], false)
			if n == 0 {
				break
			}
			lo += n
		}
	}
	if flags&trimRight != 0 {
		for lo < hi {
			n := first(in[lo:hi], true)
			if n == 0 {
				break
			}
			hi -= n
		}
	}
	return strings.Clone(in[lo:hi]), nil
}

// A trimSet finds, at either end of a text, the trim set's character that
// comes first in the set among those the text starts (or ends) with, in time
// that does not grow with the set: single bytes by table; characters of a
// lead byte and continuation bytes, which start with a byte of 0xc0 or more
// and end with one of 0x80 to 0xbf, by a walk down a trie.
type trimSet struct {
	single    [256]int32 // 1 + place in the set of each single-byte character; 0 if none
	fwd, back *trie      // the longer characters, spelled forward and backward
}

func newTrimSet(chars []string) *trimSet {
	ts := &trimSet{}
	var long []string
	idx := make([]int, 0)
	for i, ch := range chars {
		if len(ch) == 1 {
			if ts.single[ch[0]] == 0 {
				ts.single[ch[0]] = int32(i + 1)
			}
			continue
		}
		long = append(long, ch)
		idx = append(idx, i)
	}
	if len(long) > 0 {
		ts.fwd, ts.back = newTrie(long, idx, false), newTrie(long, idx, true)
	}
	return ts
}

// first returns the length of the set character, earliest in the set, that
// s starts with (or, if fromEnd, ends with), or 0 if none does.
func (ts *trimSet) first(s string, fromEnd bool) int {
	b := s[0]
	if fromEnd {
		b = s[len(s)-1]
	}
	best, bestLen := int(ts.single[b])-1, 1
	if best < 0 {
		bestLen = 0
	}
	var t *trie
	switch {
	case fromEnd && b >= 0x80 && b < 0xc0:
		t = ts.back
	case !fromEnd && b >= 0xc0:
		t = ts.fwd
	}
	if t != nil {
		if i, n := t.first(s, fromEnd); n > 0 && (best < 0 || i < best) {
			bestLen = n
		}
	}
	return bestLen
}

// A trie holds characters of a trim set, each marked with its place in the
// set, spelled forward or (for the right end) backward.
type trie struct {
	nodes []trieNode
}

type trieNode struct {
	next  map[byte]int32
	index int // place in the set of the character ending here, -1 if none
}

func newTrie(chars []string, places []int, reverse bool) *trie {
	t := &trie{nodes: []trieNode{{index: -1}}}
	for j, ch := range chars {
		n := 0
		for k := range len(ch) {
			b := ch[k]
			if reverse {
				b = ch[len(ch)-1-k]
			}
			nx, ok := t.nodes[n].next[b]
			if !ok {
				if t.nodes[n].next == nil {
					t.nodes[n].next = map[byte]int32{}
				}
				nx = int32(len(t.nodes))
				t.nodes[n].next[b] = nx
				t.nodes = append(t.nodes, trieNode{index: -1})
			}
			n = int(nx)
		}
		if t.nodes[n].index < 0 {
			t.nodes[n].index = places[j]
		}
	}
	return t
}

// first returns the place in the set and the length of the character,
// earliest in the set, that s starts with (or, if fromEnd, ends with);
// the length is 0 if none does.
func (t *trie) first(s string, fromEnd bool) (place, length int) {
	best, bestLen := -1, 0
	n := 0
	for k := range len(s) {
		b := s[k]
		if fromEnd {
			b = s[len(s)-1-k]
		}
		nx, ok := t.nodes[n].next[b]
		if !ok {
			break
		}
		n = int(nx)
		if idx := t.nodes[n].index; idx >= 0 && (best < 0 || idx < best) {
			best, bestLen = idx, k+1
		}
	}
	return best, bestLen
}
