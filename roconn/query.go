package roconn

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Query runs one SQL statement and returns at most Limits().Rows rows.
//
// Query is the boundary: it does not assume a guard ran first. It refuses,
// with a *Refusal, a text that holds more than one statement, a NUL byte or
// parameters, or that starts with EXPLAIN (Layer "readonly"); a statement the
// authorizer denies, such as a read of a private column, a write, a PRAGMA or
// a function outside the allowlist (Layer "authorizer"); a statement whose
// compiled program would write or returns no rows (Layer "readonly"); a
// result wider than Limits().Columns or a value longer than
// Limits().ValueBytes (Layer "limit"); and a statement still running after
// Limits().Timeout, which is interrupted and never retried (Layer "timeout").
//
// If there are more rows than the limit, Query returns the first ones with
// Truncated set, together with an error wrapping ErrRowLimit. If ctx itself
// is cancelled, Query returns an error wrapping ctx's error. A text with no
// statement at all (empty, or only comments and semicolons) and other SQL
// errors (syntax, no such column) are plain errors, not refusals; SQL errors
// carry SQLite's message, to be shown to the model so it can correct itself.
func (db *DB) Query(ctx context.Context, query string) (*Result, error) {
	start := time.Now()
	stmt, err := single(query)
	if err != nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, db.lim.Timeout)
	defer cancel()
	res, err := db.run(ctx, qctx, stmt)
	if res != nil {
		res.Elapsed = time.Since(start)
	}
	return res, err
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
	}
	return sh.stmts[0], nil
}

// run compiles, checks and runs stmt on a connection of its own. parent is
// the caller's context, qctx the same with the statement's time limit.
func (db *DB) run(parent, qctx context.Context, stmt string) (*Result, error) {
	conn, err := db.pool.Conn(qctx)
	if err != nil {
		return nil, db.classify(parent, qctx, nil, err)
	}
	defer conn.Close()
	pc, err := physOf(conn)
	if err != nil {
		return nil, err
	}
	stop := pc.watch(qctx)
	defer stop()

	pc.auth.begin(stmt)
	prog, err := explain(qctx, conn, stmt)
	if err != nil {
		return nil, db.classify(parent, qctx, pc.auth, err)
	}
	if err := db.checkCompiled(qctx, stmt, prog); err != nil {
		return nil, db.classify(parent, qctx, nil, err)
	}

	pc.auth.begin(stmt)
	rows, err := conn.QueryContext(qctx, stmt)
	if err != nil {
		return nil, db.classify(parent, qctx, pc.auth, err)
	}
	defer rows.Close()
	res, err := db.collect(rows)
	if err != nil {
		if errors.Is(err, ErrRowLimit) {
			res.SQL = stmt
			return res, err
		}
		return nil, db.classify(parent, qctx, pc.auth, err)
	}
	res.SQL = stmt
	return res, nil
}

// collect reads at most Rows+1 rows, returning the first Rows and an error
// wrapping ErrRowLimit if there was one more. The number of columns was
// checked on the program (see verdict.refusal) before the statement ran.
func (db *DB) collect(rows *sql.Rows) (*Result, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: cols, Rows: [][]any{}}
	decl := make([]string, len(cols))
	if types, err := rows.ColumnTypes(); err == nil {
		for i, t := range types {
			decl[i] = t.DatabaseTypeName()
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if len(res.Rows) == db.lim.Rows {
			res.Truncated = true
			return res, fmt.Errorf("%w (the first %d rows are returned)", ErrRowLimit, db.lim.Rows)
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = value(v, decl[i])
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, rows.Close()
}

// value converts a driver value to one of the types Result documents; decl
// is the column's declared type.
func value(v any, decl string) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return "x'" + hex.EncodeToString(x) + "'"
	case time.Time:
		// The driver parses TEXT in columns declared DATE, DATETIME or
		// TIMESTAMP; give the text back in SQLite's own format.
		return sqliteTime(x, decl)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return fmt.Sprint(v)
}

// sqliteTime formats t as SQLite's date and time functions would, which is
// how such columns are conventionally stored: in a DATE column a date alone
// at midnight UTC, otherwise "YYYY-MM-DD HH:MM:SS[.SSS…]" with an offset
// when t is not in UTC. So '2021-01-01 00:00:00' in a DATETIME column comes
// back as it was stored.
func sqliteTime(t time.Time, decl string) string {
	_, off := t.Zone()
	if decl == "DATE" && off == 0 && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02")
	}
	layout := "2006-01-02 15:04:05.999999999"
	if off != 0 {
		layout += "-07:00"
	}
	return t.Format(layout)
}

// classify turns an error from compiling or running a statement into what
// Query returns. It goes by context state, the authorizer's own record and
// SQLite's result code, never by message text.
func (db *DB) classify(parent, qctx context.Context, auth *authState, err error) error {
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("roconn: query: %w", perr)
	}
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	if auth != nil {
		// SQLite reports a denial at compile time as SQLITE_ERROR "not
		// authorized", so the authorizer's record is what tells it apart.
		if reason := auth.denial(); reason != "" {
			return &Refusal{Layer: LayerAuthorizer, Reason: reason}
		}
	}
	if qctx.Err() != nil {
		return &Refusal{Layer: LayerTimeout, Reason: fmt.Sprintf("the statement ran longer than %v and was stopped", db.lim.Timeout)}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_AUTH:
			return &Refusal{Layer: LayerAuthorizer, Reason: "the statement was not authorized"}
		case sqlite3.SQLITE_READONLY:
			return &Refusal{Layer: LayerReadOnly, Reason: "the database is read-only"}
		case sqlite3.SQLITE_TOOBIG:
			return &Refusal{Layer: LayerLimit, Reason: fmt.Sprintf("a value would be longer than the limit of %d bytes", db.lim.ValueBytes)}
		}
	}
	return fmt.Errorf("roconn: query: %w", err)
}
