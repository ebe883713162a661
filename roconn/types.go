package roconn

import (
	"errors"
	"fmt"
	"time"
)

// A Layer names the part of roconn that stopped a statement. The values are
// stable: they appear in `sqlbot sql --json`, logs, metrics and evals.
type Layer string

// The layers that can stop a statement inside roconn.
const (
	// LayerAuthorizer: the SQLite authorizer denied an action (a write, a
	// read of a private column or schema table, a PRAGMA, ATTACH, a function
	// outside the allowlist).
	LayerAuthorizer Layer = "authorizer"
	// LayerReadOnly: the compiled program would write or returns no rows,
	// SQLite said the file is read-only, or the text is not exactly one plain
	// statement (two statements, EXPLAIN, parameters, a NUL byte).
	LayerReadOnly Layer = "readonly"
	// LayerLimit: too many result columns, a value or a result over its size
	// limit, a statement that needed more memory than SQLite may use, or a
	// statement text over the length limit.
	LayerLimit Layer = "limit"
	// LayerTimeout: the statement ran past its time limit and was interrupted.
	LayerTimeout Layer = "timeout"
)

// A Refusal is returned by DB.Query when roconn stopped a statement. Reason is
// one plain sentence that is safe to show to the model and the user, such as
// "not allowed to read customers.email". A stopped statement is never retried.
type Refusal struct {
	Layer  Layer
	Reason string
}

func (r *Refusal) Error() string { return fmt.Sprintf("roconn: refused (%s): %s", r.Layer, r.Reason) }

// ErrRowLimit is returned, wrapped, by DB.Query when a result has more rows
// than the limit. The returned *Result still holds the first rows.
var ErrRowLimit = errors.New("roconn: row limit reached")

// Limits bounds what one statement may cost and return. A zero field takes
// the policy's value, if it sets one, else its Default (see Open).
type Limits struct {
	Rows        int           // rows returned at most (default 200)
	Columns     int           // result columns at most (default 40)
	ValueBytes  int           // bytes per string or blob value at most (SQLITE_LIMIT_LENGTH, default 1 MiB)
	ResultBytes int           // bytes of one result at most: text and blob values, 8 per number, column names (default 8 MiB)
	Timeout     time.Duration // time per statement, from when it has a connection (default 5 s)
	// Concurrent is how many statements run at once, each on a connection
	// of its own; more wait their turn, with their time limit not yet
	// running (default 4).
	Concurrent int
	// Memory bounds the heap of SQLite in this process, all connections
	// together (sqlite3_hard_heap_limit64, which is process-wide: the
	// lowest Memory of the DBs opened in a process holds). Default 192 MiB.
	Memory int64
	// TempBytes bounds what one connection's temporary files (a sort's
	// runs, temporary tables and indexes) hold at once. Default 64 MiB.
	TempBytes int64
}

// Defaults for Limits; a zero field in Limits takes its default.
const (
	DefaultRows        = 200
	DefaultColumns     = 40
	DefaultValueBytes  = 1 << 20
	DefaultResultBytes = 8 << 20
	DefaultTimeout     = 5 * time.Second
	DefaultConcurrent  = 4
	DefaultMemory      = 192 << 20
	DefaultTempBytes   = 64 << 20
)

// A Result is what one statement returned.
//
// Rows is never nil. Its values are nil, int64, float64 or string: a BLOB
// comes back as a string when it is valid UTF-8, else as hex "x'..'", and
// TEXT exactly as stored, whatever the column's declared type (a DATETIME
// column's '2021-01-01 00:00:00' comes back as that text).
type Result struct {
	SQL       string   // the statement as run: the query without a trailing ';' and what follows it
	Columns   []string // result column names
	Rows      [][]any  // at most Limits.Rows rows; none from Stream, which gives them as they are read
	Truncated bool     // true when rows beyond Limits.Rows were cut (Query also returns ErrRowLimit)
	Elapsed   time.Duration
}

// An Object is one exposed table or view as the model sees it.
type Object struct {
	Name     string
	About    string // the policy's description, may be empty
	IsView   bool
	Columns  []Column
	Foreign  []ForeignKey // for tables, only keys into exposed objects; views have none
	RowCount int64        // -1 if not counted (yet), or if counting was stopped by a limit
	Sample   [][]any      // up to 3 rows, read through the same guarded connection; nil if not read or stopped by a limit
	Counted  bool         // RowCount and Sample have been read (or tried, and stopped by a limit)
}

// A Column is one column of an exposed object.
type Column struct {
	Name    string
	Type    string // declared type, may be empty
	Meaning string // from the policy, may be empty
}

// A ForeignKey says Column refers to RefTable.RefColumn.
type ForeignKey struct {
	Column, RefTable, RefColumn string
}
