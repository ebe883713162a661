package bot

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"github.com/slack-go/slack"

	"sqlbot/agent"
)

// Block Kit limits (https://api.slack.com/reference/block-kit/blocks) and the
// shape of the preview. The preview numbers are a judgement: ten rows read at
// a glance, and lines wider than about 96 characters wrap in a desktop
// client's code block, which destroys the alignment.
const (
	maxSectionChars = 3000 // a section's text
	maxBlocks       = 50   // blocks in one message
	maxContextChars = 600  // one context line
	// maxMessageChars bounds the size of all blocks of one message, counted
	// as Slack counts it: their JSON, structure included, each string by its
	// characters (blockSize). Slack refuses more than about 13,000
	// (msg_blocks_too_long; undocumented): an answer (3000) + SQL (3000) +
	// preview (3000) + two context lines fit, with room to spare.
	maxMessageChars  = 12000
	maxFallbackChars = 400 // the notification text; the blocks carry the rest
	// compactAnswerChars bounds the answer in the smaller form of a reply.
	compactAnswerChars = 1500

	previewRows     = 10 // rows shown in the monospace preview
	previewCellMax  = 30 // display columns per cell before it is cut with …
	previewLineMax  = 96 // display columns per preview line
	previewColSep   = "  "
	csvFileName     = "sqlbot-result.csv"
	ellipsis        = "…"
	zeroWidthSpace  = "\u200b"
	maxShownReasons = 3 // earlier refusals listed under a reply
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

// csvFailedText says in a thread that the CSV promised could not be attached.
const csvFailedText = ":warning: I couldn't attach the CSV file with the rows, so the reply above shows only the first ones."

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
		seen = "first " + plural(shown, "row") + " and " + strconv.Itoa(shownCols) + " of " + strconv.Itoa(len(res.Columns)) + " columns shown"
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

// csvPromise is what a reply says of its CSV of inCSV of rows rows.
func csvPromise(rows, inCSV int, truncated bool, maxCSV int) string {
	switch {
	case inCSV < rows:
		return "the first " + strconv.Itoa(inCSV) + " in the CSV below, which is limited to " + sizeText(maxCSV)
	case truncated:
		return "all " + strconv.Itoa(rows) + " fetched in the CSV below"
	}
	return "all in the CSV below"
}

// csvTitle is the CSV file's title.
func csvTitle(rows, inCSV int, truncated bool) string {
	switch {
	case inCSV < rows:
		return "The first " + strconv.Itoa(inCSV) + " of " + plural(rows, "row") + " of the result (the file size limit)"
	case truncated:
		return "The first " + plural(rows, "row") + " of the result (the row limit)"
	}
	return "All " + plural(rows, "row") + " of the result"
}

// sizeText is "8 MiB", "1.5 MiB", "512 KiB", "900 bytes".
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(math.Round(float64(n)/(1<<20)*10)/10, 'f', -1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(math.Round(float64(n)/(1<<10)*10)/10, 'f', -1, 64) + " KiB"
	}
	return plural(n, "byte")
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
		parts = append(parts, ":hourglass: *I stopped after "+plural(res.Steps, "step")+" without a final answer.* Try a narrower question.")
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
		note = "The first " + strconv.Itoa(inCSV) + " of the " + plural(len(res.Rows), "row") + " are in the attached file, which is limited to " + sizeText(maxCSV) + "."
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
	text := "I didn't run that: refused by " + layerName(layer)
	if reason != "" {
		text += ": " + reason
	}
	return reply{Text: fallback(text), Blocks: b.blocks()}
}

