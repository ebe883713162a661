package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// writeTable prints rows as a terminal table, number columns right-aligned, NULL
// shown as NULL, column names as SQLite returned them but made safe (see
// safeLine).
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
		header[i] = safeLine(c)
	}
	t.Header(header...)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = formatValue(v)
		}
		t.Append(cells)
	}
	if err := t.Render(); err != nil {
		fmt.Fprintf(w, "(table: %v)\n", err)
	}
}

// formatValue shows a value the way an analyst can check it: integers as
// integers, floats without representation noise (at most 10 decimals),
// NULL as NULL, control and bidi-control characters replaced so a value
// cannot redraw the terminal or reorder the table.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		s := strconv.FormatFloat(x, 'f', 10, 64)
		s = strings.TrimRight(s, "0")
		return strings.TrimSuffix(s, ".")
	case string:
		return safeLine(x)
	}
	return fmt.Sprint(v)
}

// safeLine makes s, which the data or the model chose, safe to print on one
// line of a terminal: a newline shows as ↵, and every other control
// character (ESC starts the sequences that erase lines or retitle the
// window) and every bidi control (U+202E …, which reorders what the reader
// sees) as �. A tab stays.
func safeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return '↵'
		}
		if unsafeRune(r) {
			return '�'
		}
		return r
	}, s)
}

// safeBlock is safeLine for text of several lines (an answer, SQL, an
// error): newlines and tabs stay, a carriage return (which moves back over
// what was printed) does not.
func safeBlock(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && unsafeRune(r) {
			return '�'
		}
		return r
	}, s)
}

// unsafeRune reports whether printing r could redraw the terminal or
// reorder the text around it: the C0 controls but tab, DEL, the C1
// controls, and the bidi controls.
func unsafeRune(r rune) bool {
	return r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Bidi_Control, r)
}
