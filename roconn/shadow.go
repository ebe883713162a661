package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A programCheck is the read half of the check of a compiled program, and
// works without the authorizer. It has two parts:
//
//   - The shadow compile. Beside Open, roconn builds an in-memory database, the
//     shadow, that holds only the schema of what the policy exposes: each
//     exposed table as it is declared (hidden columns and indexes included)
//     and each exposed view as an empty table of its result columns. Every
//     statement is compiled there too. A statement that names anything the
//     policy does not expose fails to compile; one whose program reads a
//     hidden column (by name, through *, or as a USING or NATURAL join
//     compares it) or uses an index over one is refused; and the result
//     must have as many columns as the real program's. What the shadow
//     program opens and reads by name are the exposed objects the statement
//     goes through: its doors.
//   - The real program. Every cursor it opens is mapped to a table or index
//     of the database by root page, every column it reads to a name; it
//     may read only what its doors allow: the visible columns of an exposed
//     table, what an exposed view's own program reads. Another database
//     (temp), the schema table, a virtual table, or a program compiled
//     against another schema than the one read at Open is refused.
//
// A real program that reads nothing but the visible columns of exposed
// tables (and counts only their rows) needs no door: what it reads, the
// policy shows anyone who names those tables. Unless the statement names a
// view the policy does not expose (any of its words, quoted or not, case
// aside, is one's name: such a view's literals and row filter are in no
// table the program opens), it passes without the shadow compile, which is
// what most questions cost no second compile for. Any other statement is
// compiled on the shadow too.
type programCheck struct {
	real   catalog
	cookie int64                // the schema cookie read at Open
	doors  map[string]allowance // exposed object (lower-cased) → what going through it allows in the real database
	tables allowance            // what the exposed tables allow together: the doors of all of them
	// unexposed are the tables and views the policy does not expose
	// (lower-cased). A statement that names one always goes through the
	// shadow, which does not have it: a view's program opens no cursor for
	// what only its definition holds (its literals, the row set its WHERE
	// picks), and a table named only in a part of the statement that
	// SQLite drops (a subquery's result column nothing reads) opens none
	// at all, though the statement then tells that the table exists.
	unexposed map[string]bool

	// The shadow is built beside Open (on a schema of a thousand tables,
	// SQLite's CREATE TABLE, which scans the schema table each time, makes
	// it the slowest part of opening): ready is closed when the fields
	// below are set, or shadowErr says why they could not be. check waits
	// for it.
	ready       chan struct{}
	shadowErr   error
	shadow      *sql.DB
	shadowCat   catalog
	shadowAllow allowance // what a shadow program may read: every column of the shadow but hidden ones
	shadowName  map[*schemaObject]string

	// beforeShadow, if set (by tests), runs before the shadow compile.
	beforeShadow func()
}

// check refuses prog, the real program of stmt, if it reads what the
// policy does not allow. It returns a *Refusal, an error from ctx, or nil.
func (pc *programCheck) check(ctx context.Context, stmt string, prog []instr) error {
	refuse := func(reason string) error { return &Refusal{Layer: LayerReadOnly, Reason: reason} }
	for _, in := range prog {
		if in.Opcode != "Transaction" {
			continue
		}
		if in.P1 != 0 {
			return refuse("the statement's program uses another database than the main one")
		}
		if in.P3 != pc.cookie {
			return refuse("the database's schema changed after sqlbot opened it; restart sqlbot to read it again")
		}
	}
	reads := readsOf(prog, pc.real)
	if pc.tables.excess(reads) == "" && !namesAny(stmt, pc.unexposed) {
		// It reads nothing but what the exposed tables show anyone who
		// names them: whatever its names went through, it needs no door,
		// and so no shadow compile to find them.
		return nil
	}
	if err := pc.wait(ctx); err != nil { // fail closed: nothing runs unchecked
		return err
	}
	if pc.beforeShadow != nil {
		pc.beforeShadow()
	}
	sh, err := pc.compileShadow(ctx, stmt)
	if err != nil {
		var se *SQLError
		if errors.As(err, &se) {
			// SQLite refused to compile it against the exposed objects:
			// say why in its own words.
			return refuse("against what the policy exposes, " + clipName(se.Message))
		}
		return err
	}
	spr := sh.reads
	if why := pc.shadowAllow.excess(spr); why != "" {
		return refuse("the statement " + why)
	}
	if got, want := checkProgram(prog).columns, sh.columns; got != want {
		return refuse(fmt.Sprintf("the statement returns %d columns, %d of which the policy exposes", got, want))
	}
	named := map[string]bool{}
	for t := range spr.rows {
		named[pc.shadowName[t]] = true
	}
	for _, r := range sh.named {
		named[fold(r.table)] = true
	}
	allowed := allowance{}
	for name := range named {
		if door, ok := pc.doors[name]; ok {
			allowed.add(door)
		}
	}
	if why := allowed.excess(reads); why != "" {
		return refuse("the statement's program " + why)
	}
	return nil
}

