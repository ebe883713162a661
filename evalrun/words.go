package evalrun

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"sqlbot/agent"
	"sqlbot/agent/present"
)

// RefusalExplained reports whether a refused answer (Outcome Refused) says
// why: either a statement was refused and res.Refusal names the layer and
// its reason (every reply shows them), or the answer text, without its
// agent.RefusedPrefix marker, has at least three words.
func RefusalExplained(res *agent.Result) bool {
	if res.Refusal != nil && res.Refusal.Layer != "" && strings.TrimSpace(res.Refusal.Reason) != "" {
		return true
	}
	words := strings.FieldsFunc(res.Answer, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '-' })
	n := 0
	for _, w := range words {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			n++
		}
	}
	if agent.HasMarker(res.Answer, agent.RefusedPrefix) {
		n-- // the marker's one word, "Refused", says nothing about why
	}
	return n >= 3
}

// StatesFigure reports whether answer states the key figures of ref, the
// reference query's result: every value of ref's first row (a one-row result
// is the common case) appears in the answer. NULLs are skipped, and a result
// with no rows is stated by any answer. A value appears when:
//
//   - for a number (or text that is a decimal number): some number written in
//     the answer is it rounded (half away from zero) to the precision the
//     answer wrote, however many decimals that is: 12.345 is stated by
//     "12.345" and "12.35" but not by "12.344", and 12.35 is not stated by
//     "12.3456". Thousands separators, a currency sign, a minus sign and a
//     multiplier word are understood: 1234.5 is stated by "1234.50",
//     "1,234.5", "$1,234.50" and "1,235" (rounded to a whole), and 1234567.89
//     by "$1.23 million" (k, thousand, m, mn, million, bn, billion). Digits
//     glued to a letter before them (the 3 of "Q3") or after a hyphen that
//     follows a letter or digit (the 06 of "2025-06") are not a number;
//   - for other text: the answer contains it, ignoring case and runs of
//     space; an ISO month "2025-06" may also be written "June 2025" or
//     "Jun 2025", and an ISO day "2025-06-01" "June 1, 2025" or "1 June 2025".
func StatesFigure(answer string, ref ResultSet) bool {
	if len(ref.Rows) == 0 {
		return true
	}
	nums := numbersIn(answer)
	norm := normText(answer)
	for _, v := range ref.Rows[0] {
		if !valueStated(v, nums, norm) {
			return false
		}
	}
	return true
}

func valueStated(v any, nums []written, answer string) bool {
	var f float64
	switch x := v.(type) {
	case nil:
		return true
	case int64:
		f = float64(x)
	case float64:
		f = x
	case string:
		s := strings.TrimSpace(x)
		if numberSyntax(s) == notNumber {
			return textStated(s, answer)
		}
		p, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return textStated(s, answer)
		}
		f = p
	default:
		return textStated(strings.TrimSpace(canonText(v)), answer)
	}
	for _, n := range nums {
		if n.matches(f) {
			return true
		}
	}
	return false
}

func canonText(v any) string {
	s, _ := text(v)
	return s
}

// A written number is one number as the answer wrote it, in units of its
// last digit: "1.23" is 123 units of 0.01, "1.23 million" 123 units of
// 10000 (decimals 2, multiplier 1e6).
type written struct {
	units float64 // the digits as an integer, signed
	pow   float64 // 10 to the number of decimals written
	mult  float64 // the multiplier word's value, else 1
}

// matches reports whether f, rounded half away from zero to n's precision,
// is n. A value within float noise (1e-9, relative) of a half, but not
// exactly on it, may round either way: two correct computations of one
// figure can land on either side. A number written with more digits than a
// float holds ("108.72279411764706") is compared to about 12 significant
// digits: past them, both f and the written digits are noise.
func (n written) matches(f float64) bool {
	q := f * n.pow / n.mult // f in units of n's last digit
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return false
	}
	same := func(x float64) bool { return math.Abs(x-n.units) < 1e-6 }
	if same(math.Round(q)) || math.Abs(q-n.units) <= 1e-12*math.Abs(q) {
		return true
	}
	frac := math.Abs(q - math.Trunc(q))
	if frac != 0.5 && math.Abs(frac-0.5) < 1e-9*math.Max(1, math.Abs(q)) {
		return same(math.Floor(q)) || same(math.Ceil(q))
	}
	return false
}

