package roconn

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// An access is what the restricted connections' authorizer allows, fixed at
// Open. Names are lower-cased: SQLite compares identifiers without regard to
// ASCII case.
//
// SQLite passes the authorizer, with each column read, the innermost view
// (or common table expression) the read is made through; "" at the top
// level. An access uses it to make an exposed view the only door to what it
// wraps: at the top level only the visible columns of exposed objects may be
// read; inside a view, only what that view reads itself, as recorded at Open
// by compiling SELECT * FROM view for every exposed view. A common table
// expression can take any name, so a statement that gives one the name of
// an exposed view, or of a view or common table expression that exposed
// views read through, is refused (textRefusal). A table never names a
// context: a common table expression may take an exposed table's name.
type access struct {
	// top maps an exposed table or view to the columns that may be read at
	// the top level. The key "" means its rows may be counted (SELECT
	// count(*) FROM t asks to read column ""), "rowid" its rowid.
	top map[string]map[string]bool
	// via maps a context (a view, or a common table expression inside a
	// view) to the table → columns read through it when an exposed view
	// was compiled.
	via map[string]map[string]map[string]bool
	// reach maps a context to the tables read through it or through the
	// views and common table expressions inside it. When SQLite reads no
	// column of such a table, it asks to read its column "" with the
	// outermost of them that it did not flatten as the context.
	reach map[string]map[string]bool
	// tables holds every user table and view in the database; sqlite_*
	// names are refused by their prefix.
	tables map[string]bool
	// counts maps an exposed view to the tables it reads no column of
	// (or only the rowid), and how many times. SQLite flattens such a view
	// into the query and then asks, at the top level, to read the table's
	// column "" in database "main", exactly as for the table named main.t
	// directly, and as for a count of it. textRefusal refuses main.t for
	// a table that is not exposed; and SQLite first authorizes a SELECT in
	// the view's context, which allows that many such reads (see
	// authState.authorize).
	counts map[string]map[string]int

	// For textRefusal:
	reserved  map[string]bool     // names a common table expression may not take: every context
	unexposed map[string]bool     // tables and views that are not exposed
	hidden    map[string]bool     // the names of hidden columns (hide:)
	hiddenOf  map[string][]string // exposed table → the names of its hidden columns
	visible   map[string]bool     // the names of the columns of exposed objects that may be read
	indexes   map[string]bool     // indexes that hold a column that may not be read at the top level

	unexposedViews map[string]bool // views that are not exposed
}

// readAllowed reports whether a SQLITE_READ of table.column, made through
// context, may go ahead. dbName is the schema SQLite names ("" or "main";
// anything else, such as temp, is refused); modules are the virtual table
// modules of the connection.
func (a *access) readAllowed(table, column, dbName, context string, modules map[string]bool) bool {
	if dbName != "" && !foldEq(dbName, "main") {
		return false
	}
	if lookup(lookup(lookup(a.via, context), table), column) {
		return true // the view's own text reads it
	}
	if column == "" && lookup(lookup(a.reach, context), table) {
		return true // the view's own text reads none of t's columns
	}
	if cols, ok := lookupOK(a.top, table); ok {
		return lookup(cols, column)
	}
	if lookup(a.tables, table) {
		return false
	}
	t := fold(table)
	// The name is not a table or view. An empty-column read names a FROM
	// item none of whose columns are used: a common table expression
	// (whose own reads were authorized one by one) or an eponymous virtual
	// table. SQLite finds the latter among the connection's modules or, for
	// names starting "pragma_" or "json", registers one on first use
	// (sqlite3LocateTable); those, and the schema tables, are refused.
	if strings.HasPrefix(t, "json") || a.internalName(t, modules) {
		return false
	}
	// A read of a column of such a name is refused. It is a table created
	// after Open, which no policy exposes; or a subquery or common table
	// expression, which SQLite asks about by its alias (or "(subquery-N)")
	// only as the left side of a RIGHT or FULL JOIN whose USING column is
	// named unqualified (coalesce(left, right)). The two cannot be told
	// apart here: a statement may give a subquery the name of a table
	// created after Open, and then read that table as main.name. So the
	// latter is refused too, and its reason says how to write it instead.
	return column == ""
}

