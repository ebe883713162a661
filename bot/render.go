package bot

import (
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"sqlbot/agent"
	"sqlbot/agent/present"
)

// Bounds on a reply's words.
const (
	compactAnswerChars = 1500 // the answer in the smaller form of a reply
	maxShownReasons    = 3    // earlier refusals listed under a reply
)

// A reply is one rendered Slack message: Block Kit blocks with a plain-text
// fallback, and optionally a CSV file to upload into the same thread.
type reply struct {
	Text   string
	Blocks []slack.Block // none: Text is the message, as mrkdwn
	// CSV, when non-nil, holds the rows of the result (all of them unless
	// CSVCut); it is uploaded as a file next to the message because the
	// message does not show them all. The message promises it.
	CSV      []byte
	CSVTitle string
	CSVCut   bool // CSV holds only the first rows, for its size
	// NoCSV, set with CSV, is the same message without that promise, saying
	// that the file could not be attached: what the message is edited to
	// when the upload fails.
	NoCSV *reply
}

// A failure is why no answer could be given, as far as a user needs to know.
type failure int

const (
	failInternal      failure = iota // a bug or an unexpected error: "something went wrong"
	failProvider                     // no model provider answered
	failTimeout                      // the answer ran past AnswerTimeout
	failShutdown                     // the bot was stopping and gave up on the question
	failMisconfigured                // the model provider refused the key, the model or the URL
)

// renderResult turns an answer into the message that is posted, with a CSV
// of at most maxCSV bytes. res is the agent's result (never nil here); the
// user sees only what is safe: the model's answer, SQL, rows, refusal
// reasons and fixed sentences.
func renderResult(res *agent.Result, maxCSV int) reply {
	switch res.Outcome {
	case agent.Answered:
		return renderAnswer(res, maxCSV)
	case agent.Refused:
		return renderRefusal(res)
	case agent.Budget:
		return renderBudget(res)
	case agent.Unanswerable:
		return renderUnanswerable(res)
	default:
		return renderFailure(failProvider)
	}
}

func renderAnswer(res *agent.Result, maxCSV int) reply {
	answer := modelText(res.Answer)
	if answer == "" {
		answer = "Here is what the query returned."
	}
	var table string
	var shown, shownCols int
	if len(res.Columns) > 0 {
		table, shown, shownCols = preview(res.Columns, res.Rows)
	}
	build := func(note string) reply {
		var b blockList
		b.section(escape(answer))
		if res.FinalSQL != "" {
			b.section(codeBlock(res.FinalSQL))
		}
		if table != "" {
			b.section(table)
		}
		line := contextLine(res, true)
		if note != "" {
			line += " (" + note + ")"
		}
		b.context(line)
		b.context(refusalNote(res.Statements, -1))
		return reply{Text: fallback(answer), Blocks: b.blocks()}
	}
	if shown == len(res.Rows) && shownCols == len(res.Columns) {
		return build("")
	}
	seen := "first " + strconv.Itoa(shown) + " shown"
	if shownCols < len(res.Columns) {
		seen = "first " + present.Plural(shown, "row") + " and " + strconv.Itoa(shownCols) + " of " + strconv.Itoa(len(res.Columns)) + " columns shown"
	}
	data, inCSV := toCSV(res.Columns, res.Rows, maxCSV)
	if inCSV == 0 {
		return build(seen + "; the rest is too large to attach as a file")
	}
	r := build(seen + "; " + csvPromise(len(res.Rows), inCSV, res.Truncated, maxCSV))
	alt := build(seen + "; the CSV file with the rest could not be attached")
	r.CSV, r.CSVCut, r.NoCSV = data, inCSV < len(res.Rows), &alt
	r.CSVTitle = csvTitle(len(res.Rows), inCSV, res.Truncated)
	return r
}

