package chart_test

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"sqlbot/bot/chart"
)

var update = flag.Bool("update", false, "rewrite testdata/*.png from current output")

// goldenCharts are the charts kept as PNG files in testdata: look at them
// to review a change in drawing, then accept it with go test -update.
func goldenCharts() map[string]func() ([]string, [][]any, string) {
	return map[string]func() ([]string, [][]any, string){
		"monthly_revenue": func() ([]string, [][]any, string) {
			cols, rows := monthlyRevenue()
			return cols, rows, "What was revenue by month in 2025?"
		},
		"sales_and_returns_by_region": func() ([]string, [][]any, string) {
			var rows [][]any
			for i, r := range []string{"west", "mountain", "midwest", "south", "northeast"} {
				rows = append(rows, []any{r, int64(125_000 * (i + 1)), -31_250.5 * float64(i)})
			}
			return []string{"region", "sales", "returns"}, rows, "Sales and returns by region"
		},
		"hostile_labels": func() ([]string, [][]any, string) {
			return []string{"label\u202e", "n"}, [][]any{
				{"<script>alert(1)</script>", int64(5)},
				{"שלום עולם", int64(7)},
				{"emoji 🚀🔥 label", int64(3)},
				{"ctrl\x00\x1b[31m\u202eevil\u202c\nnewline", int64(9)},
				{"Z̸̢̧̛͔̺͚͈̤̙̥̝͍͋̾̓̈́̓͘ą̵̛̙̤̭̯̜̲̅̏̈́̀̅l̵̝̙̳̙͔̦͖̄̈́̽̾̓͐̕g̸͍̪̤̗̙̹̊̂́̚o̷", int64(4)},
				{"a very very very very very very long label that goes on", int64(6)},
			}, "<b>title</b>\n\twith ☃ and 東京 and a tail that keeps going on and on and on and on and on and on and on and on and on and on"
		},
	}
}

// TestGolden renders each golden chart and compares it with its file in
// testdata, byte for byte: the renderer is deterministic (no map order, no
// clock, no system font), so a difference is a change in drawing, in the
// PNG encoder, or in a dependency.
func TestGolden(t *testing.T) {
	for name, result := range goldenCharts() {
		t.Run(name, func(t *testing.T) {
			cols, rows, title := result()
			got, why, err := chart.For(cols, rows, title)
			if err != nil || why != chart.OK {
				t.Fatalf("For: %v, %v", why, err)
			}
			file := filepath.Join("testdata", name+".png")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (%s); go test -update to accept after looking at both",
					name, file, pixelsDiffer(t, got, want))
			}
		})
	}
}

// pixelsDiffer says whether two PNGs differ in their pixels or only in their
// encoding.
func pixelsDiffer(t *testing.T, a, b []byte) string {
	ia, err1 := png.Decode(bytes.NewReader(a))
	ib, err2 := png.Decode(bytes.NewReader(b))
	if err1 != nil || err2 != nil || ia.Bounds() != ib.Bounds() {
		return "not comparable"
	}
	n := 0
	for y := ia.Bounds().Min.Y; y < ia.Bounds().Max.Y; y++ {
		for x := ia.Bounds().Min.X; x < ia.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := ia.At(x, y).RGBA()
			r2, g2, b2, a2 := ib.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				n++
			}
		}
	}
	if n == 0 {
		return "same pixels, different encoding"
	}
	return fmt.Sprintf("%d pixels differ", n)
}

// TestSameBytesEveryTime renders one chart many times, some at once on
// several goroutines, and expects the same bytes from each.
func TestSameBytesEveryTime(t *testing.T) {
	cols, rows := monthlyRevenue()
	first, _, err := chart.For(cols, rows, "q")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	sums := make([][32]byte, 4)
	for i := range sums {
		wg.Go(func() {
			b, _, err := chart.For(cols, rows, "q")
			if err != nil {
				t.Error(err)
			}
			sums[i] = sha256.Sum256(b)
		})
	}
	wg.Wait()
	for i, s := range sums {
		if s != sha256.Sum256(first) {
			t.Errorf("render %d: different bytes", i)
		}
	}
}
