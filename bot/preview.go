package bot

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"sqlbot/agent/present"
)

// The shape of a result's preview: a judgement. Ten rows read at a glance,
// and lines wider than about 96 characters wrap in a desktop client's code
// block, which destroys the alignment.
const (
	previewRows    = 10 // rows shown in the monospace preview
	previewCellMax = 30 // display columns per cell before it is cut with …
	previewLineMax = 96 // display columns per preview line
	previewColSep  = "  "
)

// preview renders the first rows as an aligned monospace table in a code
// block that fits one section. It returns the mrkdwn and how many rows and
// columns it shows.
func preview(cols []string, rows [][]any) (text string, shownRows, shownCols int) {
	if len(cols) == 0 {
		return "_(no columns)_", 0, 0
	}
	n := min(len(rows), previewRows)
	cells := make([][]string, n+1)
	cells[0] = make([]string, len(cols))
	for j, c := range cols {
		cells[0][j] = cell(c)
	}
	numeric := make([]bool, len(cols))
	for j := range cols {
		numeric[j] = true
		for _, row := range rows[:n] {
			if j < len(row) && row[j] != nil && !present.IsNumber(row[j]) {
				numeric[j] = false
			}
		}
	}
	for i, row := range rows[:n] {
		cells[i+1] = make([]string, len(cols))
		for j := range cols {
			var v any
			if j < len(row) {
				v = row[j]
			}
			cells[i+1][j] = cell(present.Value(v))
		}
	}
	widths := make([]int, len(cols))
	for _, row := range cells {
		for j, c := range row {
			widths[j] = max(widths[j], runewidth.StringWidth(c))
		}
	}
	// Keep the columns that fit on a line; the CSV has the rest.
	shownCols, line := 0, 0
	for j, w := range widths {
		add := w
		if j > 0 {
			add += len(previewColSep)
		}
		if shownCols > 0 && line+add > previewLineMax {
			break
		}
		line += add
		shownCols++
	}
	render := func(nrows int) string {
		var sb strings.Builder
		for i, row := range cells[:nrows+1] {
			var ln strings.Builder
			for j := range shownCols {
				if j > 0 {
					ln.WriteString(previewColSep)
				}
				ln.WriteString(pad(row[j], widths[j], numeric[j] && i > 0))
			}
			sb.WriteString(strings.TrimRight(ln.String(), " "))
			sb.WriteByte('\n')
			if i == 0 {
				var rule strings.Builder
				for j := range shownCols {
					if j > 0 {
						rule.WriteString(previewColSep)
					}
					rule.WriteString(strings.Repeat("-", widths[j]))
				}
				sb.WriteString(rule.String())
				sb.WriteByte('\n')
			}
		}
		if nrows == 0 {
			sb.WriteString("(no rows)\n")
		}
		return "```" + escape(defuseFence(strings.TrimRight(sb.String(), "\n"))) + "```"
	}
	// Escaping can lengthen a row (& becomes &amp;): drop rows until it fits.
	for shownRows = n; shownRows > 0; shownRows-- {
		if text = render(shownRows); utf8.RuneCountInString(text) <= maxSectionChars {
			return text, shownRows, shownCols
		}
	}
	return render(0), 0, shownCols
}

// pad aligns s in a column of width w (display columns).
func pad(s string, w int, right bool) string {
	gap := w - runewidth.StringWidth(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

// cell makes s fit a preview cell: one safe line (present.Line), at most
// previewCellMax display columns, cut with … .
func cell(s string) string {
	s = present.Line(s)
	if runewidth.StringWidth(s) > previewCellMax {
		s = strings.TrimRight(runewidth.Truncate(s, previewCellMax-1, ""), " ") + ellipsis
	}
	return s
}
