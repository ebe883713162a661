package present_test

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode"

	"sqlbot/agent/present"
)

// sum adds at run time (constants would be exact).
func sum(a, b float64) float64 { return a + b }

func TestValue(t *testing.T) {
	tests := []struct {
		v            any
		value, exact string
	}{
		{nil, "NULL", ""},
		{int64(-7), "-7", "-7"},
		{2.5, "2.5", "2.5"},
		{1234.5, "1234.5", "1234.5"},
		{7999.0, "7999", "7999"},
		{-4.0, "-4", "-4"},
		{sum(0.1, 0.2), "0.3", "0.30000000000000004"},
		{1e20, "1e+20", "1e+20"},
		{1e-9, "1e-09", "1e-09"},
		{math.Copysign(0, -1), "0", "0"},
		{math.Inf(1), "+Inf", "+Inf"},
		{"plain", "plain", "plain"},
		{"tab\there\nnewline", "tab here↵newline", "tab\there\nnewline"},
	}
	for _, tt := range tests {
		if got := present.Value(tt.v); got != tt.value {
			t.Errorf("Value(%#v) = %q, want %q", tt.v, got, tt.value)
		}
		if got := present.Exact(tt.v); got != tt.exact {
			t.Errorf("Exact(%#v) = %q, want %q", tt.v, got, tt.exact)
		}
	}
	if !present.IsNumber(int64(1)) || !present.IsNumber(1.5) || present.IsNumber("1") || present.IsNumber(nil) {
		t.Error("IsNumber: int64 and float64 are numbers, text and NULL are not")
	}
}

// No value or text can redraw a terminal or reorder what people read:
// control and bidi-control characters are replaced, never dropped.
func TestLineAndBlock(t *testing.T) {
	for _, s := range []string{"evil\u202eusers", "bell\a and\nnewline", "\x1b[2Jclear", "\u2066isolate\u2069", "cr\rback", "c1\u0085", "bad\xffbyte"} {
		for name, got := range map[string]string{"Line": present.Line(s), "Block": present.Block(s), "Value": present.Value(s)} {
			for _, r := range got {
				if unicode.Is(unicode.Bidi_Control, r) || (unicode.IsControl(r) && (name != "Block" || r != '\n')) {
					t.Errorf("%s(%q) = %q holds %U", name, s, got, r)
				}
			}
			if strings.Count(got, "\uFFFD")+strings.Count(got, "↵") == 0 {
				t.Errorf("%s(%q) = %q: the control is dropped rather than shown replaced", name, s, got)
			}
		}
	}
	if got := present.Line("evil\u202eusers"); got != "evil\uFFFDusers" {
		t.Errorf("Line(evil RLO users) = %q", got)
	}
	if got := present.Block("SELECT 1\n\tFROM t\r\n"); got != "SELECT 1\n\tFROM t\n" {
		t.Errorf("Block keeps lines and tabs: %q", got)
	}
}

func TestJSONRows(t *testing.T) {
	rows := [][]any{{int64(1), math.Inf(-1)}, {math.NaN(), "x"}, {2.5, nil}}
	got := present.JSONRows(rows)
	if got[0][1] != "-Inf" || got[1][0] != "NaN" || got[2][0] != 2.5 || got[2][1] != nil {
		t.Errorf("JSONRows = %v", got)
	}
	if _, ok := rows[0][1].(float64); !ok {
		t.Error("JSONRows changed its argument")
	}
	if present.JSONRows(nil) == nil {
		t.Error("JSONRows(nil) is nil, want an empty list")
	}
}

func TestWords(t *testing.T) {
	for got, want := range map[string]string{
		present.Plural(1, "row"): "1 row", present.Plural(37, "row"): "37 rows", present.Plural(0, "step"): "0 steps",
		present.Thousands(10000): "10,000", present.Thousands(-1234567): "-1,234,567", present.Thousands(999): "999",
		present.Seconds(400 * time.Millisecond): "0.4 s", present.Seconds(2100 * time.Millisecond): "2.1 s", present.Seconds(65 * time.Second): "1 min 5 s",
		present.Size(8 << 20): "8 MiB", present.Size(3 << 19): "1.5 MiB", present.Size(512 << 10): "512 KiB", present.Size(900): "900 bytes",
		present.OneLine("  a \n\t b  "): "a b", present.Ellipsize("abcdef", 4): "abc…", present.Ellipsize("abc", 4): "abc",
		present.Clip("héllo", 2): "h", present.Clip("abc", 5): "abc",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
