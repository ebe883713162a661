// Package roconn is sqlbot's read-only connection to a SQLite database, and
// its security boundary.
//
// A DB runs SQL that a language model wrote, over data that may itself hold
// instructions, so it treats every statement as hostile. Its contract, which
// holds with no other check in front of it:
//
//   - Query never changes the database file, and never runs more than one
//     statement per call.
//   - Query never returns, and never puts in an error, a value of a column
//     the policy does not expose.
//   - Every statement is bounded in time, rows, columns, value size, result
//     size, memory and temporary storage (see Bounds below), and a statement
//     that was stopped is never retried.
//
// Several independent mechanisms each stop a write on their own. The file is
// opened with mode=ro. Every physical connection gets, before anything can
// use it, an authorizer that denies every action except SELECT, reads of
// allowed (table, column) pairs, recursive CTEs and an allowlist of functions.
// Each statement is compiled once, as EXPLAIN; its program is read back and
// refused if it would write; the same compiled statement is then switched
// out of EXPLAIN mode (sqlite3_stmt_explain) and run, so the program checked
// is the program that runs. A statement SQLite would compile again between
// the check and the run (after a schema change by the file's owner) is
// refused instead. The refusals are *Refusal values that say which layer
// stopped the statement and why, in a sentence fit for the model and the user.
//
// Reads are decided per column: an exposed table makes all of its columns
// readable; an exposed view makes readable the base columns it reads itself,
// as the authorizer reports them while SQLite compiles SELECT * FROM view. A
// column that an exposed view only filters on is therefore readable too: a
// view that hides a column must not mention it at all. Nor does a view's
// WHERE hide rows: access is per column, so every row of a base table that
// an exposed view reads is readable.
//
// # Bounds
//
// Time: a statement runs on its connection's own goroutine while the caller
// waits; at the time limit (which starts when the statement has a
// connection, not while it waits for one) it is interrupted, and if SQLite
// has not returned 50 ms later the caller gets its refusal anyway and the
// statement is abandoned: its connection is closed, never reused, when
// SQLite returns, and at most Concurrent abandoned statements run at once
// (beyond that, new statements wait for a connection). SQLite checks for an
// interrupt between the steps of a program, so what a step costs bounds what
// an abandoned statement can burn: LIKE, GLOB, instr, replace, trim, ltrim
// and rtrim, whose one call cost SQLite the product of their arguments'
// lengths (minutes on 1 MB values), are replaced on roconn's own driver by Go
// functions that give SQLite's results in linear time (see funcs.go), and
// SQLite's own limits are set to what an analyst's query needs (statement
// length, expression depth, compound terms, program length, function
// arguments, LIKE pattern length; see setLimits).
//
// Memory and disk: every connection keeps its temporary data (sorts,
// temporary tables and indexes) in memory, so nothing is written to a
// temporary file; SQLite's heap is bounded by its hard heap limit (Memory),
// and while statements run, a watch stops the one that holds a sort or
// temporary table longest when the heap is 3/4 full, before its neighbours'
// allocations can fail; a result is bounded in bytes (ResultBytes) as its
// rows arrive.
//
// WAL: a read-only reader of a WAL-mode database uses, and creates if they
// are missing, the -wal and -shm files beside it. Open refuses a database
// where that could leave files its owner cannot write (see checkWAL), and
// roconn's connections never checkpoint.
//
// # Process-wide effects
//
// Each DB has its own modernc.org/sqlite Driver, so its hooks and functions
// never reach other connections in the process. Two things are the
// process's, because SQLite has them once per process: roconn turns on
// SQLite's memory accounting when the package is initialized (SQLite reads
// it only before its first connection), and the hard heap limit is
// process-wide: Open lowers it to its Memory unless a lower one is in force,
// and it then bounds every SQLite connection in the process, roconn's or not.
package roconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A DB is a read-only, policy-restricted connection pool to one SQLite file.
// It is safe for concurrent use. Open one with Open and close it with Close.
type DB struct {
	pool    *pool       // the restricted connections model SQL runs on
	health  *privileged // a connection of its own for Ping
	lim     Limits
	rules   []string
	objects []Object
	byName  map[string]int // lower-cased name → index in objects

	// afterCheck, if set (by tests), runs between the check of a program
	// and its run.
	afterCheck func()
}

// An exposure is one object the policy exposes, matched to the schema.
type exposure struct {
	obj      *schemaObject
	about    string
	meanings map[string]string // lower-cased column → meaning
}