// numberRE matches a number as people write one in prose (see numbersIn).
// Compiled patterns are the package's only variables; they never change.
var numberRE = regexp.MustCompile(`(?i)[-\x{2212}]?\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s?(thousand|million|billion|mn|bn|k|m)\b)?`)

// multiplier returns the value of a multiplier word (k, thousand, m, mn,
// million, bn, billion), in any case.
func multiplier(word string) float64 {
	switch strings.ToLower(word) {
	case "k", "thousand":
		return 1e3
	case "m", "mn", "million":
		return 1e6
	case "bn", "billion":
		return 1e9
	}
	return 1
}

// numbersIn returns the numbers written in s.
func numbersIn(s string) []written {
	var out []written
	for _, m := range numberRE.FindAllStringSubmatchIndex(s, -1) {
		start := m[0]
		neg := false
		switch {
		case strings.HasPrefix(s[start:], "-"):
			neg, start = true, start+1
		case strings.HasPrefix(s[start:], "\u2212"):
			neg, start = true, start+len("\u2212")
		}
		if neg && m[0] > 0 && isWordRune(lastRune(s[:m[0]])) {
			continue // after a hyphen, as the 06 of 2025-06
		}
		if !neg && start > 0 && !strings.HasPrefix(s[start:], "$") {
			if r := lastRune(s[:start]); isWordRune(r) || r == '.' {
				continue // part of a word or a longer token, as the 3 of Q3
			}
		}
		intPart := strings.ReplaceAll(s[m[2]:m[3]], ",", "")
		frac := ""
		if m[4] >= 0 {
			frac = s[m[4]:m[5]]
		}
		units, err := strconv.ParseFloat(intPart+frac, 64)
		if err != nil {
			continue
		}
		n := written{units: units, pow: math.Pow(10, float64(len(frac))), mult: 1}
		if m[6] >= 0 {
			n.mult = multiplier(s[m[6]:m[7]])
		}
		if neg {
			n.units = -n.units
		}
		out = append(out, n)
	}
	return out
}

func lastRune(s string) rune {
	r := []rune(s)
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1]
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// normText lowercases s, reads ’ as ' and collapses runs of space.
func normText(s string) string {
	return present.OneLine(strings.ReplaceAll(strings.ToLower(s), "\u2019", "'"))
}

// isoDayRE matches an ISO month (2025-06) or day (2025-06-01).
var isoDayRE = regexp.MustCompile(`^(\d{4})-(\d{2})(?:-(\d{2}))?$`)

// textStated reports whether the normalized answer contains s, or, for an
// ISO month or day, one of its spelled-out forms.
func textStated(s, answer string) bool {
	want := normText(s)
	if want == "" || strings.Contains(answer, want) {
		return true
	}
	m := isoDayRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	mon, _ := strconv.Atoi(m[2])
	if mon < 1 || mon > 12 {
		return false
	}
	year := m[1]
	month := strings.ToLower(time.Month(mon).String())
	var forms []string
	for _, name := range []string{month, month[:3], month[:3] + "."} {
		if m[3] == "" {
			forms = append(forms, name+" "+year)
			continue
		}
		day, _ := strconv.Atoi(m[3])
		d := strconv.Itoa(day)
		forms = append(forms, name+" "+d+", "+year, name+" "+d+" "+year, d+" "+name+" "+year)
	}
	for _, f := range forms {
		if strings.Contains(answer, f) {
			return true
		}
	}
	return false
}
