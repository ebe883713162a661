package guard

// A TokenKind says what a Token is.
type TokenKind uint8

// The kinds of Token. Punctuation comes one byte at a time: "!=" is two
// tokens, '!' then '='.
const (
	TokenWord     TokenKind = iota + 1 // a keyword or bare name
	TokenQuoted                        // a quoted name: "…", `…` or […]
	TokenString                        // a string literal '…'
	TokenBlob                          // x'…'
	TokenNumber                        // a numeric literal
	TokenVariable                      // ?1, :name, @name, $name
	TokenPunct                         // ; ( ) and any other single byte
)

// A Token is one significant token of a statement: q[Start:End], outside
// comments and whitespace.
type Token struct {
	Kind       TokenKind
	Start, End int
	Text       string // q[Start:End], as written (quotes included)
}

// Tokens returns the significant tokens of q as SQLite's tokenizer reads
// them (the guard's own reading), stopping before an unterminated comment,
// string or quoted name. It is for callers that need to find what a
// statement names or compares, such as the agent's check of literals.
func Tokens(q string) []Token {
	var out []Token
	for i := 0; ; {
		t := nextToken(q, i)
		if t.kind == tokEOF || t.kind >= tokOpenComment {
			return out
		}
		i = t.end
		out = append(out, Token{Kind: publicKind(t.kind), Start: t.start, End: t.end, Text: q[t.start:t.end]})
	}
}

func publicKind(k tokKind) TokenKind {
	switch k {
	case tokWord:
		return TokenWord
	case tokQuoted:
		return TokenQuoted
	case tokString:
		return TokenString
	case tokBlob:
		return TokenBlob
	case tokNumber:
		return TokenNumber
	case tokVariable:
		return TokenVariable
	}
	return TokenPunct
}
