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

// A physConn is one physical SQLite connection of a pool, with the state
// roconn keeps for it: its authorizer, and the means to interrupt it.
type physConn struct {
	sqliteConn
	auth   *authState // nil on a connection that has no authorizer of ours
	handle uintptr    // the sqlite3* of the connection, for sqlite3_interrupt and sqlite3_limit
}

// interrupt stops the statement running on c, if any, as sqlite3_interrupt
// does: it may be called from any goroutine while the connection is open.
func (c *physConn) interrupt() {
	tls := libc.NewTLS()
	sqlite3.Xsqlite3_interrupt(tls, c.handle)
	tls.Close()
}

// watch interrupts c once ctx is done, until the returned stop is called;
// stop must be called before the connection goes back to the pool.
//
// Why roconn does this itself: modernc.org/sqlite v1.62.0 interrupts SQLite
// when the context ends only while QueryContext runs, that is until the first
// row. A statement that returns one row quickly and then searches forever for
// the second would keep rows.Next, and the connection, busy for good.
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

// sqliteHandle returns the sqlite3* of a modernc.org/sqlite connection. The
// driver keeps it in the unexported field db; reading it is the only way to
// call sqlite3_interrupt outside QueryContext (see watch), and sqlite3_limit
// while the connection is being opened (see setLimits). If a driver upgrade
// renames the field, Connect fails and so does Open: roconn never serves
// without a working timeout.
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

// setLimits sets, on the connection handle, the SQLite limits roconn relies
// on, and reads each back: a limit that did not take is an error.
//
// The attached-database limit is 0: VACUUM INTO and ATTACH open a second
// file read-write even on a mode=ro connection, and with no attach slots they
// cannot. The length limit (SQLITE_LIMIT_LENGTH) is valueBytes, if positive;
// SQLite lowers a larger one to its compile-time maximum.
func setLimits(handle uintptr, valueBytes int) error {
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
	if err := set(sqlite3.SQLITE_LIMIT_ATTACHED, "attached", 0); err != nil {
		return err
	}
	if valueBytes > 0 {
		return set(sqlite3.SQLITE_LIMIT_LENGTH, "length", valueBytes)
	}
	return nil
}

// A connector opens the physical connections of one pool through a driver
// of its own, never the process-wide one registered as "sqlite": two DBs in
// one process, or a program that also uses sql.Open("sqlite", ...), cannot
// see or change each other's hooks.
type connector struct {
	driver *sqlite.Driver
	dsn    string
	// valueBytes is the length limit set on every connection (0: SQLite's).
	valueBytes int
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

// hook runs inside driver.Open for every new physical connection, before
// database/sql can use it.
func (c *connector) hook(dc sqlite.ExecQuerierContext, _ string) error {
	reg, ok := dc.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("a %T cannot take an authorizer", dc)
	}
	// The driver's hook API carries no context; listing modules is a quick
	// read of an in-memory list.
	mods, err := moduleNames(context.Background(), dc)
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
	if err := setLimits(h, c.valueBytes); err != nil {
		return nil, err
	}
	return &physConn{sqliteConn: sc, auth: st, handle: h}, nil
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
