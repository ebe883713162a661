package roconn

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"
)

// Open counts and samples every exposed object itself only when the database
// is small: at most smallObjects exposed objects in a file (with its -wal) of
// at most smallBytes, whatever is in it, so that what Open reads is bounded
// by the file's size. Any other database is described lazily (see Describe).
const (
	smallObjects = 64
	smallBytes   = 8 << 20
)

// DescribeTimeout bounds the time Describe spends reading one object's row
// count and sample rows, both together, waiting for a connection included
// (the statement limit, if lower, bounds each). What it could not read in
// time stays unknown.
const DescribeTimeout = time.Second

// A statsEntry holds one object's row count and sample once read; done is
// closed when they are, or when the read was given up before it began
// (read false: the next Describe tries again).
type statsEntry struct {
	done     chan struct{}
	read     bool
	rowCount int64
	sample   [][]any
}

// stats caches what Describe read, by index in DB.objects.
type stats struct {
	mu sync.Mutex
	m  map[int]*statsEntry
}

// small reports whether the database at path, with n exposed objects, is
// small enough for Open to count and sample every object.
func small(path string, n int) bool {
	if n > smallObjects {
		return false
	}
	size := int64(0)
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err == nil {
			size += fi.Size()
		} else if !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return size <= smallBytes
}

// Describe returns the exposed object called name, ignoring ASCII case, with
// its row count and up to three sample rows, and whether there is one.
//
// Open reads them for a small database (at most 64 exposed objects in at most
// 8 MiB); for any other, the first Describe of an object reads them, through
// Query, within DescribeTimeout, and every later call (and Known) returns
// what it read. Concurrent calls for one object share one read; a caller
// whose ctx ends first gets the object without them. What a limit stopped
// (a count that took too long) stays unknown, RowCount -1, and is not read
// again. The read is not stopped by ctx's cancellation, only bounded by
// DescribeTimeout, so that what it read serves the next caller.
func (db *DB) Describe(ctx context.Context, name string) (Object, bool) {
	i, o, ok := db.object(name)
	if !ok || o.Counted {
		return o, ok
	}
	db.stats.mu.Lock()
	e, started := db.stats.m[i]
	if !started {
		e = &statsEntry{done: make(chan struct{}), rowCount: -1}
		db.stats.m[i] = e
	}
	db.stats.mu.Unlock()
	if !started {
		// The bound starts once statements can be checked, not while the
		// check's shadow schema is still being built after Open. (A shadow
		// that could not be built fails the read below too.)
		_ = db.check.wait(ctx)
		if ctx.Err() != nil {
			// The caller went before the read began: leave the object
			// unread for the next caller rather than unknown for good.
			db.stats.mu.Lock()
			delete(db.stats.m, i)
			db.stats.mu.Unlock()
			close(e.done)
			return o, true
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DescribeTimeout)
		e.rowCount, e.sample = db.read(rctx, o)
		e.read = true
		cancel()
		close(e.done)
	}
	select {
	case <-e.done:
		e.fill(&o)
	case <-ctx.Done():
	}
	return o, true
}

// fill sets o's row count and sample from e, once e is done, if e was read.
func (e *statsEntry) fill(o *Object) {
	if e.read {
		o.RowCount, o.Sample, o.Counted = e.rowCount, e.sample, true
	}
}

// object returns the index and the exposed object called name, ignoring
// ASCII case, as Open described it, and whether there is one.
func (db *DB) object(name string) (int, Object, bool) {
	i, ok := db.byName[fold(name)]
	if !ok {
		return 0, Object{}, false
	}
	return i, db.objects[i], true
}

// Known returns the exposed object called name, as Describe does, but with
// its row count and sample only if they have been read: it never reads.
func (db *DB) Known(name string) (Object, bool) {
	i, o, ok := db.object(name)
	if !ok || o.Counted {
		return o, ok
	}
	db.stats.mu.Lock()
	e := db.stats.m[i]
	db.stats.mu.Unlock()
	if e != nil {
		select {
		case <-e.done:
			e.fill(&o)
		default:
		}
	}
	return o, true
}

// Warm describes every exposed object not yet described, one at a time, in
// name order, until ctx ends: a background worker that fills the cache
// Describe and Known read, one statement at a time, so that it never takes
// more than one of the pool's connections.
func (db *DB) Warm(ctx context.Context) {
	for _, o := range db.objects {
		if ctx.Err() != nil {
			return
		}
		db.Describe(ctx, o.Name)
	}
}

// read returns o's row count (-1 if it could not be read) and sample rows
// (nil if they could not).
func (db *DB) read(ctx context.Context, o Object) (int64, [][]any) {
	n, err := db.count(ctx, o.Name)
	if err != nil {
		n = -1
	}
	cols := make([]string, len(o.Columns))
	for i, c := range o.Columns {
		cols[i] = quoteIdent(c.Name)
	}
	sample, err := db.sample(ctx, o.Name, cols)
	if err != nil {
		sample = nil
	}
	return n, sample
}
