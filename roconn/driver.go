package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sync"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	_ driver.Connector = (*connector)(nil)
	_ driver.Connector = (*plainConnector)(nil)
	_ sqliteConn       = (*physConn)(nil)
)

// errWritable is why Connect refuses a connection that can write the file.
var errWritable = errors.New("connection is not read-only")

// dsnFor returns the read-only URI for the database file at the absolute path
// abs. The path is escaped, so '?', '#' and '%' in a file name cannot add or
// change URI parameters; mode=ro makes SQLite open the file read-only and
// fail, rather than create it, when it is missing.
func dsnFor(abs string) string {
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=ro"
}

// fileDSN returns the read-only URI (see dsnFor) of the regular file at path,
// made absolute. An error for a missing file wraps os.ErrNotExist; callers
// add what they were doing and the path.
func fileDSN(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	return dsnFor(abs), nil
}

// sqliteConn is every interface a modernc.org/sqlite connection implements
// that database/sql looks for. Embedding it in physConn forwards them all, as
// the driver's documentation for connection wrappers asks.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// A physConn is one physical SQLite connection, with the state roconn keeps
// for it: its authorizer, its sqlite3 handle, and the libc TLS through which
// its owner calls SQLite. One goroutine at a time owns a physConn (on the
// restricted pool, the goroutine running its statement; see pool) and is
// the only one to call SQLite through tls; other goroutines only interrupt
// it, each through a TLS of its own. A second SQLite handle per connection
// (say, an in-memory database to compile against) belongs here, owned and
// closed the same way.
type physConn struct {
	sqliteConn
	capi
	auth *authState  // nil on a connection that has no authorizer of ours
	work chan func() // statements for the connection's own goroutine (see pool)

	temp *tempBudget // its room for temporary files; nil on the privileged connection

	mu  sync.Mutex
	job *job // the statement running, which interrupt may stop; nil when idle
}

// A capi is a connection's way into SQLite's C API: its sqlite3* and the
// TLS of the one goroutine at a time that calls on it.
type capi struct {
	handle uintptr
	tls    *libc.TLS
	prog   []instr // the buffer readProgram reads programs into
}

// Close closes the driver connection, then the owner's TLS.
func (c *physConn) Close() error {
	err := c.sqliteConn.Close()
	if c.temp != nil {
		unbudgetTemp(c.tls)
	}
	c.tls.Close()
	return err
}

// interrupt stops the statement running on c, as sqlite3_interrupt does:
// it may be called from any goroutine while the connection is open.
func (c *physConn) interrupt() {
	tls := libc.NewTLS()
	sqlite3.Xsqlite3_interrupt(tls, c.handle)
	tls.Close()
}

// watch interrupts c once ctx is done, until the returned stop is called;
// stop must be called before the connection is let go of. The privileged
// connection's readers use it (see Inspect): modernc.org/sqlite interrupts a
// statement when its context ends only until the first row.
func (c *physConn) watch(ctx context.Context) (stop func()) {
	var mu sync.Mutex
	live := true
	cancel := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if live {
			c.interrupt()
		}
	})
	return func() {
		cancel()
		mu.Lock()
		live = false
		mu.Unlock()
	}
}

// interruptJob interrupts c, through tls (the caller's own), if it is
// still running j, and never a later statement: once the job's goroutine
// has let go of c (see pool.finish), it does nothing.
func (c *physConn) interruptJob(tls *libc.TLS, j *job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job == j {
		sqlite3.Xsqlite3_interrupt(tls, c.handle)
	}
}

// sqliteHandle returns the sqlite3* of a modernc.org/sqlite connection. The
// driver keeps it in the unexported field db; reading it is the only way to
// run statements through SQLite's C API (compile once, read the program,
// run it; see exec.go), to call sqlite3_interrupt from another goroutine,
// and to call sqlite3_limit while the connection is being opened (see
// setLimits). If a driver upgrade renames the field, Connect fails and so
// does Open: roconn never serves without a working timeout.
func sqliteHandle(dc driver.Conn) (uintptr, error) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, fmt.Errorf("driver connection is a %T, not a modernc.org/sqlite connection", dc)
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return 0, fmt.Errorf("cannot find the sqlite3 handle of a %T", dc)
	}
	return uintptr(f.Uint()), nil
}

