package chart

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"  plain  text ", 24, "plain text"},
		{"a\nb\r\nc\td\x00e\x1bf", 24, "a b c d e f"},
		{"\u202eevil\u202c \u2066iso\u2069", 24, "evil iso"},
		{"zero\u200bwidth\ufeff\u00adsoft", 24, "zerowidthsoft"},
		{"e\u0301 composed", 24, "é composed"},
		{"x\u0300\u0301\u0302\u0303\u0304\u0305\u0306 stacked", 24, "x stacked"},
		{"🚀 東京 مرحبا", 24, "? ?? ?????"},
		{"\ue000private", 24, "?private"},
		{"bad \xff\xfe utf8", 24, "bad utf8"},
		{"abcdefghij", 5, "abcd…"},
		{"abc defghij", 5, "abc…"}, // no space before the ellipsis
		{"abcde", 5, "abcde"},
		{"שלום עולם", 24, "שלום עולם"}, // logical order kept
		{"\x00\x01", 24, ""},
		{strings.Repeat(" ", 10000) + "late", 24, ""}, // past the scan bound
	}
	c := newCleaner()
	for _, tt := range tests {
		if got := c.clean(tt.in, tt.max); got != tt.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestVisual(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"שלום", "םולש"},
		{"abc שלום def", "abc םולש def"},
		{"שלום עולם", "םלוע םולש"},
		{"שלום 123 עולם", "םלוע 123 םולש"},
		{"(שלום)", "(םולש)"}, // brackets mirrored
		{"שלום abc", "abc םולש"},
	}
	for _, tt := range tests {
		if got := visual(tt.in); got != tt.want {
			t.Errorf("visual(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNumeric(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "12": true, "-3": true, "12.50": true, "0.5": true, "-0.25": true, "1e3": true, "2.5E-7": true,
		"": false, "-": false, "007": false, "01.5": false, "1.": false, ".5": false, "+1": false, " 1": false,
		"1 ": false, "1,000": false, "NaN": false, "Inf": false, "1e": false, "0x10": false, "1_000": false,
	} {
		if got := numeric(s); got != want {
			t.Errorf("numeric(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestParseTime(t *testing.T) {
	utc := func(y int, m time.Month, d, h, min, s, ns int) time.Time {
		return time.Date(y, m, d, h, min, s, ns, time.UTC)
	}
	good := []struct {
		in   string
		want time.Time
		unit Unit
	}{
		{"2025", utc(2025, 1, 1, 0, 0, 0, 0), Year},
		{"1800", utc(1800, 1, 1, 0, 0, 0, 0), Year},
		{"2025-06", utc(2025, 6, 1, 0, 0, 0, 0), Month},
		{"2025-06-30", utc(2025, 6, 30, 0, 0, 0, 0), Day},
		{"2025-06-30 14:05", utc(2025, 6, 30, 14, 5, 0, 0), Clock},
		{"2025-06-30T14:05:09", utc(2025, 6, 30, 14, 5, 9, 0), Clock},
		{"2025-06-30 14:05:09.123", utc(2025, 6, 30, 14, 5, 9, 123e6), Clock},
		{"2025-06-30 14:05:09Z", utc(2025, 6, 30, 14, 5, 9, 0), Clock},
		{"2025-06-30 14:05:09.5+02:00", utc(2025, 6, 30, 12, 5, 9, 5e8), Clock},
		{"2025-06-30T01:00-03:30", utc(2025, 6, 30, 4, 30, 0, 0), Clock},
	}
	for _, tt := range good {
		got, unit, ok := parseTime(tt.in)
		if !ok || !got.Equal(tt.want) || unit != tt.unit || got.Location() != time.UTC {
			t.Errorf("parseTime(%q) = %v %q %v, want %v %q", tt.in, got, unit, ok, tt.want, tt.unit)
		}
	}
	for _, in := range []string{
		"1799", "2201", "0000", "25", "2025-13", "2025-6", "2025-06-31", "2025/06/30", "2025-06-30 25:00",
		"2025-06-30 14:05:09 UTC", "2025-06-30 14", "2025-06-30x14:05", "June 2025", "2025-06-30 14:05:09.",
		"2025-06-30 14:05+0200", " 2025-06-30", "2025-06-30 14:05:09+02:00 trailing", "２０２５",
	} {
		if got, _, ok := parseTime(in); ok {
			t.Errorf("parseTime(%q) = %v, want not a time", in, got)
		}
	}
}

// FuzzClean checks that whatever a label holds, clean returns valid UTF-8
// of at most max runes with no control, format or combining character, that
// cleaning twice changes nothing, and that visual neither panics nor changes
// the number of runes.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb", "\u202eevil", "שלום (abc) 123 עולם", "e\u0301", "🚀", "\xff", "x\u200dy"} {
		f.Add(s, 24)
	}
	c := newCleaner()
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = 2 + int(uint(max)%200)
		got := c.clean(s, max)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > max {
			t.Fatalf("clean(%q, %d) = %q: invalid or too long", s, max, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me) {
				t.Fatalf("clean(%q, %d) = %q keeps %U", s, max, got, r)
			}
		}
		if again := c.clean(got, max); again != got {
			t.Fatalf("clean(clean(%q)) = %q, want %q", s, again, got)
		}
		if v := visual(got); utf8.RuneCountInString(v) != utf8.RuneCountInString(got) {
			t.Fatalf("visual(%q) = %q: runes changed", got, v)
		}
	})
}