// A shadowView is what the shadow compile of a statement saw: what its
// program reads of the shadow, how many columns it returns, and the reads
// the shadow's authorizer saw.
type shadowView struct {
	reads   programReads
	columns int64
	named   []read
}

// compileShadow compiles stmt on a shadow connection and returns what its
// program reads there. It compiles and reads the program through
// SQLite's C API, as the real connections do; an error from SQLite is a
// *SQLError. A ctx that ends before or during it ends it.
func (pc *programCheck) compileShadow(ctx context.Context, stmt string) (shadowView, error) {
	var view shadowView
	conn, err := pc.shadow.Conn(ctx)
	if err != nil {
		return view, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*shadowConn)
		if !ok {
			return fmt.Errorf("roconn: unexpected shadow connection %T", dc)
		}
		interrupted := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(interrupted)
			tls := libc.NewTLS()
			sqlite3.Xsqlite3_interrupt(tls, sc.handle)
			tls.Close()
		})
		sc.rec.start()
		st, err := prepare(&sc.capi, stmt)
		if err == nil {
			var prog []instr
			prog, err = readProgram(&sc.capi, st)
			sqlite3.Xsqlite3_finalize(sc.tls, st)
			// The program is in the connection's buffer: read it
			// while the connection is still ours.
			if err == nil {
				view.reads = readsOf(prog, pc.shadowCat)
				view.columns = checkProgram(prog).columns
			}
		}
		view.named = sc.rec.stop()
		if !stop() {
			// ctx ended: the interrupt may land after the compile, on
			// the connection's next one. Wait for it, and have
			// database/sql close the connection rather than reuse it.
			<-interrupted
			return driver.ErrBadConn
		}
		return err
	})
	if cerr := ctx.Err(); cerr != nil {
		return shadowView{}, cerr
	}
	if err != nil {
		return shadowView{}, err
	}
	return view, nil
}

