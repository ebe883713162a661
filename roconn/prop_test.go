package roconn_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sqlbot/roconn"
)

var (
	propN    = flag.Int("prop.n", 10000, "statements TestGeneratedSelects generates")
	propSeed = flag.Uint64("prop.seed", 1, "seed of TestGeneratedSelects' generator")
)

// propSchema is the schema of the property test: two exposed tables with
// hidden columns, and exposed views of each shape over a table and a view
// the policy does not expose. Hidden text contains "HID"; hidden numbers
// are 777xxxx (t1.h2) and 888xxxx (base.v, which exposed views only
// aggregate, filter on or order by).
const propSchema = `
CREATE TABLE t1 (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, h1 TEXT, h2 INTEGER);
CREATE INDEX idx_t1_a ON t1(a);
CREATE INDEX idx_t1_h1 ON t1(h1);
CREATE TABLE t2 (id INTEGER PRIMARY KEY, t1_id INTEGER, c TEXT, d REAL, h3 TEXT);
CREATE INDEX idx_t2_t1 ON t2(t1_id);
CREATE TABLE base (id INTEGER PRIMARY KEY, g TEXT, v INTEGER, secret TEXT);
CREATE VIEW vw_agg AS SELECT g, sum(v) AS total, count(*) AS n FROM base GROUP BY g;
CREATE VIEW vw_filter AS SELECT id, g FROM base WHERE v > 8880030;
CREATE VIEW vw_win AS SELECT id, row_number() OVER (ORDER BY v) AS rn FROM base;
CREATE VIEW hv AS SELECT id, g, secret FROM base;
CREATE VIEW vw_over AS SELECT id, g FROM hv;
CREATE INDEX idx_base_g ON base(g);
CREATE VIEW vw_having AS SELECT g, count(*) AS n FROM base GROUP BY g HAVING sum(v) > 17760050;
CREATE VIEW vw_distinct AS SELECT DISTINCT g FROM base WHERE v > 8880040;
CREATE VIEW vw_exists AS SELECT id, g FROM base b WHERE EXISTS (SELECT 1 FROM hv WHERE hv.id = b.id AND hv.secret > 'HIDs3');
CREATE VIEW vw_part AS SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY id) AS rn FROM base WHERE v > 8880030;
INSERT INTO t1 VALUES (1, 1, 'x', 'HIDa1', 7770001), (2, 2, 'y', 'HIDa2', 7770002), (3, 3, NULL, 'HIDa3', 7770003),
  (4, 1, 'x', NULL, 7770004), (5, 5, 'z', 'HIDa5', NULL), (6, NULL, 'y', 'HIDa6', 7770006), (7, 7, 'x', 'HIDa7', 7770007), (8, 2, 'w', 'HIDa8', 7770008);
INSERT INTO t2 VALUES (1, 1, 'p', 1.5, 'HIDc1'), (2, 1, 'q', 2.5, 'HIDc2'), (3, 2, 'p', NULL, 'HIDc3'), (4, 3, 'r', 4.0, NULL),
  (5, 4, 'q', 5.5, 'HIDc5'), (6, 9, 'p', 6.0, 'HIDc6'), (7, NULL, 's', 7.5, 'HIDc7'), (8, 2, 'x', 8.0, 'HIDc8'),
  (9, 5, 'y', 9.5, 'HIDc9'), (10, 6, 'p', 1.0, 'HIDc10'), (11, 7, NULL, 2.0, 'HIDc11'), (12, 8, 'q', 3.0, 'HIDc12');
INSERT INTO base VALUES (1, 'g1', 8880010, 'HIDs1'), (2, 'g1', 8880021, 'HIDs2'), (3, 'g2', 8880030, 'HIDs3'),
  (4, 'g2', 8880041, 'HIDs4'), (5, 'g3', 8880050, 'HIDs5'), (6, 'g3', 8880061, 'HIDs6');
`

const propPolicy = `
expose:
  t1: {hide: [h1, h2]}
  t2: {hide: [h3]}
  vw_agg: {}
  vw_filter: {}
  vw_win: {}
  vw_over: {}
  vw_having: {}
  vw_distinct: {}
  vw_exists: {}
  vw_part: {}
`

