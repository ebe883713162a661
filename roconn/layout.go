package roconn

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// readLayout learns how a compiled program names the columns of table o:
// which P2 of OP_Column on its cursor is which column, which column (if any)
// is its rowid, and what its VIRTUAL generated columns are computed from.
// o.withoutRowid must be set; readSchema sets o's indexes after it.
//
// It asks SQLite rather than re-deriving SQLite's rules (stored columns
// before virtual ones, a WITHOUT ROWID table's primary key first, an INTEGER
// PRIMARY KEY read as the rowid): it compiles SELECT of every stored column
// FROM table NOT INDEXED and reads the program back, each result column
// being the register one OP_Column (or OP_Rowid) of the table's cursor
// writes; if the program is not that plain, it compiles SELECT column FROM
// table NOT INDEXED for each column instead, as it does for each generated
// column.
func (p *privileged) readLayout(ctx context.Context, o *schemaObject) error {
	conn, err := p.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	o.storage = map[int64]string{}
	o.derived = map[string][]string{}
	cursorOf := func(prog []instr) int64 {
		for _, in := range prog {
			if in.Opcode == "OpenRead" && in.P2 == o.root && in.P3 == 0 {
				return in.P1
			}
		}
		return -1
	}
	touched := func(c schemaColumn) (cols []int64, rowid bool, err error) {
		prog, err := explain(ctx, conn, "SELECT "+quoteIdent(c.name)+" FROM "+quoteIdent(o.name)+" NOT INDEXED")
		if err != nil {
			return nil, false, err
		}
		cur := cursorOf(prog)
		for _, in := range prog {
			switch {
			case in.P1 != cur:
			case in.Opcode == "Column":
				cols = append(cols, in.P2)
			case in.Opcode == "Rowid":
				rowid = true
			}
		}
		return cols, rowid, nil
	}
	var plain []schemaColumn
	for _, c := range o.columns {
		if !c.generated && !c.hidden {
			plain = append(plain, c)
		}
	}
	touches, err := p.touchedAll(ctx, conn, o, plain, cursorOf)
	if err != nil {
		return err
	}
	if touches == nil { // not a plain program: one column at a time
		for _, c := range plain {
			cols, rowid, err := touched(c)
			if err != nil {
				return err
			}
			touches = append(touches, columnTouch{cols, rowid})
		}
	}
	for i, c := range plain {
		cols, rowid := touches[i].cols, touches[i].rowid
		switch {
		case rowid && len(cols) == 0:
			// The INTEGER PRIMARY KEY is read as the rowid, but keeps its
			// slot in the record (a NULL), which OP_Column can read too.
			o.rowidAlias = c.name
			slot := int64(0)
			for _, d := range o.columns {
				if d.name == c.name {
					break
				}
				if !d.generated && !d.hidden {
					slot++
				}
			}
			o.storage[slot] = c.name
		case len(cols) == 1 && !rowid:
			o.storage[cols[0]] = c.name
		default:
			return fmt.Errorf("cannot tell where column %q is stored", c.name)
		}
	}
	for _, c := range o.columns {
		if !c.generated {
			continue
		}
		cols, rowid, err := touched(c)
		if err != nil {
			return err
		}
		deps := []string{}
		for _, n := range cols {
			name, ok := o.storage[n]
			if !ok {
				return fmt.Errorf("cannot tell what column %q is computed from", c.name)
			}
			deps = append(deps, name)
		}
		if rowid {
			deps = append(deps, o.rowidName())
		}
		o.derived[fold(c.name)] = deps
	}
	return nil
}

// A columnTouch is what reading one column does on its table's cursor: the
// record slots OP_Column reads, and whether OP_Rowid reads the rowid.
type columnTouch struct {
	cols  []int64
	rowid bool
}

// touchedAll compiles one SELECT of every column of cols FROM o NOT INDEXED
// and returns, for each column, what the instruction that fills its result
// register does on o's cursor. It returns nil (and no error) when the
// program is not that plain: a result register filled by anything but one
// OP_Column or OP_Rowid of the cursor, or the cursor read into any other
// register.
func (p *privileged) touchedAll(ctx context.Context, conn *sql.Conn, o *schemaObject, cols []schemaColumn, cursorOf func([]instr) int64) ([]columnTouch, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.name)
	}
	prog, err := explain(ctx, conn, "SELECT "+strings.Join(names, ", ")+" FROM "+quoteIdent(o.name)+" NOT INDEXED")
	if err != nil {
		return nil, err
	}
	cur := cursorOf(prog)
	base := int64(-1)
	for _, in := range prog {
		if in.Opcode == "ResultRow" {
			if base >= 0 || in.P2 != int64(len(cols)) {
				return nil, nil
			}
			base = in.P1
		}
	}
	if cur < 0 || base < 0 {
		return nil, nil
	}
	out := make([]columnTouch, len(cols))
	filled := make([]int, len(cols))
	for _, in := range prog {
		if in.P1 != cur {
			continue
		}
		var reg int64
		var t columnTouch
		switch in.Opcode {
		case "Column":
			reg, t = in.P3, columnTouch{cols: []int64{in.P2}}
		case "Rowid":
			reg, t = in.P2, columnTouch{rowid: true}
		default:
			continue
		}
		k := reg - base
		if k < 0 || k >= int64(len(cols)) {
			return nil, nil
		}
		out[k] = t
		filled[k]++
	}
	for _, n := range filled {
		if n != 1 {
			return nil, nil
		}
	}
	return out, nil
}