// derivedNames returns the names (lower-cased) that stmt gives its
// subqueries in FROM (the name after the ")" of a parenthesized SELECT,
// VALUES or WITH, with or without AS) and its common table expressions. A
// parenthesized table, as in "(t) AS x", is not a subquery: SQLite reads
// it as t.
func derivedNames(stmt string) map[string]bool {
	toks := tokens(stmt)
	closing := closingParens(toks)
	names := map[string]bool{}
	for i, t := range toks {
		if t.kind != tokPunct && definesCTE(toks, closing, i) {
			names[fold(t.text)] = true
		}
		if t.kind != tokPunct || t.text != "(" || closing[i] == 0 || i+1 >= len(toks) {
			continue
		}
		if !isWord(toks[i+1], "select") && !isWord(toks[i+1], "values") && !isWord(toks[i+1], "with") {
			continue
		}
		j := closing[i] + 1
		if j < len(toks) && isWord(toks[j], "as") {
			j++
		}
		if j < len(toks) && toks[j].kind != tokPunct {
			names[fold(toks[j].text)] = true
		}
	}
	return names
}

// newAccess builds the access for the exposed objects. reads are the
// authorizer's reads recorded while compiling each exposed view (one slice
// per compile), hidden the
// hidden columns of each exposed table, counts the views that have all the
// rows of one table (lower-cased names; see access.counts).
func newAccess(sch *schema, exposed []exposure, reads [][]read, hidden map[string]map[string]bool, counts map[string]map[string]int) *access {
	a := &access{
		counts:    counts,
		top:       map[string]map[string]bool{},
		via:       map[string]map[string]map[string]bool{},
		reach:     map[string]map[string]bool{},
		tables:    map[string]bool{},
		reserved:  map[string]bool{},
		unexposed: map[string]bool{},
		hidden:    map[string]bool{},
		hiddenOf:  map[string][]string{},
		visible:   map[string]bool{},
		indexes:   map[string]bool{},

		unexposedViews: map[string]bool{},
	}
	for _, o := range sch.objects {
		for _, ix := range o.indexes {
			a.indexes[fold(ix.name)] = true // until shown to hold only visible columns
		}
	}
	for name, o := range sch.objects {
		a.tables[name] = true
		a.unexposed[name] = true
		if o.isView {
			a.unexposedViews[name] = true
		}
	}
	for _, e := range exposed {
		t := fold(e.obj.name)
		delete(a.unexposed, t)
		delete(a.unexposedViews, t)
		if e.obj.isView {
			a.reserved[t] = true
		}
		cols := map[string]bool{}
		hiddenEmpty := false
		for _, c := range e.obj.columns {
			n := fold(c.name)
			if hidden[t][n] {
				a.hidden[n] = true
				a.hiddenOf[t] = append(a.hiddenOf[t], n)
				hiddenEmpty = hiddenEmpty || n == ""
				continue
			}
			cols[n] = true
			a.visible[n] = true
		}
		if !hiddenEmpty {
			cols[""] = true // counting; but not when a hidden column is named ""
		}
		// SQLite asks about a column named rowid by that name, as it asks
		// about the rowid itself: a hidden one keeps "rowid" out.
		if !e.obj.isView && !e.obj.withoutRowid && !hidden[t][fold(e.obj.rowidName())] && !hidden[t]["rowid"] {
			cols["rowid"] = true
		}
		a.top[t] = cols
		for _, ix := range e.obj.indexes {
			ok := !ix.wide || len(hidden[t]) == 0
			for _, c := range ix.columns {
				ok = ok && cols[fold(c)]
			}
			if ok {
				delete(a.indexes, fold(ix.name))
			}
		}
	}
	for _, compiled := range reads {
		contexts, tables := map[string]bool{}, map[string]bool{}
		for _, r := range compiled {
			if r.context != "" {
				contexts[fold(r.context)] = true
				tables[fold(r.table)] = true
			}
		}
		for c := range contexts {
			if a.reach[c] == nil {
				a.reach[c] = map[string]bool{}
			}
			for t := range tables {
				a.reach[c][t] = true
			}
		}
	}
	for _, r := range slices.Concat(reads...) {
		if r.context == "" {
			continue
		}
		ctx, t := fold(r.context), fold(r.table)
		if strings.HasPrefix(t, "sqlite_") || strings.HasPrefix(t, "pragma_") {
			continue // schema tables stay hidden, whatever a view reads
		}
		a.reserved[ctx] = true
		if a.via[ctx] == nil {
			a.via[ctx] = map[string]map[string]bool{}
		}
		if a.via[ctx][t] == nil {
			a.via[ctx][t] = map[string]bool{}
		}
		a.via[ctx][t][fold(r.column)] = true
	}
	return a
}