// propHiddenInts are the hidden numbers of propSchema.
var propHiddenInts = []int64{7770001, 7770002, 7770003, 7770004, 7770006, 7770007, 7770008, 8880010, 8880021, 8880030, 8880041, 8880050, 8880061}

var hiddenIntText = regexp.MustCompile(`(^|[^0-9.])(777000[1-8]|8880010|8880021|8880030|8880041|8880050|8880061)([^0-9.]|$)`)

// propHiddenTexts are hidden text values of propSchema that generated
// equality oracles offer as candidates.
var propHiddenTexts = []string{"HIDa1", "HIDa2", "HIDa5", "HIDa8", "HIDc1", "HIDc3", "HIDc10", "HIDs1", "HIDs4"}

var hiddenTextWord = regexp.MustCompile(`HID[a-zA-Z][0-9]*`)

// propLeak returns a hidden value found in rows or msg, or "". A value the
// statement q offers itself as a literal (a candidate of an equality
// oracle) may come back in its rows as that literal, or as the generator's
// expressions make it (upper-cased, with "k" appended, plus at most 9): it
// does not count, since it says nothing about the data. Whether q
// compares it with a hidden column is decided by g.touches, not here.
func propLeak(q string, rows [][]any, msg string) string {
	lq := strings.ToLower(q)
	text := func(s string) string {
		for _, m := range hiddenTextWord.FindAllString(s, -1) {
			lm := strings.ToLower(m)
			if !strings.Contains(lq, "'"+lm+"'") && !(strings.HasSuffix(lm, "k") && strings.Contains(lq, "'"+lm[:len(lm)-1]+"'")) {
				return m
			}
		}
		return ""
	}
	offered := func(x int64) bool {
		for d := range int64(10) {
			if regexp.MustCompile(`(^|[^0-9.])` + fmt.Sprint(x-d) + `([^0-9.]|$)`).MatchString(q) {
				return true
			}
		}
		return false
	}
	if m := text(msg); m != "" {
		return "HID… in " + msg
	}
	for _, m := range hiddenIntText.FindAllStringSubmatch(msg, -1) {
		var x int64
		fmt.Sscan(m[2], &x)
		if !offered(x) {
			return m[2]
		}
	}
	for _, row := range rows {
		for _, v := range row {
			switch x := v.(type) {
			case string:
				if m := text(x); m != "" {
					return x
				}
			case int64:
				if slices.Contains(propHiddenInts, x) && !offered(x) {
					return fmt.Sprint(x)
				}
			case float64:
				if x == float64(int64(x)) && slices.Contains(propHiddenInts, int64(x)) && !offered(int64(x)) {
					return fmt.Sprint(x)
				}
			}
		}
	}
	return ""
}

// A pcol is a column a FROM item offers.
type pcol struct {
	name   string
	hidden bool // reading it reads what the policy hides
	num    bool
}

// A psource is a FROM item.
type psource struct {
	text  string // as it appears in FROM
	alias string
	cols  []pcol
	table string // the table it names directly, "" for anything else
}

var propObjects = map[string][]pcol{
	"t1":          {{"id", false, true}, {"a", false, true}, {"b", false, false}, {"h1", true, false}, {"h2", true, true}},
	"t2":          {{"id", false, true}, {"t1_id", false, true}, {"c", false, false}, {"d", false, true}, {"h3", true, false}},
	"vw_agg":      {{"g", false, false}, {"total", false, true}, {"n", false, true}},
	"vw_filter":   {{"id", false, true}, {"g", false, false}},
	"vw_win":      {{"id", false, true}, {"rn", false, true}},
	"vw_over":     {{"id", false, true}, {"g", false, false}},
	"vw_having":   {{"g", false, false}, {"n", false, true}},
	"vw_distinct": {{"g", false, false}},
	"vw_exists":   {{"id", false, true}, {"g", false, false}},
	"vw_part":     {{"id", false, true}, {"g", false, false}, {"rn", false, true}},
	// Not exposed: every column of them is hidden.
	"base": {{"id", true, true}, {"g", true, false}, {"v", true, true}, {"secret", true, false}},
	"hv":   {{"id", true, true}, {"g", true, false}, {"secret", true, false}},
}

var propExposed = []string{"t1", "t2", "vw_agg", "vw_filter", "vw_win", "vw_over", "vw_having", "vw_distinct", "vw_exists", "vw_part"}

