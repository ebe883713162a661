package guard

import (
	"strconv"
	"strings"
)

// Check decides whether query may run. If it may, Check returns the statement
// to run: query with its trailing semicolons (and the whitespace and comments
// among and after them) and its trailing whitespace removed and, when the
// statement has no top-level LIMIT clause, "\nLIMIT <rowCap+1>" appended on a
// line of its own, so that it can never fall inside a trailing "--" comment.
// A LIMIT inside parentheses (a subquery or common table expression) is not
// top-level. A statement that has its own top-level LIMIT is returned
// unchanged apart from that trimming; enforcing the cap on it is the
// connection's job.
//
// Otherwise Check returns a *Refusal, counted in g's refusal counts, for the
// first of these that applies: a NUL byte (NulByte); a bidi control
// character such as U+202E, anywhere (HiddenText); an unterminated /*
// comment, string, blob or quoted name (Unterminated); nothing but
// whitespace, comments and semicolons (Empty); more than one non-empty
// statement (MultipleStatements); a first token other than SELECT or WITH
// (NotSelect); a forbidden keyword outside comments, strings and quoted names
// (ForbiddenKeyword); a call of a forbidden function (ForbiddenFunction).
//
// Check follows SQLite's own tokenizer, so that it sees the statement the way
// SQLite will. It allocates only for its result, takes time linear in the
// length of query, and never panics, whatever the bytes.
func (g *Guard) Check(query string) (string, error) {
	a := analyze(query)
	if a.refusal != nil {
		g.refused[a.refusal.Rule].Add(1)
		return "", a.refusal
	}
	stmt := strings.TrimRight(query[:a.end], sqlSpace)
	if a.hasLimit {
		return stmt, nil
	}
	suffix := g.limit
	if suffix == "" {
		suffix = limitSuffix(0) // a zero Guard must still cap
	}
	return stmt + suffix, nil
}

// limitSuffix returns the line Check appends to a statement with no LIMIT
// of its own: "\nLIMIT <rowCap+1>", with a rowCap below 1 taken as 1 (LIMIT 0
// or a negative LIMIT would not cap).
func limitSuffix(rowCap int) string {
	return "\nLIMIT " + strconv.Itoa(max(rowCap, 1)+1)
}

const (
	// sqlSpace is the set of bytes that start a run of space to SQLite's
	// tokenizer. \v is not one: SQLite takes it as space only right after
	// one of these, and as an illegal token anywhere else. The guard always
	// takes it as a token, which can only refuse more.
	sqlSpace = " \t\n\f\r"
	// maxNameInReason bounds how much of a model-written name a Reason repeats.
	maxNameInReason = 64
)

// analysis is what one pass over a query found.
type analysis struct {
	refusal  *Refusal
	end      int  // where the statement ends: its first trailing ';', or len(query)
	hasLimit bool // a LIMIT keyword at parenthesis depth 0 of the last statement
}

func refuse(r Rule, reason string) analysis {
	return analysis{refusal: &Refusal{Rule: r, Reason: reason}}
}

// analyze makes one pass over q with the tokenizer and applies the rules in
// the order Check documents.
func analyze(q string) analysis {
	if strings.IndexByte(q, 0) >= 0 {
		// SQLite stops reading at a NUL, so it would run a prefix of what we checked,
		// possibly without the LIMIT we append.
		return refuse(NulByte, "the query contains a NUL byte")
	}
	if hasBidiControl(q) {
		// Every answer shows its SQL so a person can check it; a right-to-left
		// override would make that SQL read differently from what runs.
		return refuse(HiddenText, "the query contains invisible text-direction characters; write it without them")
	}
	var (
		stmts        int  // non-empty statements seen
		inStmt       bool // the current statement has a token
		first        = true
		firstOK      bool
		end          = len(q)
		depth        int
		hasLimit     bool
		keyword      string  // the first forbidden keyword, lower case
		function     string  // the first forbidden function, as its Reason shows it
		prev         token   // the previous token
		maybeVerb    bool    // prev is REPLACE, which is a verb unless a '(' follows
		unterminated tokKind // the last token, if it is unterminated
	)
	for i := 0; ; {
		t := nextToken(q, i)
		i = t.end
		if t.kind == tokEOF {
			break
		}
		if t.kind >= tokOpenComment {
			unterminated = t.kind
			break
		}
		if maybeVerb && t.kind != tokLParen && keyword == "" {
			keyword = "replace"
		}
		maybeVerb = false
		if first {
			first = false
			firstOK = t.kind == tokWord && (equalFold(q[t.start:t.end], "select") || equalFold(q[t.start:t.end], "with"))
		}
		if t.kind == tokSemi {
			if inStmt {
				inStmt = false
				if stmts == 1 {
					end = t.start
				}
			}
			prev = t
			continue
		}
		if !inStmt {
			inStmt = true
			stmts++
			depth, hasLimit = 0, false
		}
		switch t.kind {
		case tokLParen:
			depth++
			if function == "" && (prev.kind == tokWord || prev.kind == tokQuoted) {
				function = forbiddenFunction(q, prev)
			}
		case tokRParen:
			if depth > 0 {
				depth--
			}
		case tokWord:
			w := q[t.start:t.end]
			if depth == 0 && equalFold(w, "limit") {
				hasLimit = true
			}
			// A table-valued PRAGMA function is read without parentheses
			// too: FROM pragma_table_list.
			if function == "" && len(w) > 7 && equalFold(w[:7], "pragma_") {
				function = forbiddenFunction(q, t)
			}
			if keyword == "" {
				if equalFold(w, "replace") {
					maybeVerb = true
				} else {
					keyword = forbiddenKeyword(w)
				}
			}
		}
		prev = t
	}
	if maybeVerb && keyword == "" {
		keyword = "replace"
	}
	switch {
	case unterminated == tokOpenComment:
		return refuse(Unterminated, "unterminated comment")
	case unterminated == tokOpenString:
		return refuse(Unterminated, "unterminated string")
	case unterminated == tokOpenQuoted:
		return refuse(Unterminated, "unterminated quoted name")
	case stmts == 0:
		return refuse(Empty, "the query is empty")
	case stmts > 1:
		return refuse(MultipleStatements, "one statement per query")
	case !firstOK:
		return refuse(NotSelect, "only SELECT and WITH queries are allowed")
	case keyword != "":
		return refuse(ForbiddenKeyword, "forbidden keyword: "+keyword)
	case function != "":
		return refuse(ForbiddenFunction, "forbidden function: "+function)
	}
	return analysis{end: end, hasLimit: hasLimit}
}