// wait waits until the shadow is built, and returns why it could not be
// (shadowErr), or ctx's error if ctx ends first.
func (pc *programCheck) wait(ctx context.Context) error {
	select {
	case <-pc.ready:
		return pc.shadowErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close waits for the shadow to be built, then closes its connections.
func (pc *programCheck) Close() error {
	<-pc.ready
	if pc.shadow == nil {
		return nil
	}
	return pc.shadow.Close()
}

// newProgramCheck builds the program check for the exposed objects of sch.
// hidden holds each exposed table's hidden columns, viewProgs each exposed
// view's programs (see privileged.viewReads).
func newProgramCheck(ctx context.Context, sch *schema, exposed []exposure, hidden map[string]map[string]bool, viewProgs map[string][][]instr, shadowConns int) (*programCheck, error) {
	pc := &programCheck{
		real:      newCatalog(slices.Collect(maps.Values(sch.objects))),
		cookie:    sch.cookie,
		doors:     map[string]allowance{},
		tables:    allowance{},
		unexposed: map[string]bool{},
	}
	for name := range sch.objects {
		pc.unexposed[name] = true
	}
	for _, e := range exposed {
		delete(pc.unexposed, fold(e.obj.name))
		name := fold(e.obj.name)
		if !e.obj.isView {
			pc.doors[name] = tableDoor(e.obj, hidden[name])
			pc.tables.add(pc.doors[name])
			continue
		}
		door := allowance{}
		for _, prog := range viewProgs[name] {
			pr := readsOf(prog, pc.real)
			if pr.bad != "" {
				return nil, fmt.Errorf("view %q cannot be checked: its program %s", e.obj.name, pr.bad)
			}
			door.add(allowanceOf(pr))
		}
		pc.doors[name] = door
	}

	pc.ready = make(chan struct{})
	go func() {
		defer close(pc.ready)
		// Bounded by the schema's size; not stopped with Open's ctx, which
		// may end once Open returns, only reported through it.
		if err := pc.buildShadow(context.WithoutCancel(ctx), exposed, hidden, shadowConns); err != nil {
			pc.shadowErr = fmt.Errorf("roconn: policy: %w", err)
		}
	}()
	return pc, nil
}

// buildShadow builds the shadow for exposed and sets the programCheck's
// shadow fields.
func (pc *programCheck) buildShadow(ctx context.Context, exposed []exposure, hidden map[string]map[string]bool, shadowConns int) error {
	script := shadowScript(exposed)
	c := &shadowConnector{driver: &sqlite.Driver{}, script: script}
	pool := sql.OpenDB(c)
	pool.SetMaxOpenConns(shadowConns)
	pool.SetMaxIdleConns(shadowConns)
	ssch, err := (&privileged{pool: pool}).readSchema(ctx)
	if err != nil {
		pool.Close()
		return fmt.Errorf("read the policy's schema: %w", err)
	}
	c.roots = map[string]int64{}
	for name, o := range ssch.objects {
		c.roots[name] = o.root
		for _, ix := range o.indexes {
			c.roots[fold(ix.name)] = ix.root
		}
	}
	pc.shadow = pool
	pc.shadowCat = newCatalog(slices.Collect(maps.Values(ssch.objects)))
	pc.shadowAllow = allowance{}
	pc.shadowName = map[*schemaObject]string{}
	for name, o := range ssch.objects {
		pc.shadowName[o] = name
		pc.shadowAllow[o] = tableDoor(o, hidden[name])[o]
	}
	return nil
}

// tableDoor is what reading exposed table t allows: its columns but the
// hidden ones, its rowid, and counting its rows.
func tableDoor(t *schemaObject, hidden map[string]bool) allowance {
	x := &tableAllowance{cols: map[string]bool{}, count: true}
	for _, c := range t.columns {
		if !hidden[fold(c.name)] {
			x.cols[fold(c.name)] = true
		}
	}
	if !hidden[fold(t.rowidName())] {
		x.cols[fold(t.rowidName())] = true
	}
	return allowance{t: x}
}

// A shadowStmt is one statement that builds the shadow, and what to run
// instead if it fails ("": nothing).
type shadowStmt struct{ sql, fallback string }

// shadowScript returns the statements that build the shadow: each exposed
// table by its own CREATE statement and its indexes', each exposed view as
// a table of its result columns. A virtual table is left out: no program
// that reads one passes the check. A table whose statement does not run on
// a bare connection (a collation only the owner's application registers,
// say) becomes a table of its columns; such an index is left out.
func shadowScript(exposed []exposure) []shadowStmt {
	var script []shadowStmt
	columnsTable := func(o *schemaObject) string {
		cols := make([]string, len(o.columns))
		for i, c := range o.columns {
			cols[i] = quoteIdent(c.name)
		}
		return "CREATE TABLE " + quoteIdent(o.name) + " (" + strings.Join(cols, ", ") + ")"
	}
	for _, e := range exposed {
		o := e.obj
		switch {
		case o.virtual:
		case o.isView:
			script = append(script, shadowStmt{sql: columnsTable(o)})
		default:
			script = append(script, shadowStmt{sql: o.sql, fallback: columnsTable(o)})
			for _, ix := range o.indexes {
				if ix.sql != "" {
					script = append(script, shadowStmt{sql: ix.sql})
				}
			}
		}
	}
	return script
}

// A shadowConnector opens shadow connections: in-memory databases built
// from script, then made query-only, with an authorizer that records reads.
type shadowConnector struct {
	driver *sqlite.Driver
	script []shadowStmt
	roots  map[string]int64 // once known: what each new connection's root pages must be
}

// A shadowConn is one shadow connection and the recorder installed on it.
type shadowConn struct {
	sqliteConn
	capi
	rec *recorder
}

// Close closes the driver connection, then its TLS.
func (c *shadowConn) Close() error {
	err := c.sqliteConn.Close()
	c.tls.Close()
	return err
}

// Connect opens and builds one shadow connection.
func (c *shadowConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.driver.Open(":memory:")
	if err != nil {
		return nil, err
	}
	sc, err := c.build(ctx, dc)
	if err != nil {
		dc.Close()
		return nil, fmt.Errorf("roconn: build the policy's schema: %w", err)
	}
	return sc, nil
}

func (c *shadowConnector) build(ctx context.Context, dc driver.Conn) (*shadowConn, error) {
	conn, ok := dc.(sqliteConn)
	if !ok {
		return nil, fmt.Errorf("a %T lacks the driver interfaces database/sql needs", dc)
	}
	// One transaction: a thousand tables' statements each in its own cost
	// a hundred milliseconds more. A statement that fails is undone alone,
	// and its fallback runs in the same transaction.
	if _, err := conn.ExecContext(ctx, "BEGIN", nil); err != nil {
		return nil, err
	}
	for _, stmt := range c.script {
		if _, err := conn.ExecContext(ctx, stmt.sql, nil); err != nil && stmt.fallback != "" {
			if _, err := conn.ExecContext(ctx, stmt.fallback, nil); err != nil {
				return nil, err
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT", nil); err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1", nil); err != nil {
		return nil, err
	}
	if c.roots != nil {
		rows, err := conn.QueryContext(ctx, "SELECT name, rootpage FROM sqlite_schema WHERE type IN ('table', 'index')", nil)
		if err != nil {
			return nil, err
		}
		vals := make([]driver.Value, 2)
		for rows.Next(vals) == nil {
			name, _ := vals[0].(string)
			root, _ := vals[1].(int64)
			if want, ok := c.roots[fold(name)]; ok && want != root || !ok && !strings.HasPrefix(fold(name), "sqlite_") {
				rows.Close()
				return nil, fmt.Errorf("%s has root page %d on a new connection", name, root)
			}
		}
		rows.Close()
	}
	// The shadow compiles as the real connections do, subqueries whole, so
	// that it goes through the same doors.
	h, err := sqliteHandle(dc)
	if err != nil {
		return nil, err
	}
	tls := libc.NewTLS()
	if err := viewsWhole(tls, h); err != nil {
		tls.Close()
		return nil, err
	}
	rec := &recorder{}
	if err := dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(rec.authorize); err != nil {
		tls.Close()
		return nil, err
	}
	return &shadowConn{sqliteConn: conn, capi: capi{handle: h, tls: tls}, rec: rec}, nil
}

// Driver implements driver.Connector.
func (c *shadowConnector) Driver() driver.Driver { return c.driver }

// namesAny reports whether a word of stmt (a name, quoted or not, compared
// lower-cased) is in names.
func namesAny(stmt string, names map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	for _, t := range tokens(stmt) {
		if t.kind != tokPunct && lookup(names, t.text) {
			return true
		}
	}
	return false
}
