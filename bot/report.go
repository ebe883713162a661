package bot

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"sqlbot/agent"
	"sqlbot/agent/present"
	"sqlbot/evalrun"
)

// maxReportChars bounds an evaluation report's rendering, well inside one
// section block.
const maxReportChars = 2900

// reportText renders an evaluation report as mrkdwn for the slash command:
// a title line, the figures in a code block (brief forms of the checksums),
// the questions that did not pass (as many as fit in maxReportChars, then a
// count of the rest) and a footer naming the models and the question set.
// Everything from the report is escaped. It shows no raw error text (a
// question that could not be run says only that: evalrun.QuestionResult.Why)
// and no provider's host.
func reportText(r *evalrun.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Evaluation: %s on %s*, %s in %.1f s\n", escape(present.Line(r.Model)), escape(present.Line(r.Database)),
		present.Plural(r.Questions, "question"), float64(r.ElapsedMS)/1000)
	b.WriteString("```\n")
	figs := r.Figures() // what was evaluated is in the title and the footer
	width := 0
	for _, f := range figs {
		width = max(width, len(f.Name))
	}
	for _, f := range figs {
		fmt.Fprintf(&b, "%-*s  %s\n", width, f.Name, escape(cmp.Or(f.Brief, f.Value)))
	}
	b.WriteString("```\n")
	footer := fmt.Sprintf("_provider %s · questions %s_", escape(publicProviders(r.Provider)), escape(evalrun.ShortSum(r.QuestionsChecksum)))
	bad := r.NotPassing()
	if len(bad) == 0 {
		fmt.Fprintf(&b, "All %d questions passed.\n", r.Questions)
	} else {
		fmt.Fprintf(&b, "*Not passing (%d of %d):*\n", len(bad), r.Questions)
		for i, q := range bad {
			id := strings.ReplaceAll(present.Line(q.ID), "`", "'") // a backtick would end the inline code
			line := fmt.Sprintf("• `%s` (%s) %s: %s\n", escape(id), q.Kind, q.Outcome,
				escape(present.Ellipsize(present.Line(present.OneLine(q.Why())), 160)))
			more := fmt.Sprintf("…and %d more: run `sqlbot eval` for all.\n", len(bad)-i)
			if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(line)+len(more)+len(footer) > maxReportChars {
				b.WriteString(more)
				break
			}
			b.WriteString(line)
		}
	}
	b.WriteString(footer)
	return b.String()
}

// publicProviders is what may be shown of a report's providers: "model@host,
// model2@host2" becomes "model, model2" (agent.ProviderModel).
func publicProviders(p string) string {
	var out []string
	for _, name := range strings.Split(p, ",") {
		if m := agent.ProviderModel(name); m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return present.Line(strings.Join(out, ", "))
}
