package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"sqlbot/agent/present"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// The names of the three tools.
const (
	ToolListTables    = "list_tables"
	ToolDescribeTable = "describe_table"
	ToolRunSQL        = "run_sql"
)

// Tools are the three tools a model may call, over one database: list_tables
// and describe_table, which answer from what the policy exposes (the
// Querier's Objects, Known and Describe, never model-written SQL), and run_sql, which runs one
// statement through Checked (the guard, then the read-only connection).
// Agent.Ask offers them to its Model; they can be called without one, by
// name and JSON arguments (Call) or typed (Tables, Describe, RunSQL), with
// the same guard, connection, policy and limits. Tools are safe for
// concurrent use.
type Tools struct {
	db      Querier
	checked Checked
	log     *slog.Logger
	names   string // the exposed names, comma-separated, for an unknown table

	// describe_table's answers, once the object's row count and sample
	// have been read (by the Querier's Describe, on the first call).
	mu        sync.Mutex
	described map[string]described // by object name
}

type described struct {
	desc Description
	json string
}

// NewTools returns the tools over q, whose statements go through g first.
// Logs (at debug level, never the SQL) go to lg (nil: discarded). It reads
// no data: row counts and samples are q's to read, when a tool needs them.
func NewTools(q Querier, g *guard.Guard, lg *slog.Logger) *Tools {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	t := &Tools{db: q, checked: Checked{Guard: g, DB: q}, log: lg, described: map[string]described{}}
	objs := q.Objects()
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Name
	}
	t.names = strings.Join(names, ", ")
	return t
}

// description is describe_table's answer for o.
func description(o roconn.Object) Description {
	d := Description{
		Table:   tableOf(o),
		Columns: make([]Column, len(o.Columns)),
		Sample:  Sample{Columns: make([]string, len(o.Columns)), Rows: make([][]any, 0, len(o.Sample))},
	}
	for j, c := range o.Columns {
		d.Columns[j] = Column{Name: c.Name, Type: c.Type, Meaning: present.OneLine(c.Meaning)}
		d.Sample.Columns[j] = c.Name
	}
	for _, fk := range o.Foreign {
		d.ForeignKeys = append(d.ForeignKeys, ForeignKey{Column: fk.Column, References: fk.RefTable + "." + fk.RefColumn})
	}
	for _, r := range o.Sample {
		d.Sample.Rows = append(d.Sample.Rows, sanitizeRow(r))
	}
	return d
}

// Defs returns the tools' definitions, in the order list_tables,
// describe_table, run_sql. Their bytes never change, so they stay inside a
// provider's cached prefix.
func (t *Tools) Defs() []ToolDef {
	return []ToolDef{
		{ToolListTables,
			"List the tables and views you may read, with what each holds and its row count.",
			json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
		{ToolDescribeTable,
			"Describe one table or view: its columns with types and meanings, its foreign keys and 3 sample rows.",
			json.RawMessage(`{"type":"object","properties":{"table":{"type":"string","description":"a name from list_tables"}},"required":["table"],"additionalProperties":false}`)},
		{ToolRunSQL,
			"Run one read-only SQLite SELECT (or WITH ... SELECT) statement and return its rows as JSON. Results are capped; aggregate in SQL rather than fetching many rows.",
			json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string","description":"one SQLite SELECT statement"}},"required":["sql"],"additionalProperties":false}`)},
	}
}

// A Table is one table or view the policy exposes, as list_tables lists it.
type Table struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // "table" or "view"
	About string `json:"about,omitempty"`
	Rows  *int64 `json:"rows,omitempty"` // nil when not counted yet, or when the count was stopped by a limit
}

// A Description is describe_table's answer for one exposed table or view.
type Description struct {
	Table
	Columns     []Column     `json:"columns"`
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"` // only keys into exposed objects
	Sample      Sample       `json:"sample"`
}

// A Column is one column of a Description.
type Column struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Meaning string `json:"meaning,omitempty"`
}

// A ForeignKey says Column refers to References ("table.column").
type ForeignKey struct {
	Column     string `json:"column"`
	References string `json:"references"`
}

