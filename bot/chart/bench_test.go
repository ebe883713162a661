package chart_test

import (
	"fmt"
	"testing"
	"time"

	"sqlbot/bot/chart"
)

// BenchmarkChart50 measures a chart of the most points allowed, two series:
// Plan alone, and For (Plan, draw, PNG encoding) for bars and for a line.
func BenchmarkChart50(b *testing.B) {
	var bars, days [][]any
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range chart.MaxPoints {
		bars = append(bars, []any{fmt.Sprintf("product %02d", i), int64(1000 + 37*i), float64(i) * 12.5})
		days = append(days, []any{start.AddDate(0, 0, i).Format("2006-01-02"), int64(1000 + 37*i), float64(i%7) * 12.5})
	}
	cols := []string{"label", "units", "revenue"}
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, why := chart.Plan(cols, days, "Units and revenue by day"); why != chart.OK {
				b.Fatal(why)
			}
		}
	})
	for name, rows := range map[string][][]any{"bar": bars, "line": days} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				png, why, err := chart.For(cols, rows, "Units and revenue")
				if err != nil || why != chart.OK {
					b.Fatal(why, err)
				}
				size = len(png)
			}
			b.ReportMetric(float64(size), "png-bytes")
		})
	}
}
