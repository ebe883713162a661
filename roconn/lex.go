package roconn

import "strings"

// A shape is what a lexical scan of a query found: its statements, with
// comments and blank statements dropped, and the features roconn refuses
// before SQLite sees the text.
type shape struct {
	stmts  []string // each non-blank statement, without its ';'
	first  string   // the first word of the first statement, lower-cased
	params bool     // a token starting ? $ @ : or #, outside literals and comments
	nul    bool     // a NUL byte: SQLite would stop reading there
}

// scan splits query into statements the way SQLite's tokenizer does.
//
// Why roconn does this itself: modernc.org/sqlite runs every statement of a
// multi-statement string, one after the other, in QueryContext and ExecContext
// alike, and it does so for "EXPLAIN SELECT 1; DELETE FROM t" too (the second
// statement is prepared without the EXPLAIN and stepped). The only safe course
// is never to hand SQLite more than one statement, so roconn must find the
// statement boundaries before SQLite does, and find the same ones.
//
// The rules are those of SQLite's tokenizer (tokenize.c): '...', "..." and
// `...` quote with the quote character doubled as the only escape, [...]
// quotes with no escape, -- comments run to the end of the line and /*
// comments to */ (or to the end of the text). A blob literal x'..' is an
// identifier character followed by a string, which splits the same way. A
// name (or number) runs on through '$' after its first character, so a$b is
// one name. \v is space only where it continues a run of other space; a
// token that starts with \v is illegal, and so makes a statement.
//
// One place where a naive scan and SQLite disagree is the TCL-style variable
// ($name(...) swallows anything up to a space or ')', quotes and ';' included),
// so scan reports every parameter character that starts a token outside
// literals and comments, and Query refuses them all: no parameter is ever bound, so a statement with one
// could not run anyway. With parameters refused, the tokens that remain cannot
// hide a ';' from one scanner and not the other.
func scan(query string) shape {
	var sh shape
	if strings.IndexByte(query, 0) >= 0 {
		sh.nul = true
	}
	start := 0    // start of the current statement
	blank := true // the current statement has no token yet
	flush := func(end int) {
		if !blank {
			sh.stmts = append(sh.stmts, query[start:end])
		}
		start, blank = end+1, true
	}
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == ';':
			flush(i)
			i++
		case isSpace(c):
			// A run of space goes on through \v, which cannot start one:
			// SQLite's tokenizer finds a token starting with \v illegal.
			for i++; i < len(query) && query[i] == '\v'; i++ {
			}
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			i = lineCommentEnd(query, i)
		case c == '/' && i+2 < len(query) && query[i+1] == '*':
			i = blockCommentEnd(query, i)
		case c == '\'' || c == '"' || c == '`':
			blank = false
			i = quotedEnd(query, i, c)
		case c == '[':
			blank = false
			i = quotedEnd(query, i, ']')
		case c == '?' || c == '$' || c == '@' || c == ':' || c == '#':
			sh.params = true
			blank = false
			i++
		case isWordByte(c):
			// A name, keyword or number, with any '$' inside it: SQLite
			// reads '$' as part of a name after its first character.
			end := i + 1
			for end < len(query) && (isWordByte(query[end]) || query[end] == '$') {
				end++
			}
			if blank && len(sh.stmts) == 0 { // the first token of the first statement
				sh.first = fold(query[i:end])
			}
			blank = false
			i = end
		default:
			blank = false
			i++
		}
	}
	flush(len(query))
	return sh
}

// isSpace reports whether c starts a run of space to SQLite's tokenizer.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// isWordByte reports whether c is part of a name, keyword or number.
func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// quotedEnd returns the index just past the quoted token opening at s[i] and
// closed by close, or len(s) if it is unterminated. A doubled close character
// escapes itself, except for [...], which has no escape.
func quotedEnd(s string, i int, close byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] != close {
			continue
		}
		if close != ']' && j+1 < len(s) && s[j+1] == close {
			j++
			continue
		}
		return j + 1
	}
	return len(s)
}

// lineCommentEnd returns the index of the newline that ends the -- comment
// opening at s[i], or len(s). The newline is not part of the comment: it
// starts a run of space, as in SQLite, which a \v may continue.
func lineCommentEnd(s string, i int) int {
	if j := strings.IndexByte(s[i+2:], '\n'); j >= 0 {
		return i + 2 + j
	}
	return len(s)
}

// blockCommentEnd returns the index just past the /* comment opening at s[i],
// or len(s) if it is unterminated (SQLite then ignores the rest of the text).
func blockCommentEnd(s string, i int) int {
	if j := strings.Index(s[i+2:], "*/"); j >= 0 {
		return i + 2 + j + 2
	}
	return len(s)
}

// fold lower-cases the ASCII letters of an identifier, and only those: SQLite
// compares names that way, so "É" and "é" are different tables to it and must
// be to roconn too.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// foldEq reports whether fold(s) == w, for a w that is already lower-case,
// without making the folded copy.
func foldEq(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// lookup returns m[fold(s)]. A name of up to 64 bytes is folded into a
// buffer on the stack, which the map index reads without a copy: the
// authorizer and the text checks look up every name they are given, and a
// name with capitals (a keyword, a CamelCase table) made fold allocate.
func lookup[V any](m map[string]V, s string) V {
	v, _ := lookupOK(m, s)
	return v
}

// lookupOK is lookup, also reporting whether the key is present.
func lookupOK[V any](m map[string]V, s string) (V, bool) {
	if len(m) == 0 {
		var zero V
		return zero, false
	}
	var buf [64]byte
	b := foldInto(buf[:], s)
	if b == nil {
		v, ok := m[fold(s)]
		return v, ok
	}
	v, ok := m[string(b)]
	return v, ok
}

// foldInto writes fold(s) into buf and returns that part of it, or nil
// when s is longer than buf: a caller folds a short name on its stack.
func foldInto(buf []byte, s string) []byte {
	if len(s) > len(buf) {
		return nil
	}
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b
}