// A Sample is up to 3 rows of an object, its long strings clipped.
type Sample struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

func tableOf(o roconn.Object) Table {
	t := Table{Name: o.Name, Kind: kind(o), About: present.OneLine(o.About)}
	if o.RowCount >= 0 {
		n := o.RowCount
		t.Rows = &n
	}
	return t
}

func kind(o roconn.Object) string {
	if o.IsView {
		return "view"
	}
	return "table"
}

// Tables returns list_tables' answer: every exposed table and view, with
// the row counts read so far. It reads nothing.
func (t *Tools) Tables() []Table {
	objs := t.db.Objects()
	out := make([]Table, len(objs))
	for i, o := range objs {
		if k, ok := t.db.Known(o.Name); ok {
			o = k
		}
		out[i] = tableOf(o)
	}
	return out
}

// uncountedNote goes with a list_tables answer in which a table has no row
// count.
const uncountedNote = "a table without rows has not been counted yet, or its count took too long: describe_table counts it, or count it with run_sql"

// tablesJSON is list_tables' answer as JSON.
func (t *Tools) tablesJSON() string {
	tables := t.Tables()
	note := ""
	if slices.ContainsFunc(tables, func(tb Table) bool { return tb.Rows == nil }) {
		note = uncountedNote
	}
	return encode(struct {
		Tables []Table `json:"tables"`
		Note   string  `json:"note,omitempty"`
	}{tables, note})
}

// Describe returns describe_table's answer for name, and false when no
// exposed object has that name: whether or not such a table exists, so that
// the caller learns nothing about hidden tables. The name's case, quotes and
// a "main." schema prefix are forgiven. The first call for an object may
// read its row count and sample rows (bounded: see roconn.DB.Describe);
// later calls answer from what it read.
func (t *Tools) Describe(ctx context.Context, name string) (Description, bool) {
	d, ok := t.describe(ctx, name)
	return d.desc, ok
}

func (t *Tools) describe(ctx context.Context, name string) (described, bool) {
	n := strings.Trim(strings.TrimSpace(name), "\"`[]'")
	if len(n) > 5 && strings.EqualFold(n[:5], "main.") {
		n = n[5:]
	}
	o, ok := t.db.Object(n) // roconn's lookup ignores case
	if !ok {
		return described{}, false
	}
	t.mu.Lock()
	d, ok := t.described[o.Name]
	t.mu.Unlock()
	if ok {
		return d, true
	}
	o, _ = t.db.Describe(ctx, o.Name)
	desc := description(o)
	d = described{desc: desc, json: encode(desc)}
	if o.Counted { // else ctx ended first: the next call reads again
		t.mu.Lock()
		t.described[o.Name] = d
		t.mu.Unlock()
	}
	return d, true
}

// A Run is what run_sql did with one statement.
type Run struct {
	// Statement is the statement as given (trimmed), its status, and for a
	// refusal the layer and its reason.
	Statement Statement
	// Result holds the rows when Statement.Status is StatusOK: at most the
	// row cap, with Truncated set when more were cut. Nil otherwise.
	Result *roconn.Result
	// Hints name the string literals the statement compared to a column
	// that holds none of them, with the values it does hold (see
	// ValueHint). Only for a statement that ran.
	Hints []ValueHint
}

// RunSQL runs one statement as run_sql does: through the guard, then the
// read-only connection. A refusal, an SQL error and a result cut at the row
// cap are all in the Run; RunSQL returns an error only when ctx has ended.
// When the statement ran, RunSQL also checks the string literals it compared
// to readable columns, and the Run's Hints list those the columns do not
// hold with the values they do (a few bounded lookups on the same path).
func (t *Tools) RunSQL(ctx context.Context, sql string) (Run, error) {
	sql = strings.TrimSpace(sql)
	qr, err := t.checked.Query(ctx, sql)
	if layer, reason, ok := RefusalOf(err); ok {
		return Run{Statement: Statement{SQL: sql, Status: StatusRefused, Layer: layer, Reason: reason}}, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return Run{Statement: Statement{SQL: sql, Status: StatusError, Reason: "stopped: " + cerr.Error()}}, cerr
	}
	if err == nil || errors.Is(err, roconn.ErrRowLimit) { // roconn returns the first rows with ErrRowLimit
		return Run{Statement: Statement{SQL: sql, Status: StatusOK}, Result: qr, Hints: t.ground(ctx, sql)}, nil
	}
	return Run{Statement: Statement{SQL: sql, Status: StatusError, Reason: t.sqlError(ctx, err)}}, nil
}

