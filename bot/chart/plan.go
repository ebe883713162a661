package chart

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Years written alone ("2025", or an integer column named like "year") are
// read as years only within this range, so that four-digit codes and counts
// are not mistaken for a calendar.
const (
	minYear = 1800
	maxYear = 2200
)

// A colKind is what the values of one result column are.
type colKind uint8

const (
	colEmpty  colKind = iota // every value is NULL
	colNumber                // every other value is an int64, a float64 or a numeric string
	colTime                  // every other value is a string naming a time
	colText                  // anything else: the column names categories
)

// Plan decides whether a result gets a chart and returns its Spec, or nil
// and the Reason it gets none. cols and rows are a result as roconn returns
// it: every row has one value per column, each nil, int64, float64 or string.
// title is cleaned and clipped to MaxTitleRunes; it may be empty.
//
// The rules, in order:
//   - 2 to MaxPoints rows (TooFewRows, TooManyRows).
//   - Each column is a number column (every non-NULL value an int64, a
//     float64 or a string that is a plain decimal number such as "12.50" or
//     "-3", not a code such as "007"; a column of NULLs counts as an empty
//     number column), a time column (every non-NULL value a string "YYYY"
//     (1800 to 2200), "YYYY-MM", "YYYY-MM-DD" or "YYYY-MM-DD HH:MM[:SS[.f]]"
//     with 'T' or ' ' and an optional "Z" or "±hh:mm"), or a text column.
//   - Exactly one time or text column, anywhere: the label (ManyLabels). With
//     none, the first column is the label if its values are distinct integers
//     (an id, a month number), and a year if it is also named like "year" and
//     they lie within 1800 to 2200; else NoLabel.
//   - One or two number columns besides the label (NoNumbers, ManyNumbers),
//     every number finite and their span too (NotFinite).
//   - A time label makes a Line in time order, each time at most once
//     (RepeatedTime); a text label makes a Bar in the result's order.
//   - NULLs: a NULL time has no place on the axis and its row is skipped; a
//     NULL category is drawn as the category "NULL", as the result table
//     shows it; a NULL number leaves its bar out or breaks its line at that
//     point, and the point keeps its place. At least two points must have a
//     number (TooFewPoints).
func Plan(cols []string, rows [][]any, title string) (*Spec, Reason) {
	if len(rows) < 2 {
		return nil, TooFewRows
	}
	if len(rows) > MaxPoints {
		return nil, TooManyRows
	}
	for _, row := range rows {
		if len(row) != len(cols) {
			return nil, Ragged
		}
	}
	label, labelKind, nums := -1, colText, make([]int, 0, len(cols))
	for j := range cols {
		kind, ok := classify(rows, j)
		if !ok {
			return nil, BadValue
		}
		switch kind {
		case colTime, colText:
			if label >= 0 {
				return nil, ManyLabels
			}
			label, labelKind = j, kind
		default:
			nums = append(nums, j)
		}
	}
	if label < 0 {
		if len(cols) == 0 || !distinctIntegers(rows, 0) {
			return nil, NoLabel
		}
		label, nums = 0, nums[1:]
		if strings.Contains(strings.ToLower(cols[0]), "year") && yearsOnly(rows, 0) {
			labelKind = colTime
		}
	}
	switch {
	case len(nums) == 0:
		return nil, NoNumbers
	case len(nums) > 2:
		return nil, ManyNumbers
	}

	c := newCleaner()
	s := &Spec{Kind: Bar, Title: c.clean(title, MaxTitleRunes), XLabel: c.clean(cols[label], MaxNameRunes)}
	for _, j := range nums {
		s.Series = append(s.Series, c.clean(cols[j], MaxNameRunes))
	}
	if labelKind == colTime {
		s.Kind, s.Unit = Line, Year
	}
	withNumber := 0
	s.Points = make([]Point, 0, len(rows))
	for _, row := range rows {
		p := Point{Values: make([]float64, len(nums))}
		has := false
		for k, j := range nums {
			v, ok := number(row[j])
			if !ok {
				return nil, BadValue
			}
			if math.IsInf(v, 0) {
				return nil, NotFinite
			}
			p.Values[k] = v
			has = has || !math.IsNaN(v)
		}
		switch {
		case s.Kind == Line && row[label] == nil:
			continue
		case s.Kind == Line:
			t, unit, ok := parseLabelTime(row[label])
			if !ok {
				return nil, BadValue // classify said every value is a time
			}
			p.Time = t
			s.Unit = finer(s.Unit, unit)
			p.Label = c.clean(labelText(row[label]), MaxLabelRunes)
		case row[label] == nil:
			p.Label = "NULL"
		default:
			p.Label = c.clean(labelText(row[label]), MaxLabelRunes)
		}
		if has {
			withNumber++
		}
		s.Points = append(s.Points, p)
	}
	if withNumber < 2 {
		return nil, TooFewPoints
	}
	if lo, hi := valueRange(s); math.IsInf(hi-lo, 0) {
		return nil, NotFinite
	}
	if s.Kind == Line {
		slices.SortStableFunc(s.Points, func(a, b Point) int { return a.Time.Compare(b.Time) })
		for i := 1; i < len(s.Points); i++ {
			if s.Points[i].Time.Equal(s.Points[i-1].Time) {
				return nil, RepeatedTime
			}
		}
	}
	return s, OK
}

