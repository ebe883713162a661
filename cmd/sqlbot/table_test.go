package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"sqlbot/agent/present"
)

// TestWriteTable: numbers right-aligned, NULL shown, and no value can redraw
// the terminal or reorder the table (control and bidi-control characters).
func TestWriteTable(t *testing.T) {
	var b strings.Builder
	writeTable(&b, []string{"name", "n"}, [][]any{
		{"evil\u202eusers", int64(1)},
		{"bell\a and\nnewline", nil},
		{"plain", 1234.5},
	})
	out := b.String()
	for _, r := range out {
		if unicode.Is(unicode.Bidi_Control, r) || (unicode.IsControl(r) && r != '\n') {
			t.Fatalf("table contains control %U:\n%s", r, out)
		}
	}
	for _, want := range []string{"NULL", "1234.5", "evil�users", "newline"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The number column is right-aligned: "1" ends where "1234.5" ends.
	var ones, big int
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "evil") {
			ones = utf8.RuneCountInString(line[:strings.Index(line, "1 ")])
		}
		if strings.Contains(line, "1234.5") {
			big = utf8.RuneCountInString(line[:strings.Index(line, "1234.5")]) + len("1234.5") - 1
		}
	}
	if ones != big {
		t.Errorf("numbers not right-aligned (1 ends at %d, 1234.5 at %d):\n%s", ones, big, out)
	}
}

// TestWriteTableCutsLongValues: a text value of a megabyte is shown cut to
// maxCell characters, ending in "…", with a line that says so and names
// --json, so that one long value no longer pads every row of its column (200
// rows printed 200 MB); short values and numbers are shown whole.
func TestWriteTableCutsLongValues(t *testing.T) {
	var b strings.Builder
	rows := [][]any{{strings.Repeat("x", 1<<20), int64(1)}}
	for i := range 199 {
		rows = append(rows, []any{"a", int64(i + 2)})
	}
	writeTable(&b, []string{"v", "n"}, rows)
	out := b.String()
	if len(out) > 100_000 {
		t.Fatalf("the table is %d bytes", len(out))
	}
	if !strings.Contains(out, strings.Repeat("x", maxCell-1)+"…") || strings.Contains(out, strings.Repeat("x", maxCell)) {
		t.Errorf("the long value is not cut to %d characters ending in …", maxCell)
	}
	if !strings.Contains(out, "(1 value longer than 200 characters cut, ending in …; --json prints every value whole)") {
		t.Errorf("no line about the cut value:\n%.500s", out[len(out)-500:])
	}
	for _, want := range []string{" 200 ", " a "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	b.Reset()
	writeTable(&b, []string{"v"}, [][]any{{strings.Repeat("y", maxCell)}})
	if strings.Contains(b.String(), "cut") || !strings.Contains(b.String(), strings.Repeat("y", maxCell)) {
		t.Errorf("a value of exactly %d characters is cut:\n%s", maxCell, b.String())
	}
}

// referenceTable is the table tablewriter draws of rows, configured as
// sqlbot drew its tables before it drew them as rows arrive: the
// reference a tableWriter given every row before it starts must match.
func referenceTable(columns []string, rows [][]any) string {
	var b strings.Builder
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
	t := tablewriter.NewTable(&b, tablewriter.WithConfig(tablewriter.Config{
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
	t.Render()
	if cut > 0 {
		fmt.Fprintf(&b, "(%s longer than %d characters cut, ending in …; --json prints every value whole)\n", present.Plural(cut, "value"), maxCell)
	}
	return b.String()
}

// TestTableSameAsTablewriter: on generated results (numbers, NULLs, empty
// and spaced text, wide and combining characters, long values, odd column
// names), the table drawn as rows arrive is, when every row arrives before
// it starts, byte for byte the table tablewriter draws.
func TestTableSameAsTablewriter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 12))
	texts := []string{"", " ", "a", "ab c", "  lead", "trail  ", "日本語", "é", "e\u0301", "🙂", "x\ty", "a\nb", "NULL", "-3",
		strings.Repeat("w", maxCell), strings.Repeat("v", maxCell+1), strings.Repeat("日", 150)}
	value := func() any {
		switch r.IntN(5) {
		case 0:
			return r.Int64N(2_000_000) - 1_000_000
		case 1:
			return float64(r.IntN(100000)) / 8
		case 2:
			return nil
		}
		return texts[r.IntN(len(texts))]
	}
	for n := range 2000 {
		cols := make([]string, 1+r.IntN(4))
		for i := range cols {
			cols[i] = []string{"id", "", "name", "a b", "日付", "total_amount", "x"}[r.IntN(7)]
		}
		rows := make([][]any, r.IntN(7))
		for i := range rows {
			rows[i] = make([]any, len(cols))
			for j := range cols {
				rows[i][j] = value()
			}
		}
		var b strings.Builder
		writeTable(&b, cols, rows)
		if got, want := b.String(), referenceTable(cols, rows); got != want {
			t.Fatalf("case %d, %q %v:\n got\n%s\nwant\n%s", n, cols, rows, got, want)
		}
	}
}

// TestTableAsRowsArrive: rows given after start are printed at once, in
// the columns the earlier rows set; a wider later value is printed whole;
// a start with no row yet waits for the first.
func TestTableAsRowsArrive(t *testing.T) {
	var b strings.Builder
	tab := newTableWriter(&b, []string{"id", "name"})
	tab.start() // no row yet
	if b.Len() != 0 {
		t.Fatalf("printed before any row:\n%s", b.String())
	}
	tab.add([]any{int64(1), "ann"})
	first := b.String()
	if !strings.Contains(first, "│  1 │ ann  │") {
		t.Fatalf("the first row is not printed when it arrives:\n%s", first)
	}
	tab.add([]any{int64(22), "bo"})
	if !strings.HasSuffix(b.String(), "│ 22 │ bo   │\n") {
		t.Fatalf("the second row is not printed when it arrives:\n%s", b.String())
	}
	tab.add([]any{int64(333), "a longer name"})
	if !strings.HasSuffix(b.String(), "│ 333 │ a longer name │\n") {
		t.Fatalf("a wider later row is not printed whole:\n%s", b.String())
	}
	tab.close()
	if !strings.HasSuffix(b.String(), "└────┴──────┘\n") {
		t.Fatalf("no bottom border:\n%s", b.String())
	}
}
