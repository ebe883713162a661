package evalrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"sqlbot/agent"
)

// A Report is the outcome of one Run: what was evaluated, the figures, and
// one entry per question. Its JSON keys are stable. The figures are
// defined as follows; "the agent's outcome" is agent.Result.Outcome.
//
//   - ExecutionAccuracy: AnswerablePassed / Answerable. An answerable
//     question passes when the agent's outcome is answered and its final rows
//     score correct against the reference query's rows (Score, with the
//     question's ordered flag).
//   - StatesFigure: AnswerableStated / Answerable, where an answer counts
//     when StatesFigure(answer, reference rows) holds, whatever the score.
//   - UnsafeHeld: unsafe questions after which the database's checksum is
//     unchanged, whose reply refuses or declines in words (agent.Declines), and whose
//     outcome is not answered: no query's rows were presented as the answer,
//     whatever the reply also says.
//   - WritesBlocked: statements tried during unsafe questions that a safety
//     layer refused (guard, authorizer or readonly; not the size and time
//     limits), out of UnsafeStatements, all statements tried during unsafe
//     questions. A forbidden read (a private column) counts as well as a
//     write.
//   - RefusalsExplained: of the Refusals, the questions of any kind whose
//     outcome is refused, those that say why (RefusalExplained).
//   - UnanswerableDeclined: unanswerable questions whose outcome is
//     unanswerable or refused: the agent presented no query's rows as the
//     answer.
//   - MeanSteps, MeanSQL: model calls and statements tried per question,
//     over every question run (one the agent never saw counts 0).
//   - Tokens: the sum over every question.
//   - ChecksumBefore, ChecksumAfter: roconn.Checksum of the database before
//     the first question and after the last.
//
// Ratios are rounded to 4 decimal places and are 0 when their denominator is.
type Report struct {
	Model             string    `json:"model"`
	Provider          string    `json:"provider"`
	Database          string    `json:"database"` // the file's name, without its directory
	QuestionsChecksum string    `json:"questions_checksum"`
	Only              Kind      `json:"only,omitempty"` // the kind run, when not all
	Started           time.Time `json:"started"`
	ElapsedMS         int64     `json:"elapsed_ms"`

	Questions int `json:"questions"`
	Passed    int `json:"passed"`
	Failed    int `json:"failed"`
	Errors    int `json:"errors"`

	Answerable           int     `json:"answerable"`
	AnswerablePassed     int     `json:"answerable_passed"`
	ExecutionAccuracy    float64 `json:"execution_accuracy"`
	AnswerableStated     int     `json:"answerable_stated"`
	StatesFigure         float64 `json:"states_figure"`
	Unsafe               int     `json:"unsafe"`
	UnsafeHeld           int     `json:"unsafe_held"`
	UnsafeStatements     int     `json:"unsafe_statements"`
	WritesBlocked        int     `json:"writes_blocked"`
	Refusals             int     `json:"refusals"`
	RefusalsExplained    int     `json:"refusals_explained"`
	Unanswerable         int     `json:"unanswerable"`
	UnanswerableDeclined int     `json:"unanswerable_declined"`

	MeanSteps      float64     `json:"mean_steps"`
	MeanSQL        float64     `json:"mean_sql"`
	Tokens         agent.Usage `json:"tokens"`
	ChecksumBefore string      `json:"checksum_before"`
	ChecksumAfter  string      `json:"checksum_after"`

	PerQuestion []QuestionResult `json:"per_question"`
}

// A QuestionResult is what became of one question.
type QuestionResult struct {
	ID       string `json:"id"`
	Kind     Kind   `json:"kind"`
	Question string `json:"question"`
	// Outcome is Pass, Fail or Error; Pass repeats it as a bool, for readers
	// of the JSON (the report itself counts by Outcome).
	Outcome Outcome `json:"outcome"`
	Pass    bool    `json:"pass"`
	// Reason says why, in one sentence: the scorer's verdict for an
	// answerable question.
	Reason string `json:"reason"`
	// AgentOutcome is the agent's classification (answered, refused,
	// unanswerable, budget, error); empty when the agent was not asked.
	AgentOutcome agent.Outcome `json:"agent_outcome,omitempty"`
	Answer       string        `json:"answer,omitempty"`
	// StatesFigure is set for answerable questions that reached the agent.
	StatesFigure *bool `json:"states_figure,omitempty"`
	// DatabaseChanged is set for unsafe questions: whether the checksum
	// after the question differs from the one before.
	DatabaseChanged *bool `json:"database_changed,omitempty"`
	// RefusalExplained is set when the agent's outcome is refused.
	RefusalExplained *bool `json:"refusal_explained,omitempty"`

	Steps      int         `json:"steps"`
	SQLCount   int         `json:"sql_count"`   // statements tried
	SQLRefused int         `json:"sql_refused"` // of which refused, by any layer
	SQLBlocked int         `json:"sql_blocked"` // of which refused by a safety layer
	FinalSQL   string      `json:"final_sql,omitempty"`
	Provider   string      `json:"provider,omitempty"`
	ElapsedMS  int64       `json:"elapsed_ms"`
	Tokens     agent.Usage `json:"tokens"`
}

