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
//   - Stream, which gives the rows to its caller as they are read, holds
//     to the same contract, row by row: every row it gives comes from the
//     program that was checked.
//   - Every statement is bounded in time, rows, columns, value size, result
//     size, memory and temporary storage (see Bounds below), and a statement
//     that was stopped is never retried.
//
// Several independent mechanisms each stop a write on their own. The file is
// opened with mode=ro. Every physical connection gets, before anything can
// use it, an authorizer that denies every action except SELECT, reads the
// policy allows, recursive CTEs and an allowlist of functions. Each statement
// is compiled once; its program is read back, from the compiled statement
// itself, and refused if it would write or read what the policy does not
// allow (below); the same compiled statement is then run, so the program
// checked is the program that runs. A statement SQLite would compile again
// between the check and the run (after a schema change by the file's
// owner) is refused instead, before its first row, by two independent
// records: the authorizer, sealed while the checked program runs, denies
// and remembers any compile, and the statement's re-prepare count is read
// before each row. The
// refusals are *Refusal values that say which layer
// stopped the statement and why, in a sentence fit for the model and the user.
//
// Two independent checks each stop, on their own, a read of what the policy
// does not expose. An exposed table makes its columns readable, less those
// its hide: lists; an exposed view is the only door to what it wraps.
//
//   - The authorizer (Layer "authorizer") goes by the view SQLite says each
//     column read is made through: at the top level only the visible
//     columns of exposed objects may be read, inside a view only what that
//     view reads itself. A view that averages pay per department does not
//     make salaries readable, one that keeps one region's rows does not
//     expose the others, a view over a view the policy does not expose
//     widens nothing, and a table that is not exposed cannot be counted.
//     Where SQLite's name resolution does not ask the authorizer (the
//     columns USING and NATURAL joins compare, INDEXED BY, a common table
//     expression that takes a view's name), the authorizer judges the
//     statement's text.
//   - The check of the compiled program (Layer "readonly") compiles the
//     statement a second time on an in-memory copy of the schema of what
//     the policy exposes, where it must compile, read no hidden column and
//     return as many columns; and it maps every cursor of the real program
//     to a table or index and every column it reads to a name, and allows
//     only what the objects the statement goes through allow. An index
//     counts as read whole, because a scan of it returns rows in the order
//     of all its columns.
//
// Reads are decided per column and per door, so a refusal may name a
// hidden column (never its values).
//
// # Bounds
//
// Time: a statement runs on its connection's own goroutine while the caller
// waits; at the time limit (which starts when the statement has a
// connection, not while it waits for one) it is stopped: interrupted, and
// interrupted again every millisecond until it ends (SQLite forgets an
// interrupt that arrives while the statement is being compiled or checked,
// before its program starts), and its context, which the check's shadow
// compile runs under and which is looked at before the program starts,
// ends. If SQLite has not returned 25 ms later the caller gets its refusal
// anyway and the statement is abandoned: its connection is closed, never reused, when
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
// Memory and disk: what a sort or a temporary table or index cannot keep in
// the connection's page cache goes to SQLite's temporary files, which hold at
// most TempBytes per connection (see tempfiles.go): the write past it fails
// and the statement is refused by the limit layer. SQLite's heap is bounded
// by its hard heap limit (Memory), and while statements run, a watch stops the one that holds a sort or
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
// it only before its first connection), the hard heap limit is
// process-wide: Open lowers it to its Memory unless a lower one is in force,
// and it then bounds every SQLite connection in the process, roconn's or
// not; and roconn registers its VFS for temporary files (only roconn's own
// connections name it).
package roconn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A DB is a read-only, policy-restricted connection pool to one SQLite file.
// It is safe for concurrent use. Open one with Open and close it with Close.
type DB struct {
	pool    *pool         // the restricted connections model SQL runs on
	check   *programCheck // the check of compiled programs' reads
	health  *privileged   // a connection of its own for Ping
	lim     Limits
	rules   []string
	objects []Object
	byName  map[string]int // lower-cased name → index in objects
	stats   stats          // row counts and samples read after Open (see Describe)

	// hooks are what tests set from the start of Open (none in Open).
	hooks testHooks

	// at, if set (by tests), is called as a statement reaches each phase
	// of Query: "compiled", "checked" (its program passed the check) and
	// "run" (about to take its first step).
	at func(phase string)
}