// renderCompact is the smaller form of a reply, sent when Slack refused the
// full one for its content or size: plain mrkdwn text with no blocks (the
// answer, cut shorter, and the SQL), and for an answer with rows, "the rows
// are in the attached file" with the CSV.
func renderCompact(res *agent.Result, maxCSV int) reply {
	var parts []string
	sql := res.FinalSQL
	switch res.Outcome {
	case agent.Answered:
		answer := modelText(res.Answer)
		if answer == "" {
			answer = "Here is what the query returned."
		}
		parts = append(parts, cutEscaped(escape(answer), compactAnswerChars))
	case agent.Refused:
		layer, reason := agent.LayerModel, ""
		if s := res.Refusal; s != nil {
			layer, reason, sql = s.Layer, s.Reason, s.SQL
		}
		parts = append(parts, ":no_entry: *I didn't run that.* Refused by "+refusalText(layer, reason)+". Nothing was changed: I only read data.")
	case agent.Budget:
		parts = append(parts, ":hourglass: *I stopped after "+present.Plural(res.Steps, "step")+" without a final answer.* Try a narrower question.")
		if sql == "" && len(res.Statements) > 0 {
			sql = res.Statements[len(res.Statements)-1].SQL
		}
	default:
		answer := modelText(res.Answer)
		if answer == "" {
			answer = "The data I can read doesn't hold the answer to that."
		}
		parts = append(parts, ":mag: "+cutEscaped(escape(answer), compactAnswerChars))
	}
	if sql != "" {
		parts = append(parts, codeBlock(sql))
	}
	text := func(note string) reply {
		all := append(append([]string(nil), parts...), "_"+contextLine(res, res.Outcome == agent.Answered)+"_")
		if note != "" {
			all = append(all, note)
		}
		return reply{Text: strings.Join(all, "\n")}
	}
	if res.Outcome != agent.Answered || len(res.Columns) == 0 || len(res.Rows) == 0 {
		return text("")
	}
	data, inCSV := toCSV(res.Columns, res.Rows, maxCSV)
	if inCSV == 0 {
		return text("The rows are too large to attach as a file.")
	}
	note := "The rows are in the attached file."
	if inCSV < len(res.Rows) {
		note = "The first " + strconv.Itoa(inCSV) + " of the " + present.Plural(len(res.Rows), "row") + " are in the attached file, which is limited to " + present.Size(maxCSV) + "."
	}
	r := text(note)
	alt := text("I couldn't attach the file with the rows.")
	r.CSV, r.CSVCut, r.NoCSV = data, inCSV < len(res.Rows), &alt
	r.CSVTitle = csvTitle(len(res.Rows), inCSV, res.Truncated)
	return r
}

func renderRefusal(res *agent.Result) reply {
	var b blockList
	layer, reason, sql := agent.LayerModel, "", ""
	if s := res.Refusal; s != nil {
		layer, reason, sql = s.Layer, strings.TrimRight(strings.TrimSpace(s.Reason), "."), s.SQL
	}
	head := ":no_entry: *I didn't run that.* "
	if layer == agent.LayerModel {
		head += "The model declined before writing any SQL."
	} else {
		head += "Refused by " + refusalText(layer, reason) + "."
	}
	b.section(head)
	if sql != "" {
		b.section("*The refused SQL:*\n" + codeBlock(sql))
	}
	if a := modelText(res.Answer); a != "" {
		b.section(escape(a))
	}
	b.context(contextLine(res, false) + " · nothing was changed: I only read data")
	text := "I didn't run that: refused by " + escape(layer.Name())
	if reason != "" {
		text += ": " + reason
	}
	return reply{Text: fallback(text), Blocks: b.blocks()}
}

func renderBudget(res *agent.Result) reply {
	var b blockList
	b.section(":hourglass: *I stopped after " + present.Plural(res.Steps, "step") + " without a final answer.* " +
		"Try a narrower question: name the measure, the period or the table you mean.")
	shown := len(res.Statements) - 1 // -1: none
	if shown >= 0 {
		b.section(tried("The last SQL I tried", res.Statements[shown]))
	}
	b.context(contextLine(res, false))
	b.context(refusalNote(res.Statements, shown))
	return reply{Text: fallback("I stopped after " + present.Plural(res.Steps, "step") + " without a final answer."), Blocks: b.blocks()}
}

func renderUnanswerable(res *agent.Result) reply {
	var b blockList
	answer := modelText(res.Answer)
	if answer == "" {
		answer = "The data I can read doesn't hold the answer to that."
	}
	b.section(":mag: " + escape(answer))
	shown := -1
	switch {
	case res.FinalSQL != "":
		b.section("*What I checked:*\n" + codeBlock(res.FinalSQL))
	case len(res.Statements) > 0:
		// Nothing ran, but something was tried: show it, so that a claim in
		// the answer can be checked against what actually happened.
		shown = len(res.Statements) - 1
		b.section(tried("What I tried", res.Statements[shown]))
	}
	b.context(contextLine(res, res.FinalSQL != ""))
	b.context(refusalNote(res.Statements, shown))
	return reply{Text: fallback(answer), Blocks: b.blocks()}
}

// tried shows a statement that is not an answer's: its SQL under label,
// saying whether it ran, and for a refusal, the layer and its reason.
// SQLite's error text (status "error") is not shown: unlike a refusal's
// Reason it is not written to be safe for users. It is not logged either,
// since it can quote the statement, which derives from the question; the
// model saw it, which is where it is useful.
func tried(label string, st agent.Statement) string {
	switch st.Status {
	case agent.StatusOK:
		return "*" + label + ":*\n" + codeBlock(st.SQL)
	case agent.StatusRefused:
		return "*" + label + " (it did not run):* refused by " + refusalText(st.Layer, st.Reason) + ".\n" + codeBlock(st.SQL)
	}
	return "*" + label + " (it did not run):*\n" + codeBlock(st.SQL)
}