// propLeftOut holds, for each exposed view that keeps only some rows of
// base, and each of its columns, the values that only the rows it leaves
// out hold: no row the view shows has them.
var propLeftOut = map[string]map[string][]string{
	"vw_filter":   {"id": {"1", "2", "3"}, "g": {"'g1'"}},
	"vw_having":   {"g": {"'g1'"}},
	"vw_distinct": {"g": {"'g1'"}},
	"vw_exists":   {"id": {"1", "2", "3"}, "g": {"'g1'"}},
	"vw_part":     {"id": {"1", "2", "3"}, "g": {"'g1'"}},
}

// tripwires are terms that raise an error when their condition (the %s)
// holds: abs() of the one integer it cannot negate, and json() of text that
// is not JSON.
var tripwires = []string{
	"abs(CASE WHEN %s THEN -9223372036854775808 ELSE 1 END) > 0",
	"json(CASE WHEN %s THEN 'not json' ELSE '1' END) IS NOT NULL",
}

// A propGen generates one SELECT and knows whether it touches what the
// policy hides: a hidden column or an object that is not exposed, named or
// compared (USING, NATURAL, *).
type propGen struct {
	r       *rand.Rand
	n       int
	ctes    []string
	touches bool
	// wired: the statement holds a term that raises an error on a value
	// only rows a view leaves out hold (see propLeftOut); it must never
	// raise it.
	wired bool
	// derivedLeft: the statement has a RIGHT or FULL join by USING or
	// NATURAL whose left side is a subquery or CTE; the authorizer refuses
	// it, saying how to write it, if it names a compared column
	// unqualified (see TestFullJoinDerivedUsingRefused).
	derivedLeft bool
}

func (g *propGen) alias() string { g.n++; return fmt.Sprintf("s%d", g.n) }