// The limits of SQLite's own that model SQL runs under, set to what an
// analyst's query needs rather than SQLite's defaults, which are sized for
// programs that trust their SQL. Each bounds what compiling or running one
// statement can cost.
const (
	// maxSQLBytes bounds the statement's text (SQLite: 1 GB). Analysts'
	// queries are a few kilobytes; a statement longer than this is refused
	// before SQLite sees it (see Query).
	maxSQLBytes = 100_000
	// maxExprDepth bounds the nesting of an expression (SQLite: 1000):
	// compiling and evaluating recurse on it. Two hundred covers a chain of
	// 200 ORs, far past what a question needs.
	maxExprDepth = 200
	// maxCompound bounds the terms of a UNION/INTERSECT/EXCEPT chain
	// (SQLite: 500); a multi-row VALUES is not counted.
	maxCompound = 100
	// maxProgram bounds the instructions of a compiled program (SQLite: 250
	// million), and so the program that Query reads back and checks; an
	// honest query compiles to a few hundred.
	maxProgram = 100_000
	// maxFunctionArgs bounds a function's arguments (SQLite 3.54: 1000);
	// json_object over the 40 result columns needs 80.
	maxFunctionArgs = 127
	// maxLikePattern bounds a LIKE or GLOB pattern (SQLite: 50,000 bytes).
	// roconn's like() and glob() cost the text's length times the pattern's
	// over 64 (see funcs.go): 1000 bytes keep one call on a 1 MB value to a
	// few tens of milliseconds, and no analyst writes a longer pattern.
	maxLikePattern = 1000
)

// setLimits sets, on the connection handle, the SQLite limits roconn relies
// on, and reads each back: a limit that did not take is an error.
//
// The attached-database limit is 0: VACUUM INTO and ATTACH open a second
// file read-write even on a mode=ro connection, and with no attach slots they
// cannot. The length limit (SQLITE_LIMIT_LENGTH) is valueBytes, if positive;
// SQLite lowers a larger one to its compile-time maximum. A restricted
// connection (model SQL runs on it) also gets the limits above, and no
// sorter worker threads.
func setLimits(handle uintptr, valueBytes int, restricted bool) error {
	tls := libc.NewTLS()
	defer tls.Close()
	set := func(id int32, name string, n int) error {
		want := int32(min(n, math.MaxInt32))
		sqlite3.Xsqlite3_limit(tls, handle, id, want)
		if got := sqlite3.Xsqlite3_limit(tls, handle, id, -1); got < 0 || got > want {
			return fmt.Errorf("set %s limit to %d: it is %d", name, want, got)
		}
		return nil
	}
	type limit struct {
		id   int32
		name string
		n    int
	}
	limits := []limit{{sqlite3.SQLITE_LIMIT_ATTACHED, "attached", 0}}
	if valueBytes > 0 {
		limits = append(limits, limit{sqlite3.SQLITE_LIMIT_LENGTH, "length", valueBytes})
	}
	if restricted {
		limits = append(limits, []limit{
			{sqlite3.SQLITE_LIMIT_SQL_LENGTH, "SQL length", maxSQLBytes},
			{sqlite3.SQLITE_LIMIT_EXPR_DEPTH, "expression depth", maxExprDepth},
			{sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, "compound select", maxCompound},
			{sqlite3.SQLITE_LIMIT_VDBE_OP, "program length", maxProgram},
			{sqlite3.SQLITE_LIMIT_FUNCTION_ARG, "function arguments", maxFunctionArgs},
			{sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, "LIKE pattern length", maxLikePattern},
			{sqlite3.SQLITE_LIMIT_WORKER_THREADS, "worker threads", 0},
		}...)
	}
	for _, l := range limits {
		if err := set(l.id, l.name, l.n); err != nil {
			return err
		}
	}
	if restricted {
		if err := viewsWhole(tls, handle); err != nil {
			return err
		}
	}
	// A mode=ro connection cannot checkpoint a WAL file; it must not try
	// when it closes, as the last connection to the database.
	va := tls.Alloc(16)
	defer tls.Free(16)
	if rc := sqlite3.Xsqlite3_db_config(tls, handle, sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, libc.VaList(va, int32(1), uintptr(0))); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("turn off checkpoint on close: SQLite result %d", rc)
	}
	return nil
}

// viewOptimizations are the query optimizations that merge an outer query's
// terms with a subquery's: the query flattener (UNION ALL branches
// included), which makes a view's WHERE and the outer WHERE one clause, and
// the push-down of outer WHERE terms into a subquery's WHERE or HAVING.
// Merged, the outer terms are tested on rows the view's own WHERE, HAVING,
// DISTINCT or join leaves out, in whatever order the planner picks (an
// index the outer term is covered by, a correlated subquery tested last): a
// term that raises an error, or burns time, only for some values is then an
// oracle over the rows the view hides.
const viewOptimizations = sqlite3.SQLITE_QueryFlattener | sqlite3.SQLITE_FlttnUnionAll | sqlite3.SQLITE_PushDown