// An exposure is one object the policy exposes, matched to the schema.
type exposure struct {
	obj      *schemaObject
	about    string
	meanings map[string]string // lower-cased column → meaning
	hidden   map[string]bool   // lower-cased names of the columns hide: lists
}

// Open opens the SQLite file at path read-only under policy p and limits lim.
//
// A nil p, or one with All set, exposes every user table and view, with
// sqlite_* tables hidden; an
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
// says how to give sqlbot a copy (see checkWAL).
//
// Open reads the schema once; Objects returns it. It reads no data, but for
// a small database (at most 64 exposed objects in a file of at most 8 MiB),
// whose every row count and three sample rows it reads, bounded by that
// size, and where an exposed object whose rows cannot be read is an error;
// for any other they are read later, per object (see Describe), and an
// object that compiles but whose rows cannot be read is found then. The
// check's in-memory copy of the exposed schema is built beside Open, after
// it returns on a large schema: the first statement waits for it, and if it
// could not be built every statement fails with that error.
//
// It fails closed: before returning, it proves on pooled
// connections that the authorizer is installed and denies a write, and that
// the check of the compiled program refuses a write the authorizer lets
// through, and that SQLite counts its memory (so that the heap limit, which
// it sets, holds), and returns an error if not.
func Open(ctx context.Context, path string, p *Policy, lim Limits) (*DB, error) {
	return open(ctx, path, p, lim, testHooks{})
}

// testHooks are what tests change in a DB from the start of Open: onQuery,
// called with every statement Query is given, and a layer taken away to show that the other one holds
// alone. Open passes none.
type testHooks struct {
	onQuery      func(query string)
	noAuthorizer bool // the authorizer allows everything (and Open does not probe it)
	noReadCheck  bool // the compiled program's reads are not checked (its writes still are)

	noSeal            bool // the authorizer is not sealed while a checked program runs
	noRepreparedCheck bool // the statement's re-prepare count is not looked at
}

