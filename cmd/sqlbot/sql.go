package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
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
		fmt.Fprintf(a.stdout, "refused by %s: %s\n", safeLine(string(layer)), safeLine(reason))
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
	fmt.Fprintf(a.stdout, "%s\n\n", safeBlock(res.SQL))
	writeTable(a.stdout, res.Columns, res.Rows)
	fmt.Fprintf(a.stdout, "(%s, %.0f ms)\n", rowsNote(len(res.Rows), res.Truncated), float64(res.Elapsed.Microseconds())/1000)
	return nil
}

func sqlJSON(res *roconn.Result) map[string]any {
	return map[string]any{
		"sql": res.SQL, "columns": res.Columns, "rows": jsonRows(res.Rows), "row_count": len(res.Rows),
		"truncated": res.Truncated, "elapsed_ms": res.Elapsed.Milliseconds(),
	}
}

// jsonRows returns rows (roconn's values: nil, int64, float64, string) in a
// form JSON can hold: never nil, and ±Inf and NaN, which JSON numbers
// cannot be, as the strings "+Inf", "-Inf" and "NaN" (as the agent shows
// them to the model). SQLite itself turns NaN into NULL.
func jsonRows(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r
		cloned := false
		for j, v := range r {
			if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				if !cloned {
					out[i], cloned = slices.Clone(r), true
				}
				out[i][j] = fmt.Sprint(f)
			}
		}
	}
	return out
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
		if r >= 0x80 && unsafeRune(r) {
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
