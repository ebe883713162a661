package chart

import "image/color"

// SeriesColor and LineColor let tests find each series' bars, markers and
// line segments in the PNG.
func SeriesColor(i int) color.RGBA { return seriesColor(i) }
func LineColor(i int) color.RGBA   { return lineColor(i) }
