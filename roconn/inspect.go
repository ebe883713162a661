package roconn

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sqlbot/roconn/draft"
)

// InspectOptions bound what Inspect reads. A zero field takes its default.
type InspectOptions struct {
	// Rows is how many rows of each table or view are read for the samples
	// (default 5000). A larger table is read in ten windows spread over its
	// rowids, so the samples are not all from its first rows.
	Rows int
	// Samples is how many distinct values are kept per column (default 200).
	Samples int
	// ValueChars is how much of a text or blob value is read (default 1024
	// characters or bytes); a longer value is cut.
	ValueChars int
	// Timeout bounds each statement (default DefaultTimeout). A count that
	// runs out of time leaves the row count unknown; a read that does keeps
	// the rows it had.
	Timeout time.Duration
}

// Defaults for InspectOptions.
const (
	DefaultInspectRows       = 5000
	DefaultInspectSamples    = 200
	DefaultInspectValueChars = 1024
)

// errStopped is what inspection's statements return when their own time
// limit, not the caller's context, ended them.
var errStopped = errors.New("stopped by the time limit")

// Inspect reads what a policy draft needs from the SQLite file at path: its
// tables and views, their columns with declared types and primary keys,
// foreign keys, the base columns each view reads, row counts, and a bounded
// sample of each column's values.
//
// It reads through roconn's privileged connection: opened read-only (mode=ro,
// proved at connect), with its own driver, and only ever given the
// statements of this file, which quote every name; never the model's SQL.
// The result holds private values (that is how the draft recognises them):
// it is for package draft, which never writes a hidden column's values out.
// A table or view that cannot be read (a view over a missing table), and a
// virtual table, which no policy can expose, are left out and listed in
// Skipped. Each statement is bounded by opt.Timeout, which
// interrupts SQLite; the reading of one object stops at opt.Rows rows.
func Inspect(ctx context.Context, path string, opt InspectOptions) (*draft.Schema, error) {
	if opt.Rows <= 0 {
		opt.Rows = DefaultInspectRows
	}
	if opt.Samples <= 0 {
		opt.Samples = DefaultInspectSamples
	}
	if opt.ValueChars <= 0 {
		opt.ValueChars = DefaultInspectValueChars
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	dsn, err := fileDSN(path)
	if err != nil {
		return nil, fmt.Errorf("roconn: inspect %s: %w", path, err)
	}
	priv := openPrivileged(dsn)
	defer priv.pool.Close()
	sctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	sch, err := priv.readSchema(sctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("roconn: inspect %s: %w", path, err)
	}
	names := make([]string, 0, len(sch.objects))
	for name := range sch.objects {
		names = append(names, name)
	}
	slices.Sort(names)
	out := &draft.Schema{Source: filepath.Base(path)}
	in := &inspector{priv: priv, opt: opt}
	for _, name := range names {
		o := sch.objects[name]
		if o.broken != nil {
			out.Skipped = append(out.Skipped, draft.Skipped{Name: o.name, Why: "it cannot be read: " + o.broken.Error()})
			continue
		}
		if o.virtual {
			out.Skipped = append(out.Skipped, draft.Skipped{Name: o.name, Why: "it is a virtual table, which a policy cannot expose"})
			continue
		}
		obj, err := in.object(ctx, o, sch)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("roconn: inspect %s: %w", path, ctx.Err())
			}
			out.Skipped = append(out.Skipped, draft.Skipped{Name: o.name, Why: "it cannot be read: " + err.Error()})
			continue
		}
		out.Objects = append(out.Objects, *obj)
	}
	return out, nil
}

type inspector struct {
	priv *privileged
	opt  InspectOptions
}

