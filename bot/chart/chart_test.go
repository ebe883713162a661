package chart_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	imagepng "image/png"
	"math"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"sqlbot/agent"
	"sqlbot/bot/chart"
)

// monthlyRevenue is what "revenue by month in 2025" returns: one month per
// row as SQLite's strftime('%Y-%m', day) writes it, and a REAL sum. The rows
// come out of order, as a GROUP BY without ORDER BY may return them.
func monthlyRevenue() ([]string, [][]any) {
	var rows [][]any
	for _, m := range []int{3, 1, 2, 12, 4, 5, 6, 7, 8, 9, 10, 11} {
		rows = append(rows, []any{fmt.Sprintf("2025-%02d", m), 10000 + float64(m*m)*1000.5})
	}
	return []string{"month", "revenue"}, rows
}

func TestMonthlyRevenueIsALineOf12Points(t *testing.T) {
	cols, rows := monthlyRevenue()
	s := plan(t, cols, rows, "What was revenue by month in 2025?")
	if s.Kind != chart.Line || s.Unit != chart.Month {
		t.Fatalf("kind %q unit %q, want line by month", s.Kind, s.Unit)
	}
	if len(s.Points) != 12 || len(s.Series) != 1 || s.Series[0] != "revenue" || s.XLabel != "month" {
		t.Fatalf("%d points, series %q, x label %q; want 12 points of revenue by month", len(s.Points), s.Series, s.XLabel)
	}
	for i, p := range s.Points { // time order, whatever the result's order
		want := time.Date(2025, time.Month(i+1), 1, 0, 0, 0, 0, time.UTC)
		if !p.Time.Equal(want) || p.Label != want.Format("2006-01") || p.Values[0] != 10000+float64((i+1)*(i+1))*1000.5 {
			t.Errorf("point %d = %q %v %v, want %v", i, p.Label, p.Time, p.Values, want)
		}
	}

	png, why, err := chart.For(cols, rows, "What was revenue by month in 2025?")
	if err != nil || why != chart.OK {
		t.Fatalf("For: %v, %v", why, err)
	}
	img := decode(t, png)
	if n := blobs(img, chart.SeriesColor(0)); n != 12 {
		t.Errorf("%d markers drawn, want 12", n)
	}
	if n := blobs(img, chart.LineColor(0)); n != 11 {
		t.Errorf("%d line segments between markers, want 11", n)
	}
	if n := blobs(img, chart.SeriesColor(1)); n != 0 {
		t.Errorf("%d shapes in the second series' colour, want none", n)
	}
}

func TestByCategoryWithTwoNumbersIsGroupedBars(t *testing.T) {
	// The label column sits between the numbers; returns are negative.
	cols := []string{"sales", "region", "returns"}
	regions := []string{"west", "mountain", "midwest", "south", "northeast", "pacific", "islands"}
	var rows [][]any
	for i, r := range regions {
		rows = append(rows, []any{int64(1000 * (i + 1)), r, -250.5 * float64(i+1)})
	}
	s := plan(t, cols, rows, "Sales and returns by region")
	if s.Kind != chart.Bar || s.XLabel != "region" || len(s.Series) != 2 || s.Series[0] != "sales" || s.Series[1] != "returns" {
		t.Fatalf("kind %q, x %q, series %q; want bars of sales and returns by region", s.Kind, s.XLabel, s.Series)
	}
	for i, p := range s.Points { // the result's order
		if p.Label != regions[i] || p.Values[0] != float64(1000*(i+1)) || p.Values[1] != -250.5*float64(i+1) {
			t.Errorf("point %d = %q %v", i, p.Label, p.Values)
		}
	}
	img := render(t, s)
	// One bar per region per series, plus the series' square in the legend.
	for k := range 2 {
		if n := blobs(img, chart.SeriesColor(k)); n != len(regions)+1 {
			t.Errorf("series %d: %d shapes, want %d bars and a legend square", k, n, len(regions))
		}
	}
}