// textRefusal returns why the authorizer must refuse stmt on its text
// alone, or "" if it need not. It covers what SQLite's name resolution does
// not report to the authorizer:
//
//   - A common table expression named like an exposed view or like a view
//     (or common table expression) that exposed views read through: reads
//     inside it come with that name as their context, as reads inside the
//     real one would.
//   - USING and NATURAL joins. SQLite builds the terms that compare their
//     columns, and the coalesce(left, right) an unqualified USING column of
//     a RIGHT or FULL join becomes, without asking the authorizer: a table
//     joined so, whose other columns go unused, is never reported at all.
//     So a statement with such a join may not mention a table or view the
//     policy does not expose, nor a name that can only mean something no
//     policy exposes (see internalName: the schema tables, sqlite_dbpage,
//     dbstat, table-valued pragmas, the connection's virtual table
//     modules), may not join USING a name that is hidden in some table, and
//     may not be NATURAL when a hidden column's name could be one of the
//     names it compares.
//   - A view the policy does not expose, or main.t for a table it does not
//     expose: a view's tables come with database "main" when SQLite asks
//     to read no column of them (see counts).
//   - INDEXED BY an index that holds a column that may not be read: the
//     authorizer is not asked about indexes, and a scan of one returns rows
//     in the order of all its columns.
//
// modules are the connection's virtual table modules, lower-cased.
func (a *access) textRefusal(stmt string, modules map[string]bool) string {
	toks := tokens(stmt)
	closing := closingParens(toks)
	for i, t := range toks {
		if t.kind == tokPunct {
			continue
		}
		if lookup(a.unexposedViews, t.text) {
			return "the policy does not expose " + clipName(t.text)
		}
		if i+2 < len(toks) && toks[i+1].text == "." && foldEq(t.text, "main") && lookup(a.unexposed, toks[i+2].text) {
			return "the policy does not expose " + clipName(toks[i+2].text)
		}
		if !definesCTE(toks, closing, i) {
			continue
		}
		if lookup(a.reserved, t.text) {
			return "a common table expression may not take the name of " + clipName(t.text)
		}
	}
	for i := 0; i+2 < len(toks); i++ {
		if isWord(toks[i], "indexed") && isWord(toks[i+1], "by") && toks[i+2].kind != tokPunct && lookup(a.indexes, toks[i+2].text) {
			return "INDEXED BY " + clipName(toks[i+2].text) + " is not allowed: the index holds columns the policy does not expose"
		}
	}
	natural, using := false, false
	for i, t := range toks {
		if isWord(t, "natural") {
			natural = true
		}
		if isWord(t, "using") && i+1 < len(toks) && toks[i+1].text == "(" {
			using = true
			for j := i + 2; j < len(toks) && toks[j].text != ")"; j++ {
				if toks[j].kind != tokPunct && lookup(a.hidden, toks[j].text) {
					return "a join may not be USING " + clipName(toks[j].text) + ": the policy hides a column of that name"
				}
			}
		}
	}
	if !natural && !using {
		return ""
	}
	for _, t := range toks {
		if t.kind != tokPunct && (a.unexposed[fold(t.text)] || a.internalName(fold(t.text), modules)) {
			return "a statement with a USING or NATURAL join may not mention " + clipName(t.text) + ", which the policy does not expose"
		}
	}
	if natural {
		if why := a.naturalRefusal(toks); why != "" {
			return why
		}
	}
	return ""
}

