package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// ErrSpec is returned, wrapped, by Render for a Spec that Plan would not
// have built: an unknown kind, no series or more than two, fewer than 2 or
// more than MaxPoints points, a point with the wrong number of values or an
// infinite one, or a time series out of time order.
var ErrSpec = errors.New("chart: invalid spec")

// Sizes, in points (at 96 dots per inch a point is 4/3 of a pixel).
const (
	pad        = vg.Length(12) // around the chart
	titleSize  = font.Length(15)
	legendSize = font.Length(11)
	axisSize   = font.Length(12) // axis names
	tickSize   = font.Length(11) // tick labels
	smallTick  = font.Length(9.5)
	swatch     = vg.Length(10) // legend colour square
	dpi        = 96
)

// seriesColor returns the colour of series i's bars and markers; lineColor
// the lighter colour of its line, so that markers stand out from it.
func seriesColor(i int) color.RGBA {
	if i == 0 {
		return color.RGBA{R: 31, G: 119, B: 180, A: 255} // blue
	}
	return color.RGBA{R: 230, G: 97, B: 0, A: 255} // orange
}

func lineColor(i int) color.RGBA {
	c := seriesColor(i)
	mix := func(v uint8) uint8 { return uint8((int(v) + 2*255) / 3) }
	return color.RGBA{R: mix(c.R), G: mix(c.G), B: mix(c.B), A: 255}
}

var _ plot.Plotter = (*bars)(nil)

// Render draws s as a Width×Height PNG. The same Spec gives the same bytes.
// It returns an error wrapping ErrSpec for a Spec that Plan would not have
// built, and an error if drawing failed. Texts are cleaned again, so a Spec
// built by hand cannot smuggle control characters into the image.
func Render(s *Spec) ([]byte, error) {
	if err := check(s); err != nil {
		return nil, err
	}
	img, err := drawSpec(s)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("chart: encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// check reports what makes s undrawable, wrapping ErrSpec.
func check(s *Spec) error {
	switch {
	case s == nil:
		return fmt.Errorf("%w: nil", ErrSpec)
	case s.Kind != Line && s.Kind != Bar:
		return fmt.Errorf("%w: kind %q", ErrSpec, s.Kind)
	case len(s.Series) < 1 || len(s.Series) > 2:
		return fmt.Errorf("%w: %d series, want 1 or 2", ErrSpec, len(s.Series))
	case len(s.Points) < 2 || len(s.Points) > MaxPoints:
		return fmt.Errorf("%w: %d points, want 2 to %d", ErrSpec, len(s.Points), MaxPoints)
	}
	for i, p := range s.Points {
		if len(p.Values) != len(s.Series) {
			return fmt.Errorf("%w: point %d has %d values for %d series", ErrSpec, i, len(p.Values), len(s.Series))
		}
		for _, v := range p.Values {
			if math.IsInf(v, 0) {
				return fmt.Errorf("%w: point %d has an infinite value", ErrSpec, i)
			}
		}
		if s.Kind == Line && i > 0 && !p.Time.After(s.Points[i-1].Time) {
			return fmt.Errorf("%w: point %d is not after point %d", ErrSpec, i, i-1)
		}
	}
	// An infinite span would put NaN coordinates in the drawing, on which
	// the rasterizer never returns.
	if lo, hi := valueRange(s); math.IsInf(hi-lo, 0) {
		return fmt.Errorf("%w: values span more than a float64 holds", ErrSpec)
	}
	return nil
}

// drawSpec draws s.
func drawSpec(s *Spec) (img image.Image, err error) {
	// gonum plot and its font code panic on states they deem impossible (an
	// empty axis range, a font that does not parse). A chart is an extra to
	// a reply: such a panic becomes an error, and the reply goes out without
	// the chart.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: draw %s chart: %v", s.Kind, r)
		}
	}()
	r := newRenderer()
	// Width pixels at dpi dots per inch, in points (72 to the inch).
	cv := vgimg.NewWith(vgimg.UseWH(Width*72/dpi, Height*72/dpi), vgimg.UseDPI(dpi))
	dc := draw.New(cv)
	area := draw.Crop(dc, pad, -pad, pad, -pad)

	// Title, then the legend (two series only), then the plot below them.
	top := area.Max.Y
	if title := r.fit(s.Title, MaxTitleRunes, r.style(titleSize, true), area.Size().X); title != "" {
		sty := r.style(titleSize, true)
		sty.XAlign, sty.YAlign = text.XCenter, text.YTop
		area.FillText(sty, vg.Point{X: area.Center().X, Y: top}, title)
		top -= sty.Height(title) + 6
	}
	if len(s.Series) == 2 {
		top -= r.legend(area, top, s.Series) + 6
	}
	plotArea := area
	plotArea.Max.Y = top

	p := r.newPlot()
	if s.Kind == Line {
		r.line(p, s, plotArea)
	} else {
		r.bar(p, s, plotArea)
	}
	if len(s.Series) == 1 {
		p.Y.Label.Text = r.fit(s.Series[0], MaxNameRunes, p.Y.Label.TextStyle, plotArea.Size().Y)
	}
	p.X.Label.Text = r.fit(s.XLabel, MaxNameRunes, p.X.Label.TextStyle, plotArea.Size().X)
	p.Draw(plotArea)
	return cv.Image(), nil
}