func TestFiftyPointsAreAllDrawn(t *testing.T) {
	var bars, days [][]any
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range chart.MaxPoints {
		bars = append(bars, []any{fmt.Sprintf("product %02d", i), int64(10 + i)})
		days = append(days, []any{start.AddDate(0, 0, i).Format("2006-01-02"), int64(100 + i%7*10)})
	}
	if n := blobs(render(t, plan(t, []string{"product", "units"}, bars, "")), chart.SeriesColor(0)); n != chart.MaxPoints {
		t.Errorf("%d bars drawn, want %d", n, chart.MaxPoints)
	}
	s := plan(t, []string{"day", "orders"}, days, "")
	if s.Kind != chart.Line || s.Unit != chart.Day {
		t.Fatalf("kind %q unit %q, want a line by day", s.Kind, s.Unit)
	}
	if n := blobs(render(t, s), chart.SeriesColor(0)); n != chart.MaxPoints {
		t.Errorf("%d markers drawn, want %d", n, chart.MaxPoints)
	}
}

func TestNoChart(t *testing.T) {
	rowsOf := func(n int, row func(i int) []any) [][]any {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = row(i)
		}
		return rows
	}
	byRegion := func(n int) [][]any {
		return rowsOf(n, func(i int) []any { return []any{fmt.Sprint("region ", i), int64(i)} })
	}
	tests := []struct {
		name string
		cols []string
		rows [][]any
		want chart.Reason
	}{
		{"one row", []string{"region", "revenue"}, byRegion(1), chart.TooFewRows},
		{"one figure", []string{"revenue"}, [][]any{{123.5}}, chart.TooFewRows},
		{"no rows", []string{"region", "revenue"}, [][]any{}, chart.TooFewRows},
		{"51 rows", []string{"region", "revenue"}, byRegion(51), chart.TooManyRows},
		{"two text columns", []string{"first_name", "city"},
			[][]any{{"Ann", "Oslo"}, {"Bo", "Rome"}, {"Cy", "Lima"}}, chart.ManyLabels},
		{"text and a time", []string{"region", "month", "revenue"},
			[][]any{{"west", "2025-01", 1.0}, {"west", "2025-02", 2.0}}, chart.ManyLabels},
		{"three number columns", []string{"region", "sales", "returns", "profit"},
			rowsOf(4, func(i int) []any { return []any{fmt.Sprint("r", i), int64(i), 2.5, int64(-i)} }), chart.ManyNumbers},
		{"only numbers, no integer key", []string{"price", "qty"},
			[][]any{{9.99, int64(3)}, {4.5, int64(1)}}, chart.NoLabel},
		{"only numbers, repeated key", []string{"qty", "price"},
			[][]any{{int64(3), 9.99}, {int64(3), 4.5}}, chart.NoLabel},
		{"labels only", []string{"region"}, [][]any{{"west"}, {"east"}}, chart.NoNumbers},
		{"ragged row", []string{"region", "revenue"}, [][]any{{"west", 1.0}, {"east"}}, chart.Ragged},
		{"a bool", []string{"region", "ok"}, [][]any{{"west", true}, {"east", false}}, chart.BadValue},
		{"a blob as bytes", []string{"region", "n"}, [][]any{{"west", []byte("x")}, {"east", int64(1)}}, chart.BadValue},
		{"one number among NULLs", []string{"region", "revenue"},
			[][]any{{"west", nil}, {"east", 1.0}, {"south", nil}}, chart.TooFewPoints},
		{"times without a place", []string{"month", "revenue"},
			[][]any{{nil, 1.0}, {"2025-01", 2.0}, {nil, 3.0}}, chart.TooFewPoints},
		{"a month twice", []string{"month", "revenue"},
			[][]any{{"2025-01", 1.0}, {"2025-02", 2.0}, {"2025-01", 3.0}}, chart.RepeatedTime},
		{"the same instant in two zones", []string{"at", "n"},
			[][]any{{"2025-01-01 12:00:00+02:00", int64(1)}, {"2025-01-01T10:00:00Z", int64(2)}}, chart.RepeatedTime},
		{"a span beyond float64", []string{"region", "revenue"},
			[][]any{{"west", math.MaxFloat64}, {"east", -math.MaxFloat64}}, chart.NotFinite},
		{"an infinite REAL", []string{"region", "revenue"},
			[][]any{{"west", math.Inf(1)}, {"east", 1.0}}, chart.NotFinite},
		{"a number too large for a float", []string{"region", "revenue"},
			[][]any{{"west", "1e999"}, {"east", "1"}}, chart.NotFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, why := chart.Plan(tt.cols, tt.rows, "q")
			if why != tt.want || s != nil {
				t.Errorf("Plan: %v (spec %v), want %v", why, s != nil, tt.want)
			}
			png, why, err := chart.For(tt.cols, tt.rows, "q")
			if png != nil || why != tt.want || err != nil {
				t.Errorf("For: %d bytes, %v, %v; want no PNG, %v", len(png), why, err, tt.want)
			}
			if why.String() == "" || strings.HasPrefix(why.String(), "reason_") {
				t.Errorf("%v has no name", why)
			}
		})
	}
}