// internalName reports whether name (lower-cased), unless it is an exposed
// object's, can only name what no policy exposes: a schema table
// (sqlite_schema, sqlite_master and their temp forms, sqlite_sequence,
// sqlite_stat1..4: every sqlite_* name is SQLite's), sqlite_dbpage, dbstat,
// a table-valued pragma (pragma_*), the eponymous JSON tables SQLite
// registers on first use, or any virtual table module of the connection.
// A quoted name is unquoted by tokens and SQLite folds only ASCII case,
// as fold does, so no other spelling reaches these.
func (a *access) internalName(name string, modules map[string]bool) bool {
	if _, exposed := a.top[name]; exposed {
		return false
	}
	switch name {
	case "dbstat", "json_each", "json_tree", "jsonb_each", "jsonb_tree":
		return true
	}
	return strings.HasPrefix(name, "sqlite_") || strings.HasPrefix(name, "pragma_") || modules[name]
}

// naturalRefusal returns why a statement with a NATURAL join may not run,
// or "". A NATURAL join compares every column name its two sides share. A
// hidden column h of table t is among them only if t is a side, and the
// other side has a column h: t itself; another table that hides h too; an
// object where h may be read; or a subquery or common table expression
// that names a column h, which it can only do by writing h (its * would
// read t's hidden columns, which the authorizer refuses), by a VALUES
// column or by an expression's text. So t must be mentioned, and then
// none of those may hold; and t may not be mentioned twice in the scope
// of a NATURAL join (the statement or subquery that holds it).
func (a *access) naturalRefusal(toks []token) string {
	named := map[string]bool{}
	scope := make([]int, len(toks))
	stack, next := []int{0}, 1
	natural := map[int]bool{}
	for i, t := range toks {
		if t.kind == tokPunct && t.text == "(" {
			sc := stack[len(stack)-1]
			if i+1 < len(toks) && (isWord(toks[i+1], "select") || isWord(toks[i+1], "values") || isWord(toks[i+1], "with")) {
				sc, next = next, next+1
			}
			stack = append(stack, sc)
		}
		scope[i] = stack[len(stack)-1]
		if t.kind == tokPunct && t.text == ")" && len(stack) > 1 {
			stack = stack[:len(stack)-1]
		}
		if t.kind != tokPunct {
			named[fold(t.text)] = true
		}
		if isWord(t, "natural") {
			natural[scope[i]] = true
		}
	}
	type mention struct {
		scope int
		table string
	}
	mentions := map[mention]int{}
	mentioned := map[string]bool{}
	for i, t := range toks {
		if t.kind == tokPunct || i+1 < len(toks) && toks[i+1].text == "." || a.hiddenOf[fold(t.text)] == nil {
			continue
		}
		mentions[mention{scope[i], fold(t.text)}]++
		mentioned[fold(t.text)] = true
	}
	for _, t := range slices.Sorted(maps.Keys(mentioned)) {
		for _, h := range a.hiddenOf[t] {
			elsewhere := false
			for u := range mentioned {
				elsewhere = elsewhere || u != t && slices.Contains(a.hiddenOf[u], h)
			}
			if named[h] || a.visible[h] || elsewhere || !plainName.MatchString(h) || valuesColumn.MatchString(h) {
				return "a NATURAL join here could compare the hidden column " + clipName(h) + "; join with ON instead"
			}
		}
	}
	for m, n := range mentions {
		if natural[m.scope] && n > 1 {
			return "a NATURAL join may not join " + clipName(m.table) + " with itself: it would compare its hidden columns; join with ON instead"
		}
	}
	return ""
}

