// Package guard decides, before SQLite sees it, whether SQL written by the
// model may run, and says why not in words a model can act on and a person can
// read.
//
// Check accepts exactly one SELECT (or WITH … SELECT) statement with no
// forbidden keyword outside comments, strings and quoted names and no call of
// a forbidden function, and returns it with the row cap appended as a LIMIT on
// its own line. The package is pure: it never opens a database. It is not the
// security boundary (package roconn is); it only makes refusals legible and
// early, so a statement it accepts must still go through roconn.
package guard

import (
	"fmt"
	"sync/atomic"
)

// A Rule names the check that refused a statement. The zero Rule is unused;
// append new rules at the end (their names appear in logs, metrics and evals).
type Rule uint8

// The rules. Check documents the order in which it applies them.
const (
	_                  Rule = iota
	Empty                   // nothing but whitespace, comments and semicolons
	Unterminated            // an unterminated /* comment, string, blob or quoted name
	MultipleStatements      // more than one non-empty statement
	NotSelect               // does not start with SELECT or WITH
	ForbiddenKeyword        // a write, DDL, PRAGMA, ATTACH, transaction … keyword
	ForbiddenFunction       // load_extension, readfile, sqlite_*, pragma_* …
	NulByte                 // a NUL byte, where SQLite would stop reading
	HiddenText              // a bidi control character: the SQL shown would not read as it runs
	numRules
)

var ruleNames = [...]string{"", "empty", "unterminated", "multiple_statements", "not_select", "forbidden_keyword", "forbidden_function", "nul_byte", "hidden_text"}

// String returns the rule's stable snake_case name.
func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return fmt.Sprintf("rule(%d)", uint8(r))
}

// A Refusal is returned by Check when a statement may not run. Reason is one
// plain sentence, safe to show to the model and to the Slack user, such as
// "forbidden keyword: delete".
type Refusal struct {
	Rule   Rule
	Reason string
}

func (r *Refusal) Error() string { return fmt.Sprintf("guard: refused (%v): %s", r.Rule, r.Reason) }

// A Guard checks statements against a row cap and counts its refusals.
// It is safe for concurrent use.
type Guard struct {
	limit   string // what Check appends: "\nLIMIT <rowCap+1>"; "" in a zero Guard
	refused [numRules]atomic.Int64
}

// New returns a Guard that appends LIMIT rowCap+1 to statements without a
// top-level LIMIT (one row more than the cap, so the caller can tell that rows
// were cut). rowCap should be positive; Check treats a smaller one as 1, and
// so does the zero Guard.
func New(rowCap int) *Guard { return &Guard{limit: limitSuffix(rowCap)} }

// Refusals returns the number of refusals so far, by rule name.
func (g *Guard) Refusals() map[string]int64 {
	m := make(map[string]int64)
	for r := Rule(1); r < numRules; r++ {
		if n := g.refused[r].Load(); n > 0 {
			m[r.String()] = n
		}
	}
	return m
}
