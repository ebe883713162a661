package draft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// WriteYAML writes the draft as a policy file:
//
//	expose:
//	  Customer:
//	    about: One row per customer (59 rows); refers to Employee; ...
//	    columns:
//	      CustomerId: customer id; integer, primary key
//	    hide:
//	      - Email  # an e-mail address: by its name; 59 of 59 sampled values are e-mail addresses
//
// An entry that hides nothing has no hide key. An entry that is left out
// (Entry.LeftOut) is written after the others as comments: its name, why,
// and its columns that look private with their reasons. Comments carry the
// reasons and notes; no sampled value of a hidden column appears anywhere.
func (d *Draft) WriteYAML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var tables, views, cols, hidden, free, left int
	for _, e := range d.Entries {
		if e.LeftOut != "" {
			left++
			continue
		}
		if e.View {
			views++
		} else {
			tables++
		}
		for _, c := range e.Columns {
			cols++
			if c.Hidden {
				hidden++
			}
			if c.FreeText && !c.Hidden {
				free++
			}
		}
	}
	src := d.Source
	if src == "" {
		src = "the database"
	}
	fmt.Fprintf(bw, "# A starting policy drafted by `sqlbot policy draft` from %s:\n", oneLine(src))
	fmt.Fprintf(bw, "# %d tables and %d views; %d of %d columns hidden because they look private", tables, views, hidden, cols)
	if free > 0 {
		fmt.Fprintf(bw, "; %d free-text columns marked", free)
	}
	if left > 0 {
		fmt.Fprintf(bw, "; %d left out, at the end, because a policy could not hide what looks private in them", left)
	}
	bw.WriteString(".\n")
	bw.WriteString(`#
# Review it before you serve with it:
# - A column under hide: is never readable by the model. The comment beside it says why it
#   looks private; remove it from hide: only if it is not.
# - A column marked "free text" may carry instructions; the model reads it as data only.
# - Meanings are guesses from names and types: correct them, and add your business's terms
#   under rules: (for example "Revenue means the sum of Total.").
# - Remove any table the model should not see at all.
expose:
`)
	for _, e := range d.Entries {
		if e.LeftOut != "" {
			continue
		}
		fmt.Fprintf(bw, "  %s:\n", scalar(e.Name))
		for _, n := range e.Notes {
			fmt.Fprintf(bw, "    # %s\n", oneLine(n))
		}
		fmt.Fprintf(bw, "    about: %s\n", scalar(e.About))
		readable := false
		for _, c := range e.Columns {
			readable = readable || !c.Hidden
		}
		if readable {
			bw.WriteString("    columns:\n")
			for _, c := range e.Columns {
				if c.Hidden {
					continue
				}
				fmt.Fprintf(bw, "      %s: %s", scalar(c.Column), scalar(c.Meaning))
				var notes []string
				if c.FreeText {
					notes = append(notes, "free text: instructions can hide here")
				}
				if c.Note != "" {
					notes = append(notes, c.Note)
				}
				if len(notes) > 0 {
					fmt.Fprintf(bw, "  # %s", oneLine(strings.Join(notes, "; ")))
				}
				bw.WriteString("\n")
			}
		}
		if h := e.Hidden(); len(h) > 0 {
			bw.WriteString("    hide:\n")
			for _, c := range e.Columns {
				if c.Hidden {
					fmt.Fprintf(bw, "      - %s  # %s\n", scalar(c.Column), oneLine(c.Reason))
				}
			}
		}
	}
	for _, e := range d.Entries {
		if e.LeftOut == "" {
			continue
		}
		fmt.Fprintf(bw, "  # left out: %s: %s.\n", oneLine(e.Name), oneLine(e.LeftOut))
		for _, c := range e.Columns {
			if c.Hidden {
				fmt.Fprintf(bw, "  #   %s: %s\n", oneLine(c.Column), oneLine(c.Reason))
			}
		}
	}
	for _, sk := range d.Skipped {
		fmt.Fprintf(bw, "# left out: %s: %s\n", oneLine(sk.Name), oneLine(sk.Why))
	}
	bw.WriteString(`# rules:
#   - Sales means ...
`)
	return bw.Flush()
}

// scalar renders s as a YAML scalar on one line: plain or quoted as the YAML
// encoder chooses, or double-quoted (JSON's escapes are YAML's) when the
// encoder would need several lines.
func scalar(s string) string {
	if out, err := yaml.Marshal(s); err == nil {
		t := strings.TrimSuffix(string(out), "\n")
		if !strings.Contains(t, "\n") && !strings.HasPrefix(t, "|") && !strings.HasPrefix(t, ">") {
			return t
		}
	}
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// oneLine makes s safe inside a YAML comment: one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
