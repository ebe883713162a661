package guard

import "strings"

// This file is a tokenizer for SQLite's lexical syntax, written to agree with
// sqlite3GetToken (src/tokenize.c) wherever the difference could matter: where
// a comment, string, blob or quoted name starts and ends, what is a word, and
// where a number stops. It never allocates and never looks past the input.

type tokKind uint8

const (
	tokEOF      tokKind = iota
	tokWord             // a keyword or bare name: select, größe, x1$
	tokQuoted           // a quoted name: "…", `…` or […]
	tokString           // '…'
	tokBlob             // x'…'
	tokNumber           // 12, 1.5e3, 0x1F, .5 (with any letters SQLite would reject)
	tokVariable         // ?1, :name, @name, $name, #name
	tokSemi             // ;
	tokLParen           // (
	tokRParen           // )
	tokOther            // any other punctuation or an illegal byte

	// Unterminated tokens run to the end of the input.
	tokOpenComment // /* without */
	tokOpenString  // a string or blob without its closing quote
	tokOpenQuoted  // a quoted name without its closing delimiter
)

// A token is one significant token of the input: q[start:end].
type token struct {
	kind       tokKind
	start, end int
}

// nextToken returns the first significant token at or after q[i], skipping
// whitespace and comments, or a tokEOF token at the end of q.
func nextToken(q string, i int) token {
	for i < len(q) {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			i += 2
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			// The search for "*/" starts after "/*": "/*/" is still open.
			j := indexFrom(q, i+2, "*/")
			if j < 0 {
				return token{kind: tokOpenComment, start: i, end: len(q)}
			}
			i = j + 2
		default:
			return scanToken(q, i)
		}
	}
	return token{kind: tokEOF, start: len(q), end: len(q)}
}

// scanToken scans the significant token that starts at q[i].
func scanToken(q string, i int) token {
	c := q[i]
	switch {
	case c == '\'':
		return scanQuoted(q, i, '\'', tokString, tokOpenString)
	case c == '"' || c == '`':
		return scanQuoted(q, i, c, tokQuoted, tokOpenQuoted)
	case c == '[':
		// No escape: the name ends at the first ']'.
		j := indexFrom(q, i+1, "]")
		if j < 0 {
			return token{kind: tokOpenQuoted, start: i, end: len(q)}
		}
		return token{kind: tokQuoted, start: i, end: j + 1}
	case (c == 'x' || c == 'X') && i+1 < len(q) && q[i+1] == '\'':
		// A blob ends at the next quote: unlike a string it has no '' escape.
		j := indexFrom(q, i+2, "'")
		if j < 0 {
			return token{kind: tokOpenString, start: i, end: len(q)}
		}
		return token{kind: tokBlob, start: i, end: j + 1}
	case isIDStart(c):
		j := i + 1
		for j < len(q) && isIDChar(q[j]) {
			j++
		}
		return token{kind: tokWord, start: i, end: j}
	case isDigit(c) || c == '.' && i+1 < len(q) && isDigit(q[i+1]):
		return token{kind: tokNumber, start: i, end: scanNumber(q, i)}
	case c == '?':
		j := i + 1
		for j < len(q) && isDigit(q[j]) {
			j++
		}
		return token{kind: tokVariable, start: i, end: j}
	case (c == ':' || c == '@' || c == '$' || c == '#') && i+1 < len(q) && isIDChar(q[i+1]):
		j := i + 1
		for j < len(q) && isIDChar(q[j]) {
			j++
		}
		return token{kind: tokVariable, start: i, end: j}
	case c == ';':
		return token{kind: tokSemi, start: i, end: i + 1}
	case c == '(':
		return token{kind: tokLParen, start: i, end: i + 1}
	case c == ')':
		return token{kind: tokRParen, start: i, end: i + 1}
	}
	return token{kind: tokOther, start: i, end: i + 1}
}

// scanQuoted scans a string or quoted name that starts with delim at q[i],
// where a doubled delim stands for one.
func scanQuoted(q string, i int, delim byte, kind, open tokKind) token {
	for j := i + 1; j < len(q); j++ {
		if q[j] != delim {
			continue
		}
		if j+1 < len(q) && q[j+1] == delim {
			j++
			continue
		}
		return token{kind: kind, start: i, end: j + 1}
	}
	return token{kind: open, start: i, end: len(q)}
}

// scanNumber returns the end of the number that starts at q[i], as SQLite's
// tokenizer finds it: digits (with '_' between digits), a fraction, an
// exponent only when a digit follows "e", "e+" or "e-", and then any
// identifier characters, which make the whole token illegal to SQLite.
// It never takes "--" into a number.
func scanNumber(q string, i int) int {
	digits := func(j int, ok func(byte) bool) int {
		for j < len(q) && (ok(q[j]) || q[j] == '_' && j+1 < len(q) && ok(q[j+1])) {
			j++
		}
		return j
	}
	j := i
	if q[j] == '0' && j+2 < len(q) && (q[j+1] == 'x' || q[j+1] == 'X') && isHexDigit(q[j+2]) {
		j = digits(j+2, isHexDigit)
	} else {
		j = digits(j, isDigit)
		if j < len(q) && q[j] == '.' {
			j = digits(j+1, isDigit)
		}
		if j < len(q) && (q[j] == 'e' || q[j] == 'E') &&
			(j+1 < len(q) && isDigit(q[j+1]) ||
				j+2 < len(q) && (q[j+1] == '+' || q[j+1] == '-') && isDigit(q[j+2])) {
			j = digits(j+2, isDigit)
		}
	}
	for j < len(q) && isIDChar(q[j]) {
		j++
	}
	return j
}

// indexFrom returns the index of the first sub in q at or after i, or -1.
func indexFrom(q string, i int, sub string) int {
	if i > len(q) {
		return -1
	}
	j := strings.Index(q[i:], sub)
	if j < 0 {
		return -1
	}
	return i + j
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isIDStart reports whether c can start a word. SQLite treats every byte
// from 0x80 up as a letter, so any UTF-8 (or invalid UTF-8) is part of a word.
func isIDStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// isIDChar reports whether c can continue a word.
func isIDChar(c byte) bool { return isIDStart(c) || isDigit(c) || c == '$' }