func (g *propGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *propGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// source returns a FROM item; depth bounds nesting.
func (g *propGen) source(depth int) psource {
	switch k := g.r.IntN(10); {
	case k < 6 || depth > 1:
		name := g.pick(propExposed)
		if g.chance(0.04) {
			name = g.pick([]string{"base", "hv"})
			g.touches = true
		}
		a := g.alias()
		return psource{text: name + " AS " + a, alias: a, cols: propObjects[name], table: name}
	case k < 8:
		inner := g.source(depth + 1)
		a := g.alias()
		sel, cols := g.projection(inner, 1+g.r.IntN(3))
		text := "(SELECT " + sel + " FROM " + inner.text + g.where([]psource{inner}, depth+1) + ") AS " + a
		return psource{text: text, alias: a, cols: cols}
	default:
		inner := g.source(depth + 1)
		name := fmt.Sprintf("c%d", len(g.ctes)+1)
		sel, cols := g.projection(inner, 1+g.r.IntN(3))
		g.ctes = append(g.ctes, name+" AS (SELECT "+sel+" FROM "+inner.text+g.where([]psource{inner}, depth+1)+")")
		a := g.alias()
		return psource{text: name + " AS " + a, alias: a, cols: cols}
	}
}

// projection returns n aliased expressions over s and the columns they make.
func (g *propGen) projection(s psource, n int) (string, []pcol) {
	var parts []string
	var cols []pcol
	for i := range n {
		e, num := g.expr([]psource{s})
		name := fmt.Sprintf("x%d_%d", g.n, i)
		parts = append(parts, e+" AS "+name)
		cols = append(cols, pcol{name, false, num})
	}
	return strings.Join(parts, ", "), cols
}

// column picks a column of s, now and then a hidden one.
func (g *propGen) column(s psource) pcol {
	var vis []pcol
	for _, c := range s.cols {
		if !c.hidden {
			vis = append(vis, c)
		}
	}
	c := s.cols[g.r.IntN(len(s.cols))]
	if len(vis) > 0 && !g.chance(0.08) {
		c = vis[g.r.IntN(len(vis))]
	}
	if c.hidden {
		g.touches = true
	}
	return c
}

// expr returns an expression over the columns of srcs and whether it is a
// number.
func (g *propGen) expr(srcs []psource) (string, bool) {
	form := g.r.IntN(12)
	if form == 6 && g.n < 12 {
		inner := g.source(2)
		e, num := g.expr([]psource{inner})
		return "(SELECT max(" + e + ") FROM " + inner.text + ")", num
	}
	s := srcs[g.r.IntN(len(srcs))]
	c := g.column(s)
	return g.exprOf(s.alias+"."+c.name, c, form)
}

// exprOf returns expression form (0 to 11) of ref, a reference to c, and
// whether it is a number.
func (g *propGen) exprOf(ref string, c pcol, form int) (string, bool) {
	switch form {
	case 0:
		return fmt.Sprintf("coalesce(%s, %d)", ref, g.r.IntN(5)), c.num
	case 1:
		return "length(" + ref + ")", true
	case 2:
		return "upper(" + ref + ")", false
	case 3:
		return "typeof(" + ref + ")", false
	case 4:
		return "CASE WHEN " + ref + " IS NULL THEN 0 ELSE 1 END", true
	case 5:
		if c.num {
			return fmt.Sprintf("%s + %d", ref, g.r.IntN(10)), true
		}
		return ref + " || 'k'", false
	case 7:
		if g.r.IntN(3) == 0 {
			// Where the value starts in its row's record: the sizes of
			// the columns before it, hidden ones too.
			g.touches = true
			return "sqlite_offset(" + ref + ")", true
		}
	}
	return ref, c.num
}

// where returns a WHERE clause over srcs, or "".
func (g *propGen) where(srcs []psource, depth int) string {
	if !g.chance(0.5) {
		return ""
	}
	return " WHERE " + g.predicate(srcs, depth)
}

func (g *propGen) predicate(srcs []psource, depth int) string {
	if w := g.tripwire(srcs); w != "" {
		return w
	}
	form := g.r.IntN(7)
	if form == 2 && depth < 2 {
		inner := g.source(depth + 1)
		return "EXISTS (SELECT 1 FROM " + inner.text + " WHERE " + g.predicate([]psource{inner}, depth+1) + ")"
	}
	s := srcs[g.r.IntN(len(srcs))]
	c := g.column(s)
	ref := s.alias + "." + c.name
	switch form {
	case 0:
		return ref + " IS NOT NULL"
	case 1:
		if depth < 2 {
			inner := g.source(depth + 1)
			ic := g.column(inner)
			return ref + " IN (SELECT " + inner.alias + "." + ic.name + " FROM " + inner.text + ")"
		}
	case 3:
		return ref + " LIKE '" + g.pick([]string{"x", "g", "p", "H"}) + "%'"
	}
	if c.num {
		return fmt.Sprintf("%s > %d", ref, g.r.IntN(6))
	}
	return ref + " >= '" + g.pick([]string{"g2", "q", "x", "HIDa5"[:1]}) + "'"
}

// tripwire returns, now and then, a tripwire term (the whole predicate, so
// that every row that reaches it tests it) on a value that only rows a view
// in srcs leaves out hold, or "".
func (g *propGen) tripwire(srcs []psource) string {
	var views []psource
	for _, s := range srcs {
		if propLeftOut[s.table] != nil {
			views = append(views, s)
		}
	}
	if len(views) == 0 || !g.chance(0.5) {
		return ""
	}
	s := views[g.r.IntN(len(views))]
	var cols []string
	for c := range propLeftOut[s.table] {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	c := g.pick(cols)
	g.wired = true
	return fmt.Sprintf(g.pick(tripwires), s.alias+"."+c+" = "+g.pick(propLeftOut[s.table][c]))
}

// literal returns a FROM item of literal rows whose columns take names of
// other's columns (hidden ones too) and now and then a name of its own:
// joined to other with USING or NATURAL it is an equality oracle, whose
// candidates are, now and then, the very values hidden there; with no rows,
// a RIGHT or FULL join's coalesce of a USING column reads other's column
// alone. Its own columns hide nothing.
func (g *propGen) literal(other psource) psource {
	var names []string
	var cols []pcol
	for range 1 + g.r.IntN(2) {
		c := pcol{fmt.Sprintf("f%d", g.n), false, g.chance(0.5)}
		var hidden []pcol
		for _, o := range other.cols {
			if o.hidden {
				hidden = append(hidden, o)
			}
		}
		switch {
		case len(hidden) > 0 && g.chance(0.3):
			c = hidden[g.r.IntN(len(hidden))]
		case g.chance(0.85):
			c = other.cols[g.r.IntN(len(other.cols))]
		}
		if slices.Contains(names, c.name) {
			continue
		}
		names = append(names, c.name)
		cols = append(cols, pcol{c.name, false, c.num})
	}
	row := func(as bool) string {
		var parts []string
		for i, c := range cols {
			v := g.literalValue(c, other)
			if as {
				v += " AS " + names[i]
			}
			parts = append(parts, v)
		}
		return "SELECT " + strings.Join(parts, ", ")
	}
	body := row(true)
	switch k := g.r.IntN(5); {
	case k == 0:
		body += " WHERE 0"
	case k == 1:
		body += " UNION ALL " + row(false) + " UNION ALL " + row(false)
	}
	a := g.alias()
	if g.chance(0.3) {
		name := fmt.Sprintf("c%d", len(g.ctes)+1)
		g.ctes = append(g.ctes, name+" AS ("+body+")")
		return psource{text: name + " AS " + a, alias: a, cols: cols}
	}
	return psource{text: "(" + body + ") AS " + a, alias: a, cols: cols}
}

// literalValue returns a literal for a column named like c: for a hidden
// column, now and then one of the values hidden in propSchema.
func (g *propGen) literalValue(c pcol, other psource) string {
	if g.chance(0.1) {
		return "NULL"
	}
	hiddenHere := slices.ContainsFunc(other.cols, func(o pcol) bool { return o.name == c.name && o.hidden })
	switch {
	case hiddenHere && c.num && g.chance(0.7):
		return fmt.Sprint(propHiddenInts[g.r.IntN(len(propHiddenInts))])
	case hiddenHere && !c.num && g.chance(0.7):
		return "'" + g.pick(propHiddenTexts) + "'"
	case c.num:
		return fmt.Sprint(g.r.IntN(9))
	}
	return "'" + g.pick([]string{"x", "y", "p", "q", "g1", "g2"}) + "'"
}

// join returns a FROM clause of two items, the items, and the columns its
// USING or NATURAL join compares: a statement may name them unqualified
// (for a RIGHT or FULL join, SQLite reads coalesce(left, right) then).
func (g *propGen) join() (string, []psource, []pcol) {
	var l, r psource
	if g.chance(0.35) {
		if g.chance(0.6) { // an oracle against a table that hides columns
			name := g.pick([]string{"t1", "t2"})
			a := g.alias()
			l = psource{text: name + " AS " + a, alias: a, cols: propObjects[name], table: name}
		} else {
			l = g.source(0)
		}
		r = g.literal(l)
		if g.chance(0.4) {
			l, r = r, l
		}
	} else {
		l, r = g.source(0), g.source(0)
	}
	common := []pcol{}
	for _, a := range l.cols {
		for _, b := range r.cols {
			if a.name == b.name {
				common = append(common, pcol{a.name, a.hidden || b.hidden, a.num})
			}
		}
	}
	kind := g.pick([]string{"JOIN", "INNER JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", ",", "NATURAL JOIN", "NATURAL LEFT JOIN", "NATURAL RIGHT JOIN", "NATURAL FULL JOIN"})
	from := l.text + " " + kind + " " + r.text
	if kind == "," {
		from = l.text + ", " + r.text
	}
	var shared []pcol
	outer := strings.Contains(kind, "RIGHT") || strings.Contains(kind, "FULL")
	switch {
	case strings.HasPrefix(kind, "NATURAL"):
		g.derivedLeft = g.derivedLeft || outer && l.table == ""
		for _, c := range common {
			if c.hidden {
				g.touches = true
			}
		}
		shared = common
	case kind == "CROSS JOIN" || kind == ",":
	case len(common) > 0 && g.chance(0.6):
		c := common[g.r.IntN(len(common))]
		if c.hidden {
			g.touches = true
		}
		from += " USING (" + c.name + ")"
		shared = []pcol{c}
		g.derivedLeft = g.derivedLeft || outer && l.table == ""
	default:
		lc, rc := g.column(l), g.column(r)
		from += " ON " + l.alias + "." + lc.name + " = " + r.alias + "." + rc.name
	}
	return from, []psource{l, r}, shared
}

// joinSelect returns n expressions over a join's items and, now and then,
// over the columns it compares, named unqualified.
func (g *propGen) joinSelect(srcs []psource, shared []pcol, n int) string {
	var parts []string
	for range n {
		if len(shared) > 0 && g.chance(0.4) {
			c := shared[g.r.IntN(len(shared))]
			if c.hidden {
				g.touches = true
			}
			e, _ := g.exprOf(c.name, c, g.r.IntN(12))
			parts = append(parts, e)
			continue
		}
		e, _ := g.expr(srcs)
		parts = append(parts, e)
	}
	return strings.Join(parts, ", ")
}

// statement returns one generated SELECT.
func (g *propGen) statement() string {
	var body string
	switch g.r.IntN(10) {
	case 0, 1: // simple
		s := g.source(0)
		var parts []string
		for range 1 + g.r.IntN(3) {
			e, _ := g.expr([]psource{s})
			parts = append(parts, e)
		}
		body = "SELECT " + strings.Join(parts, ", ") + " FROM " + s.text + g.where([]psource{s}, 0)
		if g.chance(0.4) {
			body += " ORDER BY 1"
			if g.chance(0.3) {
				body += " DESC NULLS FIRST"
			}
		}
	case 2, 8: // join
		from, srcs, shared := g.join()
		body = "SELECT " + g.joinSelect(srcs, shared, 1+g.r.IntN(3)) + " FROM " + from + g.where(srcs, 0)
	case 9: // star over a join
		from, srcs, _ := g.join()
		for _, s := range srcs {
			for _, c := range s.cols {
				if c.hidden {
					g.touches = true
				}
			}
		}
		body = "SELECT * FROM " + from + g.where(srcs, 0)
	case 3: // aggregate
		s := g.source(0)
		k := g.column(s)
		e, _ := g.expr([]psource{s})
		body = fmt.Sprintf("SELECT %s.%s, count(*), max(%s), group_concat(%s) FROM %s%s GROUP BY 1", s.alias, k.name, e, e, s.text, g.where([]psource{s}, 0))
		if g.chance(0.4) {
			body += fmt.Sprintf(" HAVING count(*) > %d", g.r.IntN(2))
		}
	case 4: // window
		s := g.source(0)
		p, o := g.column(s), g.column(s)
		e, _ := g.expr([]psource{s})
		body = fmt.Sprintf("SELECT %s, row_number() OVER (PARTITION BY %s.%s ORDER BY %s.%s, %s), count(*) OVER (ORDER BY %s.%s ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM %s",
			e, s.alias, p.name, s.alias, o.name, e, s.alias, o.name, s.text)
	case 5: // compound
		l, r := g.source(0), g.source(0)
		le, _ := g.expr([]psource{l})
		re, _ := g.expr([]psource{r})
		op := g.pick([]string{"UNION", "UNION ALL", "INTERSECT", "EXCEPT"})
		body = "SELECT " + le + " FROM " + l.text + " " + op + " SELECT " + re + " FROM " + r.text
	case 6: // star
		s := g.source(0)
		for _, c := range s.cols {
			if c.hidden {
				g.touches = true
			}
		}
		body = "SELECT " + g.pick([]string{"*", s.alias + ".*"}) + " FROM " + s.text + g.where([]psource{s}, 0)
	default: // recursive
		s := g.source(1)
		e, _ := g.expr([]psource{s})
		body = fmt.Sprintf("SELECT r.x, (SELECT count(%s) FROM %s) FROM r", e, s.text)
		g.ctes = append([]string{"r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3)"}, g.ctes...)
		return "WITH RECURSIVE " + strings.Join(g.ctes, ", ") + " " + body
	}
	if len(g.ctes) > 0 {
		return "WITH " + strings.Join(g.ctes, ", ") + " " + body
	}
	return body
}

// propCounts are what a run of the property did.
type propCounts struct{ generated, ran, refused, skipped, index, timedOut, wired, derived int }

// propDB opens the property test's database: through roconn under
// propPolicy, and plain read-only.
func propDB(t testing.TB) (*roconn.DB, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prop.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(propSchema); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	p, err := roconn.ParsePolicy([]byte(propPolicy))
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{Rows: 100000, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	plain, err := roconn.PlainWithFunctions(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	return db, plain
}

// checkGenerated runs one generated statement both ways and checks the
// properties: nothing hidden in roconn's output; a statement that touches
// nothing hidden and that plain SQLite runs runs on roconn with the same
// rows; one that touches something hidden is refused.
func checkGenerated(t *testing.T, db *roconn.DB, plain *sql.DB, seed uint64, c *propCounts) {
	g := &propGen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	q := g.statement()
	c.generated++
	res, rows, err := queryOrStream(context.Background(), db, q, seed%2 == 1) // odd statements streamed
	if v := propLeak(q, rows, fmt.Sprint(err)); v != "" {
		t.Errorf("seed %d: %s\nleaked %q", seed, q, v)
	}
	if g.wired {
		c.wired++
		var ref *roconn.Refusal
		if err != nil && !errors.As(err, &ref) && !errors.Is(err, roconn.ErrRowLimit) {
			t.Errorf("seed %d: %s\n%v; a tripwire went off on a row a view leaves out", seed, q, err)
		}
	}
	wantCols, wantRows, perr := plainRows(plain, q)
	if perr != nil {
		c.skipped++ // plain SQLite does not run it either (ambiguous names, mismatched compound, ...)
		return
	}
	touches := g.touches
	if !touches && usesHiddenIndex(plain, q) {
		touches = true // the plan scans an index over a hidden column: rows come in its order
		c.index++
	}
	var ref *roconn.Refusal
	switch {
	case touches && err == nil:
		t.Errorf("seed %d: %s\nran; it touches what the policy hides", seed, q)
	case touches && len(rows) > 0:
		t.Errorf("seed %d: %s\ngave %d rows before %v; it touches what the policy hides", seed, q, len(rows), err)
	case touches && !errors.As(err, &ref):
		t.Errorf("seed %d: %s\n%v; want a refusal", seed, q, err)
	case touches:
		c.refused++
	case errors.As(err, &ref) && ref.Layer == roconn.LayerTimeout:
		c.timedOut++ // a loaded machine can stall a statement past its limit; that is no leak
	case g.derivedLeft && errors.As(err, &ref) && ref.Layer == roconn.LayerAuthorizer && strings.Contains(ref.Reason, "name the side it comes from"):
		c.derived++ // refused on purpose, saying how to write it
	case err != nil:
		t.Errorf("seed %d: %s\n%v; it reads only what the policy exposes", seed, q, err)
	default:
		c.ran++
		if got, want := fmt.Sprint(res.Columns, res.Rows), fmt.Sprint(wantCols, wantRows); got != want {
			t.Errorf("seed %d: %s\n got %.300s\nwant %.300s", seed, q, got, want)
		}
	}
}

// plainRows runs q on a plain connection, with each []byte made a string.
func plainRows(db *sql.DB, q string) ([]string, [][]any, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := [][]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}

// usesHiddenIndex reports whether SQLite's plan for q uses idx_t1_h1.
func usesHiddenIndex(db *sql.DB, q string) bool {
	_, plan, err := plainRows(db, "EXPLAIN QUERY PLAN "+q)
	return err == nil && strings.Contains(fmt.Sprint(plan), "idx_t1_h1")
}

// TestGeneratedSelects checks the property on -prop.n generated statements
// (10,000 by default; docs/TESTING.md has the long run).
func TestGeneratedSelects(t *testing.T) {
	db, plain := propDB(t)
	var c propCounts
	start := time.Now()
	for i := range *propN {
		checkGenerated(t, db, plain, *propSeed*1_000_003+uint64(i), &c)
		if t.Failed() && c.generated > 50 && !testing.Verbose() {
			break
		}
	}
	t.Logf("generated %d, ran %d, refused %d (%d for the plan's index), skipped %d (plain SQLite refused them too), timed out %d, with a tripwire %d, refused for a subquery's unqualified USING column in a RIGHT or FULL join %d, in %v",
		c.generated, c.ran, c.refused, c.index, c.skipped, c.timedOut, c.wired, c.derived, time.Since(start).Round(time.Millisecond))
	if c.refused < c.generated/20 || c.ran < c.generated/4 || c.timedOut > c.generated/100 || c.wired < c.generated/20 {
		t.Errorf("the generator should both touch and avoid what is hidden, and statements run: %+v", c)
	}
}
