package roconn

import (
	"context"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// Query runs one SQL statement and returns at most Limits().Rows rows.
//
// Query is the boundary: it does not assume a guard ran first. It refuses,
// with a *Refusal, a text that holds more than one statement, a NUL byte or
// parameters, or that starts with EXPLAIN (Layer "readonly"); a statement the
// authorizer denies, such as a read of a private column, a write, a PRAGMA or
// a function outside the allowlist (Layer "authorizer"); a statement whose
// compiled program would write or returns no rows, or that SQLite compiled
// again after its program was checked (Layer "readonly"); a result wider than
// Limits().Columns, a value longer than Limits().ValueBytes, a result larger
// than Limits().ResultBytes, a statement that needed more memory than
// Limits().Memory, and a statement text over 100,000 bytes (Layer "limit");
// and a statement still running after Limits().Timeout, which is interrupted
// and never retried (Layer "timeout").
//
// The time limit runs from when the statement has a connection: waiting for
// one, while Limits().Concurrent others run, is bounded by ctx alone. Once it
// has one, Query returns within the time limit plus 25 ms (plus scheduling)
// whatever SQLite is doing (see the package doc).
//
// If there are more rows than the limit, Query returns the first ones with
// Truncated set, together with an error wrapping ErrRowLimit. If ctx itself
// is cancelled, Query returns an error wrapping ctx's error. A text with no
// statement at all (empty, or only comments and semicolons) and other SQL
// errors (syntax, no such column) are not refusals: they wrap an *SQLError,
// whose Message is SQLite's, to be shown to the model so it can correct
// itself.
func (db *DB) Query(ctx context.Context, query string) (*Result, error) {
	return db.run(ctx, query, nil)
}

// Stream runs query as Query does, with every check and limit of Query,
// but gives each row to each as it is read instead of keeping it: the
// Result it returns has no Rows. each runs on the calling goroutine; head
// holds the statement as run and its columns (the same every call), row one
// row, which each may keep. The row and byte limits count every row given.
//
// Every row given comes from the program that was checked (a statement that
// SQLite compiled again is refused before its first row), but a limit can
// still stop the statement after some rows were given: Stream then returns
// the refusal, and the caller says that the rows it showed are not the whole
// result. If each returns an error, the statement is stopped and Stream
// returns that error. The time limit counts the time each takes: a
// statement whose caller is slow to take its rows (it reads at most
// streamBuffer ahead) is stopped at the limit even while each is still
// running, and one whose each panics is stopped at once.
func (db *DB) Stream(ctx context.Context, query string, each func(head *Result, row []any) error) (*Result, error) {
	if each == nil {
		return nil, errors.New("roconn: stream: no function for the rows")
	}
	return db.run(ctx, query, each)
}

// A streamed row is one row on its way from the statement's goroutine to
// Stream's caller.
type streamed struct {
	head *Result
	row  []any
}

// run is Query, and Stream when each is not nil.
func (db *DB) run(ctx context.Context, query string, each func(*Result, []any) error) (*Result, error) {
	start := time.Now()
	if db.hooks.onQuery != nil {
		db.hooks.onQuery(query)
	}
	stmt, err := single(query)
	if err != nil {
		return nil, err
	}
	var rows chan streamed
	if each != nil {
		rows = make(chan streamed, streamBuffer)
	}
	j, err := db.pool.start(ctx, func(ctx context.Context, pc *physConn) (*Result, error) { return db.execute(ctx, pc, stmt, rows) })
	if err != nil {
		return nil, fmt.Errorf("roconn: query: %w", err)
	}
	res, err := db.wait(ctx, j, rows, each)
	if res != nil {
		res.Elapsed = time.Since(start)
	}
	return res, err
}

// streamBuffer is how many rows a streamed statement may read ahead of its
// caller.
const streamBuffer = 16

// wait waits for j, for the time limit, which runs from when j got its
// connection, and for ctx, giving each row that arrives on rows to each. At
// the limit, when ctx ends, or when each fails, it interrupts the statement
// and gives it grace to return; past that it abandons it, so control returns
// within the limit plus grace whatever SQLite is doing.
func (db *DB) wait(ctx context.Context, j *job, rows chan streamed, each func(*Result, []any) error) (*Result, error) {
	limit := time.NewTimer(db.lim.Timeout)
	defer limit.Stop()
	give := func(r streamed) error { return each(r.head, r.row) }
	if rows != nil {
		// While each runs, nothing here watches the limit: the statement
		// is stopped at it all the same, and waits no longer for a
		// caller that is slow to take its rows.
		atLimit := time.AfterFunc(db.lim.Timeout, func() { db.pool.stop(j) })
		defer atLimit.Stop()
		give = func(r streamed) error {
			// A caller that panics (or ends its goroutine) in each leaves
			// no statement behind holding its connection.
			ended := false
			defer func() {
				if !ended {
					db.pool.stop(j)
					db.pool.abandon(j)
				}
			}()
			err := each(r.head, r.row)
			ended = true
			return err
		}
	}
	var stopped error
	for stopped == nil {
		select {
		case <-j.done:
			if j.stopped.Load() {
				stopped = db.timedOut() // at the limit, while each ran
				break
			}
			// The statement has ended: what it read is all in the buffer.
			for {
				select {
				case r := <-rows:
					if err := give(r); err != nil {
						return nil, err
					}
				default:
					return j.res, j.err
				}
			}
		case r := <-rows:
			if err := give(r); err != nil {
				stopped = err
			}
		case <-limit.C:
			stopped = db.timedOut()
		case <-ctx.Done():
			stopped = fmt.Errorf("roconn: query: %w", ctx.Err())
		}
	}
	db.pool.stop(j)
	g := time.NewTimer(grace)
	defer g.Stop()
	select {
	case <-j.done:
	case <-g.C:
		if db.pool.abandon(j) {
			return nil, stopped
		}
		<-j.done // it ended just now
	}
	// A statement that finished in spite of the interrupt stands, unless
	// the caller has gone; a streamed one does not, as rows it read past
	// the interrupt were dropped.
	if rows == nil && ctx.Err() == nil && (j.err == nil || errors.Is(j.err, ErrRowLimit)) {
		return j.res, j.err
	}
	return nil, stopped
}

// timedOut is the refusal for a statement stopped at the time limit.
func (db *DB) timedOut() *Refusal {
	return &Refusal{Layer: LayerTimeout, Reason: fmt.Sprintf("the statement ran longer than %v and was stopped", db.lim.Timeout)}
}

// single checks the shape of query and returns its one statement.
func single(query string) (string, error) {
	sh := scan(query)
	switch {
	case sh.nul:
		return "", &Refusal{Layer: LayerReadOnly, Reason: "the statement contains a NUL byte"}
	case len(sh.stmts) == 0:
		return "", errors.New("roconn: query: the statement is empty")
	case len(sh.stmts) > 1:
		return "", &Refusal{Layer: LayerReadOnly, Reason: "only one statement may run at a time"}
	case sh.first == "explain":
		return "", &Refusal{Layer: LayerReadOnly, Reason: "EXPLAIN is not allowed"}
	case sh.params:
		return "", &Refusal{Layer: LayerReadOnly, Reason: "parameters (? : @ $ #) are not allowed; write values inline"}
	case len(sh.stmts[0]) > maxSQLBytes:
		return "", &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf("the statement is longer than the limit of %d bytes", maxSQLBytes)}
	}
	return sh.stmts[0], nil
}

