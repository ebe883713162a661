package agent

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sqlbot/guard"
	"sqlbot/roconn"
)

// A ValueHint tells the model that a statement compared a column to a
// literal the column does not hold, and what it does hold. Hints are only
// ever made for columns of exposed objects that the policy lets the model
// read, and their values are read through the same guarded path as the
// model's own statements, so they show nothing the model could not select.
type ValueHint struct {
	Column string   `json:"column"` // "object.column"
	Value  string   `json:"value"`  // the literal as the statement compared it (clipped)
	Known  []string `json:"known"`  // values the column does hold
	// All is true when Known is every distinct value of the column (at most
	// GroundAllValues of them); false when Known holds the values closest by
	// spelling among a bounded sample.
	All bool `json:"all"`
}

// Bounds of the value check that run_sql makes after a statement ran.
const (
	// GroundAllValues: a column with at most this many distinct values has
	// them all listed.
	GroundAllValues = 30
	// groundClosest is how many of a larger column's values are suggested.
	groundClosest = 5
	// groundScan bounds the rows read for a larger column's sample; the row
	// cap bounds the distinct values kept from them.
	groundScan = 10000
	// groundChecks bounds the comparisons checked per statement.
	groundChecks = 4
	// groundTime bounds the time of all the lookups for one statement; a
	// lookup cut short gives no hint.
	groundTime = time.Second
)

// A comparison is one column compared to string literals in a statement.
type comparison struct {
	qualifier, column string // as written, unquoted; qualifier may be empty
	values            []string
	// op is how the values are compared: "=" (=, ==, !=, <>, IS, IN),
	// "like" (LIKE without wildcards: without ASCII case) or "glob" (GLOB
	// without wildcards).
	op string
}

// ground returns hints for the string literals that sql compares to a
// column (=, ==, !=, <>, IS, IS NOT, IN, NOT IN, and LIKE, NOT LIKE, GLOB
// and NOT GLOB without wildcards)
// when the column does not hold them. It reads the values through t's
// checked path (the guard, then roconn's policy), at most groundChecks
// comparisons within groundTime in all; a lookup that is refused, fails or
// is cut short gives no hint. Numeric literals are not checked.
func (t *Tools) ground(ctx context.Context, sql string) []ValueHint {
	toks := guard.Tokens(sql)
	scope := t.scope(toks)
	if len(scope) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, groundTime)
	defer cancel()
	var hints []ValueHint
	checked := 0
	for _, c := range comparisons(toks) {
		obj, col, ok := resolve(scope, c)
		if !ok {
			continue
		}
		if checked == groundChecks || ctx.Err() != nil {
			break
		}
		checked++
		hints = append(hints, t.groundColumn(ctx, obj, col, c)...)
	}
	return hints
}

// scope maps the names and aliases of the exposed objects a statement reads
// (after FROM, JOIN or a comma in a FROM list), lower-cased, to the objects.
func (t *Tools) scope(toks []guard.Token) map[string]roconn.Object {
	scope := map[string]roconn.Object{}
	inFrom := false
	for i := 0; i < len(toks); i++ {
		w := strings.ToLower(toks[i].Text)
		switch {
		case toks[i].Kind == guard.TokenWord && (w == "from" || w == "join"):
			inFrom = true
		case inFrom && toks[i].Text == ",":
		case toks[i].Kind == guard.TokenWord && clauseEnd(w):
			inFrom = false
			continue
		default:
			continue
		}
		j := i + 1
		if j < len(toks) && isName(toks[j]) && j+2 < len(toks) && toks[j+1].Text == "." && isName(toks[j+2]) &&
			strings.EqualFold(unquote(toks[j].Text), "main") {
			j += 2
		}
		if j >= len(toks) || !isName(toks[j]) {
			continue
		}
		o, ok := t.db.Object(unquote(toks[j].Text))
		if !ok {
			continue
		}
		scope[strings.ToLower(o.Name)] = o
		k := j + 1
		if k < len(toks) && strings.EqualFold(toks[k].Text, "as") {
			k++
		}
		if k < len(toks) && isName(toks[k]) && !notAlias(strings.ToLower(toks[k].Text)) {
			scope[strings.ToLower(unquote(toks[k].Text))] = o
		}
		i = j
	}
	return scope
}

// clauseEnd reports whether w (lower case) ends a FROM list.
func clauseEnd(w string) bool {
	switch w {
	case "where", "group", "order", "limit", "having", "window", "union", "except", "intersect", "on", "using", "select":
		return true
	}
	return false
}

// notAlias reports whether w (lower case) may follow a table's name without
// being its alias.
func notAlias(w string) bool {
	switch w {
	case "where", "join", "left", "right", "full", "inner", "outer", "cross", "natural", "on", "using", "group",
		"order", "limit", "having", "window", "union", "except", "intersect", "indexed", "not":
		return true
	}
	return false
}

func isName(t guard.Token) bool { return t.Kind == guard.TokenWord || t.Kind == guard.TokenQuoted }