// rowidName is the name a read of o's rowid goes by: its INTEGER PRIMARY KEY
// column, or "rowid".
func (o *schemaObject) rowidName() string {
	if o.rowidAlias != "" {
		return o.rowidAlias
	}
	return "rowid"
}

// A catalog maps the root pages of one database to the tables and indexes
// they hold.
type catalog map[int64]btree

// A btree is a table's own b-tree (index nil) or one of its indexes.
type btree struct {
	table *schemaObject
	index *schemaIndex
}

// newCatalog maps the b-trees of the tables in objs.
func newCatalog(objs []*schemaObject) catalog {
	cat := catalog{}
	for _, o := range objs {
		if o.isView || o.virtual || o.root == 0 {
			continue
		}
		cat[o.root] = btree{table: o}
		for _, ix := range o.indexes {
			cat[ix.root] = btree{table: o, index: ix}
		}
	}
	return cat
}

// A programReads is what a compiled program reads from the tables of a
// catalog. Column names are lower-cased; a read of the rowid of a table with
// no INTEGER PRIMARY KEY is "rowid".
type programReads struct {
	rows  map[*schemaObject]bool            // tables whose b-trees (or indexes) it opens
	cols  map[*schemaObject]map[string]bool // columns it reads
	wide  map[*schemaObject]bool            // it uses an expression or partial index of the table
	count map[*schemaObject]bool            // it counts the table's rows (OP_Count)
	index map[*schemaObject]map[string]bool // the columns of cols it reads only as an index's
	bad   string                            // why the program reads something no policy allows, "" if nothing
}

// cursorUses are the opcodes whose P1 is a cursor that they position, read
// or compare: on an index, each of them can show its key columns, as values,
// as an order or as the answer to an equality test.
var cursorUses = map[string]bool{
	"Column": true, "Rowid": true, "RowData": true, "NullRow": true, "IfNullRow": true,
	"Next": true, "Prev": true, "Rewind": true, "Last": true, "SeekEnd": true, "IfEmpty": true, "IfSizeBetween": true,
	"SeekLT": true, "SeekLE": true, "SeekGE": true, "SeekGT": true, "SeekHit": true, "IfNoHope": true,
	"NoConflict": true, "NotFound": true, "Found": true, "SeekRowid": true, "NotExists": true,
	"DeferredSeek": true, "IdxRowid": true, "IdxLE": true, "IdxGT": true, "IdxLT": true, "IdxGE": true,
	"Offset": true, "FinishSeek": true, "Sequence": true,
}