// open is Open, with hooks set from the start.
func open(ctx context.Context, path string, p *Policy, lim Limits, hooks testHooks) (*DB, error) {
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
	all := p == nil || p.All // what cannot be read is then left out, not an error
	acc, check, exposed, err := buildAccess(ctx, priv, sch, exposed, all, 2*lim.Concurrent)
	if err != nil {
		priv.pool.Close()
		return nil, err
	}

	// The privileged connection stays open for Ping, which runs roconn's
	// own statement on it; model SQL never reaches it.
	db := &DB{lim: lim, byName: map[string]int{}, health: priv, check: check, stats: stats{m: map[int]*statsEntry{}}, hooks: hooks}
	if p != nil {
		db.rules = slices.Clone(p.Rules)
	}
	c := newConnector(dsn, lim.ValueBytes, func(modules map[string]bool) (sqlite.AuthorizerFn, *authState) {
		st := &authState{access: acc, modules: modules, allowAll: hooks.noAuthorizer}
		return st.authorize, st
	})
	if err := c.restrict(lim.TempBytes); err != nil {
		priv.pool.Close()
		check.Close()
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
	if err := db.describe(ctx, exposed, all, small(path, len(exposed))); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// effectiveLimits fills the zero fields of lim from the policy, then from
// the defaults, and rejects negative ones.
func effectiveLimits(lim Limits, p *Policy) (Limits, error) {
	if lim.Rows < 0 || lim.Columns < 0 || lim.ValueBytes < 0 || lim.ResultBytes < 0 || lim.Timeout < 0 || lim.Concurrent < 0 || lim.Memory < 0 || lim.TempBytes < 0 {
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
	if lim.TempBytes == 0 {
		lim.TempBytes = DefaultTempBytes
	}
	return lim, nil
}

// resolvePolicy matches the policy to the schema. A nil policy, or one that
// exposes all, exposes every user table and view.
func resolvePolicy(p *Policy, sch *schema) ([]exposure, error) {
	var out []exposure
	if p == nil || p.All {
		for _, o := range sch.objects {
			if o.broken == nil && !o.virtual {
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
		if o.virtual {
			return nil, fmt.Errorf("roconn: policy: %q is a virtual table, which cannot be exposed", o.name)
		}
		hidden, err := hiddenColumns(o, e.Hide)
		if err != nil {
			return nil, err
		}
		meanings := map[string]string{}
		for col, meaning := range e.Columns {
			if !slices.ContainsFunc(o.columns, func(c schemaColumn) bool { return fold(c.name) == fold(col) }) {
				return nil, fmt.Errorf("roconn: policy: %s %q has no column %q", kindOf(o), o.name, col)
			}
			meanings[fold(col)] = meaning
		}
		out = append(out, exposure{obj: o, about: e.About, meanings: meanings, hidden: hidden})
	}
	return out, nil
}

// hiddenColumns checks the columns a policy hides of o and returns them,
// lower-cased. Only a table's columns can be hidden (a view leaves out what
// it does not select), and not those every access to the table carries: its
// rowid and a WITHOUT ROWID table's primary key, which every index holds.
// Nor may a visible VIRTUAL generated column be computed from a hidden one,
// nor may every column be hidden.
func hiddenColumns(o *schemaObject, hide []string) (map[string]bool, error) {
	hidden := map[string]bool{}
	if len(hide) == 0 {
		return hidden, nil
	}
	if o.isView {
		return nil, fmt.Errorf("roconn: policy: view %q cannot hide columns; a view leaves out what it does not select", o.name)
	}
	for _, h := range hide {
		i := slices.IndexFunc(o.columns, func(c schemaColumn) bool { return fold(c.name) == fold(h) })
		if i < 0 {
			return nil, fmt.Errorf("roconn: policy: table %q has no column %q to hide", o.name, h)
		}
		name := o.columns[i].name
		switch {
		case fold(name) == fold(o.rowidAlias):
			return nil, fmt.Errorf("roconn: policy: table %q cannot hide %q: it is the table's rowid; expose a view without it instead", o.name, name)
		case o.withoutRowid && slices.ContainsFunc(o.primaryKey, func(k string) bool { return fold(k) == fold(name) }):
			return nil, fmt.Errorf("roconn: policy: table %q cannot hide %q: it is part of the primary key, which every index of a WITHOUT ROWID table holds; expose a view without it instead", o.name, name)
		}
		hidden[fold(name)] = true
	}
	for g, deps := range o.derived {
		for _, d := range deps {
			if !hidden[g] && hidden[fold(d)] {
				return nil, fmt.Errorf("roconn: policy: table %q: the generated column %q is computed from the hidden column %q; hide it too", o.name, g, d)
			}
		}
	}
	// A STORED generated column is read like any other: nothing in a
	// program says what it was computed from, so beside a hidden column it
	// may carry that column's value.
	for _, c := range o.columns {
		if c.stored && !hidden[fold(c.name)] {
			return nil, fmt.Errorf("roconn: policy: table %q: the stored generated column %q may be computed from a hidden column, "+
				"which sqlbot cannot tell; hide it too, or expose a view without the hidden columns", o.name, c.name)
		}
	}
	if len(hidden) == len(o.columns) {
		return nil, fmt.Errorf("roconn: policy: table %q hides every column; leave it out of expose instead", o.name)
	}
	return hidden, nil
}

func kindOf(o *schemaObject) string {
	if o.isView {
		return "view"
	}
	return "table"
}

// buildAccess computes what the restricted connections may read, for the
// authorizer (see access) and for the check of compiled programs (see
// programCheck), from what compiling each exposed view shows. With lenient
// (no policy), a view that cannot be checked is left out of exposed, which
// it returns; otherwise that is an error naming the view.
func buildAccess(ctx context.Context, priv *privileged, sch *schema, exposed []exposure, lenient bool, checkConns int) (*access, *programCheck, []exposure, error) {
	var reads [][]read
	progs := map[string][][]instr{}
	counts := map[string]map[string]int{}
	hidden := map[string]map[string]bool{}
	kept := exposed[:0:0]
	cat := newCatalog(slices.Collect(maps.Values(sch.objects)))
	for _, e := range exposed {
		name := fold(e.obj.name)
		hidden[name] = e.hidden
		if e.obj.isView {
			r, p, err := priv.viewReads(ctx, e.obj.name)
			for _, prog := range p {
				if pr := readsOf(prog, cat); err == nil && pr.bad != "" {
					err = errors.New("its program " + pr.bad)
				}
			}
			if err != nil {
				if lenient && ctx.Err() == nil {
					continue
				}
				return nil, nil, nil, fmt.Errorf("roconn: policy: view %q: %w", e.obj.name, err)
			}
			progs[name] = p
			for _, compiled := range r {
				reads = append(reads, compiled)
				n := map[string]int{}
				for _, rd := range compiled {
					if rd.context == "" && rd.column == "" && fold(rd.table) != name {
						n[fold(rd.table)]++
					}
				}
				for t, k := range n {
					if counts[name] == nil {
						counts[name] = map[string]int{}
					}
					counts[name][t] = max(counts[name][t], k)
				}
			}
		}
		kept = append(kept, e)
	}
	check, err := newProgramCheck(ctx, sch, kept, hidden, progs, checkConns)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("roconn: policy: %w", err)
	}
	return newAccess(sch, kept, reads, hidden, counts), check, kept, nil
}

// proveReadOnly shows, on connections from the pool, that the file is open
// read-only (Connect checks it), that the authorizer is installed and denies a
// write on its own, and that Query's check of the compiled program refuses a
// write on its own: SQLite asks the authorizer nothing while it compiles
// VACUUM, so only that check can stop it before it runs.
func (db *DB) proveReadOnly(ctx context.Context) error {
	if !db.hooks.noAuthorizer {
		if err := db.probeAuthorizer(ctx, "CREATE TABLE roconn_probe(x)"); err != nil {
			return err
		}
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
	j, err := db.pool.start(ctx, func(_ context.Context, pc *physConn) (*Result, error) {
		pc.auth.reset()
		st, err := prepare(&pc.capi, probe)
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

// describe fills db.objects from the schema. With read (a small database),
// it also reads each object's row count and sample rows through Query, the
// same restricted path model SQL takes; otherwise it reads no data, and
// Describe reads them later.
func (db *DB) describe(ctx context.Context, exposed []exposure, lenient, read bool) error {
	shown := make(map[string]map[string]bool, len(exposed)) // exposed object → its hidden columns
	for _, e := range exposed {
		shown[fold(e.obj.name)] = e.hidden
	}
	for _, e := range exposed {
		o := Object{Name: e.obj.name, About: e.about, IsView: e.obj.isView, RowCount: -1}
		for _, fk := range e.obj.foreign {
			// A key into a table that is not exposed, or into a hidden
			// column, would reveal that it exists.
			if ref, ok := shown[fold(fk.RefTable)]; ok && !e.hidden[fold(fk.Column)] && !ref[fold(fk.RefColumn)] {
				o.Foreign = append(o.Foreign, fk)
			}
		}
		var names []string
		for _, c := range e.obj.columns {
			if !c.hidden && !e.hidden[fold(c.name)] {
				o.Columns = append(o.Columns, Column{Name: c.name, Type: c.typ, Meaning: e.meanings[fold(c.name)]})
				names = append(names, quoteIdent(c.name))
			}
		}
		if read {
			var err error
			if o.RowCount, err = db.count(ctx, o.Name); err == nil {
				o.Sample, err = db.sample(ctx, o.Name, names)
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
			o.Counted = true
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

// sample returns up to three rows of name, of the quoted columns cols.
func (db *DB) sample(ctx context.Context, name string, cols []string) ([][]any, error) {
	res, err := db.Query(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(name)+" LIMIT 3")
	if err != nil && !errors.Is(err, ErrRowLimit) {
		return nil, err
	}
	return res.Rows, nil
}

// Objects returns the exposed tables and views, sorted by name, as computed
// at Open: with their row counts and samples for a small database, without
// (RowCount -1, Counted false) for any other (see Describe, Known). The
// slice is the caller's; the rows inside it are shared.
func (db *DB) Objects() []Object { return slices.Clone(db.objects) }

// Object returns the exposed object called name, ignoring ASCII case, as
// Objects has it, and whether there is one.
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
	err := db.check.Close()
	if herr := db.health.pool.Close(); err == nil {
		err = herr
	}
	if err != nil {
		return fmt.Errorf("roconn: close: %w", err)
	}
	return nil
}