// viewsWhole turns off viewOptimizations on the connection handle, so that
// every subquery, a view included, runs whole and the outer query sees only
// its result rows, and reads the setting back.
func viewsWhole(tls *libc.TLS, handle uintptr) error {
	va := tls.Alloc(16)
	defer tls.Free(16)
	sqlite3.Xsqlite3_test_control(tls, sqlite3.SQLITE_TESTCTRL_OPTIMIZATIONS, libc.VaList(va, handle, uint32(viewOptimizations)))
	out := tls.Alloc(4)
	defer tls.Free(4)
	sqlite3.Xsqlite3_test_control(tls, sqlite3.SQLITE_TESTCTRL_GETOPT, libc.VaList(va, handle, out))
	if off := uint32(*(*int32)(cMem(out))); off&viewOptimizations != viewOptimizations {
		return fmt.Errorf("turn off the query flattener and push-down: the disabled optimizations are %#x", off)
	}
	return nil
}

// A connector opens the physical connections of one pool through a driver
// of its own, never the process-wide one registered as "sqlite": two DBs in
// one process, or a program that also uses sql.Open("sqlite", ...), cannot
// see or change each other's hooks and functions.
type connector struct {
	driver *sqlite.Driver
	dsn    string
	// valueBytes is the length limit set on every connection (0: SQLite's).
	valueBytes int
	// restricted: model SQL runs on these connections (see restrict), each
	// with tempBytes of temporary files at most.
	restricted bool
	tempBytes  int64
	// newFn returns the authorizer for a new connection, and the state
	// Query reads back (nil on the privileged connection). modules are the
	// connection's virtual table modules.
	newFn func(modules map[string]bool) (sqlite.AuthorizerFn, *authState)

	mu    sync.Mutex
	fresh map[any]*authState // handed from the hook to Connect, keyed by driver connection
}

// newConnector returns a connector for dsn whose connection hook installs the
// authorizer newFn returns on every physical connection, and whose Connect
// sets the limits of setLimits with valueBytes.
func newConnector(dsn string, valueBytes int, newFn func(modules map[string]bool) (sqlite.AuthorizerFn, *authState)) *connector {
	c := &connector{driver: &sqlite.Driver{}, dsn: dsn, valueBytes: valueBytes, newFn: newFn, fresh: map[any]*authState{}}
	c.driver.RegisterConnectionHook(c.hook)
	return c
}

// restrict makes c's connections the ones model SQL runs on: SQLite's
// limits are set to an analyst's needs (see setLimits), the built-in
// functions whose one call costs more than linear time are replaced (see
// registerFunctions), and each connection's temporary files hold tempBytes
// at most (see tempfiles.go). Call it before the first connection is opened.
func (c *connector) restrict(tempBytes int64) error {
	if err := registerTempVFS(); err != nil {
		return err
	}
	c.restricted, c.tempBytes = true, tempBytes
	c.dsn += "&vfs=" + tempVFSName
	valueLimit := c.valueBytes
	if valueLimit <= 0 {
		valueLimit = math.MaxInt32
	}
	return registerFunctions(c.driver, maxLikePattern, valueLimit)
}

// cacheKiB is the page cache of each connection, in KiB (SQLite's default
// is about 2,000). Its pages count against the heap limit.
const cacheKiB = 2048

// hook runs inside driver.Open for every new physical connection, before
// database/sql can use it.
func (c *connector) hook(dc sqlite.ExecQuerierContext, _ string) error {
	reg, ok := dc.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("a %T cannot take an authorizer", dc)
	}
	// The driver's hook API carries no context; these are quick settings
	// and a read of an in-memory list.
	ctx := context.Background()
	if err := tempStore(ctx, dc, c.restricted); err != nil {
		return err
	}
	mods, err := moduleNames(ctx, dc)
	if err != nil {
		return fmt.Errorf("list modules: %w", err)
	}
	fn, st := c.newFn(mods)
	if err := reg.RegisterAuthorizer(fn); err != nil {
		return fmt.Errorf("install authorizer: %w", err)
	}
	c.mu.Lock()
	c.fresh[dc] = st
	c.mu.Unlock()
	return nil
}

// Connect opens one physical connection. It fails closed: a connection whose
// hook did not run, that is not read-only, that cannot be interrupted or
// whose limits did not take is closed and never reaches the pool.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	pc, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	return pc, nil
}