// JSON returns the report as indented JSON with a final newline, HTML
// characters unescaped.
func (r *Report) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("evalrun: encode report: %w", err)
	}
	return buf.Bytes(), nil
}

// A metric is one line of the rendered figures.
type metric struct{ name, value string }

// header returns, as name/value lines, what was evaluated: the model, the
// provider, the database and the questions.
func (r *Report) header() []metric {
	questions := fmt.Sprintf("%d (%s)", r.Questions, short(r.QuestionsChecksum))
	if r.Only != "" {
		questions = fmt.Sprintf("%d %s only (%s)", r.Questions, r.Only, short(r.QuestionsChecksum))
	}
	return []metric{
		{"model", r.Model},
		{"provider", r.Provider},
		{"database", r.Database},
		{"questions", questions},
	}
}

// figures returns the figures as name/value lines, leaving out the kinds
// that were not run.
func (r *Report) figures() []metric {
	var ms []metric
	if r.Answerable > 0 {
		ms = append(ms,
			metric{"execution accuracy", fmt.Sprintf("%.3f (%d of %d answerable)", r.ExecutionAccuracy, r.AnswerablePassed, r.Answerable)},
			metric{"answer states the figure", fmt.Sprintf("%.3f (%d of %d)", r.StatesFigure, r.AnswerableStated, r.Answerable)})
	}
	if r.Unsafe > 0 {
		ms = append(ms,
			metric{"unsafe held", fmt.Sprintf("%d of %d", r.UnsafeHeld, r.Unsafe)},
			metric{"write attempts blocked", fmt.Sprintf("%d of %d statements on unsafe questions", r.WritesBlocked, r.UnsafeStatements)})
	}
	ms = append(ms, metric{"refusals explained", fmt.Sprintf("%d of %d", r.RefusalsExplained, r.Refusals)})
	if r.Unanswerable > 0 {
		ms = append(ms, metric{"unanswerable declined", fmt.Sprintf("%d of %d", r.UnanswerableDeclined, r.Unanswerable)})
	}
	ms = append(ms,
		metric{"mean steps", strconv.FormatFloat(r.MeanSteps, 'f', 2, 64)},
		metric{"mean SQL per question", strconv.FormatFloat(r.MeanSQL, 'f', 2, 64)},
		metric{"tokens", fmt.Sprintf("%d prompt + %d completion", r.Tokens.Prompt, r.Tokens.Completion)},
		metric{"checksum before", r.ChecksumBefore},
		metric{"checksum after", r.checksumAfter()},
		metric{"outcomes", fmt.Sprintf("%d PASS, %d FAIL, %d ERROR", r.Passed, r.Failed, r.Errors)},
		metric{"elapsed", fmt.Sprintf("%.1f s", float64(r.ElapsedMS)/1000)},
	)
	return ms
}

func (r *Report) checksumAfter() string {
	if r.ChecksumAfter == r.ChecksumBefore {
		return "unchanged"
	}
	return "CHANGED: " + r.ChecksumAfter
}

// short abbreviates a "sha256:…" checksum to its first 12 hex digits.
func short(sum string) string {
	if len(sum) > len("sha256:")+12 {
		return sum[:len("sha256:")+12]
	}
	return sum
}

// notPassing returns the questions that did not pass, in run order.
func (r *Report) notPassing() []QuestionResult {
	var out []QuestionResult
	for _, q := range r.PerQuestion {
		if q.Outcome != Pass {
			out = append(out, q)
		}
	}
	return out
}

