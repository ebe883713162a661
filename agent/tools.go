package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"unicode/utf8"

	"sqlbot/roconn"
)

// Bounds on what one tool message may carry back to the model. The Result
// keeps every row; the model sees a prefix that fits, and is told so.
const (
	maxToolBytes  = 16 << 10 // bytes of JSON rows per tool message
	maxValueBytes = 500      // bytes of one string value shown to the model
)

// runTool runs one tool call, records it in res, and returns the tool
// message's content, always JSON. Refusals, SQL errors, unknown tools and bad
// arguments are results for the model, not errors: runTool returns an error
// only when ctx has ended.
func (a *Agent) runTool(ctx context.Context, res *Result, name, args string) (string, error) {
	var (
		out    string
		status = StatusOK
	)
	switch name {
	case toolListTables:
		out = a.tables
	case toolDescribe:
		var in struct {
			Table string `json:"table"`
			Name  string `json:"name"` // a common slip; accepted
		}
		if perr := parseArgs(args, &in); perr != nil {
			out, status = encode(errorJSON{perr.Error()}), StatusError
			break
		}
		if in.Table == "" {
			in.Table = in.Name
		}
		out, status = a.describe(in.Table)
	case toolRunSQL:
		var in struct {
			SQL   string `json:"sql"`
			Query string `json:"query"` // a common slip; accepted
		}
		if perr := parseArgs(args, &in); perr != nil {
			out, status = encode(errorJSON{perr.Error()}), StatusError
			break
		}
		if in.SQL == "" {
			in.SQL = in.Query
		}
		v, st, err := a.runSQL(ctx, res, in.SQL)
		if err != nil {
			return "", err
		}
		out, status = encode(v), st
	default:
		out, status = encode(errorJSON{"unknown tool: " + clip(name, 64) + "; " + knownToolsPhrase}), StatusError
	}
	res.Trace = append(res.Trace, Step{Tool: name, Args: args, Status: status})
	a.log.LogAttrs(ctx, slog.LevelDebug, "agent: tool", slog.String("tool", clip(name, 64)),
		slog.String("status", string(status)), slog.Int("args_bytes", len(args)))
	return out, nil
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
}

type tableJSON struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	About string `json:"about,omitempty"`
	Rows  *int64 `json:"rows,omitempty"` // nil when roconn could not count them
}

func tableOf(o roconn.Object) tableJSON {
	t := tableJSON{Name: o.Name, Kind: kind(o), About: oneLine(o.About)}
	if o.RowCount >= 0 {
		n := o.RowCount
		t.Rows = &n
	}
	return t
}

type columnJSON struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Meaning string `json:"meaning,omitempty"`
}

type foreignJSON struct {
	Column     string `json:"column"`
	References string `json:"references"`
}

type sampleJSON struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

type describeJSON struct {
	tableJSON
	Columns     []columnJSON  `json:"columns"`
	ForeignKeys []foreignJSON `json:"foreign_keys,omitempty"`
	Sample      sampleJSON    `json:"sample"`
}

func kind(o roconn.Object) string {
	if o.IsView {
		return "view"
	}
	return "table"
}

// describeObjects encodes the answers of list_tables and describe_table for
// objs, once: they depend on nothing else.
func (a *Agent) describeObjects(objs []roconn.Object) {
	ts := make([]tableJSON, len(objs))
	names := make([]string, len(objs))
	a.described = make(map[string]string, len(objs))
	for i, o := range objs {
		ts[i] = tableOf(o)
		names[i] = o.Name
		d := describeJSON{
			tableJSON: ts[i],
			Columns:   make([]columnJSON, len(o.Columns)),
			Sample:    sampleJSON{Columns: make([]string, len(o.Columns)), Rows: make([][]any, 0, len(o.Sample))},
		}
		for j, c := range o.Columns {
			d.Columns[j] = columnJSON{Name: c.Name, Type: c.Type, Meaning: oneLine(c.Meaning)}
			d.Sample.Columns[j] = c.Name
		}
		for _, fk := range o.Foreign {
			d.ForeignKeys = append(d.ForeignKeys, foreignJSON{Column: fk.Column, References: fk.RefTable + "." + fk.RefColumn})
		}
		for _, r := range o.Sample {
			d.Sample.Rows = append(d.Sample.Rows, sanitizeRow(r))
		}
		a.described[o.Name] = encode(d)
	}
	a.tables = encode(struct {
		Tables []tableJSON `json:"tables"`
	}{ts})
	a.names = strings.Join(names, ", ")
}