// open is Connect, returning the connection's own type.
func (c *connector) open(ctx context.Context) (*physConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dc, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	st, hooked := c.fresh[dc]
	delete(c.fresh, dc)
	c.mu.Unlock()
	pc, err := c.wrap(dc, st, hooked)
	if err != nil {
		dc.Close()
		return nil, err
	}
	return pc, nil
}

// wrap checks a newly opened driver connection, sets its limits and returns
// it as a physConn; hooked says whether the connection hook ran for it. An
// error says why the connection may not be used.
func (c *connector) wrap(dc driver.Conn, st *authState, hooked bool) (*physConn, error) {
	if !hooked {
		return nil, errors.New("connection hook did not run")
	}
	sc, ok := dc.(sqliteConn)
	if !ok {
		return nil, fmt.Errorf("a %T lacks the driver interfaces database/sql needs", dc)
	}
	ro, ok := dc.(interface{ IsReadOnly(string) (bool, error) })
	if !ok {
		return nil, fmt.Errorf("a %T cannot report whether it is read-only", dc)
	}
	if isRO, err := ro.IsReadOnly("main"); err != nil {
		return nil, fmt.Errorf("%w: %w", errWritable, err)
	} else if !isRO {
		return nil, errWritable
	}
	h, err := sqliteHandle(dc)
	if err != nil {
		return nil, err
	}
	if err := setLimits(h, c.valueBytes, c.restricted); err != nil {
		return nil, err
	}
	pc := &physConn{sqliteConn: sc, auth: st, capi: capi{handle: h, tls: libc.NewTLS()}}
	if c.restricted {
		pc.temp = budgetTemp(pc.tls, c.tempBytes)
	}
	return pc, nil
}

// tempStore sets where SQLite keeps what it would write to a temporary
// file (sorts, temporary tables and indexes, materialized views and CTEs),
// and the page cache. On a restricted connection that is temporary files,
// bounded by its budget (see tempfiles.go), written by the connection's own
// goroutine (PRAGMA threads = 0: the sorter starts no threads). On roconn's
// privileged connection, whose statements are roconn's own, it is memory,
// where the heap limit bounds it. It must run before the authorizer is
// installed, which denies every PRAGMA; it reads the settings back.
func tempStore(ctx context.Context, dc sqlite.ExecQuerierContext, restricted bool) error {
	store, want := "MEMORY", int64(2)
	if restricted {
		store, want = "FILE", 1
	}
	if _, err := dc.ExecContext(ctx, fmt.Sprintf("PRAGMA temp_store = %s; PRAGMA threads = 0; PRAGMA cache_size = -%d", store, cacheKiB), nil); err != nil {
		return fmt.Errorf("set where temporary data goes: %w", err)
	}
	for _, p := range []struct {
		pragma string
		want   int64
	}{{"temp_store", want}, {"threads", 0}} {
		if err := pragmaIs(ctx, dc, p.pragma, p.want); err != nil {
			return err
		}
	}
	return nil
}

// pragmaIs reads PRAGMA name on dc and requires it to be want.
func pragmaIs(ctx context.Context, dc sqlite.ExecQuerierContext, name string, want int64) error {
	rows, err := dc.QueryContext(ctx, "PRAGMA "+name, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer rows.Close()
	vals := make([]driver.Value, 1)
	if err := rows.Next(vals); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if v, ok := vals[0].(int64); !ok || v != want {
		return fmt.Errorf("%s is %v, not %d", name, vals[0], want)
	}
	return nil
}

// Driver implements driver.Connector.
func (c *connector) Driver() driver.Driver { return c.driver }

// openPool opens a database/sql pool over c with at most n connections that
// never expire: a connection is only replaced when the driver reports it
// unusable (after an interrupt, for one).
func openPool(c *connector, n int) *sql.DB {
	pool := sql.OpenDB(c)
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxLifetime(0)
	pool.SetConnMaxIdleTime(0)
	return pool
}

// physOf returns the physConn behind conn. The pointer stays valid after Raw
// returns; roconn uses it only for its own state and for sqlite3_interrupt,
// which SQLite allows from any thread, and only while it holds conn.
func physOf(conn *sql.Conn) (*physConn, error) {
	var pc *physConn
	err := conn.Raw(func(dc any) error {
		p, ok := dc.(*physConn)
		if !ok || p.auth == nil {
			return fmt.Errorf("roconn: query: unexpected driver connection %T", dc)
		}
		pc = p
		return nil
	})
	return pc, err
}
