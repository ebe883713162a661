package roconn

import (
	"errors"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// modernc.org/sqlite builds SQLite without memory accounting
// (SQLITE_DEFAULT_MEMSTATUS=0), and without it SQLite's heap limit does
// nothing. Accounting can only be turned on before SQLite initializes, which
// it does when the process opens its first connection, by whichever package.
// Package initialization is the one moment roconn can be sure comes first,
// so this is the one thing roconn does in an init function. It keeps no Go
// state; it makes every SQLite allocation in the process take one more
// mutex, which the benchmarks in docs/BENCHMARKS.md include.
func init() {
	tls := libc.NewTLS()
	defer tls.Close()
	va := tls.Alloc(8)
	defer tls.Free(8)
	sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MEMSTATUS, libc.VaList(va, int32(1)))
}

// errNoAccounting is why Open fails if SQLite does not count its memory.
var errNoAccounting = errors.New("SQLite's memory accounting is off (SQLite was started before roconn could turn it on), so its heap cannot be bounded; refusing to serve")

// limitHeap sets SQLite's process-wide hard heap limit to n bytes, unless a
// lower limit is already in force (another DB in the process asked for
// less). It fails if SQLite does not count its memory, which it checks by
// reading the bytes in use: with a connection open, there are some.
func limitHeap(n int64) error {
	tls := libc.NewTLS()
	defer tls.Close()
	if sqlite3.Xsqlite3_memory_used(tls) <= 0 {
		return errNoAccounting
	}
	if cur := sqlite3.Xsqlite3_hard_heap_limit64(tls, -1); cur == 0 || cur > n {
		sqlite3.Xsqlite3_hard_heap_limit64(tls, n)
	}
	return nil
}

// heapInUse returns the bytes SQLite has allocated in this process, and
// its hard heap limit (0: none), calling SQLite through tls.
func heapInUse(tls *libc.TLS) (used, limit int64) {
	return sqlite3.Xsqlite3_memory_used(tls), sqlite3.Xsqlite3_hard_heap_limit64(tls, -1)
}