// A renderer holds what one drawing needs: its own font cache and text
// handler (nothing global) and a cleaner.
type renderer struct {
	text  text.Handler
	clean *cleaner
}

func newRenderer() *renderer {
	return &renderer{
		text:  text.Plain{Fonts: font.NewCache(liberation.Collection())},
		clean: newCleaner(),
	}
}

// Colours of everything that is not data.
func inkColor() color.Color  { return color.RGBA{R: 33, G: 33, B: 33, A: 255} }
func axisColor() color.Color { return color.RGBA{R: 110, G: 110, B: 110, A: 255} }
func gridColor() color.Color { return color.RGBA{R: 225, G: 225, B: 225, A: 255} }

// style returns a text style in the chart's font.
func (r *renderer) style(size font.Length, bold bool) text.Style {
	return text.Style{Color: inkColor(), Font: sans(size, bold), Handler: r.text}
}

// fit cleans s, clips it to max runes and then to width (with '…'), and
// returns it in visual order, ready to draw.
func (r *renderer) fit(s string, max int, sty text.Style, width vg.Length) string {
	s = r.clean.clean(s, max)
	runes := []rune(s)
	for n := len(runes); n > 1 && sty.Width(s) > width; n-- {
		s = clipRunes(string(runes), n)
	}
	return visual(s)
}

// newPlot returns a plot whose texts all use the renderer's handler and font
// (plot.New's defaults come from package variables of gonum plot, which
// another importer could change).
func (r *renderer) newPlot() *plot.Plot {
	p := plot.New()
	p.TextHandler = r.text
	p.BackgroundColor = color.White
	p.Title.TextStyle = r.style(titleSize, true)
	p.Legend.TextStyle = r.style(legendSize, false)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		label, tick := a.Label.TextStyle, a.Tick.Label
		a.Label.TextStyle = r.style(axisSize, false)
		a.Label.TextStyle.XAlign, a.Label.TextStyle.YAlign = label.XAlign, label.YAlign
		a.Label.Padding = 4
		a.Tick.Label = r.style(tickSize, false)
		a.Tick.Label.XAlign, a.Tick.Label.YAlign = tick.XAlign, tick.YAlign
		a.Tick.Label.Color = axisColor()
		a.LineStyle = draw.LineStyle{Color: axisColor(), Width: 0.75}
		a.Tick.LineStyle = draw.LineStyle{Color: axisColor(), Width: 0.75}
		a.Tick.Length = 4
	}
	return p
}

// legend draws one colour square and name per series, centred on a row
// whose top is at y, and returns the row's height.
func (r *renderer) legend(area draw.Canvas, y vg.Length, names []string) vg.Length {
	sty := r.style(legendSize, false)
	sty.YAlign = text.YCenter
	const gap, between = vg.Length(5), vg.Length(24)
	room := area.Size().X/vg.Length(len(names)) - swatch - gap - between
	labels := make([]string, len(names))
	total := -between
	for i, n := range names {
		labels[i] = r.fit(n, MaxNameRunes, sty, room)
		total += swatch + gap + sty.Width(labels[i]) + between
	}
	h := max(swatch, sty.Height("Mg"))
	mid := y - h/2
	x := area.Center().X - total/2
	for i, l := range labels {
		area.FillPolygon(seriesColor(i), []vg.Point{
			{X: x, Y: mid - swatch/2}, {X: x + swatch, Y: mid - swatch/2},
			{X: x + swatch, Y: mid + swatch/2}, {X: x, Y: mid + swatch/2},
		})
		x += swatch + gap
		area.FillText(sty, vg.Point{X: x, Y: mid}, l)
		x += sty.Width(l) + between
	}
	return h
}