// Open opens the SQLite file at path read-only under policy p and limits lim.
//
// A nil p exposes every user table and view, with sqlite_* tables hidden; an
// object that cannot be read through the restricted connection (a view that
// calls a function outside the allowlist, or reads a missing table) is then
// left out. With a policy, an object that is missing from the database, a
// described column that does not exist, or an exposed object that cannot be
// read is an error naming it.
//
// A zero field of lim takes the policy's limit (rows, timeout) if it sets one,
// else its Default. A missing file is an error naming it; mode=ro never
// creates one. A WAL-mode database whose -wal and -shm files reading could
// create with the wrong owner, or could not read at all, is an error that
// says how to give sqlbot a copy (see checkWAL). Open reads the schema, and
// each exposed object's row count and three sample rows, once; Objects
// returns them. It fails closed: before returning, it proves on pooled
// connections that the authorizer is installed and denies a write, and that
// the check of the compiled program refuses a write the authorizer lets
// through, and that SQLite counts its memory (so that the heap limit, which
// it sets, holds), and returns an error if not.
func Open(ctx context.Context, path string, p *Policy, lim Limits) (*DB, error) {
	lim, err := effectiveLimits(lim, p)
	if err != nil {
		return nil, err
	}
	dsn, err := fileDSN(path)
	if err != nil {
		return nil, fmt.Errorf("roconn: open %s: %w", path, err)
	}
	if err := checkWAL(path); err != nil {
		return nil, fmt.Errorf("roconn: open %s: %w", path, err)
	}

	priv := openPrivileged(dsn)
	sch, err := priv.readSchema(ctx)
	if err != nil {
		priv.pool.Close()
		return nil, fmt.Errorf("roconn: open %s: %w", path, err)
	}
	exposed, err := resolvePolicy(p, sch)
	if err != nil {
		priv.pool.Close()
		return nil, err
	}
	acc, err := buildAccess(ctx, priv, sch, exposed)
	if err != nil {
		priv.pool.Close()
		return nil, err
	}

	// The privileged connection stays open for Ping, which runs roconn's
	// own statement on it; model SQL never reaches it.
	db := &DB{lim: lim, byName: map[string]int{}, health: priv}
	if p != nil {
		db.rules = slices.Clone(p.Rules)
	}
	c := newConnector(dsn, lim.ValueBytes, func(modules map[string]bool) (sqlite.AuthorizerFn, *authState) {
		st := &authState{access: acc, modules: modules}
		return st.authorize, st
	})
	if err := c.restrict(); err != nil {
		priv.pool.Close()
		return nil, fmt.Errorf("roconn: open %s: %w", path, err)
	}
	db.pool = newPool(lim.Concurrent, lim.Concurrent, c.open)
	if err := db.proveReadOnly(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("roconn: open %s: %w", path, err)
	}
	if err := limitHeap(lim.Memory); err != nil {
		db.Close()
		return nil, fmt.Errorf("roconn: open %s: %w", path, err)
	}
	if err := db.describe(ctx, exposed, p == nil); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// effectiveLimits fills the zero fields of lim from the policy, then from
// the defaults, and rejects negative ones.
func effectiveLimits(lim Limits, p *Policy) (Limits, error) {
	if lim.Rows < 0 || lim.Columns < 0 || lim.ValueBytes < 0 || lim.ResultBytes < 0 || lim.Timeout < 0 || lim.Concurrent < 0 || lim.Memory < 0 {
		return Limits{}, fmt.Errorf("roconn: limits must not be negative: %+v", lim)
	}
	if p != nil {
		if lim.Rows == 0 {
			lim.Rows = p.Limits.Rows
		}
		if lim.Timeout == 0 {
			lim.Timeout = p.Limits.Timeout
		}
	}
	if lim.Rows == 0 {
		lim.Rows = DefaultRows
	}
	if lim.Columns == 0 {
		lim.Columns = DefaultColumns
	}
	if lim.ValueBytes == 0 {
		lim.ValueBytes = DefaultValueBytes
	}
	if lim.ResultBytes == 0 {
		lim.ResultBytes = DefaultResultBytes
	}
	if lim.Timeout == 0 {
		lim.Timeout = DefaultTimeout
	}
	if lim.Concurrent == 0 {
		lim.Concurrent = DefaultConcurrent
	}
	if lim.Memory == 0 {
		lim.Memory = DefaultMemory
	}
	return lim, nil
}

// resolvePolicy matches the policy to the schema. A nil policy exposes every
// user table and view.
func resolvePolicy(p *Policy, sch *schema) ([]exposure, error) {
	var out []exposure
	if p == nil {
		for _, o := range sch.objects {
			if o.broken == nil {
				out = append(out, exposure{obj: o})
			}
		}
		return out, nil
	}
	seen := map[*schemaObject]bool{}
	for _, e := range p.Expose {
		o, ok := sch.objects[fold(e.Name)]
		if !ok {
			return nil, fmt.Errorf("roconn: policy: table %q is not in the database", e.Name)
		}
		if seen[o] {
			return nil, fmt.Errorf("roconn: policy: %q is exposed twice", e.Name)
		}
		seen[o] = true
		if o.broken != nil {
			return nil, fmt.Errorf("roconn: policy: %s %q cannot be read: %w", kindOf(o), o.name, o.broken)
		}
		meanings := map[string]string{}
		for col, meaning := range e.Columns {
			if !slices.ContainsFunc(o.columns, func(c schemaColumn) bool { return fold(c.name) == fold(col) }) {
				return nil, fmt.Errorf("roconn: policy: %s %q has no column %q", kindOf(o), o.name, col)
			}
			meanings[fold(col)] = meaning
		}
		out = append(out, exposure{obj: o, about: e.About, meanings: meanings})
	}
	return out, nil
}

func kindOf(o *schemaObject) string {
	if o.isView {
		return "view"
	}
	return "table"
}

// buildAccess computes the allowed (table, column) pairs: every column of an
// exposed table, and every base column an exposed view reads.
//
// SQLite asks to read column "" both for a FROM item none of whose columns
// is used and for a column really named "". So a table with a column named ""
// gets the "" key only when the table itself is exposed; a view over such a
// table that counts its rows cannot be read, which Open reports.
func buildAccess(ctx context.Context, priv *privileged, sch *schema, exposed []exposure) (*access, error) {
	acc := &access{pairs: map[string]map[string]bool{}, tables: make(map[string]bool, len(sch.objects))}
	emptyColumn := map[string]bool{} // tables with a column named ""
	for name, o := range sch.objects {
		acc.tables[name] = true
		if slices.ContainsFunc(o.columns, func(c schemaColumn) bool { return c.name == "" }) {
			emptyColumn[name] = true
		}
	}
	whole := map[string]bool{} // exposed tables, all of whose columns may be read
	for _, e := range exposed {
		if !e.obj.isView {
			whole[fold(e.obj.name)] = true
		}
	}
	allow := func(table, column string) {
		t, c := fold(table), fold(column)
		if strings.HasPrefix(t, "sqlite_") || strings.HasPrefix(t, "pragma_") {
			return // schema tables stay hidden, whatever a view reads
		}
		ambiguous := !whole[t] && emptyColumn[t]
		if c == "" && ambiguous {
			return
		}
		if acc.pairs[t] == nil {
			acc.pairs[t] = map[string]bool{}
		}
		acc.pairs[t][c] = true
		if !ambiguous {
			acc.pairs[t][""] = true
		}
	}
	for _, e := range exposed {
		for _, c := range e.obj.columns {
			allow(e.obj.name, c.name)
		}
		if !e.obj.isView {
			allow(e.obj.name, "rowid") // SQLite reports rowid reads as ROWID unless a column aliases it
			continue
		}
		reads, err := priv.viewReads(ctx, e.obj.name)
		if err != nil {
			return nil, fmt.Errorf("roconn: policy: view %q: %w", e.obj.name, err)
		}
		for _, r := range reads {
			allow(r[0], r[1])
		}
	}
	return acc, nil
}

// proveReadOnly shows, on connections from the pool, that the file is open
// read-only (Connect checks it), that the authorizer is installed and denies a
// write on its own, and that Query's check of the compiled program refuses a
// write on its own: SQLite asks the authorizer nothing while it compiles
// VACUUM, so only that check can stop it before it runs.
func (db *DB) proveReadOnly(ctx context.Context) error {
	if err := db.probeAuthorizer(ctx, "CREATE TABLE roconn_probe(x)"); err != nil {
		return err
	}
	return db.probeRefused(ctx, "VACUUM", LayerReadOnly)
}

// probeRefused requires Query to refuse probe at layer.
func (db *DB) probeRefused(ctx context.Context, probe string, layer Layer) error {
	var r *Refusal
	if _, err := db.Query(ctx, probe); !errors.As(err, &r) || r.Layer != layer {
		return fmt.Errorf("%s was not refused by the %s layer (%v); refusing to serve", probe, layer, err)
	}
	return nil
}

// probeAuthorizer compiles probe straight on a pooled connection, with no
// check of the program in front, and requires the authorizer to deny it.
// The probe is never run.
func (db *DB) probeAuthorizer(ctx context.Context, probe string) error {
	j, err := db.pool.start(ctx, func(pc *physConn) (*Result, error) {
		pc.auth.reset()
		st, err := prepare(pc, probe)
		if err == nil {
			sqlite3.Xsqlite3_finalize(pc.tls, st)
		}
		if err == nil || pc.auth.denial() == "" {
			return nil, fmt.Errorf("the authorizer did not deny a write (%v); refusing to serve", err)
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	<-j.done
	return j.err
}

// describe fills db.objects, reading row counts and samples through Query,
// the same restricted path model SQL takes.
func (db *DB) describe(ctx context.Context, exposed []exposure, lenient bool) error {
	shown := make(map[string]bool, len(exposed))
	for _, e := range exposed {
		shown[fold(e.obj.name)] = true
	}
	for _, e := range exposed {
		o := Object{Name: e.obj.name, About: e.about, IsView: e.obj.isView}
		for _, fk := range e.obj.foreign {
			if shown[fold(fk.RefTable)] { // a key into a hidden table would reveal that it exists
				o.Foreign = append(o.Foreign, fk)
			}
		}
		for _, c := range e.obj.columns {
			if !c.hidden {
				o.Columns = append(o.Columns, Column{Name: c.name, Type: c.typ, Meaning: e.meanings[fold(c.name)]})
			}
		}
		var err error
		if o.RowCount, err = db.count(ctx, o.Name); err == nil {
			o.Sample, err = db.sample(ctx, o.Name)
		}
		switch {
		case err == nil:
		case stoppedByLimit(err):
			// Too big or too slow to describe, but readable: leave it undescribed.
		case lenient && ctx.Err() == nil:
			continue // no policy: what cannot be read is simply not offered
		default:
			return fmt.Errorf("roconn: policy: %s %q cannot be read: %w", kindOf(e.obj), o.Name, err)
		}
		db.objects = append(db.objects, o)
	}
	slices.SortFunc(db.objects, func(a, b Object) int { return strings.Compare(a.Name, b.Name) })
	for i, o := range db.objects {
		db.byName[fold(o.Name)] = i
	}
	return nil
}

// count returns the number of rows of name, or -1 if counting them was
// stopped by a limit.
func (db *DB) count(ctx context.Context, name string) (int64, error) {
	res, err := db.Query(ctx, "SELECT count(*) FROM "+quoteIdent(name))
	if err != nil {
		if stoppedByLimit(err) {
			return -1, nil
		}
		return -1, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return -1, fmt.Errorf("count %s: unexpected result", name)
	}
	n, _ := res.Rows[0][0].(int64)
	return n, nil
}

// stoppedByLimit reports whether err is a refusal by the time or size limit:
// what was asked for is readable, only too slow or too big.
func stoppedByLimit(err error) bool {
	var r *Refusal
	return errors.As(err, &r) && (r.Layer == LayerTimeout || r.Layer == LayerLimit)
}

// sample returns up to three rows of name.
func (db *DB) sample(ctx context.Context, name string) ([][]any, error) {
	res, err := db.Query(ctx, "SELECT * FROM "+quoteIdent(name)+" LIMIT 3")
	if err != nil && !errors.Is(err, ErrRowLimit) {
		return nil, err
	}
	return res.Rows, nil
}

// Objects returns the exposed tables and views, sorted by name, as computed
// at Open. The slice is the caller's; the rows inside it are shared.
func (db *DB) Objects() []Object { return slices.Clone(db.objects) }

// Object returns the exposed object called name, ignoring ASCII case, and
// whether there is one.
func (db *DB) Object(name string) (Object, bool) {
	i, ok := db.byName[fold(name)]
	if !ok {
		return Object{}, false
	}
	return db.objects[i], true
}

// Rules returns the policy's house rules, in file order.
func (db *DB) Rules() []string { return slices.Clone(db.rules) }

// Limits returns the limits in force, defaults filled in.
func (db *DB) Limits() Limits { return db.lim }

// Ping reports whether the database file can be read now, within the
// statement time limit. It runs on a connection of its own, so it never
// waits behind statements, however many are running.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, db.lim.Timeout)
	defer cancel()
	var n int64
	if err := db.health.pool.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("roconn: ping: %w", err)
	}
	return nil
}

// Close closes the connections. Statements running are interrupted; their
// callers get a refusal or an error, and their connections close as they
// end. Query after Close returns an error.
func (db *DB) Close() error {
	db.pool.close()
	if err := db.health.pool.Close(); err != nil {
		return fmt.Errorf("roconn: close: %w", err)
	}
	return nil
}