func TestLabelColumnAnywhere(t *testing.T) {
	rows := [][]any{{"west", int64(3), 1.5}, {"east", int64(4), 2.5}, {"north", int64(5), nil}}
	want := plan(t, []string{"region", "orders", "revenue"}, rows, "")
	for _, perm := range [][3]int{{1, 0, 2}, {1, 2, 0}} { // label second, label last
		cols := make([]string, 3)
		moved := make([][]any, len(rows))
		for i, row := range rows {
			moved[i] = make([]any, 3)
			for to, from := range perm {
				moved[i][to] = row[from]
			}
		}
		for to, from := range perm {
			cols[to] = []string{"region", "orders", "revenue"}[from]
		}
		got := plan(t, cols, moved, "")
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("columns %q: %s\nwant %s", cols, a, b)
		}
	}
}

func TestWhatMakesALabelOrANumber(t *testing.T) {
	tests := []struct {
		name   string
		cols   []string
		rows   [][]any
		kind   chart.Kind
		unit   chart.Unit
		labels []string
	}{
		{"amounts as text (printf)", []string{"region", "revenue"},
			[][]any{{"west", "1250.50"}, {"east", "-3"}, {"north", "2e3"}}, chart.Bar, "", []string{"west", "east", "north"}},
		{"codes with leading zeros are labels", []string{"store", "sales"},
			[][]any{{"007", "1"}, {"012", "2"}}, chart.Bar, "", []string{"007", "012"}},
		{"a distinct integer key", []string{"month_no", "revenue"},
			[][]any{{int64(1), 5.0}, {int64(2), 6.0}, {int64(3), 4.0}}, chart.Bar, "", []string{"1", "2", "3"}},
		{"integer years named year", []string{"order_year", "revenue"},
			[][]any{{int64(2024), 5.0}, {int64(2023), 6.0}}, chart.Line, chart.Year, []string{"2023", "2024"}},
		{"integers named year but not years", []string{"year_count", "n"},
			[][]any{{int64(1), 5.0}, {int64(2), 6.0}}, chart.Bar, "", []string{"1", "2"}},
		{"years as text", []string{"y", "revenue"},
			[][]any{{"2025", 5.0}, {"2024", 6.0}}, chart.Line, chart.Year, []string{"2024", "2025"}},
		{"four digits outside 1800-2200 are numbers", []string{"pin", "n", "region"},
			[][]any{{"1234", int64(1), "w"}, {"4321", int64(2), "e"}}, chart.Bar, "", []string{"w", "e"}},
		{"dates", []string{"day", "n"},
			[][]any{{"2025-06-02", int64(1)}, {"2025-06-01", int64(2)}}, chart.Line, chart.Day, []string{"2025-06-01", "2025-06-02"}},
		{"dates and date-times", []string{"at", "n"},
			[][]any{{"2025-06-01 10:30", int64(1)}, {"2025-06-01", int64(2)}, {"2025-06-01T09:00:05.250Z", int64(3)}},
			chart.Line, chart.Clock, []string{"2025-06-01", "2025-06-01T09:00:05.250Z", "2025-06-01 10:30"}},
		{"not a date", []string{"day", "n"},
			[][]any{{"2025-02-30", int64(1)}, {"2025-02-28", int64(2)}}, chart.Bar, "", []string{"2025-02-30", "2025-02-28"}},
		{"mixed text and numbers label", []string{"bucket", "n"},
			[][]any{{"n/a", int64(1)}, {int64(5), int64(2)}, {2.5, int64(3)}}, chart.Bar, "", []string{"n/a", "5", "2.5"}},
		{"a NULL category", []string{"region", "n"},
			[][]any{{"west", int64(1)}, {nil, int64(2)}}, chart.Bar, "", []string{"west", "NULL"}},
		{"a NULL time is skipped", []string{"month", "n"},
			[][]any{{"2025-01", int64(1)}, {nil, int64(9)}, {"2025-02", int64(2)}}, chart.Line, chart.Month, []string{"2025-01", "2025-02"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := plan(t, tt.cols, tt.rows, "")
			var labels []string
			for _, p := range s.Points {
				labels = append(labels, p.Label)
			}
			if s.Kind != tt.kind || s.Unit != tt.unit || strings.Join(labels, "|") != strings.Join(tt.labels, "|") {
				t.Errorf("got %q %q %q, want %q %q %q", s.Kind, s.Unit, labels, tt.kind, tt.unit, tt.labels)
			}
		})
	}
}