func renderBudget(res *agent.Result) reply {
	var b blockList
	b.section(":hourglass: *I stopped after " + plural(res.Steps, "step") + " without a final answer.* " +
		"Try a narrower question: name the measure, the period or the table you mean.")
	shown := len(res.Statements) - 1 // -1: none
	if shown >= 0 {
		b.section(tried("The last SQL I tried", res.Statements[shown]))
	}
	b.context(contextLine(res, false))
	b.context(refusalNote(res.Statements, shown))
	return reply{Text: fallback("I stopped after " + plural(res.Steps, "step") + " without a final answer."), Blocks: b.blocks()}
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

// modelText adapts the Markdown that models write to Slack's mrkdwn
// (**bold** is *bold*, a ```sql fence is a plain one). It does not escape.
func modelText(s string) string {
	s = strings.ReplaceAll(s, "**", "*")
	s = strings.ReplaceAll(s, "```sql\n", "```")
	return strings.TrimSpace(s)
}

// contextLine is "provider · N steps · 2.1 s · 37 rows".
func contextLine(res *agent.Result, withRows bool) string {
	var parts []string
	if p := providerName(res.Provider); p != "" {
		parts = append(parts, escape(p))
	}
	parts = append(parts, plural(res.Steps, "step"), seconds(res.Elapsed))
	if withRows {
		rows := plural(len(res.Rows), "row")
		if res.Truncated {
			rows = strconv.Itoa(len(res.Rows)) + "+ rows"
		}
		parts = append(parts, rows)
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
	return ":no_entry: " + plural(len(refused), "earlier statement") + " refused on the way (" + strings.Join(reasons, "; ") + ")"
}

// refusalText is "the SQL guard: forbidden keyword: delete", escaped: the
// layer that refused a statement and its reason (user-safe by contract).
func refusalText(layer agent.Layer, reason string) string {
	reason = strings.TrimRight(strings.TrimSpace(reason), ".")
	if reason == "" {
		return layerName(layer)
	}
	return layerName(layer) + ": " + escape(reason)
}

// providerName is what users see of a provider: "openai:gpt-4o-mini", without
// the endpoint that may follow an "@" (an internal host name is nobody's business).
func providerName(p string) string {
	if i := strings.Index(p, "@"); i >= 0 {
		p = p[:i]
	}
	return strings.TrimSpace(p)
}

// layerName names a layer for people.
func layerName(l agent.Layer) string {
	switch l {
	case agent.LayerGuard:
		return "the SQL guard"
	case agent.LayerAuthorizer:
		return "the database authorizer"
	case agent.LayerReadOnly:
		return "the read-only connection"
	case agent.LayerLimit:
		return "a result limit"
	case agent.LayerTimeout:
		return "the time limit"
	case agent.LayerModel, "":
		return "the model"
	}
	return "the " + escape(string(l)) + " check"
}

// layerLabel keeps the refusals metric's label set small and known: a
// layer's own name, "model", or "other".
func layerLabel(l agent.Layer) string {
	if l == agent.LayerModel || slices.Contains(agent.Layers(), l) {
		return string(l)
	}
	return "other"
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
		sb.WriteString("\n• `" + escape(strings.ReplaceAll(oneLine(t.Name), "`", "'")) + "` (")
		switch {
		case t.Rows < 0:
			sb.WriteString("rows not counted")
		case t.Rows == 1:
			sb.WriteString("1 row")
		default:
			sb.WriteString(thousands(int(t.Rows)) + " rows")
		}
		sb.WriteString(")")
		if about := strings.Join(strings.Fields(oneLine(t.About)), " "); about != "" {
			sb.WriteString(": " + escape(about))
		}
	}
	return sb.String()
}

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
			if j < len(row) && row[j] != nil && !isNumber(row[j]) {
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
			cells[i+1][j] = cell(display(v))
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

// cell makes s fit a preview cell: one line, no control or bidi-control characters, at most
// previewCellMax display columns, cut with … .
func cell(s string) string {
	s = oneLine(s)
	if runewidth.StringWidth(s) > previewCellMax {
		s = strings.TrimRight(runewidth.Truncate(s, previewCellMax-1, ""), " ") + ellipsis
	}
	return s
}

// oneLine turns line breaks and tabs into spaces, and control and
// bidi-control characters into ?.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Bidi_Control, r):
			return '?' // a right-to-left override would reorder the columns people read
		}
		return r
	}, s)
}

// display formats one value for people: NULL for nil, up to six decimals.
func display(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return formatFloat(x, 6)
	case float32:
		return formatFloat(float64(x), 6)
	}
	return raw(v)
}

// raw formats one value exactly, as the CSV holds it (nil is empty).
func raw(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return "0x" + hex.EncodeToString(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return formatFloat(x, -1)
	case float32:
		return formatFloat(float64(x), -1)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case json.Number:
		return x.String()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// formatFloat writes f without an exponent for everyday magnitudes; decimals
// < 0 means as many as needed to round-trip.
func formatFloat(f float64, decimals int) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', decimals, 64)
	if decimals > 0 && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, int32, int64, uint64, float32, float64, json.Number:
		return true
	}
	return false
}