// object reads one table or view.
func (in *inspector) object(ctx context.Context, o *schemaObject, sch *schema) (*draft.Object, error) {
	obj := &draft.Object{Name: o.name, View: o.isView, Rows: -1}
	var cols []string
	for _, c := range o.columns {
		if c.hidden {
			continue // a virtual table's hidden column
		}
		obj.Columns = append(obj.Columns, draft.Column{Name: c.name, Type: c.typ, Stored: c.stored})
		cols = append(cols, c.name)
	}
	for _, fk := range o.foreign {
		obj.Foreign = append(obj.Foreign, draft.ForeignKey{Column: fk.Column, RefTable: fk.RefTable, RefColumn: fk.RefColumn})
	}
	if !o.isView {
		pk, err := in.priv.names(ctx, `SELECT name FROM pragma_table_xinfo(?) WHERE pk > 0`, o.name)
		if err != nil {
			return nil, fmt.Errorf("read primary key: %w", err)
		}
		for i := range obj.Columns {
			obj.Columns[i].PrimaryKey = slices.Contains(pk, obj.Columns[i].Name)
			obj.Columns[i].From = slices.Clone(o.derived[fold(obj.Columns[i].Name)])
		}
		// What every read of the table carries, which a policy cannot hide
		// (see hiddenColumns).
		if o.rowidAlias != "" {
			obj.Keys = append(obj.Keys, o.rowidAlias)
		}
		if o.withoutRowid {
			obj.Keys = append(obj.Keys, o.primaryKey...)
		}
	} else {
		reads, _, err := in.priv.viewReads(ctx, o.name)
		if err != nil {
			return nil, fmt.Errorf("read view: %w", err)
		}
		for _, r := range slices.Concat(reads...) {
			if r.column == "" || strings.HasPrefix(fold(r.table), "sqlite_") {
				continue
			}
			if t, ok := sch.objects[fold(r.table)]; !ok || t.isView {
				continue // the view itself, or a view it reads: only base columns count
			}
			ref := draft.ColumnRef{Table: r.table, Column: r.column}
			if !slices.Contains(obj.Reads, ref) {
				obj.Reads = append(obj.Reads, ref)
			}
		}
	}
	err := in.query(ctx, "SELECT count(*) FROM "+quoteIdent(o.name), nil, func(v []any) {
		if n, ok := v[0].(int64); ok {
			obj.Rows = n
		}
	})
	if err != nil && !errors.Is(err, errStopped) {
		return nil, fmt.Errorf("count rows: %w", err)
	}
	if len(cols) == 0 {
		return obj, nil
	}
	if err := in.sample(ctx, o, obj, cols); err != nil {
		return nil, fmt.Errorf("sample values: %w", err)
	}
	return obj, nil
}

// sample reads up to opt.Rows rows of o: all of them from the start, or, for
// a larger rowid table, ten windows spread from its smallest rowid to its
// largest.
func (in *inspector) sample(ctx context.Context, o *schemaObject, obj *draft.Object, cols []string) error {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		q := quoteIdent(c)
		exprs[i] = fmt.Sprintf(`CASE WHEN typeof(%s) IN ('text', 'blob') THEN substr(%s, 1, %d) ELSE %s END`, q, q, in.opt.ValueChars, q)
	}
	sel := "SELECT " + strings.Join(exprs, ", ") + " FROM " + quoteIdent(o.name)
	acc := newAccumulator(len(cols), in.opt.Samples)

	windows := 1
	var lo, hi int64
	rowid := ""
	if !o.isView && obj.Rows > int64(in.opt.Rows) {
		rowid = rowidName(cols)
	}
	if rowid != "" {
		var got bool
		err := in.query(ctx, fmt.Sprintf("SELECT min(%s), max(%s) FROM %s", rowid, rowid, quoteIdent(o.name)), nil, func(v []any) {
			a, ok1 := v[0].(int64)
			b, ok2 := v[1].(int64)
			lo, hi, got = a, b, ok1 && ok2
		})
		if err == nil && got && hi > lo {
			windows = 10
		}
		// A WITHOUT ROWID table has no rowid: read it from the start.
	}
	per := in.opt.Rows / windows
	for w := 0; w < windows; w++ {
		acc.window(w, windows)
		var err error
		if windows == 1 {
			err = in.query(ctx, sel+" LIMIT ?", []any{in.opt.Rows}, acc.add)
		} else {
			start := lo + int64(float64(hi-lo+1)*float64(w)/float64(windows))
			err = in.query(ctx, sel+" WHERE "+rowid+" >= ? ORDER BY "+rowid+" LIMIT ?", []any{start, per}, acc.add)
		}
		if errors.Is(err, errStopped) {
			obj.Partial = true
			break
		}
		if err != nil {
			return err
		}
	}
	obj.Scanned = acc.rows
	for i := range obj.Columns {
		obj.Columns[i].NonNull = acc.nonNull[i]
		obj.Columns[i].Distinct = len(acc.seen[i])
		obj.Columns[i].Samples = acc.samples[i]
	}
	return nil
}

