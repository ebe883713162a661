package main

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"sqlbot/agent/present"
	"sqlbot/evalrun"
)

// maxCell is the most characters of a text value a terminal table shows:
// the table pads every row of a column to its widest value, so one value of
// a megabyte made a table of 200 rows print 200 megabytes.
const maxCell = 200

// writeTable prints rows as a terminal table: values as people read them
// (present.Value: NULL shown, text made one safe line), number columns
// right-aligned, column names as SQLite returned them, made safe. A text
// value longer than maxCell characters is cut, ending in "…", and a line
// under the table says how many were and that --json prints them whole.
func writeTable(w io.Writer, columns []string, rows [][]any) {
	align := make([]tw.Align, len(columns))
	for i := range align {
		align[i] = tw.AlignRight
		for _, r := range rows {
			if _, isText := r[i].(string); isText {
				align[i] = tw.AlignLeft
				break
			}
		}
	}
	t := tablewriter.NewTable(w, tablewriter.WithConfig(tablewriter.Config{
		Header: tw.CellConfig{Formatting: tw.CellFormatting{AutoFormat: tw.Off}},
		Row: tw.CellConfig{
			Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
			Alignment:  tw.CellAlignment{PerColumn: align},
		},
	}))
	header := make([]any, len(columns))
	for i, c := range columns {
		header[i] = present.Line(c)
	}
	t.Header(header...)
	cut := 0
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = present.Value(v)
			if utf8.RuneCountInString(cells[i]) > maxCell {
				cells[i] = present.Ellipsize(cells[i], maxCell)
				cut++
			}
		}
		t.Append(cells)
	}
	if err := t.Render(); err != nil {
		fmt.Fprintf(w, "(table: %v)\n", err)
	}
	if cut > 0 {
		fmt.Fprintf(w, "(%s longer than %d characters cut, ending in …; --json prints every value whole)\n", present.Plural(cut, "value"), maxCell)
	}
}

// writeReport prints an evaluation report for a terminal: a table of what
// was evaluated and the figures, then a table of the questions that did not
// pass, with why (evalrun.QuestionResult.Why: no raw error text), or a line
// saying that all passed.
func writeReport(w io.Writer, r *evalrun.Report) error {
	t := newReportTable(w)
	t.Header("metric", "value")
	for _, f := range append(r.About(), r.Figures()...) {
		if err := t.Append([]string{f.Name, present.Line(f.Value)}); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	bad := r.NotPassing()
	if len(bad) == 0 {
		_, err := fmt.Fprintf(w, "\nAll %d questions passed.\n", r.Questions)
		return err
	}
	if _, err := fmt.Fprintf(w, "\nNot passing (%d of %d):\n", len(bad), r.Questions); err != nil {
		return err
	}
	t = newReportTable(w)
	t.Header("id", "kind", "outcome", "reason")
	for _, q := range bad {
		row := []string{present.Line(q.ID), string(q.Kind), string(q.Outcome), present.Ellipsize(present.Line(present.OneLine(q.Why())), 110)}
		if err := t.Append(row); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func newReportTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, tablewriter.WithConfig(tablewriter.Config{
		Header: tw.CellConfig{Formatting: tw.CellFormatting{AutoFormat: tw.Off}, Alignment: tw.CellAlignment{Global: tw.AlignLeft}},
		Row:    tw.CellConfig{Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone}, Alignment: tw.CellAlignment{Global: tw.AlignLeft}},
	}))
}