// classify returns the kind of column j, or false if a value has a type a
// result cannot hold.
func classify(rows [][]any, j int) (colKind, bool) {
	var nums, strs, times, numStrs int
	for _, row := range rows {
		switch v := row[j].(type) {
		case nil:
		case int64, float64:
			nums++
		case string:
			strs++
			if _, _, ok := parseTime(v); ok {
				times++
			}
			if numeric(v) { // a bare year is both
				numStrs++
			}
		default:
			return 0, false
		}
	}
	switch {
	case nums == 0 && strs == 0:
		return colEmpty, true
	case nums == 0 && times == strs:
		return colTime, true
	case numStrs == strs:
		return colNumber, true
	}
	return colText, true // text, or times mixed with numbers
}

// number returns v as a float64: NaN for NULL (and for a NaN, which SQLite
// cannot return), false for a value that is not a number.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case nil:
		return math.NaN(), true
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case string:
		if !numeric(v) {
			return 0, false
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil && !math.IsInf(f, 0) { // out of range gives ±Inf: reported as NotFinite
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// numeric reports whether s is a plain decimal number: an optional '-',
// digits without a leading zero (a code such as "007" is text), an optional
// fraction and an optional exponent. No spaces, no '+', no thousands
// separators, no "NaN" or "Inf".
func numeric(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start || (s[start] == '0' && i-start > 1) {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		frac := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == frac {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == exp {
			return false
		}
	}
	return i == len(s)
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// parseTime reads s as a year, a month, a date or a date and time, in the
// forms SQLite's date functions write. Times with a zone are converted to
// UTC; times without one are taken as UTC.
func parseTime(s string) (time.Time, Unit, bool) {
	if !timeShape(s) {
		return time.Time{}, "", false
	}
	var layout string
	var unit Unit
	switch n := len(s); {
	case n == 4:
		y, _ := strconv.Atoi(s)
		if y < minYear || y > maxYear {
			return time.Time{}, "", false
		}
		return time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC), Year, true
	case n == 7:
		layout, unit = "2006-01", Month
	case n == 10:
		layout, unit = "2006-01-02", Day
	default:
		// Go's parser accepts a fraction after the seconds without a layout
		// for it; the zone is optional.
		layout, unit = "2006-01-02 15:04", Clock
		if len(s) > 16 && s[16] == ':' {
			layout = "2006-01-02 15:04:05"
		}
		if strings.HasSuffix(s, "Z") || strings.LastIndexAny(s, "+-") > 10 {
			layout += "Z07:00"
		}
		s = s[:10] + " " + s[11:]
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, "", false
	}
	return t.UTC(), unit, true
}

// timeShape reports whether s has the digits and separators of one of the
// forms parseTime reads, so that Go's lenient parser sees only those.
func timeShape(s string) bool {
	const shape = "dddd-dd-dd?dd:dd" // '?' is 'T' or ' '
	switch len(s) {
	case 4, 7, 10:
	default:
		if len(s) < len(shape) || len(s) > 40 {
			return false
		}
	}
	for i := 0; i < len(s) && i < len(shape); i++ {
		switch c := s[i]; shape[i] {
		case 'd':
			if !isDigit(c) {
				return false
			}
		case '?':
			if c != 'T' && c != ' ' {
				return false
			}
		default:
			if c != shape[i] {
				return false
			}
		}
	}
	rest := s[min(len(s), len(shape)):]
	if len(rest) >= 3 && rest[0] == ':' && isDigit(rest[1]) && isDigit(rest[2]) {
		rest = rest[3:]
		if len(rest) > 1 && rest[0] == '.' {
			i := 1
			for i < len(rest) && isDigit(rest[i]) {
				i++
			}
			if i == 1 {
				return false
			}
			rest = rest[i:]
		}
	}
	switch {
	case rest == "", rest == "Z":
		return true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		return isDigit(rest[1]) && isDigit(rest[2]) && isDigit(rest[4]) && isDigit(rest[5])
	}
	return false
}

// parseLabelTime reads a label value of a time column: a time string, or an
// integer year (the fallback for an integer column named like "year").
func parseLabelTime(v any) (time.Time, Unit, bool) {
	if y, ok := integer(v); ok {
		if y < minYear || y > maxYear {
			return time.Time{}, "", false
		}
		return time.Date(int(y), time.January, 1, 0, 0, 0, 0, time.UTC), Year, true
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, "", false
	}
	return parseTime(s)
}

// finer returns the finer of two units.
func finer(a, b Unit) Unit {
	rank := func(u Unit) int {
		switch u {
		case Clock:
			return 0
		case Day:
			return 1
		case Month:
			return 2
		}
		return 3
	}
	if rank(b) < rank(a) {
		return b
	}
	return a
}

// integer returns v as an integer when it is one: an int64, an integral
// float64 or an integral numeric string.
func integer(v any) (int64, bool) {
	f, ok := number(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// distinctIntegers reports whether every value of column j is a non-NULL
// integer and no two are equal.
func distinctIntegers(rows [][]any, j int) bool {
	seen := make([]int64, 0, len(rows))
	for _, row := range rows {
		n, ok := integer(row[j])
		if !ok {
			return false
		}
		seen = append(seen, n)
	}
	slices.Sort(seen)
	return len(slices.Compact(seen)) == len(rows)
}

// yearsOnly reports whether every value of column j is an integer year.
func yearsOnly(rows [][]any, j int) bool {
	for _, row := range rows {
		n, ok := integer(row[j])
		if !ok || n < minYear || n > maxYear {
			return false
		}
	}
	return true
}

// labelText returns a label value as text: strings as they are, numbers in plain
// decimal notation.
func labelText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}
