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