// sqlError is what the model is told of a statement that failed without a
// refusal: SQLite's own message ("no such column: Nmae"), which names only
// what the statement wrote, or, for anything else (which should not happen:
// the guard refuses an empty statement), a fixed sentence. The full error
// goes to the debug log.
func (t *Tools) sqlError(ctx context.Context, err error) string {
	var se *roconn.SQLError
	if errors.As(err, &se) {
		return present.Clip(se.Message, 500)
	}
	t.log.LogAttrs(ctx, slog.LevelDebug, "agent: statement failed", slog.Any("err", err))
	return "the statement could not be run"
}

// A ToolResult is what one call of a tool did.
type ToolResult struct {
	Status Status
	// Content is the tool's answer as JSON, for the model (or an MCP
	// client): tables, a description, rows, a refusal ({"refused": true,
	// "layer", "reason"}) or an error ({"error": "..."}). Data in it is
	// never an instruction.
	Content string
	// Run is set for a run_sql call that got as far as a statement.
	Run *Run
}

// Call runs the tool name with args, the JSON arguments as a model wrote
// them: an empty string counts as {}, arguments that arrive double-encoded
// (a JSON string holding the object) are decoded once more, and the common
// slips {"name": …} for describe_table and {"query": …} for run_sql are
// accepted. Refusals, SQL errors, unknown tools and bad arguments are
// results; Call returns an error only when ctx has ended.
func (t *Tools) Call(ctx context.Context, name, args string) (ToolResult, error) {
	switch name {
	case ToolListTables:
		return ToolResult{Status: StatusOK, Content: t.tablesJSON()}, nil
	case ToolDescribeTable:
		var in struct {
			Table string `json:"table"`
			Name  string `json:"name"` // a common slip; accepted
		}
		if err := parseArgs(args, &in); err != nil {
			return errorResult(err.Error()), nil
		}
		table := cmp.Or(in.Table, in.Name)
		if d, ok := t.describe(ctx, table); ok {
			return ToolResult{Status: StatusOK, Content: d.json}, nil
		}
		return errorResult(fmt.Sprintf("unknown table: %s; the tables you may read are: %s", present.Clip(table, 64), t.names)), nil
	case ToolRunSQL:
		var in struct {
			SQL   string `json:"sql"`
			Query string `json:"query"` // a common slip; accepted
		}
		if err := parseArgs(args, &in); err != nil {
			return errorResult(err.Error()), nil
		}
		sql := strings.TrimSpace(cmp.Or(in.SQL, in.Query))
		if sql == "" { // an argument error, like bad JSON: no statement
			return errorResult(`run_sql needs {"sql": "SELECT ..."}`), nil
		}
		run, err := t.RunSQL(ctx, sql)
		if err != nil {
			return ToolResult{Status: StatusError, Run: &run}, err
		}
		return ToolResult{Status: run.Statement.Status, Content: encode(forModel(run)), Run: &run}, nil
	}
	return errorResult("unknown tool: " + present.Clip(name, 64) + "; use " + ToolListTables + ", " + ToolDescribeTable + " or " + ToolRunSQL), nil
}

func errorResult(msg string) ToolResult {
	return ToolResult{Status: StatusError, Content: encode(errorJSON{msg})}
}

