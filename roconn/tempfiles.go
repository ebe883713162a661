package roconn

import (
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Temporary files. Model SQL's connections keep SQLite's default of writing
// what does not fit in memory (a sort's runs, a temporary table or index, a
// materialized view or CTE) to temporary files: in memory instead, every
// sort record is an allocation of its own, which cost honest statements
// about 7 % of their time, and one sort of millions of rows ran on, for up
// to 20 s, in a call that does not look for interrupts. What those files
// may hold is bounded per connection: the connection's files are opened
// through tempVFS, which counts the bytes they hold and fails the write that
// would take them past the connection's budget (SQLITE_FULL), and the
// statement is then refused by the limit layer (see DB.tempTooBig).
//
// tempVFS is the process's default VFS with only xOpen replaced. A file
// SQLite opens for itself (no name, or deleted on close) gets a copy of its
// own methods whose xWrite, xTruncate and xClose count what it holds against
// the budget of the connection whose goroutine opened it, and which drops
// size hints (a
// connection's SQLite calls all go through its one TLS, and its sorter uses
// no threads of its own: PRAGMA threads is 0); every other file, the
// database's own, is the default VFS's untouched. A temporary file opened
// on a goroutine with no budget is refused.

// tempVFSName is the name roconn's VFS is registered under.
const tempVFSName = "roconn-temp"

// A tempBudget is one connection's room for temporary files.
type tempBudget struct {
	limit int64
	// used and over are only touched on the connection's goroutine, in its
	// calls into SQLite and between them.
	used int64 // bytes its open temporary files hold
	over bool  // a write was refused since reset
}

// reset forgets a refusal, before a statement starts.
func (b *tempBudget) reset() { b.over = false }

// A tempFile is one open temporary file.
type tempFile struct {
	budget  *tempBudget
	methods uintptr // the file's own sqlite3_io_methods
	size    int64   // its size as its writes and truncations made it
}

var temps struct {
	once sync.Once
	err  error
	base uintptr // the default VFS, sqlite3_vfs*
	open uintptr // its xOpen

	mu      sync.Mutex
	methods map[uintptr]uintptr       // a file's own methods → the counting copy
	files   map[uintptr]*tempFile     // an open temporary file (sqlite3_file*) → its count
	owners  map[*libc.TLS]*tempBudget // a connection's TLS → its budget
}

// registerTempVFS registers tempVFS, once per process.
func registerTempVFS() error {
	temps.once.Do(func() { temps.err = registerTemp() })
	return temps.err
}

func registerTemp() error {
	tls := libc.NewTLS()
	defer tls.Close()
	base := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if base == 0 {
		return fmt.Errorf("roconn: SQLite has no default VFS")
	}
	p := libc.Xcalloc(tls, 1, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	name, err := libc.CString(tempVFSName)
	if p == 0 || err != nil {
		return fmt.Errorf("roconn: out of memory registering %s", tempVFSName)
	}
	v := (*sqlite3.Tsqlite3_vfs)(cMem(p))
	*v = *(*sqlite3.Tsqlite3_vfs)(cMem(base))
	v.FzName, v.FpNext = name, 0
	temps.base, temps.open = base, v.FxOpen
	temps.methods = map[uintptr]uintptr{}
	temps.files = map[uintptr]*tempFile{}
	temps.owners = map[*libc.TLS]*tempBudget{}
	*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&v.FxOpen)) = tempOpen
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("roconn: register %s: SQLite error %d", tempVFSName, rc)
	}
	return nil
}

// budgetTemp gives the connection whose SQLite calls go through tls a
// budget of limit bytes of temporary files, until unbudgetTemp.
func budgetTemp(tls *libc.TLS, limit int64) *tempBudget {
	b := &tempBudget{limit: limit}
	temps.mu.Lock()
	temps.owners[tls] = b
	temps.mu.Unlock()
	return b
}

func unbudgetTemp(tls *libc.TLS) {
	temps.mu.Lock()
	delete(temps.owners, tls)
	temps.mu.Unlock()
}

// isTemp reports whether a file SQLite opens with flags (and name, 0 for
// none) is one of its temporary files.
func isTemp(name uintptr, flags int32) bool {
	const temp = sqlite3.SQLITE_OPEN_DELETEONCLOSE | sqlite3.SQLITE_OPEN_TEMP_DB | sqlite3.SQLITE_OPEN_TEMP_JOURNAL |
		sqlite3.SQLITE_OPEN_SUBJOURNAL | sqlite3.SQLITE_OPEN_TRANSIENT_DB
	return name == 0 || flags&temp != 0
}

