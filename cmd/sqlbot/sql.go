package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"sqlbot/agent"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// sql runs one statement through the guard and the read-only connection,
// exactly as a statement from the model would go.
func (a *app) sql(ctx context.Context, args []string) error {
	fs := newFlagSet("sql", a.stderr)
	var f dbFlags
	f.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(a.stderr, "usage: sqlbot sql [--db PATH] [--policy FILE] [--json] SQL")
		fs.PrintDefaults()
	}
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return &exitErr{code: exitUsage}
	}
	query := strings.Join(fs.Args(), " ")
	db, err := a.openDB(ctx, f)
	if err != nil {
		return err
	}
	defer db.Close()

	res, err := agent.Checked{Guard: guard.New(db.Limits().Rows), DB: db}.Query(ctx, query)
	if layer, reason, ok := agent.RefusalOf(err); ok {
		if *asJSON {
			return a.printJSONCode(exitRefused, map[string]any{"refused": true, "layer": layer, "reason": reason})
		}
		fmt.Fprintf(a.stdout, "refused by %s: %s\n", layer, reason)
		return &exitErr{code: exitRefused}
	}
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		if *asJSON {
			return a.printJSONCode(exitError, map[string]any{"error": err.Error()})
		}
		return err
	}
	if *asJSON {
		return a.printJSONCode(exitOK, sqlJSON(res))
	}
	fmt.Fprintf(a.stdout, "%s\n\n", res.SQL)
	writeTable(a.stdout, res.Columns, res.Rows)
	fmt.Fprintf(a.stdout, "(%s, %.0f ms)\n", rowsNote(len(res.Rows), res.Truncated), float64(res.Elapsed.Microseconds())/1000)
	return nil
}

func sqlJSON(res *roconn.Result) map[string]any {
	rows := res.Rows
	if rows == nil {
		rows = [][]any{}
	}
	return map[string]any{
		"sql": res.SQL, "columns": res.Columns, "rows": rows, "row_count": len(res.Rows),
		"truncated": res.Truncated, "elapsed_ms": res.Elapsed.Milliseconds(),
	}
}

func rowsNote(n int, truncated bool) string {
	s := fmt.Sprintf("%d rows", n)
	if n == 1 {
		s = "1 row"
	}
	if truncated {
		s += ", cut at the row cap"
	}
	return s
}

// printJSONCode prints v as one indented JSON object and exits with code.
func (a *app) printJSONCode(code int, v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if code == exitOK {
		return nil
	}
	return &exitErr{code: code}
}