// forModel is what the model is shown of a Run.
func forModel(run Run) any {
	st := run.Statement
	switch st.Status {
	case StatusRefused:
		return refusalJSON{Refused: true, Layer: st.Layer, Reason: st.Reason}
	case StatusOK:
		out := rowsForModel(run.Result.Columns, run.Result.Rows, run.Result.Truncated)
		if len(run.Hints) > 0 {
			out.UnknownValues = run.Hints
			out.Note = strings.TrimSpace(out.Note + "; " + unknownValuesNote)
			out.Note = strings.TrimPrefix(out.Note, "; ")
		}
		return out
	}
	return errorJSON{st.Reason}
}

// encode returns v as JSON, or a JSON error if json cannot encode it (which
// sanitizeRow should prevent).
func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorJSON{"the result could not be encoded as JSON: " + err.Error()})
	}
	return string(b)
}

// parseArgs decodes a tool call's arguments into v. An empty string counts
// as {}. Arguments that arrive double-encoded (a JSON string holding the
// object), as some servers send them, are decoded once more.
func parseArgs(args string, v any) error {
	args = strings.TrimSpace(args)
	if args == "" {
		args = "{}"
	}
	err := json.Unmarshal([]byte(args), v)
	if err == nil {
		return nil
	}
	var inner string
	if json.Unmarshal([]byte(args), &inner) == nil {
		if json.Unmarshal([]byte(inner), v) == nil {
			return nil
		}
	}
	return fmt.Errorf("arguments are not valid JSON: %v", err)
}

type errorJSON struct {
	Error string `json:"error"`
}

type refusalJSON struct {
	Refused bool   `json:"refused"`
	Layer   Layer  `json:"layer"`
	Reason  string `json:"reason"`
}

type rowsJSON struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	RowCount  int      `json:"row_count"`
	Truncated bool     `json:"truncated"`
	Note      string   `json:"note,omitempty"`
	// UnknownValues lists literals compared to columns that do not hold them.
	UnknownValues []ValueHint `json:"unknown_values,omitempty"`
}

const unknownValuesNote = "a value this statement compares to a column does not occur in it; unknown_values lists what the column holds: use one of those"

// Bounds on what one tool message may carry back to the model. The Run
// keeps every row; the model sees a prefix that fits, and is told so.
const (
	maxToolBytes  = 16 << 10 // bytes of JSON rows per tool message
	maxValueBytes = 500      // bytes of one string value shown to the model
)

// rowsForModel builds run_sql's JSON result. The first row is always shown
// (its long strings clipped, as in every row), and the next ones while they
// fit in maxToolBytes; a note says what was left out. row_count is always
// the number of rows the statement returned (at most the row cap).
func rowsForModel(cols []string, rows [][]any, truncated bool) rowsJSON {
	out := rowsJSON{Columns: cols, RowCount: len(rows), Truncated: truncated}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	out.Rows = make([][]any, 0, len(rows))
	size := 0
	for i, r := range rows {
		sr := sanitizeRow(r)
		size += rowSize(sr)
		if i > 0 && size > maxToolBytes { // the first row is shown however wide
			break
		}
		out.Rows = append(out.Rows, sr)
	}
	if len(out.Rows) < len(rows) {
		out.Note = fmt.Sprintf("only the first %d of %d rows are shown here; aggregate in SQL to see more", len(out.Rows), len(rows))
	} else if truncated {
		out.Note = "more rows exist than the row cap; aggregate or filter in SQL"
	}
	return out
}

// rowSize estimates a row's JSON size without encoding it.
func rowSize(r []any) int {
	n := 2
	for _, v := range r {
		switch v := v.(type) {
		case string:
			n += len(v) + 3
		default:
			n += 12
		}
	}
	return n
}

// sanitizeRow returns a copy of r (whose values are roconn's: nil, int64,
// float64 or string) that json can encode and that does not flood the model:
// NaN and infinities become strings and long strings are clipped.
func sanitizeRow(r []any) []any {
	out := make([]any, len(r))
	for i, v := range r {
		switch v := v.(type) {
		case float64:
			out[i] = present.JSONValue(v)
		case string:
			out[i] = clipValue(v)
		default:
			out[i] = v
		}
	}
	return out
}

func clipValue(s string) string {
	if len(s) <= maxValueBytes {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", present.Clip(s, maxValueBytes), len(s))
}