// valueRange returns the smallest and largest values of s (NaN skipped);
// bars also include 0, where they start.
func valueRange(s *Spec) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	if s.Kind == Bar {
		lo, hi = 0, 0
	}
	for _, p := range s.Points {
		for _, v := range p.Values {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	return lo, hi
}

// yAxis sets the value axis: round ticks covering the data, a grid at each.
func (r *renderer) yAxis(p *plot.Plot, s *Spec) {
	lo, hi := valueRange(s)
	ticks, min, max := numberTicks(lo, hi, 6)
	p.Y.Min, p.Y.Max = min, max
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(&plotter.Grid{Horizontal: draw.LineStyle{Color: gridColor(), Width: 0.75}})
}

// line draws a time series: per series, a line through consecutive points
// that have a value (a missing value breaks it), then a marker on each.
func (r *renderer) line(p *plot.Plot, s *Spec, area draw.Canvas) {
	r.yAxis(p, s)
	var markers []plot.Plotter
	for k := range s.Series {
		var run, all plotter.XYs
		flush := func() {
			if len(run) > 1 {
				l := &plotter.Line{XYs: run, LineStyle: draw.LineStyle{Color: lineColor(k), Width: 2}}
				p.Add(l)
			}
			run = nil
		}
		for _, pt := range s.Points {
			v := pt.Values[k]
			if math.IsNaN(v) {
				flush()
				continue
			}
			xy := plotter.XY{X: unixSeconds(pt.Time), Y: v}
			run = append(run, xy)
			all = append(all, xy)
		}
		flush()
		markers = append(markers, &plotter.Scatter{XYs: all, GlyphStyle: draw.GlyphStyle{
			Color: seriesColor(k), Radius: 3.5, Shape: draw.CircleGlyph{},
		}})
	}
	p.Add(markers...) // after every line, so no line crosses a marker

	first, last := s.Points[0].Time, s.Points[len(s.Points)-1].Time
	sty := p.X.Tick.Label
	room := area.Size().X - 70 // less the value axis' labels
	unit := s.Unit
	if unit == "" {
		unit = Clock
	}
	span := unixSeconds(last) - unixSeconds(first)
	ticks := timeTicks(first, last, unit, func(ts []plot.Tick) bool {
		// Neighbouring labels, centred on their ticks, keep a gap.
		for i := 1; i < len(ts); i++ {
			dx := vg.Length((ts[i].Value - ts[i-1].Value) / span * float64(room))
			if dx < (sty.Width(ts[i-1].Label)+sty.Width(ts[i].Label))/2+12 {
				return false
			}
		}
		return true
	})
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = unixSeconds(first), unixSeconds(last)
	for _, t := range ticks { // the ends-only fallback may lie outside the points
		p.X.Min, p.X.Max = math.Min(p.X.Min, t.Value), math.Max(p.X.Max, t.Value)
	}
	p.Y.Padding = 6
}

// bar draws a breakdown: one slot per point in order, one bar per series in
// each slot, labels under the slots, turned when they do not fit.
func (r *renderer) bar(p *plot.Plot, s *Spec, area draw.Canvas) {
	r.yAxis(p, s)
	n := len(s.Points)
	b := &bars{values: make([][]float64, len(s.Series))}
	for k := range s.Series {
		for _, pt := range s.Points {
			b.values[k] = append(b.values[k], pt.Values[k])
		}
	}
	p.Add(b)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Padding, p.Y.Padding = 0, 0

	slot := (area.Size().X - 70) / vg.Length(n)
	sty := p.X.Tick.Label
	if n > 30 {
		sty.Font.Size = smallTick
	}
	const maxWidth = vg.Length(120) // a turned label's length
	labels := make([]string, n)
	var widest vg.Length
	for i, pt := range s.Points {
		labels[i] = r.fit(pt.Label, MaxLabelRunes, sty, maxWidth)
		widest = max(widest, sty.Width(labels[i]))
	}
	lineH := sty.Height("Mg")
	switch {
	case widest+8 <= slot:
	case lineH*1.5 <= slot:
		sty.Rotation = math.Pi / 4
		sty.XAlign, sty.YAlign = text.XRight, text.YTop
	default:
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = text.XRight, text.YCenter
	}
	every := 1 // when even turned labels overlap, label every other slot
	for lineH*vg.Length(every) > slot*1.05 {
		every++
	}
	ticks := make([]plot.Tick, n)
	for i := range ticks {
		ticks[i].Value = float64(i)
		if i%every == 0 {
			ticks[i].Label = labels[i]
		}
	}
	p.X.Tick.Label = sty
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// bars draws grouped bars: values[k][i] is series k at slot i, drawn from 0
// in seriesColor(k); NaN draws nothing. With negative values it draws the
// zero line.
type bars struct {
	values [][]float64
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	slot := trX(1) - trX(0)
	width := slot * 0.8 / vg.Length(len(b.values))
	y0 := trY(0)
	for k, series := range b.values {
		for i, v := range series {
			if math.IsNaN(v) {
				continue
			}
			x0 := trX(float64(i)) - slot*0.4 + vg.Length(k)*width
			y1 := trY(v)
			if !finite(float64(x0)) || !finite(float64(y1)) || !finite(float64(y0)) {
				continue // check makes this unreachable; the rasterizer hangs on NaN
			}
			c.FillPolygon(seriesColor(k), c.ClipPolygonY([]vg.Point{
				{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x0 + width, Y: y1}, {X: x0 + width, Y: y0},
			}))
		}
	}
	if p.Y.Min < 0 {
		c.StrokeLine2(draw.LineStyle{Color: axisColor(), Width: 0.75}, c.Min.X, y0, c.Max.X, y0)
	}
}