// forbiddenKeyword returns w in lower case if it is one of SQLite's statement
// keywords for anything but a read; else "". The list is every verb of
// SQLite's grammar except SELECT, WITH, VALUES and EXPLAIN (which the first
// token rule handles) and END (which every CASE ends with): writes (INSERT,
// UPDATE, DELETE, REPLACE), schema changes (CREATE, DROP, ALTER), other
// database files (ATTACH, DETACH), settings (PRAGMA), maintenance that writes
// (VACUUM, which can also write a new file, REINDEX, ANALYZE) and transaction
// control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE). Words that follow one
// of these (TABLE, INDEX, INTO, TRIGGER …) or that SQLite lacks (TRUNCATE,
// MERGE, GRANT) add nothing but false refusals. REPLACE is handled by the
// caller, as it is also a string function.
func forbiddenKeyword(w string) string {
	if len(w) < len("drop") || len(w) > len("savepoint") {
		return ""
	}
	var list [3]string
	switch w[0] | 0x20 { // ASCII lower case; equalFold below decides
	case 'a':
		list = [3]string{"alter", "attach", "analyze"}
	case 'b':
		list[0] = "begin"
	case 'c':
		list = [3]string{"create", "commit"}
	case 'd':
		list = [3]string{"delete", "drop", "detach"}
	case 'i':
		list[0] = "insert"
	case 'p':
		list[0] = "pragma"
	case 'r':
		list = [3]string{"reindex", "release", "rollback"}
	case 's':
		list[0] = "savepoint"
	case 'u':
		list[0] = "update"
	case 'v':
		list[0] = "vacuum"
	default:
		return ""
	}
	for _, k := range list {
		if k != "" && equalFold(w, k) {
			return k
		}
	}
	return ""
}

// forbiddenFunction returns how a Reason should name the function that the
// word or quoted name t calls, if it is forbidden; else "". A quoted name
// before '(' is a call too: SQLite accepts "load_extension"('x').
func forbiddenFunction(q string, t token) string {
	name := q[t.start:t.end]
	if t.kind == tokQuoted {
		// The delimiters go; a doubled delimiter inside cannot occur in any
		// forbidden name, and a prefix match does not care.
		name = name[1 : len(name)-1]
	}
	for _, f := range [...]string{"load_extension", "randomblob", "zeroblob", "readfile", "writefile", "edit", "fts3_tokenizer"} {
		if equalFold(name, f) {
			return f
		}
	}
	for _, p := range [...]string{"sqlite_", "pragma_"} {
		if len(name) >= len(p) && equalFold(name[:len(p)], p) {
			if len(name) > maxNameInReason || !plainName(name) {
				return p + "*"
			}
			return strings.ToLower(name)
		}
	}
	return ""
}

// plainName reports whether s is made of ASCII letters, digits and '_' only,
// and so is safe to repeat in a Reason.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// equalFold reports whether s equals lower, a lower-case ASCII word, ignoring
// ASCII case only (SQLite folds only ASCII in keywords and function names).
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasBidiControl reports whether q holds a character that changes the
// direction text is shown in: unicode.Bidi_Control, that is U+061C,
// U+200E–U+200F, U+202A–U+202E and U+2066–U+2069. It looks at the UTF-8
// bytes (D8 9C, E2 80 8E–8F, E2 80 AA–AE, E2 81 A6–A9), which is several
// times faster than decoding every rune; a test checks it against the table.
func hasBidiControl(q string) bool {
	for i := 0; i+1 < len(q); i++ {
		switch q[i] {
		case 0xD8:
			if q[i+1] == 0x9C {
				return true
			}
		case 0xE2:
			if i+2 >= len(q) {
				return false
			}
			b1, b2 := q[i+1], q[i+2]
			if b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || b2 >= 0xAA && b2 <= 0xAE) || b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9 {
				return true
			}
		}
	}
	return false
}
