package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// A schemaObject is one table or view as the privileged connection sees it.
type schemaObject struct {
	name    string // as the schema spells it
	isView  bool
	virtual bool   // a virtual table (CREATE VIRTUAL TABLE)
	sql     string // its CREATE statement, as sqlite_schema holds it
	root    int64  // the root page of a table's b-tree; 0 for views and virtual tables
	columns []schemaColumn
	foreign []ForeignKey
	broken  error // why its columns could not be read (a view over a missing table, a missing module)

	// For tables: how a compiled program names the columns (see layout.go).
	rowidAlias   string              // the INTEGER PRIMARY KEY column, "" if none
	withoutRowid bool                // a WITHOUT ROWID table
	primaryKey   []string            // its PRIMARY KEY columns
	storage      map[int64]string    // OP_Column's P2 on the table's cursor → column name
	derived      map[string][]string // a VIRTUAL generated column → the stored columns it is computed from
	indexes      []*schemaIndex
}

type schemaColumn struct {
	name, typ string
	hidden    bool // a virtual table's hidden column
	generated bool // a VIRTUAL generated column (no storage of its own)
	stored    bool // a STORED generated column: computed on write, from what its program does not show
}

// A schemaIndex is one index of a table.
type schemaIndex struct {
	name    string
	root    int64
	columns []string // the table columns it holds, keys then the row's key; "rowid" for the rowid
	wide    bool     // an expression or partial index: it may show any column of its table
	sql     string   // its CREATE INDEX statement; "" for one a constraint made
}

// A schema is what Open learns on the privileged connection.
type schema struct {
	objects map[string]*schemaObject // by lower-cased name; user tables and views only
	cookie  int64                    // the schema cookie (PRAGMA schema_version) when it was read
}

// A recorder is the authorizer of the privileged connection. The privileged
// connection is read-only too and is only ever given roconn's own SQL, never
// the model's; its authorizer allows reads, functions and the few pragmas
// roconn uses, and records the column reads of a statement being compiled.
type recorder struct {
	mu    sync.Mutex
	on    bool
	reads []read // as SQLite sent them
}

// A read is one SQLITE_READ: a column of a table or view, and the view (or
// common table expression) it was read through, "" at the top level.
type read struct{ table, column, context string }

func (r *recorder) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, context string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive, sqlite.AuthFunction:
		return sqlite.AuthorizerOK
	case sqlite.AuthRead:
		r.mu.Lock()
		if r.on {
			r.reads = append(r.reads, read{arg1, arg2, context})
		}
		r.mu.Unlock()
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		switch fold(arg1) {
		case "table_xinfo", "foreign_key_list", "index_xinfo", "index_list", "schema_version", "table_list":
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// start begins recording; stop ends it and returns what was read.
func (r *recorder) start() {
	r.mu.Lock()
	r.on, r.reads = true, nil
	r.mu.Unlock()
}

func (r *recorder) stop() []read {
	r.mu.Lock()
	defer r.mu.Unlock()
	reads := r.reads
	r.on, r.reads = false, nil
	return reads
}

// A privileged is the connection Open reads the schema through.
type privileged struct {
	pool *sql.DB
	rec  *recorder
}

func openPrivileged(dsn string) *privileged {
	rec := &recorder{}
	c := newConnector(dsn, 0, func(map[string]bool) (sqlite.AuthorizerFn, *authState) { return rec.authorize, nil })
	// One connection: the recorder is shared, and Open reads one thing at a time.
	return &privileged{pool: openPool(c, 1), rec: rec}
}

// readSchema lists the user tables and views with their columns and foreign
// keys.
func (p *privileged) readSchema(ctx context.Context) (*schema, error) {
	s := &schema{objects: map[string]*schemaObject{}}
	if err := p.pool.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&s.cookie); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	rows, err := p.pool.QueryContext(ctx, `SELECT type, name, coalesce(rootpage, 0), coalesce(sql, '') FROM sqlite_schema WHERE type IN ('table', 'view')`)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	var objs []*schemaObject
	for rows.Next() {
		var typ, name, text string
		var root int64
		if err := rows.Scan(&typ, &name, &root, &text); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read schema: %w", err)
		}
		lower := fold(name)
		if strings.HasPrefix(lower, "sqlite_") {
			continue
		}
		o := &schemaObject{name: name, isView: typ == "view", sql: text, root: root}
		o.virtual = typ == "table" && root == 0
		s.objects[lower] = o
		objs = append(objs, o)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	batch, err := p.readBatch(ctx)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	for _, o := range objs {
		if !batch.applyColumns(o) {
			if err := p.readColumns(ctx, o); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				o.broken, o.columns = err, nil
				continue
			}
		}
		if !o.isView {
			if err := p.resolveForeignKeys(ctx, o, s, batch.foreign[o.name]); err != nil {
				return nil, fmt.Errorf("read foreign keys of %q: %w", o.name, err)
			}
		}
		if !o.isView && !o.virtual {
			o.withoutRowid = batch.noRowid[o.name]
			if err := p.readLayout(ctx, o); err != nil {
				return nil, fmt.Errorf("read the layout of %q: %w", o.name, err)
			}
			batch.applyIndexes(o)
		}
	}
	return s, nil
}