// plainName is a name that can only come out of a subquery as written:
// SQLite names an unaliased expression by its text, so a hidden column
// called "a+b" would match (SELECT a+b).
var plainName = regexp.MustCompile(`^[a-z_\x80-\xff][a-z0-9_$\x80-\xff]*$`)

// valuesColumn is the name SQLite gives the columns of VALUES.
var valuesColumn = regexp.MustCompile(`^column[0-9]+$`)

// definesCTE reports whether the name at toks[i] is followed the way a
// common table expression's name is: AS [NOT] [MATERIALIZED] ( or a column
// list and then AS. A WINDOW definition matches too, which is harmless.
// closing is closingParens(toks).
func definesCTE(toks []token, closing []int, i int) bool {
	j := i + 1
	if j < len(toks) && toks[j].text == "(" {
		end := closing[j]
		return end > 0 && end+1 < len(toks) && isWord(toks[end+1], "as")
	}
	if j >= len(toks) || !isWord(toks[j], "as") {
		return false
	}
	j++
	if j < len(toks) && isWord(toks[j], "not") {
		j++
	}
	if j < len(toks) && isWord(toks[j], "materialized") {
		j++
	}
	return j < len(toks) && toks[j].text == "("
}

// closingParens maps the index of each "(" in toks to that of the ")" that
// closes it (0 if none does).
func closingParens(toks []token) []int {
	closing := make([]int, len(toks))
	var open []int
	for i, t := range toks {
		switch {
		case t.kind != tokPunct:
		case t.text == "(":
			open = append(open, i)
		case t.text == ")" && len(open) > 0:
			closing[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
	}
	return closing
}

// isWord reports whether t is the word w (lower-case), in any ASCII case.
func isWord(t token, w string) bool { return t.kind == tokWord && foldEq(t.text, w) }

type tokKind int

const (
	tokWord   tokKind = iota // a name, keyword or number
	tokQuoted                // a quoted name or a string: SQLite takes either as a name where one fits
	tokPunct                 // anything else, one byte at a time
)

// A token is one token of a statement; text is unquoted.
type token struct {
	kind tokKind
	text string
}

// tokens splits stmt into tokens by the rules scan follows (see scan),
// dropping comments and space.
func tokens(stmt string) []token {
	// About a token per four bytes in analysts' statements: one allocation
	// where growing by appends made half a dozen.
	out := make([]token, 0, len(stmt)/4+8)
	for i := 0; i < len(stmt); {
		c := stmt[i]
		switch {
		case isSpace(c) || c == '\v':
			i++
		case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-':
			i = lineCommentEnd(stmt, i)
		case c == '/' && i+2 < len(stmt) && stmt[i+1] == '*':
			i = blockCommentEnd(stmt, i)
		case c == '\'' || c == '"' || c == '`' || c == '[':
			close := c
			if c == '[' {
				close = ']'
			}
			end := quotedEnd(stmt, i, close)
			body := stmt[i+1 : max(i+1, end-1)]
			if close != ']' {
				body = strings.ReplaceAll(body, string(close)+string(close), string(close))
			}
			out = append(out, token{tokQuoted, body})
			i = end
		case isWordByte(c):
			end := i + 1
			for end < len(stmt) && (isWordByte(stmt[end]) || stmt[end] == '$') {
				end++
			}
			out = append(out, token{tokWord, stmt[i:end]})
			i = end
		default:
			out = append(out, token{tokPunct, stmt[i : i+1]})
			i++
		}
	}
	return out
}
