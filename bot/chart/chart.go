// Package chart draws a query result as a PNG chart when the result has a
// shape a chart helps with, without running any code the model wrote.
//
// Plan looks only at the values of a result (nil, int64, float64 or string,
// as roconn.Result holds them) and decides: a result with one label column
// and one or two number columns, and 2 to MaxPoints rows, gets a Spec; any
// other result gets a Reason and no chart. A label column whose values are
// dates, months, years or date-times makes a time series, drawn as a line in
// time order; any other label column makes a breakdown by category, drawn as
// bars (grouped bars for two number columns) in the result's order. Render
// draws a Spec as a Width×Height PNG with gonum.org/v1/plot and the
// Liberation fonts it embeds; it reads no system font and no file.
//
// The contract: no value of the result is ever run or interpreted as code or
// markup (texts are drawn as plain text, never as LaTeX or HTML). Labels,
// column names and the title are data: control and format characters (bidi
// overrides, zero-width characters) and combining marks are removed,
// characters the font cannot draw become '?', and every text is clipped
// (with '…') to a fixed length and, when drawn, to the room it has, so a
// hostile label can neither break the drawing nor make it unreadable.
// Right-to-left text is drawn in visual order and kept in logical order in
// the Spec. A value span that a float64 cannot hold gets no chart, so the
// drawing never meets NaN. The same Spec gives the same bytes every time.
// ForAnswer is the chart of an agent's answer as the Slack thread and the web
// page show it. The package holds no state: Plan, Render, For and ForAnswer
// are safe to call from many goroutines at once.
package chart

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limits and size of a chart.
const (
	// MaxPoints is the most rows a result may have to get a chart; more are
	// too many to read as a chart (a table or the CSV serves them better).
	MaxPoints = 50
	// Width and Height are the size of the PNG in pixels (5:3): legible in
	// Slack's preview of an image in a thread, sharp when opened.
	Width  = 1000
	Height = 600
	// MaxTitleRunes, MaxLabelRunes and MaxNameRunes clip the title, a point's
	// label and a column name; Render clips further to the room each has.
	MaxTitleRunes = 120
	MaxLabelRunes = 24
	MaxNameRunes  = 40
)

// A Kind is the kind of chart a Spec draws.
type Kind string

// The kinds of chart.
const (
	// Line is a time series: one line per number column, a marker on each
	// point, points in time order, the x axis a calendar.
	Line Kind = "line"
	// Bar is a breakdown by category: one bar per point (two side by side
	// for two number columns), in the result's order.
	Bar Kind = "bar"
)

// A Unit is the finest step of a time series' labels: what one label names.
type Unit string

// The units of a time series.
const (
	Year  Unit = "year"  // "2025"
	Month Unit = "month" // "2025-06"
	Day   Unit = "day"   // "2025-06-30"
	Clock Unit = "time"  // "2025-06-30 14:05[:09[.123]]", with an optional zone
)

// A Spec is a chart to draw, ready for Render or for a page that draws
// charts itself (it marshals to JSON). Plan builds it from a result; its
// texts are already cleaned and clipped, but they are still data: escape them
// before putting them into HTML.
type Spec struct {
	Kind   Kind     `json:"kind"`
	Title  string   `json:"title,omitempty"`
	XLabel string   `json:"x_label"`        // the label column's name
	Unit   Unit     `json:"unit,omitempty"` // Line only
	Series []string `json:"series"`         // the number columns' names, one or two, in result order
	Points []Point  `json:"points"`         // drawing order: time order for Line, result order for Bar
}

// A Point is one row of the result as drawn.
type Point struct {
	Label string    // the label as text, cleaned and clipped
	Time  time.Time // Line only: the label as a time (UTC unless the text gave a zone)
	// Values holds one number per series; NaN where the result held NULL
	// (JSON null). The point keeps its place: a bar is missing, a line breaks.
	Values []float64
}

// MarshalJSON writes a Point as {"label", "time" (Line only), "values"},
// with null for a missing value.
func (p Point) MarshalJSON() ([]byte, error) {
	vals := make([]*float64, len(p.Values))
	for i := range p.Values {
		if !math.IsNaN(p.Values[i]) {
			vals[i] = &p.Values[i]
		}
	}
	return json.Marshal(struct {
		Label  string     `json:"label"`
		Time   time.Time  `json:"time,omitzero"`
		Values []*float64 `json:"values"`
	}{p.Label, p.Time, vals})
}

// Describe returns one sentence that says what the chart shows, for the alt
// text of the image (Slack's alt_txt, HTML's alt): "Line chart of revenue by
// month, 12 points from 2025-01 to 2025-12." or "Bar chart of sales and
// returns by region, 5 points."
func (s *Spec) Describe() string {
	var b strings.Builder
	if s.Kind == Line {
		b.WriteString("Line chart of ")
	} else {
		b.WriteString("Bar chart of ")
	}
	b.WriteString(strings.Join(s.Series, " and "))
	if s.XLabel != "" {
		b.WriteString(" by " + s.XLabel)
	}
	fmt.Fprintf(&b, ", %d points", len(s.Points))
	if s.Kind == Line && len(s.Points) > 0 {
		fmt.Fprintf(&b, " from %s to %s", s.Points[0].Label, s.Points[len(s.Points)-1].Label)
	}
	b.WriteString(".")
	return b.String()
}

// A Reason says why a result gets no chart. The zero Reason, OK, means it
// gets one. The values are stable (they appear in logs and metrics); append
// new ones at the end.
type Reason uint8

// The reasons a result gets no chart.
const (
	OK           Reason = iota // the result gets a chart
	TooFewRows                 // fewer than 2 rows: a single figure needs no chart
	TooManyRows                // more than MaxPoints rows
	Ragged                     // a row has more or fewer values than there are columns
	BadValue                   // a value is not nil, int64, float64 or string
	NoLabel                    // no column can name the points
	ManyLabels                 // more than one text or time column
	NoNumbers                  // no number column
	ManyNumbers                // more than two number columns
	TooFewPoints               // fewer than 2 rows left once rows without a label or any number are skipped
	RepeatedTime               // a time series names the same time twice
	NotFinite                  // a number is infinite
)

// String returns the reason as a stable snake_case identifier, for logs.
func (r Reason) String() string {
	switch r {
	case OK:
		return "ok"
	case TooFewRows:
		return "too_few_rows"
	case TooManyRows:
		return "too_many_rows"
	case Ragged:
		return "ragged_rows"
	case BadValue:
		return "bad_value"
	case NoLabel:
		return "no_label_column"
	case ManyLabels:
		return "many_label_columns"
	case NoNumbers:
		return "no_number_column"
	case ManyNumbers:
		return "many_number_columns"
	case TooFewPoints:
		return "too_few_points"
	case RepeatedTime:
		return "repeated_time"
	case NotFinite:
		return "not_finite"
	}
	return "reason_" + strconv.Itoa(int(r))
}

// For plans and renders a chart for a result in one call. It returns the PNG
// and OK, or nil and the Reason the result gets no chart; err is non-nil only
// if drawing failed, which is a bug (the reply should go out without a chart).
// title is shown above the chart (the question, typically); it may be empty.
//
// Pass only whole results: a result cut at the row limit would be drawn as if
// it were whole.
func For(cols []string, rows [][]any, title string) ([]byte, Reason, error) {
	s, why := Plan(cols, rows, title)
	if why != OK {
		return nil, why, nil
	}
	png, err := Render(s)
	if err != nil {
		return nil, OK, err
	}
	return png, OK, nil
}
