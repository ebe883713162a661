package main

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