// noModelReply is the message when no model is configured: the agent's
// how-to text from res (with questions that work without a model), or
// agent.NoModelHelp if res has none.
func noModelReply(res *agent.Result) reply {
	if res != nil && strings.TrimSpace(res.Answer) != "" {
		return renderNoModel(res.Answer)
	}
	return renderNoModel(agent.NoModelHelp)
}

// renderNoModel is the message when no model is configured: the agent's
// how-to text (fixed sentences and recorded questions, never error text).
func renderNoModel(text string) reply {
	var b blockList
	b.section(":warning: " + escape(text))
	return reply{Text: fallback(text), Blocks: b.blocks()}
}

// renderFailure is the message for an answer that could not be given. It
// never contains error text, only fixed sentences.
func renderFailure(f failure) reply {
	var text string
	switch f {
	case failProvider:
		text = "Sorry, I couldn't reach the language model to answer this just now. Please try again in a few minutes."
	case failTimeout:
		text = "Sorry, this took too long and I stopped. Try a narrower question."
	case failShutdown:
		text = "Sorry, I was restarting and couldn't finish this one. Please ask again in a minute."
	case failMisconfigured:
		text = "Sorry, I can't answer questions right now: the language model provider refuses my settings (its key, model name or address). " +
			"Asking again won't help until the people who run me fix them; it is in my log and my health check."
	default:
		text = "Sorry, something went wrong on my side while answering. It has been logged; please try again."
	}
	var b blockList
	b.section(":warning: " + escape(text))
	return reply{Text: fallback(text), Blocks: b.blocks()}
}

// renderNotice is a short message in words: help, limits, progress.
// text is mrkdwn written by this package (not escaped here).
func renderNotice(text string) reply {
	var b blockList
	b.sections(text)
	return reply{Text: fallback(plainFallback(text)), Blocks: b.blocks()}
}

// contextLine is "provider · N steps · 2.1 s · 37 rows", and "· from the
// cache" when the answer is an earlier one reused.
func contextLine(res *agent.Result, withRows bool) string {
	var parts []string
	if p := agent.ProviderModel(res.Provider); p != "" {
		parts = append(parts, escape(p))
	}
	parts = append(parts, present.Plural(res.Steps, "step"), present.Seconds(res.Elapsed))
	if withRows {
		rows := present.Plural(len(res.Rows), "row")
		if res.Truncated {
			rows = strconv.Itoa(len(res.Rows)) + "+ rows"
		}
		parts = append(parts, rows)
	}
	if res.Cached {
		parts = append(parts, "from the cache")
	}
	return strings.Join(parts, " · ")
}

// refusalNote notes the statements refused on the way to a reply, so that no
// refusal is silent; stmts[shown] (if shown >= 0) is left out, as the reply
// shows it with its refusal already. It is "" when there is nothing to note.
func refusalNote(stmts []agent.Statement, shown int) string {
	var refused []agent.Statement
	for i, s := range stmts {
		if s.Status == agent.StatusRefused && i != shown {
			refused = append(refused, s)
		}
	}
	if len(refused) == 0 {
		return ""
	}
	var reasons []string
	for i, s := range refused {
		if i == maxShownReasons {
			reasons = append(reasons, "…")
			break
		}
		reasons = append(reasons, refusalText(s.Layer, s.Reason))
	}
	return ":no_entry: " + present.Plural(len(refused), "earlier statement") + " refused on the way (" + strings.Join(reasons, "; ") + ")"
}

// refusalText is "the SQL guard: forbidden keyword: delete", escaped: the
// layer that refused a statement and its reason (user-safe by contract).
func refusalText(layer agent.Layer, reason string) string {
	reason = strings.TrimRight(strings.TrimSpace(present.Line(reason)), ".")
	if reason == "" {
		return escape(layer.Name())
	}
	return escape(layer.Name()) + ": " + escape(reason)
}

// tablesText is the answer to `/sqlbot tables`: a heading and a line per
// table, its name, row count and description, escaped.
func tablesText(tables []Table) string {
	if len(tables) == 0 {
		return "I can't list the tables right now."
	}
	var sb strings.Builder
	sb.WriteString("*What I can read:*")
	for _, t := range tables {
		// A backtick in a name would end the inline code.
		sb.WriteString("\n• `" + escape(strings.ReplaceAll(present.Line(t.Name), "`", "'")) + "` (")
		switch {
		case t.Rows < 0:
			sb.WriteString("rows not counted")
		case t.Rows == 1:
			sb.WriteString("1 row")
		default:
			sb.WriteString(present.Thousands(int(t.Rows)) + " rows")
		}
		sb.WriteString(")")
		if about := present.Line(present.OneLine(t.About)); about != "" {
			sb.WriteString(": " + escape(about))
		}
	}
	return sb.String()
}
