package chart

import (
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
)

// numberTicks returns labelled ticks at a round step (1, 2, 2.5 or 5 times a
// power of ten) that cover [lo, hi] with about want intervals, and the range
// of the axis, from the first tick to the last.
func numberTicks(lo, hi float64, want int) (ticks []plot.Tick, min, max float64) {
	if lo > hi {
		lo, hi = hi, lo
	}
	if lo == hi {
		d := math.Abs(lo) / 10
		if d == 0 || math.IsInf(lo-d, 0) || math.IsInf(hi+d, 0) {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	step := niceStep((hi/2 - lo/2) * 2 / float64(want))
	first, last := math.Floor(lo/step), math.Ceil(hi/step)
	if step == 0 || math.IsInf(step, 0) || math.IsNaN(step) || last-first > 4*float64(want) {
		// Beyond what round steps can express (a range near the float64
		// limits): label the ends only.
		return []plot.Tick{{Value: lo, Label: formatNumber(lo, 0, hi-lo)}, {Value: hi, Label: formatNumber(hi, 0, hi-lo)}}, lo, hi
	}
	scale := math.Max(math.Abs(first*step), math.Abs(last*step))
	// Count with an int: far from zero, k++ on a float64 may not move it.
	for i := 0; i <= int(last-first); i++ {
		v := (first + float64(i)) * step
		if len(ticks) > 0 && v <= ticks[len(ticks)-1].Value {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: formatNumber(v, step, scale)})
	}
	return ticks, first * step, last * step
}

// niceStep returns the one of 1, 2, 2.5, 5 and 10 times a power of ten
// nearest to x (by ratio).
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	best := p
	for _, m := range []float64{2, 2.5, 5, 10} {
		if math.Abs(math.Log(m*p/x)) < math.Abs(math.Log(best/x)) {
			best = m * p
		}
	}
	return best
}

