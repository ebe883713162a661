package chart_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"sqlbot/bot/chart"
)

// decode decodes a PNG from Render and checks its size.
func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	if got := img.Bounds().Size(); got != (image.Point{X: chart.Width, Y: chart.Height}) {
		t.Fatalf("image size %v, want %dx%d", got, chart.Width, chart.Height)
	}
	return img
}

// blobs counts the 8-connected regions of pixels exactly of colour c: the
// bars of a series, or its markers, or its line segments between markers
// (markers are drawn over the line in a darker colour, so they cut it).
// Anti-aliased edges blend with what lies beside them, so only the cores
// of shapes have the exact colour, and neighbouring shapes stay apart.
func blobs(img image.Image, c color.RGBA) int {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	match := make([]bool, w*h)
	for y := range h {
		for x := range w {
			r, g, bl, a := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			match[y*w+x] = uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B && uint8(a>>8) == c.A
		}
	}
	n := 0
	var stack []int
	for i := range match {
		if !match[i] {
			continue
		}
		n++
		match[i] = false
		stack = append(stack[:0], i)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			px, py := p%w, p/w
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					x, y := px+dx, py+dy
					if x < 0 || y < 0 || x >= w || y >= h || !match[y*w+x] {
						continue
					}
					match[y*w+x] = false
					stack = append(stack, y*w+x)
				}
			}
		}
	}
	return n
}

// render renders s and decodes the PNG.
func render(t *testing.T, s *chart.Spec) image.Image {
	t.Helper()
	b, err := chart.Render(s)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return decode(t, b)
}

// plan plans a chart that must get one.
func plan(t *testing.T, cols []string, rows [][]any, title string) *chart.Spec {
	t.Helper()
	s, why := chart.Plan(cols, rows, title)
	if why != chart.OK || s == nil {
		t.Fatalf("Plan(%q, %d rows): no chart (%v), want one", cols, len(rows), why)
	}
	return s
}