// tempOpen is tempVFS's xOpen.
func tempOpen(tls *libc.TLS, _ uintptr, name uintptr, file uintptr, flags int32, outFlags uintptr) int32 {
	if !isTemp(name, flags) {
		return callOpen(temps.open, tls, temps.base, name, file, flags, outFlags)
	}
	temps.mu.Lock()
	b := temps.owners[tls]
	temps.mu.Unlock()
	if b == nil {
		return sqlite3.SQLITE_CANTOPEN
	}
	if rc := callOpen(temps.open, tls, temps.base, name, file, flags, outFlags); rc != sqlite3.SQLITE_OK {
		return rc
	}
	f := (*sqlite3.Tsqlite3_file)(cMem(file))
	if f.FpMethods == 0 {
		return sqlite3.SQLITE_OK // nothing was opened (SQLite's rule for a failed open)
	}
	temps.mu.Lock()
	defer temps.mu.Unlock()
	counting, ok := temps.methods[f.FpMethods]
	if !ok {
		counting = libc.Xcalloc(tls, 1, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
		if counting == 0 {
			callClose(f.FpMethods, tls, file)
			return sqlite3.SQLITE_NOMEM
		}
		m := (*sqlite3.Tsqlite3_io_methods)(cMem(counting))
		*m = *(*sqlite3.Tsqlite3_io_methods)(cMem(f.FpMethods))
		*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxClose)) = tempClose
		*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&m.FxWrite)) = tempWrite
		*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&m.FxTruncate)) = tempTruncate
		*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&m.FxFileControl)) = tempFileControl
		temps.methods[f.FpMethods] = counting
	}
	temps.files[file] = &tempFile{budget: b, methods: f.FpMethods}
	f.FpMethods = counting
	return sqlite3.SQLITE_OK
}

// tempFileOf returns the count of the open temporary file (nil if SQLite
// names a file tempVFS did not open, which it never should).
func tempFileOf(file uintptr) *tempFile {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	return temps.files[file]
}

// grow accounts for f growing to size, or refuses it with SQLITE_FULL.
func (f *tempFile) grow(size int64) int32 {
	if size <= f.size {
		return sqlite3.SQLITE_OK
	}
	if f.budget.used+size-f.size > f.budget.limit {
		f.budget.over = true
		return sqlite3.SQLITE_FULL
	}
	return sqlite3.SQLITE_OK
}

// resize records that f's size is now size.
func (f *tempFile) resize(size int64) {
	f.budget.used += size - f.size
	f.size = size
}

func tempWrite(tls *libc.TLS, file uintptr, buf uintptr, n int32, off int64) int32 {
	f := tempFileOf(file)
	if f == nil {
		return sqlite3.SQLITE_IOERR_WRITE
	}
	end := off + int64(n)
	if rc := f.grow(end); rc != sqlite3.SQLITE_OK {
		return rc
	}
	m := (*sqlite3.Tsqlite3_io_methods)(cMem(f.methods))
	rc := (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxWrite})))(tls, file, buf, n, off)
	if rc == sqlite3.SQLITE_OK && end > f.size {
		f.resize(end)
	}
	return rc
}

func tempTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	f := tempFileOf(file)
	if f == nil {
		return sqlite3.SQLITE_IOERR_TRUNCATE
	}
	if rc := f.grow(size); rc != sqlite3.SQLITE_OK {
		return rc
	}
	m := (*sqlite3.Tsqlite3_io_methods)(cMem(f.methods))
	rc := (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxTruncate})))(tls, file, size)
	if rc == sqlite3.SQLITE_OK {
		f.resize(size)
	}
	return rc
}

// tempFileControl passes every file control on but the size hint, which it
// drops: a hint may extend the file without a write, and SQLite need not
// act on one.
func tempFileControl(tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	f := tempFileOf(file)
	if f == nil {
		return sqlite3.SQLITE_IOERR
	}
	if op == sqlite3.SQLITE_FCNTL_SIZE_HINT {
		return sqlite3.SQLITE_OK
	}
	m := (*sqlite3.Tsqlite3_io_methods)(cMem(f.methods))
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxFileControl})))(tls, file, op, arg)
}

func tempClose(tls *libc.TLS, file uintptr) int32 {
	temps.mu.Lock()
	f := temps.files[file]
	delete(temps.files, file)
	temps.mu.Unlock()
	if f == nil {
		return sqlite3.SQLITE_IOERR_CLOSE
	}
	f.resize(0)
	return callClose(f.methods, tls, file)
}

func callOpen(fn uintptr, tls *libc.TLS, vfs, name, file uintptr, flags int32, outFlags uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fn})))(tls, vfs, name, file, flags, outFlags)
}

func callClose(methods uintptr, tls *libc.TLS, file uintptr) int32 {
	m := (*sqlite3.Tsqlite3_io_methods)(cMem(methods))
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxClose})))(tls, file)
}