// unquote returns a name without its quotes ("…", `…`, […]).
func unquote(s string) string {
	if len(s) >= 2 {
		switch s[0] {
		case '"', '`':
			return strings.ReplaceAll(s[1:len(s)-1], s[:1]+s[:1], s[:1])
		case '[':
			return s[1 : len(s)-1]
		}
	}
	return s
}

// stringValue returns the value of a string literal token.
func stringValue(s string) string { return strings.ReplaceAll(s[1:len(s)-1], "''", "'") }

// comparisons finds the columns a statement compares to string literals.
func comparisons(toks []guard.Token) []comparison {
	var out []comparison
	// colAt reads a column reference ending at toks[i]: name or q.name.
	colAt := func(i int) (comparison, bool) {
		if i < 0 || !isName(toks[i]) || toks[i].Kind == guard.TokenWord && sqlWord(strings.ToLower(toks[i].Text)) {
			return comparison{}, false
		}
		c := comparison{column: unquote(toks[i].Text)}
		if i >= 2 && toks[i-1].Text == "." && isName(toks[i-2]) {
			c.qualifier = unquote(toks[i-2].Text)
		}
		return c, true
	}
	// colFrom reads a column reference starting at toks[i].
	colFrom := func(i int) (comparison, bool) {
		if i+2 < len(toks) && isName(toks[i]) && toks[i+1].Text == "." && isName(toks[i+2]) {
			return colAt(i + 2)
		}
		if i < len(toks) && (i+1 >= len(toks) || toks[i+1].Text != "(") {
			return colAt(i)
		}
		return comparison{}, false
	}
	for i := 0; i < len(toks); i++ {
		op, n := operator(toks, i)
		if n == 0 {
			continue
		}
		j := i + n // the token after the operator
		if op == "in" {
			if j >= len(toks) || toks[j].Text != "(" {
				continue
			}
			var vals []string
			k := j + 1
			for ; k < len(toks) && toks[k].Kind == guard.TokenString; k += 2 {
				vals = append(vals, stringValue(toks[k].Text))
				if k+1 >= len(toks) || toks[k+1].Text != "," {
					k++
					break
				}
			}
			if len(vals) == 0 || k >= len(toks) || toks[k].Text != ")" {
				continue
			}
			if c, ok := colAt(before(toks, i)); ok {
				c.values = vals
				out = append(out, c)
			}
			continue
		}
		pattern := op == "like" || op == "glob"
		// column op 'literal'
		if j < len(toks) && toks[j].Kind == guard.TokenString {
			v := stringValue(toks[j].Text)
			if op == "like" && strings.ContainsAny(v, "%_") || op == "glob" && strings.ContainsAny(v, "*?[") {
				continue
			}
			// An ESCAPE or COLLATE clause changes what matches: not checked.
			if c, ok := colAt(before(toks, i)); ok && (j+1 >= len(toks) || !strings.EqualFold(toks[j+1].Text, "escape") && !strings.EqualFold(toks[j+1].Text, "collate")) {
				c.values, c.op = []string{v}, op
				out = append(out, c)
			}
			continue
		}
		// 'literal' = column
		if !pattern {
			if b := before(toks, i); b >= 0 && toks[b].Kind == guard.TokenString {
				if c, ok := colFrom(j); ok {
					c.values = []string{stringValue(toks[b].Text)}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// before returns the index of the token before the operator at i, skipping
// the NOT of NOT IN and NOT LIKE.
func before(toks []guard.Token, i int) int {
	if i > 0 && strings.EqualFold(toks[i-1].Text, "not") {
		return i - 2
	}
	return i - 1
}

// operator reports the comparison operator that starts at toks[i] ("=",
// "in", "like", "glob"; "=" for every other equality or inequality) and how
// many tokens it spans, or 0.
func operator(toks []guard.Token, i int) (string, int) {
	t := toks[i]
	adjacent := func(k int) bool { return k < len(toks) && toks[k].Start == toks[k-1].End }
	switch strings.ToLower(t.Text) {
	case "=":
		if i > 0 && toks[i-1].End == t.Start && strings.ContainsAny(toks[i-1].Text, "=!<>") {
			return "", 0 // the second half of ==, !=, <= or >=
		}
		if adjacent(i+1) && toks[i+1].Text == "=" {
			return "=", 2
		}
		return "=", 1
	case "!":
		if adjacent(i+1) && toks[i+1].Text == "=" {
			return "!=", 2
		}
	case "<":
		if adjacent(i+1) && toks[i+1].Text == ">" {
			return "!=", 2
		}
	case "in":
		return "in", 1
	case "like", "glob":
		return strings.ToLower(t.Text), 1
	case "is":
		if i+1 < len(toks) && strings.EqualFold(toks[i+1].Text, "not") {
			return "=", 2
		}
		return "=", 1
	case "not":
		if i+1 < len(toks) {
			switch strings.ToLower(toks[i+1].Text) {
			case "in", "like", "glob":
				return "", 0 // found at IN or LIKE, with NOT taken as the column below
			}
		}
	}
	return "", 0
}

// sqlWord reports whether w (lower case) is a keyword that can stand where a
// column would, before an operator: never a column here.
func sqlWord(w string) bool {
	switch w {
	case "not", "null", "and", "or", "where", "on", "when", "then", "else", "case", "select", "having", "end":
		return true
	}
	return false
}

// resolve finds the exposed object and column a comparison names: through
// its qualifier, else the one object in scope with such a column. A column
// the policy hides is not among an Object's Columns, so it never resolves.
func resolve(scope map[string]roconn.Object, c comparison) (roconn.Object, string, bool) {
	find := func(o roconn.Object) (string, bool) {
		for _, col := range o.Columns {
			if strings.EqualFold(col.Name, c.column) {
				return col.Name, true
			}
		}
		return "", false
	}
	if c.qualifier != "" {
		o, ok := scope[strings.ToLower(c.qualifier)]
		if !ok {
			return roconn.Object{}, "", false
		}
		col, ok := find(o)
		return o, col, ok
	}
	var found roconn.Object
	var name string
	seen := map[string]bool{}
	for _, o := range scope {
		if seen[o.Name] {
			continue
		}
		seen[o.Name] = true
		if col, ok := find(o); ok {
			if name != "" {
				return roconn.Object{}, "", false // ambiguous: SQLite would have said so
			}
			found, name = o, col
		}
	}
	return found, name, name != ""
}

// groundColumn checks c's literals against obj.col and returns a hint for
// each the column does not hold.
func (t *Tools) groundColumn(ctx context.Context, obj roconn.Object, col string, c comparison) []ValueHint {
	from, qc := quoteName(obj.Name), quoteName(col)
	few, ok := t.texts(ctx, "SELECT DISTINCT "+qc+" FROM "+from+" WHERE "+qc+" IS NOT NULL LIMIT "+strconv.Itoa(GroundAllValues+1))
	if !ok {
		return nil
	}
	all := len(few) <= GroundAllValues
	var hints []ValueHint
	for _, v := range c.values {
		if all && holds(few, v, c.op == "like") {
			continue
		}
		// Ask SQLite itself: the column's collation may match what a plain
		// comparison here would not.
		op := " = "
		switch c.op {
		case "like":
			op = " LIKE "
		case "glob":
			op = " GLOB "
		}
		if held, ok := t.exists(ctx, "SELECT 1 FROM "+from+" WHERE "+qc+op+quoteString(v)+" LIMIT 1"); !ok || held {
			continue
		}
		h := ValueHint{Column: obj.Name + "." + col, Value: clipValue(v), All: all}
		if all {
			h.Known = sortedClipped(few)
		} else {
			sample, ok := t.texts(ctx, "SELECT DISTINCT "+qc+" FROM (SELECT "+qc+" FROM "+from+" WHERE "+qc+" IS NOT NULL LIMIT "+strconv.Itoa(groundScan)+")")
			if !ok || len(sample) == 0 {
				continue
			}
			h.Known = closest(sample, v, groundClosest)
		}
		hints = append(hints, h)
	}
	return hints
}

// texts runs a lookup through the checked path and returns its first
// column's values when they are all text; ok is false when the lookup was
// refused or failed, or the column holds something other than text.
func (t *Tools) texts(ctx context.Context, query string) ([]string, bool) {
	res, err := t.checked.Query(ctx, query)
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		return nil, false
	}
	out := make([]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		switch v := r[0].(type) {
		case string:
			out = append(out, v)
		default:
			return nil, false
		}
	}
	return out, true
}

// exists runs an existence check through the checked path; ok is false
// when it was refused or failed.
func (t *Tools) exists(ctx context.Context, query string) (held, ok bool) {
	res, err := t.checked.Query(ctx, query)
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		return false, false
	}
	return len(res.Rows) > 0, true
}

func holds(vals []string, v string, fold bool) bool {
	for _, x := range vals {
		if x == v || fold && strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func sortedClipped(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = clipValue(v)
	}
	slices.Sort(out)
	return out
}

// closest returns the n values of vals nearest to v by edit distance,
// ignoring case, nearest first (ties in the values' order).
func closest(vals []string, v string, n int) []string {
	type scored struct {
		s string
		d int
	}
	lv := strings.ToLower(v)
	sc := make([]scored, len(vals))
	for i, x := range vals {
		sc[i] = scored{x, editDistance(strings.ToLower(x), lv)}
	}
	slices.SortStableFunc(sc, func(a, b scored) int { return cmp.Compare(a.d, b.d) })
	out := make([]string, 0, n)
	for _, s := range sc[:min(n, len(sc))] {
		out = append(out, clipValue(s.s))
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes. Long
// values are cut to 64 runes first: the check is about spelling.
func editDistance(a, b string) int {
	ra, rb := runesUpTo(a, 64), runesUpTo(b, 64)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func runesUpTo(s string, n int) []rune {
	out := make([]rune, 0, min(utf8.RuneCountInString(s), n))
	for _, r := range s {
		if len(out) == n {
			break
		}
		out = append(out, r)
	}
	return out
}

func quoteName(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