// describe answers describe_table. A name that is not exposed gets the same
// answer whether or not such a table exists, so the model learns nothing
// about hidden tables. The name's case, quotes and a "main." schema prefix
// are forgiven.
func (a *Agent) describe(name string) (string, Status) {
	n := strings.Trim(strings.TrimSpace(name), "\"`[]'")
	if len(n) > 5 && strings.EqualFold(n[:5], "main.") {
		n = n[5:]
	}
	if o, ok := a.db.Object(n); ok { // roconn's lookup ignores case
		if d, ok := a.described[o.Name]; ok {
			return d, StatusOK
		}
	}
	return encode(errorJSON{fmt.Sprintf("unknown table: %s; the tables you may read are: %s",
		clip(name, 64), a.names)}), StatusError
}

// runSQL passes sql through the guard and then the Querier, records the
// Statement, and returns what the model is told. It returns an error only
// when ctx has ended.
func (a *Agent) runSQL(ctx context.Context, res *Result, sql string) (any, Status, error) {
	sql = strings.TrimSpace(sql)
	record := func(s Statement) { res.Statements = append(res.Statements, s) }
	if sql == "" { // an argument error, like bad JSON: no statement to record
		return errorJSON{`run_sql needs {"sql": "SELECT ..."}`}, StatusError, nil
	}
	qr, err := a.checked.Query(ctx, sql)
	if layer, reason, ok := RefusalOf(err); ok {
		record(Statement{SQL: sql, Status: StatusRefused, Layer: layer, Reason: reason})
		return refusalJSON{Refused: true, Layer: layer, Reason: reason}, StatusRefused, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		record(Statement{SQL: sql, Status: StatusError, Reason: "stopped: " + cerr.Error()})
		return nil, "", cerr
	}
	if err == nil || errors.Is(err, roconn.ErrRowLimit) { // roconn returns the first rows with ErrRowLimit
		record(Statement{SQL: sql, Status: StatusOK})
		res.FinalSQL = sql
		res.Columns = qr.Columns
		res.Rows = qr.Rows
		res.Truncated = qr.Truncated
		return rowsForModel(qr.Columns, qr.Rows, res.Truncated), StatusOK, nil
	}
	reason := a.sqlError(ctx, err)
	record(Statement{SQL: sql, Status: StatusError, Reason: reason})
	return errorJSON{reason}, StatusError, nil
}

// sqlError is what the model is told of a statement that failed without a
// refusal: SQLite's own message ("no such column: Nmae"), which names only
// what the statement wrote, or, for anything else (which should not happen:
// the guard refuses an empty statement), a fixed sentence. The full error
// goes to the debug log.
func (a *Agent) sqlError(ctx context.Context, err error) string {
	var se *roconn.SQLError
	if errors.As(err, &se) {
		return clip(se.Message, 500)
	}
	a.log.LogAttrs(ctx, slog.LevelDebug, "agent: statement failed", slog.Any("err", err))
	return "the statement could not be run"
}

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
			if math.IsNaN(v) || math.IsInf(v, 0) {
				out[i] = fmt.Sprint(v)
				continue
			}
			out[i] = v
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
	return fmt.Sprintf("%s... (%d bytes)", clip(s, maxValueBytes), len(s))
}

// clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