func (p *privileged) readColumns(ctx context.Context, o *schemaObject) error {
	rows, err := p.pool.QueryContext(ctx, `SELECT name, type, hidden, pk FROM pragma_table_xinfo(?) ORDER BY cid`, o.name)
	if err != nil {
		return err
	}
	type pkCol struct {
		name string
		pos  int64
	}
	var pks []pkCol
	for rows.Next() {
		var c schemaColumn
		var hidden, pk int64
		if err := rows.Scan(&c.name, &c.typ, &hidden, &pk); err != nil {
			rows.Close()
			return err
		}
		c.hidden = hidden == 1
		c.generated, c.stored = hidden == 2, hidden == 3
		o.columns = append(o.columns, c)
		if pk > 0 {
			pks = append(pks, pkCol{c.name, pk})
		}
	}
	slices.SortFunc(pks, func(a, b pkCol) int { return int(a.pos - b.pos) })
	for _, k := range pks {
		o.primaryKey = append(o.primaryKey, k.name)
	}
	return closeRows(rows)
}

// resolveForeignKeys sets o's foreign keys from fks, as pragma_foreign_key_list
// lists them, with the schema's spelling of the table referred to and, for
// a REFERENCES clause without a column, its primary key.
func (p *privileged) resolveForeignKeys(ctx context.Context, o *schemaObject, s *schema, fks []batchForeign) error {
	for _, f := range fks {
		ref := f.table
		if t, ok := s.objects[fold(ref)]; ok {
			ref = t.name // the schema's spelling, not the REFERENCES clause's
		}
		col := f.to.String
		if !f.to.Valid { // REFERENCES t with no column: t's primary key
			var err error
			col, err = p.primaryKey(ctx, ref)
			if err != nil {
				return err
			}
		}
		o.foreign = append(o.foreign, ForeignKey{Column: f.from, RefTable: ref, RefColumn: col})
	}
	return nil
}

// primaryKey returns the first primary key column of table, or "rowid".
func (p *privileged) primaryKey(ctx context.Context, table string) (string, error) {
	names, err := p.names(ctx, `SELECT name FROM pragma_table_xinfo(?) WHERE pk > 0 ORDER BY pk`, table)
	if err != nil || len(names) == 0 {
		return "rowid", err
	}
	return names[0], nil
}

// viewReads compiles SELECT * FROM view and SELECT count(*) FROM view
// (without running them) and returns, for each, the reads the authorizer
// saw; "" as a column means the view reads a table's rows without naming a
// column.
//
// It also returns the view's compiled programs, of SELECT * FROM view and
// SELECT count(*) FROM view: the program check allows what they read.
func (p *privileged) viewReads(ctx context.Context, view string) ([][]read, [][]instr, error) {
	conn, err := p.pool.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	var reads [][]read
	var progs [][]instr
	for _, q := range []string{"SELECT * FROM ", "SELECT count(*) FROM "} {
		p.rec.start()
		prog, err := explain(ctx, conn, q+quoteIdent(view))
		r := p.rec.stop()
		if err != nil {
			return nil, nil, err
		}
		reads, progs = append(reads, r), append(progs, prog)
	}
	return reads, progs, nil
}

func (p *privileged) names(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := p.pool.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, s)
	}
	return out, closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// quoteIdent quotes name as an SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// moduleNames returns the virtual table modules registered on a connection,
// lower-cased. The connection hook calls it before installing the
// authorizer, which would deny the PRAGMA.
func moduleNames(ctx context.Context, dc sqlite.ExecQuerierContext) (map[string]bool, error) {
	rows, err := dc.QueryContext(ctx, "SELECT name FROM pragma_module_list", nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	mods := map[string]bool{}
	vals := make([]driver.Value, 1)
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			return mods, nil
		}
		if err != nil {
			return nil, err
		}
		if name, ok := vals[0].(string); ok {
			mods[fold(name)] = true
		}
	}
}