// classify turns an error from compiling or running a statement into what
// Query returns. It goes by the authorizer's own record and SQLite's result
// code, never by message text. It runs on the statement's goroutine, before
// the connection (and its authorizer state) is let go of.
func (db *DB) classify(auth *authState, err error) error {
	var r *Refusal
	if errors.As(err, &r) || errors.Is(err, ErrRowLimit) {
		return err
	}
	if auth != nil {
		// SQLite reports a denial at compile time as SQLITE_ERROR "not
		// authorized", so the authorizer's record is what tells it apart.
		if reason := auth.denial(); reason != "" {
			return &Refusal{Layer: LayerAuthorizer, Reason: reason}
		}
	}
	code, ok := 0, false
	var se *SQLError
	var de interface{ Code() int } // modernc.org/sqlite's own errors
	switch {
	case errors.As(err, &se):
		code, ok = se.Code, true
	case errors.As(err, &de):
		code, ok = de.Code(), true
	}
	if ok {
		switch code & 0xff { // the primary result code
		case sqlite3.SQLITE_AUTH:
			return &Refusal{Layer: LayerAuthorizer, Reason: "the statement was not authorized"}
		case sqlite3.SQLITE_READONLY:
			return &Refusal{Layer: LayerReadOnly, Reason: "the database is read-only"}
		case sqlite3.SQLITE_TOOBIG:
			return &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf("a value would be longer than the limit of %d bytes", db.lim.ValueBytes)}
		case sqlite3.SQLITE_NOMEM:
			return db.outOfMemory()
		case sqlite3.SQLITE_FULL:
			return &Refusal{Layer: LayerLimit, Reason: "the statement needed more temporary storage than is allowed"}
		}
	}
	return fmt.Errorf("roconn: query: %w", err)
}