func TestNullsLeaveGaps(t *testing.T) {
	// A bar chart: the NULL bar is missing, its slot and label stay.
	s := plan(t, []string{"region", "revenue"}, [][]any{{"west", 5.0}, {"east", nil}, {"north", 7.0}, {"south", 2.0}}, "")
	if len(s.Points) != 4 || !math.IsNaN(s.Points[1].Values[0]) {
		t.Fatalf("points %v, want 4 with a missing second value", s.Points)
	}
	if n := blobs(render(t, s), chart.SeriesColor(0)); n != 3 {
		t.Errorf("%d bars, want 3", n)
	}

	// A line: no marker for the NULL, and the line breaks there.
	var rows [][]any
	for m := 1; m <= 12; m++ {
		var v any = float64(100 + m*10)
		if m == 6 {
			v = nil
		}
		rows = append(rows, []any{fmt.Sprintf("2025-%02d", m), v})
	}
	s = plan(t, []string{"month", "revenue"}, rows, "")
	img := render(t, s)
	if n := blobs(img, chart.SeriesColor(0)); n != 11 {
		t.Errorf("%d markers, want 11", n)
	}
	// Runs of 5 and 6 points: 4 + 5 segments, none across June.
	if n := blobs(img, chart.LineColor(0)); n != 9 {
		t.Errorf("%d line segments, want 9", n)
	}
}

func TestHostileLabelsStayData(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	hostile := []string{
		"<script>alert(1)</script>",
		"'; DROP TABLE orders; --",
		"\u202eevil\u202c reversed",
		"line one\nline two\r\n\ttabbed",
		"nul\x00 and esc\x1b[31m red",
		"🚀🔥 emoji",
		"東京",
		"שלום עולם",
		"مرحبا",
		"Z̸̢̧̛͔̺͚͈̤̙̥̝͍͋̾̓̈́̓͘ą̵̛̙̤̭̯̜̲̅̏̈́̀̅l̵̝̙̳̙͔̦͖̄̈́̽̾̓͐̕g̸͍̪̤̗̙̹̊̂́̚o̷",
		"zero\u200bwidth\u200d\ufeffjoiners",
		"bad utf8 \xff\xfe end",
		"\x00\x01\x02", // nothing left
		huge,
		"",
	}
	var rows [][]any
	for i, l := range hostile {
		rows = append(rows, []any{l, int64(i + 1)})
	}
	title := "<b>" + huge + "</b>\n\u202e"
	s := plan(t, []string{"label\u202e\n", "n"}, rows, title)
	texts := []string{s.Title, s.XLabel, s.Series[0]}
	for _, p := range s.Points {
		texts = append(texts, p.Label)
	}
	for _, x := range texts {
		if !utf8.ValidString(x) {
			t.Errorf("%q is not valid UTF-8", x)
		}
		for _, r := range x {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Mn, unicode.Me) {
				t.Errorf("%q keeps %U", x, r)
			}
		}
	}
	if n := utf8.RuneCountInString(s.Title); n > chart.MaxTitleRunes || !strings.HasSuffix(s.Title, "…") {
		t.Errorf("title has %d runes (%q…), want at most %d ending in …", n, s.Title[:20], chart.MaxTitleRunes)
	}
	for i, p := range s.Points {
		if n := utf8.RuneCountInString(p.Label); n > chart.MaxLabelRunes {
			t.Errorf("label %d has %d runes, want at most %d", i, n, chart.MaxLabelRunes)
		}
	}
	for i, want := range map[int]string{
		0:  "<script>alert(1)</script>"[:23] + "…", // data, clipped, not markup
		2:  "evil reversed",
		3:  "line one line two tabbed",
		5:  "?? emoji",
		6:  "??",
		7:  "שלום עולם", // logical order in the Spec; drawn in visual order
		8:  "?????",
		9:  "Ząlgo", // accents composed where the font has them (ą), the rest dropped
		12: "",
	} {
		if got := s.Points[i].Label; got != want {
			t.Errorf("label %d = %q, want %q", i, got, want)
		}
	}
	img := render(t, s)
	if n := blobs(img, chart.SeriesColor(0)); n != len(hostile) {
		t.Errorf("%d bars, want %d", n, len(hostile))
	}
}