// readsOf maps prog's cursors to the tables and indexes of cat (OpenRead and
// ReopenIdx: P1 cursor, P2 root page, P3 database) and its column reads to
// names. An index cursor that is positioned or read counts as reading every
// column the index holds: seeks and comparisons test them, and a scan returns
// rows in their order. An index cursor only counted counts its table.
//
// A program that opens a b-tree of another database (temp included), a
// b-tree that is not in cat (the schema table is root page 1), a b-tree
// chosen at run time, or a virtual table, reads what no policy allows, and
// bad says so.
func readsOf(prog []instr, cat catalog) programReads {
	// A program that opens no cursor (SELECT 1, a VALUES list) reads
	// nothing: its maps stay nil, which reads as empty.
	var r programReads
	fail := func(why string) {
		if r.bad == "" {
			r.bad = why
		}
	}
	var cursors map[int64][]btree
	for _, in := range prog {
		switch in.Opcode {
		case "OpenRead", "ReopenIdx":
			if cursors == nil {
				cursors = map[int64][]btree{}
			}
			switch {
			case in.P5&0x10 != 0: // OPFLAG_P2ISREG
				fail("opens a table chosen while it runs")
			case in.P3 != 0:
				fail("reads another database than the main one")
			case in.P2 == 1:
				fail("reads the schema table")
			default:
				bt, ok := cat[in.P2]
				if !ok {
					fail("reads a table or index the policy does not expose")
					continue
				}
				cursors[in.P1] = append(cursors[in.P1], bt)
				if r.rows == nil {
					r.rows = map[*schemaObject]bool{}
				}
				r.rows[bt.table] = true
			}
		case "VOpen", "VFilter", "VColumn", "VNext", "VInitIn", "VCheck":
			fail("reads a virtual table")
		case "Offset":
			// sqlite_offset(): where a record lies in its file, on any
			// cursor (a table's, an index's, an automatic index's). Where
			// records lie follows from the sizes of all the records
			// before them, hidden columns included.
			fail("uses sqlite_offset(), which shows where records lie in the file, and so the sizes of what the policy hides")
		}
	}
	if len(cursors) == 0 {
		return r
	}
	// cols is always made; wide, count and index only when they get an
	// entry (most programs have none).
	r.cols = map[*schemaObject]map[string]bool{}
	read := func(t *schemaObject, col string) {
		cols := r.cols[t]
		if cols == nil {
			cols = map[string]bool{}
			r.cols[t] = cols
		} else if lookup(cols, col) {
			return // read before: no folded copy to make
		}
		cols[fold(col)] = true
	}
	var used map[int64]bool
	for _, in := range prog {
		for _, bt := range cursors[in.P1] {
			t := bt.table
			switch {
			case in.Opcode == "Count":
				if r.count == nil {
					r.count = map[*schemaObject]bool{}
				}
				r.count[t] = true
			case bt.index != nil:
				if cursorUses[in.Opcode] {
					if used == nil {
						used = map[int64]bool{}
					}
					used[in.P1] = true
				}
			case in.Opcode == "Column":
				name, ok := t.storage[in.P2]
				if !ok {
					fail("reads a column that cannot be named")
					continue
				}
				read(t, name)
			case in.Opcode == "Rowid" || in.Opcode == "SeekRowid" || in.Opcode == "NotExists":
				read(t, t.rowidName())
			case in.Opcode == "RowData":
				// A row's whole record: every column.
				for _, c := range t.columns {
					read(t, c.name)
				}
				read(t, t.rowidName())
			}
		}
	}
	for cur := range used {
		for _, bt := range cursors[cur] {
			if bt.index == nil {
				continue
			}
			for _, c := range bt.index.columns {
				if !lookup(r.cols[bt.table], c) {
					if r.index == nil {
						r.index = map[*schemaObject]map[string]bool{}
					}
					if r.index[bt.table] == nil {
						r.index[bt.table] = map[string]bool{}
					}
					r.index[bt.table][fold(c)] = true
				}
				read(bt.table, c)
			}
			if bt.index.wide {
				if r.wide == nil {
					r.wide = map[*schemaObject]bool{}
				}
				r.wide[bt.table] = true
			}
		}
	}
	return r
}

// An allowance is what may be read of each table, keyed by the table.
type allowance map[*schemaObject]*tableAllowance

type tableAllowance struct {
	cols  map[string]bool // lower-cased column names, "rowid" included
	all   bool            // every column
	count bool            // its rows may be counted
}

// add merges b into a.
func (a allowance) add(b allowance) {
	for t, x := range b {
		y := a[t]
		if y == nil {
			y = &tableAllowance{cols: map[string]bool{}}
			a[t] = y
		}
		for c := range x.cols {
			y.cols[c] = true
		}
		y.all = y.all || x.all
		y.count = y.count || x.count
	}
}

// allowanceOf is what a view's own programs read: every table and column
// they touch, and the rowid of each table (a row's address, which a query
// through the view can only use to find the row again).
func allowanceOf(pr programReads) allowance {
	a := allowance{}
	for t := range pr.rows {
		a[t] = &tableAllowance{cols: map[string]bool{fold(t.rowidName()): true}}
	}
	for t, cols := range pr.cols {
		for c := range cols {
			a[t].cols[c] = true
		}
	}
	for t := range pr.wide {
		a[t].all = true
	}
	for t := range pr.count {
		a[t].count = true
	}
	return a
}

// excess returns a reason if pr reads anything a does not allow, else "".
// It names a table or column only when the model could have written it:
// for a table that a is missing altogether it says no more than that.
func (a allowance) excess(pr programReads) string {
	if pr.bad != "" {
		return pr.bad
	}
	for t := range pr.rows {
		if a[t] == nil {
			return "reads a table the policy does not expose"
		}
	}
	// Of the reasons of one kind, the least: the same statement gets the
	// same reason every time, whatever order Go's maps go in.
	why := ""
	least := func(reason string) {
		if why == "" || reason < why {
			why = reason
		}
	}
	hiddenIndex := func(t *schemaObject) string {
		return "would use an index of " + clipName(t.name) + " that holds columns the policy does not allow (its order shows them); an ORDER BY the columns you select may avoid it"
	}
	for t, cols := range pr.cols {
		x := a[t]
		for c := range cols {
			if !x.all && !x.cols[c] {
				if pr.index[t][c] {
					least(hiddenIndex(t))
				} else {
					least("reads " + clipName(t.name) + "." + clipName(c) + ", which the policy does not allow")
				}
			}
		}
	}
	for t := range pr.wide {
		x := a[t]
		if x.all {
			continue
		}
		for _, c := range t.columns {
			if !c.generated && !x.cols[fold(c.name)] {
				least(hiddenIndex(t))
			}
		}
	}
	if why != "" {
		return why
	}
	for t := range pr.count {
		if !a[t].count {
			least("counts the rows of " + clipName(t.name) + ", which the policy does not allow")
		}
	}
	return why
}
