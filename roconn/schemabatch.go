package roconn

import (
	"context"
	"database/sql"
	"slices"
)

// A schemaBatch is what readSchema reads of every object at once, in a few
// statements, instead of a few statements per object (which on a schema of
// a thousand tables cost seconds: pragma_table_list and a join with
// sqlite_schema scan the whole schema each time). Each map is by the
// object's name as sqlite_schema spells it. Views' columns are read per
// view (a broken view would make the one statement fail); so are tables'
// when the statement for all of them fails (a virtual table whose module is
// missing), columns then being nil.
type schemaBatch struct {
	columns map[string][]batchColumn
	foreign map[string][]batchForeign
	noRowid map[string]bool
	indexes map[string][]*batchIndex
}

type batchColumn struct {
	col schemaColumn
	pk  int64
}

type batchForeign struct {
	table, from string
	to          sql.NullString
}

// A batchIndex is one index as read, before its columns are named (which
// needs its table's rowid column, known after readLayout).
type batchIndex struct {
	ix   *schemaIndex
	cids []int64
	cols []string
}

// readBatch reads the schemaBatch. Only an error reading a part that
// cannot fail on a broken object (tables' rowids, foreign keys, indexes)
// is returned.
func (p *privileged) readBatch(ctx context.Context) (*schemaBatch, error) {
	b := &schemaBatch{}
	cols := map[string][]batchColumn{}
	err := p.each(ctx, `SELECT m.name, x.name, x.type, x.hidden, x.pk FROM sqlite_schema m JOIN pragma_table_xinfo(m.name) x
		WHERE m.type = 'table' ORDER BY m.name, x.cid`, func(rows *sql.Rows) error {
		var obj string
		var c batchColumn
		var hidden int64
		if err := rows.Scan(&obj, &c.col.name, &c.col.typ, &hidden, &c.pk); err != nil {
			return err
		}
		c.col.hidden, c.col.generated, c.col.stored = hidden == 1, hidden == 2, hidden == 3
		cols[obj] = append(cols[obj], c)
		return nil
	})
	if err == nil {
		b.columns = cols
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	b.foreign = map[string][]batchForeign{}
	if err := p.each(ctx, `SELECT m.name, f."table", f."from", f."to" FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`, func(rows *sql.Rows) error {
		var obj string
		var f batchForeign
		if err := rows.Scan(&obj, &f.table, &f.from, &f.to); err != nil {
			return err
		}
		b.foreign[obj] = append(b.foreign[obj], f)
		return nil
	}); err != nil {
		return nil, err
	}

	b.noRowid = map[string]bool{}
	if err := p.each(ctx, `SELECT name, wr FROM pragma_table_list WHERE schema = 'main'`, func(rows *sql.Rows) error {
		var name string
		var wr int64
		if err := rows.Scan(&name, &wr); err != nil {
			return err
		}
		b.noRowid[name] = wr == 1
		return nil
	}); err != nil {
		return nil, err
	}

	type stored struct {
		root int64
		sql  string
	}
	schemaIx := map[string]stored{}
	if err := p.each(ctx, `SELECT name, coalesce(rootpage, 0), coalesce(sql, '') FROM sqlite_schema WHERE type = 'index'`, func(rows *sql.Rows) error {
		var name string
		var s stored
		if err := rows.Scan(&name, &s.root, &s.sql); err != nil {
			return err
		}
		schemaIx[name] = s
		return nil
	}); err != nil {
		return nil, err
	}
	byName := map[string]*batchIndex{}
	b.indexes = map[string][]*batchIndex{}
	if err := p.each(ctx, `SELECT m.name, l.name, l.partial FROM sqlite_schema m JOIN pragma_index_list(m.name) l
		WHERE m.type = 'table' ORDER BY m.name, l.seq`, func(rows *sql.Rows) error {
		var obj, name string
		var partial int64
		if err := rows.Scan(&obj, &name, &partial); err != nil {
			return err
		}
		s, ok := schemaIx[name]
		if !ok { // as the join with sqlite_schema did: an index it does not hold is not read
			return nil
		}
		bi := &batchIndex{ix: &schemaIndex{name: name, root: s.root, sql: s.sql, wide: partial == 1}}
		byName[name] = bi
		b.indexes[obj] = append(b.indexes[obj], bi)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := p.each(ctx, `SELECT s.name, x.cid, coalesce(x.name, '') FROM sqlite_schema s JOIN pragma_index_xinfo(s.name) x
		WHERE s.type = 'index' ORDER BY s.name, x.seqno`, func(rows *sql.Rows) error {
		var name, col string
		var cid int64
		if err := rows.Scan(&name, &cid, &col); err != nil {
			return err
		}
		if bi := byName[name]; bi != nil {
			bi.cids, bi.cols = append(bi.cids, cid), append(bi.cols, col)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return b, nil
}

// applyColumns sets o's columns and primary key from the batch, and reports
// whether it held them.
func (b *schemaBatch) applyColumns(o *schemaObject) bool {
	if b.columns == nil {
		return false
	}
	cols, ok := b.columns[o.name]
	if !ok || len(cols) == 0 {
		return false
	}
	type pkCol struct {
		name string
		pos  int64
	}
	var pks []pkCol
	for _, c := range cols {
		o.columns = append(o.columns, c.col)
		if c.pk > 0 {
			pks = append(pks, pkCol{c.col.name, c.pk})
		}
	}
	slices.SortFunc(pks, func(a, b pkCol) int { return int(a.pos - b.pos) })
	for _, k := range pks {
		o.primaryKey = append(o.primaryKey, k.name)
	}
	return true
}

// applyIndexes sets o's indexes from the batch, naming their columns; o's
// rowid column must be known (readLayout).
func (b *schemaBatch) applyIndexes(o *schemaObject) {
	for _, bi := range b.indexes[o.name] {
		ix := bi.ix
		for i, cid := range bi.cids {
			switch {
			case cid == -1:
				ix.columns = append(ix.columns, o.rowidName())
			case cid < -1:
				ix.wide = true // an expression
			default:
				ix.columns = append(ix.columns, bi.cols[i])
			}
		}
		o.indexes = append(o.indexes, ix)
	}
}

// each runs query on the privileged pool and calls f for every row.
func (p *privileged) each(ctx context.Context, query string, f func(*sql.Rows) error) error {
	rows, err := p.pool.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := f(rows); err != nil {
			rows.Close()
			return err
		}
	}
	return closeRows(rows)
}