// TestRenderCleansAgain: a Spec built by hand, not by Plan, is cleaned when
// drawn, so it draws exactly what its cleaned texts would.
func TestRenderCleansAgain(t *testing.T) {
	spec := func(title, x, series, label string) *chart.Spec {
		return &chart.Spec{Kind: chart.Bar, Title: title, XLabel: x, Series: []string{series}, Points: []chart.Point{
			{Label: label, Values: []float64{1}}, {Label: "b", Values: []float64{2}},
		}}
	}
	dirty, err := chart.Render(spec("q\n\u202e?", "x\x00", "n\u200b", "a\u202eb\nc\U0001F680"))
	if err != nil {
		t.Fatal(err)
	}
	clean, err := chart.Render(spec("q ?", "x", "n", "ab c?"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dirty, clean) {
		t.Error("a hand-built Spec with control and format characters draws differently from its cleaned texts")
	}
}

func TestHugeAndTinyMagnitudes(t *testing.T) {
	for _, tt := range []struct {
		name string
		vals []any
	}{
		{"billions", []any{int64(1_250_000_000), int64(3_000_000_000), int64(-400_000_000)}},
		{"int64 limits", []any{int64(math.MaxInt64), int64(math.MinInt64), int64(0)}},
		{"tiny", []any{0.000012, 0.000031, 0.0000005}},
		{"float64 limits", []any{math.MaxFloat64, 0.0, math.SmallestNonzeroFloat64}},
		{"all equal", []any{7.0, 7.0, 7.0}},
		{"all zero", []any{0.0, 0.0, int64(0)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := [][]any{{"a", tt.vals[0]}, {"b", tt.vals[1]}, {"c", tt.vals[2]}}
			render(t, plan(t, []string{"k", "v"}, rows, tt.name))
			months := [][]any{{"2025-01", tt.vals[0]}, {"2025-02", tt.vals[1]}, {"2025-03", tt.vals[2]}}
			render(t, plan(t, []string{"month", "v"}, months, tt.name))
		})
	}
}

func TestDescribe(t *testing.T) {
	cols, rows := monthlyRevenue()
	if got, want := plan(t, cols, rows, "").Describe(), "Line chart of revenue by month, 12 points from 2025-01 to 2025-12."; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	s := plan(t, []string{"region", "sales", "returns"}, [][]any{{"w", int64(1), int64(2)}, {"e", int64(3), nil}}, "")
	if got, want := s.Describe(), "Bar chart of sales and returns by region, 2 points."; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

func TestSpecJSON(t *testing.T) {
	s := plan(t, []string{"month", "a", "b"}, [][]any{{"2025-02", 1.5, nil}, {"2025-01", int64(2), int64(3)}}, "q")
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"line","title":"q","x_label":"month","unit":"month","series":["a","b"],"points":[` +
		`{"label":"2025-01","time":"2025-01-01T00:00:00Z","values":[2,3]},` +
		`{"label":"2025-02","time":"2025-02-01T00:00:00Z","values":[1.5,null]}]}`
	if string(b) != want {
		t.Errorf("JSON:\n%s\nwant\n%s", b, want)
	}
	s = plan(t, []string{"region", "n"}, [][]any{{"w", int64(1)}, {"e", int64(2)}}, "")
	if b, _ = json.Marshal(s); strings.Contains(string(b), "time") || strings.Contains(string(b), "unit") {
		t.Errorf("a bar chart's JSON has a time or unit: %s", b)
	}
}

func TestRenderRefusesBadSpecs(t *testing.T) {
	good := func() *chart.Spec {
		return &chart.Spec{Kind: chart.Line, Series: []string{"n"}, Points: []chart.Point{
			{Label: "a", Time: time.Unix(0, 0), Values: []float64{1}},
			{Label: "b", Time: time.Unix(60, 0), Values: []float64{2}},
		}}
	}
	if _, err := chart.Render(good()); err != nil {
		t.Fatalf("Render(good): %v", err)
	}
	for name, spoil := range map[string]func(*chart.Spec){
		"kind":       func(s *chart.Spec) { s.Kind = "pie" },
		"no series":  func(s *chart.Spec) { s.Series = nil },
		"3 series":   func(s *chart.Spec) { s.Series = []string{"a", "b", "c"} },
		"one point":  func(s *chart.Spec) { s.Points = s.Points[:1] },
		"51 points":  func(s *chart.Spec) { s.Points = make([]chart.Point, 51) },
		"values":     func(s *chart.Spec) { s.Points[1].Values = []float64{1, 2} },
		"infinite":   func(s *chart.Spec) { s.Points[1].Values[0] = math.Inf(-1) },
		"span":       func(s *chart.Spec) { s.Points[0].Values[0], s.Points[1].Values[0] = math.MaxFloat64, -math.MaxFloat64 },
		"time order": func(s *chart.Spec) { s.Points[1].Time = s.Points[0].Time },
		"nil":        nil,
	} {
		s := good()
		if spoil == nil {
			s = nil
		} else {
			spoil(s)
		}
		if png, err := chart.Render(s); !errors.Is(err, chart.ErrSpec) || png != nil {
			t.Errorf("%s: Render = %d bytes, %v; want ErrSpec", name, len(png), err)
		}
	}
}

// FuzzFor feeds For results of three rows built from arbitrary strings and
// numbers: it must never panic or hang, and a chart it returns must decode
// at the full size.
func FuzzFor(f *testing.F) {
	f.Add("2025-01", "2025-02", "west", "12.5", 1.0, -2.0, "revenue", "title")
	f.Add("a", "b", "c", "1e308", 1e308, -1e308, "", "\u202e")
	f.Add("2025-01-01T00:00:00Z", "1969-12-31 23:59:59.5-01:00", "9999-12-31", "", 0.0, 5e-324, "n", "")
	f.Fuzz(func(t *testing.T, l1, l2, l3, s string, v1, v2 float64, col, title string) {
		rows := [][]any{{l1, v1, s}, {l2, v2, nil}, {l3, int64(v1), s}}
		png, why, err := chart.For([]string{"k", col, "s"}, rows, title)
		if err != nil {
			t.Fatalf("For: %v", err)
		}
		if why == chart.OK {
			decode(t, png)
		} else if png != nil {
			t.Fatalf("no chart (%v) but %d bytes", why, len(png))
		}
	})
}

// ForAnswer charts an answered result of several rows, and nothing else:
// a one-row answer, one whose rows were cut, one that is not an answer.
func TestForAnswer(t *testing.T) {
	res := &agent.Result{Question: "Revenue by month?", Outcome: agent.Answered, Columns: []string{"month", "revenue"},
		Rows: [][]any{{"2025-01", 10.0}, {"2025-02", 12.5}, {"2025-03", 9.0}}}
	png, alt, err := chart.ForAnswer(res)
	if err != nil || len(png) == 0 || !strings.Contains(alt, "3 points from 2025-01 to 2025-03") {
		t.Fatalf("ForAnswer = %d bytes, %q, %v", len(png), alt, err)
	}
	if _, err := imagepng.Decode(bytes.NewReader(png)); err != nil {
		t.Errorf("not a PNG: %v", err)
	}
	for name, change := range map[string]func(r *agent.Result){
		"one row":      func(r *agent.Result) { r.Rows = r.Rows[:1] },
		"rows cut":     func(r *agent.Result) { r.Truncated = true },
		"not answered": func(r *agent.Result) { r.Outcome = agent.Budget },
	} {
		r := *res
		change(&r)
		if png, _, err := chart.ForAnswer(&r); png != nil || err != nil {
			t.Errorf("%s: ForAnswer = %d bytes, %v; want no chart", name, len(png), err)
		}
	}
	if png, _, _ := chart.ForAnswer(nil); png != nil {
		t.Error("ForAnswer(nil) drew a chart")
	}
}
