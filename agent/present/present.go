// Package present formats what sqlbot shows people, the same way on every
// surface (the terminal, Slack, the web page, an MCP client): the values of
// a result (numbers, NULL, text), untrusted text made safe to display (no
// control or bidi-control character can redraw a terminal or reorder what a
// reader sees), and the small words around them (counts, sizes, times).
//
// It writes plain text. Each surface escapes that text for its own medium
// (Slack's mrkdwn, HTML) and lays it out. present imports nothing of sqlbot:
// the agent uses it too, for the JSON its tools return.
package present

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Decimals is the most decimals Value shows of a float.
const Decimals = 6

// Value returns v, a value of a result row (roconn's: nil, int64, float64 or
// string), as a person reads it in a table: NULL for nil; an integer as it
// is; a float with at most Decimals decimals, trailing zeros dropped, and an
// exponent only for magnitudes outside 1e-6 to 1e15; text as one safe line
// (Line). Any other value is shown as fmt writes it, made safe the same way.
func Value(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x, Decimals)
	case string:
		return Line(x)
	}
	return Line(fmt.Sprint(v))
}

// Exact returns v exactly, for a file a program reads (CSV): nil is empty,
// a float has every digit it needs to read back the same, text is as stored.
func Exact(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x, -1)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// IsNumber reports whether v is a number (an int64 or a float64).
func IsNumber(v any) bool {
	switch v.(type) {
	case int64, float64:
		return true
	}
	return false
}

// formatFloat writes f without an exponent for everyday magnitudes; decimals
// < 0 means as many as needed to read it back.
func formatFloat(f float64, decimals int) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', decimals, 64)
	if decimals > 0 && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// JSONValue returns v in a form JSON can hold: ±Inf and NaN, which JSON
// numbers cannot be, become the strings "+Inf", "-Inf" and "NaN"; anything
// else is v.
func JSONValue(v any) any {
	if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return fmt.Sprint(f)
	}
	return v
}

// JSONRows returns rows with every value made a JSONValue: never nil, and a
// row is copied only when one of its values changes.
func JSONRows(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r
		cloned := false
		for j, v := range r {
			if w := JSONValue(v); w != v {
				if !cloned {
					out[i], cloned = append([]any(nil), r...), true
				}
				out[i][j] = w
			}
		}
	}
	return out
}

// Line makes s, which the data or a model chose, safe to show on one line:
// a line break shows as ↵, a tab as a space, and every other control
// character (ESC starts the sequences that erase a terminal's lines or
// retitle its window), every bidi control (U+202E reorders what the reader
// sees) and every invalid byte as �.
func Line(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r':
			return '↵'
		case r == '\t':
			return ' '
		case unsafeRune(r):
			return utf8.RuneError
		}
		return r
	}, s)
}

// Block is Line for text of several lines (an answer, SQL): line breaks and
// tabs stay, a carriage return (which moves back over what was printed)
// does not.
func Block(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unsafeRune(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// unsafeRune reports whether showing r could redraw a terminal or reorder
// the text around it: the C0 controls, DEL, the C1 controls, the bidi
// controls, and the error rune that stands for an invalid byte.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError || unicode.Is(unicode.Bidi_Control, r)
}

// IsSafe reports whether r may be shown as it is (see Line and Block: it is
// not a control, bidi-control or error rune).
func IsSafe(r rune) bool { return !unsafeRune(r) }

// OneLine collapses runs of white space, line breaks included, into one
// space, and trims both ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Ellipsize shortens s to at most n runes, ending in … when it cuts.
func Ellipsize(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Plural is "1 row", "37 rows": n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Thousands is 10000 → "10,000".
func Thousands(n int) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Seconds is "0.4 s", "2.1 s", "1 min 5 s".
func Seconds(d time.Duration) string {
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

// Size is "8 MiB", "1.5 MiB", "512 KiB", "900 bytes".
func Size(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(math.Round(float64(n)/(1<<20)*10)/10, 'f', -1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(math.Round(float64(n)/(1<<10)*10)/10, 'f', -1, 64) + " KiB"
	}
	return Plural(n, "byte")
}
