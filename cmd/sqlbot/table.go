package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"

	"sqlbot/agent/present"
	"sqlbot/evalrun"
)

// maxCell is the most characters of a text value a terminal table shows:
// the table pads every row of a column to its widest value, so one value of
// a megabyte made a table of 200 rows print 200 megabytes.
const maxCell = 200

// writeTable prints rows as a terminal table (see tableWriter), all at once.
func writeTable(w io.Writer, columns []string, rows [][]any) {
	t := newTableWriter(w, columns)
	for _, r := range rows {
		t.add(r)
	}
	t.close()
}

// A tableWriter prints a result as a terminal table, drawn as
// tablewriter draws one: values as people read them (present.Value: NULL
// shown, text made one safe line), number columns right-aligned, column
// names as SQLite returned them, made safe and centred. A text value longer
// than maxCell characters is cut, ending in "…", and a line under the table
// says how many were and that --json prints them whole.
//
// It holds the rows it is given until start (or close): their widths and
// kinds set the columns' widths and alignment. From start on it prints
// each row as it is given; a later value wider than its column is printed
// whole, pushing the rest of its row to the right, as no column can widen
// once drawn. Its methods are safe for concurrent use, so that start can
// be called by a timer while rows arrive.
type tableWriter struct {
	mu      sync.Mutex
	w       io.Writer
	columns []string
	held    [][]string // rows given before start, as cells
	text    []bool     // the column held a text value before start
	widths  []int      // from start on: each column's width
	wanted  bool       // start was called with no row held: start at the first
	started bool
	lines   int // rows printed
	cut     int // values cut to maxCell
	rows    int // rows given
}

func newTableWriter(w io.Writer, columns []string) *tableWriter {
	header := make([]string, len(columns))
	for i, c := range columns {
		header[i] = present.Line(c)
	}
	return &tableWriter{w: w, columns: header, text: make([]bool, len(columns))}
}

// add gives the table one row.
func (t *tableWriter) add(row []any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows++
	cells := make([]string, len(row))
	for i, v := range row {
		cells[i] = present.Value(v)
		if utf8.RuneCountInString(cells[i]) > maxCell {
			cells[i] = present.Ellipsize(cells[i], maxCell)
			t.cut++
		}
		if _, isText := v.(string); isText && !t.started && i < len(t.text) {
			t.text[i] = true
		}
	}
	if !t.started {
		t.held = append(t.held, cells)
		if t.wanted {
			t.begin()
		}
		return
	}
	t.line(cells)
}

// start fixes the columns from the rows held and prints the table so far;
// with no row held yet, it does so at the first row.
func (t *tableWriter) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.held) == 0 {
		t.wanted = true
		return
	}
	t.begin()
}

func (t *tableWriter) begin() {
	if t.started {
		return
	}
	t.started = true
	t.widths = make([]int, len(t.columns))
	for i, c := range t.columns {
		t.widths[i] = twwidth.Width(c)
	}
	for _, r := range t.held {
		for i, c := range r {
			if i < len(t.widths) {
				t.widths[i] = max(t.widths[i], twwidth.Width(c))
			}
		}
	}
	t.border("┌", "┬", "┐")
	var b strings.Builder
	for i, c := range t.columns {
		extra := t.widths[i] - twwidth.Width(c)
		b.WriteString("│ ")
		b.WriteString(strings.Repeat(" ", extra/2) + c + strings.Repeat(" ", extra-extra/2))
		b.WriteString(" ")
	}
	fmt.Fprintf(t.w, "%s│\n", b.String())
	for _, r := range t.held {
		t.line(r)
	}
	t.held = nil
}

// count returns how many rows the table was given.
func (t *tableWriter) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rows
}

// close prints what is left: the held rows, the bottom border and the line
// about cut values.
func (t *tableWriter) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.begin()
	t.border("└", "┴", "┘")
	if t.cut > 0 {
		fmt.Fprintf(t.w, "(%s longer than %d characters cut, ending in …; --json prints every value whole)\n", present.Plural(t.cut, "value"), maxCell)
	}
}

func (t *tableWriter) border(left, mid, right string) {
	var b strings.Builder
	b.WriteString(left)
	for i, wd := range t.widths {
		if i > 0 {
			b.WriteString(mid)
		}
		b.WriteString(strings.Repeat("─", wd+2))
	}
	b.WriteString(right)
	fmt.Fprintln(t.w, b.String())
}

func (t *tableWriter) line(cells []string) {
	if t.lines == 0 {
		t.border("├", "┼", "┤")
	}
	t.lines++
	var b strings.Builder
	for i, c := range cells {
		pad := ""
		if i < len(t.widths) {
			pad = strings.Repeat(" ", max(0, t.widths[i]-twwidth.Width(c)))
		}
		b.WriteString("│ ")
		if i < len(t.text) && t.text[i] {
			b.WriteString(c + pad)
		} else {
			b.WriteString(pad + c)
		}
		b.WriteString(" ")
	}
	fmt.Fprintf(t.w, "%s│\n", b.String())
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
