package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"sqlbot/agent"
	"sqlbot/agent/present"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// sql runs one statement through the guard and the read-only connection,
// exactly as a statement from the model would go.
func (a *app) sql(ctx context.Context, args []string) error {
	fs, f := a.dbFlagSet("sql", "usage: sqlbot sql [--db PATH] [--policy FILE] [--json] SQL")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return &exitErr{code: exitUsage}
	}
	query := strings.Join(fs.Args(), " ")
	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()

	if *asJSON {
		res, err := agent.Checked{Guard: guard.New(db.Limits().Rows), DB: db}.Query(ctx, query)
		if layer, reason, ok := agent.RefusalOf(err); ok {
			return a.printJSONCode(exitRefused, map[string]any{"refused": true, "layer": layer, "reason": reason})
		}
		if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
			return a.printJSONCode(exitError, map[string]any{"error": err.Error()})
		}
		return a.printJSONCode(exitOK, sqlJSON(res))
	}

	// The guard, then roconn, as agent.Checked runs them, with the rows
	// printed as they are read.
	stmt, err := guard.New(db.Limits().Rows).Check(query)
	var tab *tableWriter
	var held *time.Timer
	var res *roconn.Result
	if err == nil {
		res, err = db.Stream(ctx, stmt, func(head *roconn.Result, row []any) error {
			if tab == nil {
				fmt.Fprintf(a.stdout, "%s\n\n", present.Block(head.SQL))
				tab = newTableWriter(a.stdout, head.Columns)
				held = time.AfterFunc(tableHold, tab.start)
			}
			tab.add(row)
			return nil
		})
	}
	if tab != nil {
		held.Stop()
	}
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		if tab != nil {
			// The rows printed stand: each came from the checked program.
			// They are not the whole result.
			tab.close()
			fmt.Fprintf(a.stdout, "(%s read before the statement was stopped; not the whole result)\n", present.Plural(tab.count(), "row"))
		}
		if layer, reason, ok := agent.RefusalOf(err); ok {
			fmt.Fprintf(a.stdout, "refused by %s (%s): %s\n", layer.Name(), layer, present.Line(reason))
			return &exitErr{code: exitRefused}
		}
		return a.statementError(ctx, "the statement", err)
	}
	if tab == nil {
		fmt.Fprintf(a.stdout, "%s\n\n", present.Block(res.SQL))
		tab = newTableWriter(a.stdout, res.Columns)
	}
	tab.close()
	fmt.Fprintf(a.stdout, "(%s, %.0f ms)\n", rowsNote(tab.count(), res.Truncated), float64(res.Elapsed.Microseconds())/1000)
	return nil
}

// tableHold is how long `sql` holds the first rows of a result, to size the
// table's columns by them, before it prints them and every later row as
// it is read. Most results are read whole well within it.
const tableHold = 250 * time.Millisecond

// statementError is what a person is told of a statement (which) that
// failed without a refusal: SQLite's own words about it ("no such column:
// x"), which name only what the statement wrote; any other error (which the
// guard should make impossible) as a fixed sentence, with the error in the
// debug log.
func (a *app) statementError(ctx context.Context, which string, err error) error {
	var se *roconn.SQLError
	if errors.As(err, &se) {
		return fmt.Errorf("%s failed: %s", which, present.Line(se.Message))
	}
	a.log.DebugContext(ctx, "statement failed", "which", which, "err", err)
	return fmt.Errorf("%s could not be run (SQLBOT_LOG_LEVEL=debug logs why)", which)
}

func sqlJSON(res *roconn.Result) map[string]any {
	return map[string]any{
		"sql": res.SQL, "columns": res.Columns, "rows": present.JSONRows(res.Rows), "row_count": len(res.Rows),
		"truncated": res.Truncated, "elapsed_ms": res.Elapsed.Milliseconds(),
	}
}

func rowsNote(n int, truncated bool) string {
	s := present.Plural(n, "row")
	if truncated {
		s += ", cut at the row cap"
	}
	return s
}

// printJSONCode prints v as one indented JSON object and exits with code.
// JSON escapes the C0 controls itself; the C1 and bidi controls, which it
// may print as they are, are escaped too (\u202e), so that the output is
// the same JSON and reads safely in a terminal.
func (a *app) printJSONCode(code int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	var out strings.Builder
	for _, r := range buf.String() {
		if r >= 0x80 && !present.IsSafe(r) {
			fmt.Fprintf(&out, "\\u%04x", r)
			continue
		}
		out.WriteRune(r)
	}
	if _, err := io.WriteString(a.stdout, out.String()); err != nil {
		return err
	}
	if code == exitOK {
		return nil
	}
	return &exitErr{code: code}
}