// toCSV writes the header and then the rows, as many as fit in maxBytes
// (all of them if maxBytes <= 0), and returns the bytes and how many rows
// they hold. A text cell that a spreadsheet would run as a formula (=, +, -,
// @, tab, CR at the start) is prefixed with ' (OWASP's advice on CSV
// injection); numbers are written as they are.
func toCSV(cols []string, rows [][]any, maxBytes int) ([]byte, int) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rec := make([]string, len(cols))
	for j, c := range cols {
		rec[j] = defuseFormula(c)
	}
	_ = w.Write(rec) // a bytes.Buffer does not fail
	w.Flush()
	if maxBytes > 0 && buf.Len() > maxBytes {
		return nil, 0
	}
	n := 0
	for _, row := range rows {
		for j := range cols {
			var v any
			if j < len(row) {
				v = row[j]
			}
			s := raw(v)
			if !isNumber(v) {
				s = defuseFormula(s)
			}
			rec[j] = s
		}
		before := buf.Len()
		_ = w.Write(rec)
		w.Flush()
		if maxBytes > 0 && buf.Len() > maxBytes {
			buf.Truncate(before)
			break
		}
		n++
	}
	return buf.Bytes(), n
}

func defuseFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// escape makes untrusted text inert in mrkdwn: Slack reads &, < and > as the
// start of entities, links and mentions (<!channel>, <@U…>, <http://…|…>).
func escape(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range s {
		switch r {
		case '&':
			sb.WriteString("&amp;")
		case '<':
			sb.WriteString("&lt;")
		case '>':
			sb.WriteString("&gt;")
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// codeBlock puts s in a ``` block that fits one section: escaped, with runs of
// backticks broken so that s cannot end the block, and cut with a note when
// it is too long.
func codeBlock(s string) string {
	s = defuseFence(strings.TrimSpace(s))
	const fence = "```"
	budget := maxSectionChars - 2*len(fence) - 60 // room for the "cut" note
	e := escape(s)
	if utf8.RuneCountInString(e) <= maxSectionChars-2*len(fence) {
		return fence + e + fence
	}
	// Cut on the unescaped text, so that no entity is split in half.
	runes := []rune(s)
	keep, used := 0, 0
	for i, r := range runes {
		w := 1
		switch r {
		case '&':
			w = len("&amp;")
		case '<', '>':
			w = len("&lt;")
		}
		if used+w > budget {
			break
		}
		used += w
		keep = i + 1
	}
	return fence + escape(string(runes[:keep])) + "\n" + ellipsis + " (" + plural(len(runes)-keep, "more character") + ")" + fence
}

// defuseFence breaks runs of backticks (with zero-width spaces, which do
// not change the display width) so that s cannot close a ``` block.
func defuseFence(s string) string {
	for strings.Contains(s, "``") {
		s = strings.ReplaceAll(s, "``", "`"+zeroWidthSpace+"`")
	}
	if strings.HasPrefix(s, "`") {
		s = zeroWidthSpace + s
	}
	if strings.HasSuffix(s, "`") {
		s += zeroWidthSpace
	}
	return s
}

// splitMrkdwn cuts text written as mrkdwn into pieces of at most size runes,
// at line ends where it can, keeping ``` blocks balanced in every piece.
func splitMrkdwn(text string, size int) []string {
	const fence = "```"
	var parts []string
	var cur strings.Builder
	inCode := false // whether cur is inside an open ``` block
	curLen := 0
	flush := func() {
		s := cur.String()
		if inCode {
			s += fence
		}
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
		cur.Reset()
		curLen = 0
		if inCode {
			cur.WriteString(fence)
			curLen = len(fence)
		}
	}
	for line := range strings.SplitAfterSeq(text, "\n") {
		for line != "" {
			room := size - curLen - len(fence) - 1 // keep room to close a fence
			n := utf8.RuneCountInString(line)
			if n <= room {
				cur.WriteString(line)
				curLen += n
				if strings.Count(line, fence)%2 == 1 {
					inCode = !inCode
				}
				break
			}
			if curLen > len(fence) {
				flush()
				continue
			}
			// A single line longer than a section: cut it.
			r := []rune(line)
			cut := max(room, 1)
			chunk := string(r[:cut])
			cur.WriteString(chunk)
			curLen += cut
			if strings.Count(chunk, fence)%2 == 1 {
				inCode = !inCode
			}
			line = string(r[cut:])
			flush()
		}
	}
	flush()
	return parts
}

// fallback is the notification text: short, escaped, one paragraph.
func fallback(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxFallbackChars {
		s = string([]rune(s)[:maxFallbackChars-1]) + ellipsis
	}
	return escape(s)
}

// plainFallback strips the mrkdwn this package writes (entities stay
// escaped, which fallback would double) and returns plain text for fallback.
func plainFallback(mrkdwn string) string {
	r := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "*", "", "`", "")
	return r.Replace(mrkdwn)
}

// plural is "1 row", "37 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// seconds is "0.4 s", "2.1 s", "1 min 5 s".
func seconds(d time.Duration) string {
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

// blockList collects blocks within Slack's limits: at most maxBlocks, each
// section at most maxSectionChars, all of them at most maxMessageChars by
// blockSize. What does not fit is cut with … or left out, with a note.
type blockList struct {
	list  []slack.Block
	total int  // blockSize of the blocks so far
	cut   bool // something was left out
}

const cutNote = "_(cut here: the rest did not fit in one Slack message)_"

// room is how much may still be added, keeping room for the cut note.
func (b *blockList) room() int {
	return maxMessageChars - b.total - (contextSize("") + utf8.RuneCountInString(cutNote)) - 4 // the array's brackets and commas
}

func (b *blockList) add(block slack.Block, size int) {
	b.list = append(b.list, block)
	b.total += size + 1 // and a comma
}

func sectionBlock(mrkdwn string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, false), nil, nil)
}

func contextBlock(mrkdwn string) slack.Block {
	return slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, false))
}