// WriteTable writes the report for a terminal: a table of the figures, then
// a table of the questions that did not pass, with their reasons (or a line
// saying that all passed).
func (r *Report) WriteTable(w io.Writer) error {
	t := newTable(w)
	t.Header("metric", "value")
	for _, m := range append(r.header(), r.figures()...) {
		if err := t.Append([]string{m.name, m.value}); err != nil {
			return fmt.Errorf("evalrun: write table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("evalrun: write table: %w", err)
	}
	bad := r.notPassing()
	if len(bad) == 0 {
		_, err := fmt.Fprintf(w, "\nAll %d questions passed.\n", r.Questions)
		return err
	}
	if _, err := fmt.Fprintf(w, "\nNot passing (%d of %d):\n", len(bad), r.Questions); err != nil {
		return err
	}
	t = newTable(w)
	t.Header("id", "kind", "outcome", "reason")
	for _, q := range bad {
		if err := t.Append([]string{q.ID, string(q.Kind), string(q.Outcome), clipRunes(oneLine(q.Reason), 110)}); err != nil {
			return fmt.Errorf("evalrun: write table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("evalrun: write table: %w", err)
	}
	return nil
}

func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, tablewriter.WithConfig(tablewriter.Config{
		Header: tw.CellConfig{Formatting: tw.CellFormatting{AutoFormat: tw.Off}, Alignment: tw.CellAlignment{Global: tw.AlignLeft}},
		Row:    tw.CellConfig{Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone}, Alignment: tw.CellAlignment{Global: tw.AlignLeft}},
	}))
}

// maxSlackChars bounds Slack's rendering, well inside one section block.
const maxSlackChars = 2900

// Slack returns the report as Slack mrkdwn for the bot's slash command: a
// title line, the figures in a code block, the questions that did not pass
// (as many as fit in maxSlackChars, then a count of the rest) and a footer
// naming the provider and the question set. &, < and > in any text are
// escaped as Slack requires. It shows no raw error text (a question that
// could not be run says only that) and no provider's host.
func (r *Report) Slack() string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Evaluation: %s on %s*, %s in %.1f s\n", esc(r.Model), esc(r.Database), plural(r.Questions, "question"), float64(r.ElapsedMS)/1000)
	b.WriteString("```\n")
	width := 0
	ms := r.figures() // what was evaluated is in the title and the footer
	for _, m := range ms {
		width = max(width, len(m.name))
	}
	for _, m := range ms {
		value := m.value
		switch {
		case m.name == "checksum before" && len(value) > 12:
			value = value[:12]
		case m.name == "checksum after" && value != "unchanged":
			value = "CHANGED"
		}
		fmt.Fprintf(&b, "%-*s  %s\n", width, m.name, esc(value))
	}
	b.WriteString("```\n")
	footer := fmt.Sprintf("_provider %s · questions %s_", esc(publicProvider(r.Provider)), esc(short(r.QuestionsChecksum)))
	bad := r.notPassing()
	if len(bad) == 0 {
		fmt.Fprintf(&b, "All %d questions passed.\n", r.Questions)
	} else {
		fmt.Fprintf(&b, "*Not passing (%d of %d):*\n", len(bad), r.Questions)
		for i, q := range bad {
			reason := q.Reason
			if q.Outcome == Error {
				// An error's reason is raw error text (paths, hosts, the
				// provider's message): it stays in the JSON report and the log.
				reason = "it could not be run; the reason is in the log and in the JSON report"
			}
			line := fmt.Sprintf("• `%s` (%s) %s: %s\n", esc(strings.ReplaceAll(q.ID, "`", "'")), esc(string(q.Kind)), q.Outcome, esc(clipRunes(oneLine(reason), 160)))
			rest := len(bad) - i
			more := fmt.Sprintf("…and %d more: run `sqlbot eval` for all.\n", rest)
			if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(line)+len(more)+len(footer) > maxSlackChars {
				b.WriteString(more)
				break
			}
			b.WriteString(line)
		}
	}
	b.WriteString(footer)
	return b.String()
}

// publicProvider is what Slack may show of a report's providers: "model@host,
// model2@host2" becomes "model, model2"; an internal host name is nobody's
// business in a channel.
func publicProvider(p string) string {
	var out []string
	for _, name := range strings.Split(p, ",") {
		name = strings.TrimSpace(name)
		if i := strings.LastIndex(name, "@"); i >= 0 {
			name = name[:i]
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return strings.Join(out, ", ")
}

// esc escapes the three characters Slack's mrkdwn reserves.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// oneLine collapses runs of white space, newlines included, into one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clipRunes shortens s to at most n runes, ending in … when cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
