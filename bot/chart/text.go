package chart

import (
	"strings"
	"unicode"
	"unicode/utf8"

	stdfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
)

// ellipsis marks a clipped text.
const ellipsis = "…"

// sans returns the face every text of a chart is drawn with, at size points:
// Liberation Sans, regular or bold (which covers the same characters).
func sans(size font.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = stdfont.WeightBold
	}
	return f
}

// A cleaner turns data into text the chart's font can draw on one line.
// It is not safe for concurrent use (it holds a glyph lookup buffer).
type cleaner struct {
	face *sfnt.Font
	buf  sfnt.Buffer
}

// newCleaner returns a cleaner for the Liberation Sans face.
func newCleaner() *cleaner {
	want := sans(0, false)
	for _, f := range liberation.Collection() {
		if f.Font == want {
			return &cleaner{face: f.Face}
		}
	}
	return &cleaner{} // unreachable with the embedded collection; then nothing is drawable but ASCII
}

// drawable reports whether the font has a glyph for r.
func (c *cleaner) drawable(r rune) bool {
	if c.face == nil {
		return r >= ' ' && r <= '~'
	}
	g, err := c.face.GlyphIndex(&c.buf, r)
	return err == nil && g != 0
}

// clean returns s as one line of at most max runes (max > 1), the last being
// '…' when s was longer:
//   - invalid UTF-8, control characters (newlines and tabs included) and runs
//     of white space become one space, and the ends are trimmed;
//   - format characters (bidi overrides and isolates, zero-width joiners and
//     spaces, the byte order mark, soft hyphens) are removed, so text cannot
//     reorder or hide what follows it;
//   - letters and their accents are composed (NFC), and the combining marks
//     left over are dropped: the renderer cannot place them, and stacked
//     diacritics would paint over the rest of the chart;
//   - a character the font cannot draw (emoji, CJK, Arabic, private use)
//     becomes '?'.
//
// The result keeps the logical order of right-to-left text (a page shows it
// right); visual puts it in the order Render draws it.
func (c *cleaner) clean(s string, max int) string {
	var b strings.Builder
	b.Grow(min(len(s), 4*max))
	// A label is at most max runes, so text this far in is not shown unless
	// thousands of spaces or marks come first; the cut keeps a 1 MiB value
	// cheap to clean.
	if limit := 64 * (max + 1); len(s) > limit {
		s = s[:limit]
	}
	s = norm.NFC.String(s)
	space, n := false, 0
	for i, w := 0, 0; i < len(s) && n <= max; i += w {
		var r rune
		r, w = utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w <= 1, unicode.IsControl(r), unicode.IsSpace(r):
			space = true
			continue
		case unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me):
			continue
		}
		if !c.drawable(r) {
			r = '?'
		}
		if space && n > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		b.WriteRune(r)
		n++
	}
	out := b.String()
	if n > max {
		out = clipRunes(out, max)
	}
	return out
}

// clipRunes returns s cut to max runes, the last being '…'.
func clipRunes(s string, max int) string {
	n := 0
	for i := range s {
		if n == max-1 {
			return strings.TrimRight(s[:i], " ") + ellipsis
		}
		n++
	}
	return s
}

// visual returns s in the order its characters are drawn left to right,
// since the renderer places glyphs left to right and knows no bidi: the
// runs of right-to-left text reversed (brackets mirrored), and, when the
// first strong character is right-to-left, the runs themselves in reverse
// order. Explicit embeddings cannot occur: clean removed their controls.
func visual(s string) string {
	rtl := false
	for _, r := range s {
		if unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko) {
			rtl = true
			break
		}
	}
	if !rtl {
		return s
	}
	var p bidi.Paragraph
	if _, err := p.SetString(s); err != nil {
		return s
	}
	o, err := p.Order()
	if err != nil {
		return s
	}
	runs := make([]string, o.NumRuns())
	for i := range runs {
		r := o.Run(i)
		runs[i] = r.String()
		if r.Direction() == bidi.RightToLeft {
			runs[i] = bidi.ReverseString(runs[i])
		}
	}
	if firstStrongRTL(s) {
		for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
			runs[i], runs[j] = runs[j], runs[i]
		}
	}
	return strings.Join(runs, "")
}

// firstStrongRTL reports whether the first character with a strong direction
// is right-to-left, which makes the paragraph right-to-left.
func firstStrongRTL(s string) bool {
	for _, r := range s {
		p, _ := bidi.LookupRune(r)
		switch p.Class() {
		case bidi.L:
			return false
		case bidi.R, bidi.AL:
			return true
		}
	}
	return false
}