// sectionSize and contextSize are blockSize of a section or a context block
// holding mrkdwn.
func sectionSize(mrkdwn string) int { return blockSize(sectionBlock(mrkdwn)) }
func contextSize(mrkdwn string) int { return blockSize(contextBlock(mrkdwn)) }

func (b *blockList) section(mrkdwn string) {
	if strings.TrimSpace(mrkdwn) == "" {
		return
	}
	limit := min(maxSectionChars, b.room()-sectionSize(""))
	if len(b.list) >= maxBlocks-1 || limit < 200 {
		b.cut = true
		return
	}
	if utf8.RuneCountInString(mrkdwn) > limit {
		mrkdwn = cutEscaped(mrkdwn, limit)
	}
	b.add(sectionBlock(mrkdwn), sectionSize(mrkdwn))
}

// sections adds mrkdwn as sections, split at line ends where it can, as far
// as the message has room.
func (b *blockList) sections(mrkdwn string) {
	for _, part := range splitMrkdwn(mrkdwn, maxSectionChars) {
		b.section(part)
	}
}

func (b *blockList) context(mrkdwn string) {
	if strings.TrimSpace(mrkdwn) == "" || len(b.list) >= maxBlocks-1 {
		return
	}
	limit := min(maxContextChars, b.room()-contextSize(""))
	if limit < 20 {
		b.cut = true
		return
	}
	if utf8.RuneCountInString(mrkdwn) > limit {
		mrkdwn = cutEscaped(mrkdwn, limit)
	}
	b.add(contextBlock(mrkdwn), contextSize(mrkdwn))
}

// blocks returns the blocks, ending with a note if something was cut.
func (b *blockList) blocks() []slack.Block {
	if b.cut {
		b.list = append(b.list, contextBlock(cutNote))
		b.cut = false
	}
	return b.list
}

// blockSize is the size Slack counts against its limit for a message's
// blocks: the length of the block's compact JSON with each string counted by
// its characters (not its JSON escapes).
func blockSize(block slack.Block) int {
	raw, err := json.Marshal(block)
	if err != nil {
		return maxMessageChars // cannot happen for the blocks built here; count it as full
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return maxMessageChars
	}
	return jsonChars(v)
}

// jsonChars is the length of v's compact JSON, each string (and key)
// counted as its characters plus two quotes.
func jsonChars(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 2 + max(len(x)-1, 0)
		for k, e := range x {
			n += utf8.RuneCountInString(k) + 3 + jsonChars(e)
		}
		return n
	case []any:
		n := 2 + max(len(x)-1, 0)
		for _, e := range x {
			n += jsonChars(e)
		}
		return n
	case string:
		return utf8.RuneCountInString(x) + 2
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	}
	raw, _ := json.Marshal(v)
	return len(raw)
}

// cutEscaped shortens escaped mrkdwn to at most n runes, ending in …, without
// splitting an entity (&amp; &lt; &gt;) and closing an open ``` block.
func cutEscaped(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	keep := n - 4 // room for … and a closing ```
	if keep < 0 {
		keep = 0
	}
	if amp := strings.LastIndex(string(r[:keep]), "&"); amp >= 0 && !strings.Contains(string(r[:keep])[amp:], ";") {
		keep = utf8.RuneCountInString(string(r[:keep])[:amp])
	}
	if sp := strings.LastIndexAny(string(r[:keep]), " \n"); sp > 0 && utf8.RuneCountInString(string(r[:keep])[:sp]) > keep*3/4 {
		keep = utf8.RuneCountInString(string(r[:keep])[:sp])
	}
	out := strings.TrimRight(string(r[:keep]), " \n") + ellipsis
	if strings.Count(out, "```")%2 == 1 {
		out += "```"
	}
	return out
}