// rowidName returns a name for the rowid that no column of the table
// shadows, or "" if all three are taken.
func rowidName(cols []string) string {
	for _, n := range []string{"rowid", "_rowid_", "oid"} {
		if !slices.ContainsFunc(cols, func(c string) bool { return fold(c) == n }) {
			return n
		}
	}
	return ""
}

// An accumulator gathers, column by column, the non-null count, the distinct
// values (as 64-bit hashes, so memory stays bounded by the rows read) and up
// to max distinct samples, spread over the windows read.
type accumulator struct {
	rows    int
	nonNull []int
	seen    []map[uint64]struct{}
	samples [][]any
	max     int
	quota   int // samples allowed so far: rises with each window
}

func newAccumulator(cols, max int) *accumulator {
	a := &accumulator{nonNull: make([]int, cols), seen: make([]map[uint64]struct{}, cols), samples: make([][]any, cols), max: max}
	for i := range a.seen {
		a.seen[i] = map[uint64]struct{}{}
	}
	return a
}

// window starts window w of n: each window may add its share of samples.
func (a *accumulator) window(w, n int) { a.quota = a.max * (w + 1) / n }

func (a *accumulator) add(vals []any) {
	a.rows++
	h := fnv.New64a()
	for i, v := range vals {
		v = sampleValue(v)
		if v == nil {
			continue
		}
		a.nonNull[i]++
		h.Reset()
		switch x := v.(type) {
		case int64:
			h.Write([]byte{'i'})
			h.Write(strconv.AppendInt(nil, x, 10))
		case float64:
			h.Write([]byte{'r'})
			h.Write(strconv.AppendFloat(nil, x, 'g', -1, 64))
		case string:
			h.Write([]byte{'t'})
			h.Write([]byte(x))
		case []byte:
			h.Write([]byte{'b'})
			h.Write(x)
		}
		k := h.Sum64()
		if _, ok := a.seen[i][k]; ok {
			continue
		}
		a.seen[i][k] = struct{}{}
		if len(a.samples[i]) < a.quota {
			a.samples[i] = append(a.samples[i], v)
		}
	}
}

// sampleValue converts a driver value to int64, float64, string, or []byte
// for a blob that is not UTF-8 (a UTF-8 blob is given as its text); nil
// stays nil.
func sampleValue(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return slices.Clone(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time: // not expected: the CASE expressions have no declared type
		return x.Format("2006-01-02 15:04:05")
	}
	return fmt.Sprint(v)
}

// query runs one of inspection's own statements on the privileged
// connection, calling each for every row, bounded by opt.Timeout: past it,
// SQLite is interrupted and query returns an error wrapping errStopped.
func (in *inspector) query(ctx context.Context, query string, args []any, each func([]any)) error {
	qctx, cancel := context.WithTimeout(ctx, in.opt.Timeout)
	defer cancel()
	err := in.run(qctx, query, args, each)
	if err != nil && ctx.Err() == nil && qctx.Err() != nil {
		return fmt.Errorf("%w after %v", errStopped, in.opt.Timeout)
	}
	return err
}

func (in *inspector) run(ctx context.Context, query string, args []any, each func([]any)) error {
	conn, err := in.priv.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var pc *physConn
	if err := conn.Raw(func(dc any) error {
		p, ok := dc.(*physConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		pc = p
		return nil
	}); err != nil {
		return err
	}
	stop := pc.watch(ctx) // the driver alone stops only the wait for the first row
	defer stop()
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		each(vals)
	}
	return closeRows(rows)
}
