package chart

import (
	"math"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
)

func labels(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		out = append(out, t.Label)
	}
	return out
}

func TestNumberTicks(t *testing.T) {
	tests := []struct {
		lo, hi   float64
		want     string // labels joined by " | "
		min, max float64
	}{
		{0, 156345, "0 | 25,000 | 50,000 | 75,000 | 100,000 | 125,000 | 150,000 | 175,000", 0, 175000},
		{0, 3_000_000_000, "0 | 500,000,000 | 1,000,000,000 | 1,500,000,000 | 2,000,000,000 | 2,500,000,000 | 3,000,000,000", 0, 3e9},
		{-1200, 5000, "-2,000 | -1,000 | 0 | 1,000 | 2,000 | 3,000 | 4,000 | 5,000", -2000, 5000},
		{0, 0.000031, "0 | 0.000005 | 0.000010 | 0.000015 | 0.000020 | 0.000025 | 0.000030 | 0.000035", 0, 0.000035},
		{6.3, 7.7, "6.25 | 6.50 | 6.75 | 7.00 | 7.25 | 7.50 | 7.75", 6.25, 7.75},
		{0, 0, "-1.00 | -0.75 | -0.50 | -0.25 | 0 | 0.25 | 0.50 | 0.75 | 1.00", -1, 1},
		{7, 7, "6.25 | 6.50 | 6.75 | 7.00 | 7.25 | 7.50 | 7.75", 6.25, 7.75}, // ±10 %
		{-3.5, -0.2, "-3.5 | -3.0 | -2.5 | -2.0 | -1.5 | -1.0 | -0.5 | 0", -3.5, 0},
		{0, 1e-9, "0 | 2e-10 | 4e-10 | 6e-10 | 8e-10 | 1e-09", 0, 1e-9},
		{0, 9.2e18, "0 | 2e+18 | 4e+18 | 6e+18 | 8e+18 | 1e+19", 0, 1e19},
		{1e20, 1e20 + 65536, "", 0, 0}, // ticks far from zero: terminates
	}
	for _, tt := range tests {
		ticks, min, max := numberTicks(tt.lo, tt.hi, 6)
		if len(ticks) < 2 {
			t.Errorf("numberTicks(%g, %g): %d ticks", tt.lo, tt.hi, len(ticks))
		}
		if tt.want == "" {
			continue
		}
		got := strings.Join(labels(ticks), " | ")
		if got != tt.want || math.Abs(min-tt.min) > 1e-12*math.Abs(tt.min) || math.Abs(max-tt.max) > 1e-12*math.Abs(tt.max) {
			t.Errorf("numberTicks(%g, %g) = %s [%g, %g]\nwant %s [%g, %g]", tt.lo, tt.hi, got, min, max, tt.want, tt.min, tt.max)
		}
		if min > tt.lo || max < tt.hi {
			t.Errorf("numberTicks(%g, %g): axis [%g, %g] does not cover the data", tt.lo, tt.hi, min, max)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		v, step, scale float64
		want           string
	}{
		{1234567, 1, 1e7, "1,234,567"},
		{-1234567.5, 0.5, 1e7, "-1,234,567.5"},
		{999, 1, 1000, "999"},
		{1000, 1000, 1000, "1,000"},
		{0.25, 0.25, 1, "0.25"},
		{math.Copysign(0, -1), 1, 1, "0"},
		{0, 1e15, 2e15, "0"},
		{123456789012345, 1e13, 1.2e14, "123,456,789,012,345"},
		{2e15, 1e15, 2e15, "2e+15"}, // beyond plain digits
		{3e-7, 1e-7, 1e-6, "3e-07"},
	}
	for _, tt := range tests {
		if got := formatNumber(tt.v, tt.step, tt.scale); got != tt.want {
			t.Errorf("formatNumber(%g, %g, %g) = %q, want %q", tt.v, tt.step, tt.scale, got, tt.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	day := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	all := func([]plot.Tick) bool { return true }
	atMost := func(n int) func([]plot.Tick) bool { return func(ts []plot.Tick) bool { return len(ts) <= n } }
	tests := []struct {
		name   string
		lo, hi time.Time
		unit   Unit
		fits   func([]plot.Tick) bool
		want   string
	}{
		{"months", day("2025-01-01 00:00"), day("2025-12-01 00:00"), Month, all,
			"Jan 2025 | Feb | Mar | Apr | May | Jun | Jul | Aug | Sep | Oct | Nov | Dec"},
		{"months across a year", day("2024-11-01 00:00"), day("2025-02-01 00:00"), Month, all,
			"Nov 2024 | Dec | Jan 2025 | Feb"},
		{"quarters when months do not fit", day("2024-01-01 00:00"), day("2025-12-01 00:00"), Month, atMost(8),
			"Jan 2024 | Apr | Jul | Oct | Jan 2025 | Apr | Jul | Oct"},
		{"monthly data never gets daily ticks", day("2025-01-01 00:00"), day("2025-02-01 00:00"), Month, all,
			"Jan 2025 | Feb"},
		{"years", day("2019-01-01 00:00"), day("2025-01-01 00:00"), Year, all,
			"2019 | 2020 | 2021 | 2022 | 2023 | 2024 | 2025"},
		{"decades", day("1801-01-01 00:00"), day("2199-01-01 00:00"), Year, atMost(10),
			"1850 | 1900 | 1950 | 2000 | 2050 | 2100 | 2150"},
		{"millennia", day("0001-01-01 00:00"), day("9999-12-31 00:00"), Day, atMost(12),
			"1000 | 2000 | 3000 | 4000 | 5000 | 6000 | 7000 | 8000 | 9000"},
		{"weeks start on Monday", day("2025-06-01 00:00"), day("2025-07-14 00:00"), Day, atMost(7),
			"2 Jun 2025 | 9 Jun | 16 Jun | 23 Jun | 30 Jun | 7 Jul | 14 Jul"},
		{"hours", day("2025-06-01 22:00"), day("2025-06-02 02:00"), Clock, atMost(5),
			"1 Jun 2025 22:00 | 23:00 | 2 Jun 2025 00:00 | 01:00 | 02:00"},
		{"before 1970", day("1969-12-30 00:00"), day("1970-01-02 00:00"), Day, all,
			"30 Dec 1969 | 31 Dec | 1 Jan 1970 | 2 Jan"},
		{"nothing fits: the ends", day("2025-06-01 00:00"), day("2025-06-03 00:00"), Day, func(ts []plot.Tick) bool { return false },
			"1 Jun 2025 | 3 Jun"},
	}
	for _, tt := range tests {
		ticks := timeTicks(tt.lo, tt.hi, tt.unit, tt.fits)
		if got := strings.Join(labels(ticks), " | "); got != tt.want {
			t.Errorf("%s: %s\nwant %s", tt.name, got, tt.want)
		}
		for _, tk := range ticks {
			if tk.Value < unixSeconds(tt.lo) || tk.Value > unixSeconds(tt.hi) {
				t.Errorf("%s: tick %q at %g outside [%v, %v]", tt.name, tk.Label, tk.Value, tt.lo, tt.hi)
			}
		}
	}
}