// formatNumber writes v for an axis whose ticks are step apart and reach
// scale in magnitude: plain decimals with thousands separators
// ("1,250,000", "0.25", "-3.50"), as many decimals as the step needs, the
// same for every tick but zero, which is "0"; an exponent only where plain
// digits would be unreadable (beyond 10^15 or finer than 10^-6). step 0
// means "as precise as needed".
func formatNumber(v, step, scale float64) string {
	if v == 0 {
		return "0"
	}
	if scale >= 1e15 || (step > 0 && step < 1e-6) || (step == 0 && (math.Abs(v) >= 1e15 || math.Abs(v) < 1e-6)) {
		prec := 3
		if step > 0 {
			prec = max(1, min(17, int(math.Ceil(math.Log10(scale/step)))+1))
		}
		return strconv.FormatFloat(v, 'g', prec, 64)
	}
	decimals := -1
	if step > 0 {
		for decimals = 0; decimals < 12; decimals++ {
			x := step * math.Pow10(decimals)
			if math.Abs(x-math.Round(x)) < 1e-6*x {
				break
			}
		}
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, d := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// A calStep is a step between the labelled ticks of a time axis: a number
// of years, of months, or a fixed duration.
type calStep struct {
	years, months int
	d             time.Duration
}

// seconds returns the step's approximate length in seconds (a float: a
// time.Duration holds only 292 years).
func (s calStep) seconds() float64 {
	const day = 24 * 60 * 60
	return float64(s.years)*365.25*day + float64(s.months)*30.44*day + s.d.Seconds()
}

// calSteps returns the steps a time axis may use, shortest first, beginning
// with the unit of the data: monthly data is never labelled by day.
func calSteps(u Unit) []calStep {
	const day = 24 * time.Hour
	var steps []calStep
	if u == Clock {
		for _, d := range []time.Duration{
			time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
			time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
			time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
		} {
			steps = append(steps, calStep{d: d})
		}
	}
	if u == Clock || u == Day {
		for _, n := range []time.Duration{1, 2, 7, 14} {
			steps = append(steps, calStep{d: n * day})
		}
	}
	if u != Year {
		for _, n := range []int{1, 2, 3, 6} {
			steps = append(steps, calStep{months: n})
		}
	}
	for _, n := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000} {
		steps = append(steps, calStep{years: n})
	}
	return steps
}

// timeTicks returns the labelled ticks of a time axis from lo to hi: the
// shortest step of calSteps(u) whose labels fit, as fits(labels) says.
// Values are Unix seconds.
func timeTicks(lo, hi time.Time, u Unit, fits func([]plot.Tick) bool) []plot.Tick {
	var ticks []plot.Tick
	for _, s := range calSteps(u) {
		if (unixSeconds(hi)-unixSeconds(lo))/s.seconds() > 60 {
			continue // far too many ticks; do not even build them
		}
		ticks = ticks[:0]
		prev := time.Time{}
		for t := firstTick(lo, s); !t.After(hi); t = nextTick(t, s) {
			ticks = append(ticks, plot.Tick{Value: unixSeconds(t), Label: timeLabel(t, prev, s)})
			prev = t
		}
		if len(ticks) > 0 && fits(ticks) {
			return ticks
		}
	}
	// Nothing fits (or the range holds no round time): label the ends.
	ends := calStep{d: time.Second}
	if u != Clock {
		ends = calStep{d: 24 * time.Hour}
	}
	return []plot.Tick{
		{Value: unixSeconds(lo), Label: timeLabel(lo, time.Time{}, ends)},
		{Value: unixSeconds(hi), Label: timeLabel(hi, lo, ends)},
	}
}

// mondayEpoch is a Monday, 1970-01-05, in Unix seconds: weekly ticks fall
// on Mondays.
const mondayEpoch = 4 * 24 * 60 * 60

// firstTick returns the first multiple of s at or after t.
func firstTick(t time.Time, s calStep) time.Time {
	switch {
	case s.years > 0:
		y := t.Year()
		if !t.Equal(time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC)) {
			y++
		}
		y += (s.years - mod(y, s.years)) % s.years
		return time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC)
	case s.months > 0:
		m := t.Year()*12 + int(t.Month()) - 1
		if !t.Equal(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)) {
			m++
		}
		m += (s.months - mod(m, s.months)) % s.months
		return time.Date(m/12, time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC)
	}
	var offset int64
	if s.d%(7*24*time.Hour) == 0 {
		offset = mondayEpoch
	}
	step := int64(s.d / time.Second)
	sec := t.Unix() - offset
	k := sec / step
	// Division truncates toward zero: for sec < 0, k*step is already at or
	// after sec.
	if k*step < sec || (k*step == sec && t.Nanosecond() > 0) {
		k++
	}
	return time.Unix(k*step+offset, 0).UTC()
}

// nextTick returns the tick one step after t.
func nextTick(t time.Time, s calStep) time.Time {
	if s.years > 0 || s.months > 0 {
		return t.AddDate(s.years, s.months, 0)
	}
	return t.Add(s.d)
}

// timeLabel writes a tick's label, naming the larger unit only where it
// changes from the previous tick (or at the first): "Jan 2025", "Feb", …
func timeLabel(t, prev time.Time, s calStep) string {
	first := prev.IsZero()
	switch {
	case s.years > 0:
		return t.Format("2006")
	case s.months > 0:
		if first || t.Year() != prev.Year() {
			return t.Format("Jan 2006")
		}
		return t.Format("Jan")
	case s.d >= 24*time.Hour:
		if first || t.Year() != prev.Year() {
			return t.Format("2 Jan 2006")
		}
		return t.Format("2 Jan")
	}
	clock := "15:04"
	if s.d < time.Minute {
		clock = "15:04:05"
	}
	if first || t.YearDay() != prev.YearDay() || t.Year() != prev.Year() {
		return t.Format("2 Jan 2006 " + clock)
	}
	return t.Format(clock)
}

// unixSeconds returns t as seconds since 1970 (with fractions).
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// mod returns a mod n in [0, n).
func mod(a, n int) int {
	return ((a % n) + n) % n
}
