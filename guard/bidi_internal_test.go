package guard

import (
	"testing"
	"unicode"
)

// TestHasBidiControl checks the byte-level scan against Go's own table: every
// bidi control is found, in every position, and no other rune up to U+FFFF is.
func TestHasBidiControl(t *testing.T) {
	for r := rune(0); r <= 0xFFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates do not encode
		}
		want := unicode.Is(unicode.Bidi_Control, r)
		for _, s := range []string{string(r), "a" + string(r), string(r) + "b", "SELECT '" + string(r) + "'"} {
			if got := hasBidiControl(s); got != want {
				t.Fatalf("hasBidiControl(%q) (U+%04X) = %v, want %v", s, r, got, want)
			}
		}
	}
}
