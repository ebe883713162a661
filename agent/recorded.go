package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrNoModel is returned, wrapped, by the recorded model for a question that
// is not recorded, and so by Agent.Ask, whose Result then has Outcome Failed
// and an Answer of NoModelHelp followed by up to three recorded questions
// (none when there are no recordings).
var ErrNoModel = errors.New("agent: no model configured")

// NoModelHelp is the answer to a question the recorded model does not know.
const NoModelHelp = "No language model is configured, so I can only answer the recorded demo questions. " +
	"To use a hosted model, set OPENAI_API_KEY and OPENAI_MODEL (e.g. gpt-4o-mini). " +
	"To use a local OpenAI-compatible server such as Ollama, llama.cpp or vLLM, set " +
	"OPENAI_BASE_URL=http://localhost:11434/v1 and OPENAI_MODEL to a model it serves (e.g. qwen2.5:7b)."

// RecordedProvider is the provider name the recorded model reports.
const RecordedProvider = "recorded"

// A Recorded question is one the offline model can answer. Its SQL is run
// through run_sql, the same guard and Querier as a model's would be, and the
// answer states what came back (or that a layer refused it, or the SQL
// error). A question with no SQL is answered with Answer, without running
// anything.
type Recorded struct {
	Question string
	SQL      string
	Answer   string // used only when SQL is empty
}

// recorded is the offline Model (see NewRecorded): for a recorded question
// it calls run_sql with the stored SQL and then states what came back, or
// replies with the stored Answer; for any other question it returns an error
// wrapping ErrNoModel, and Agent.Ask answers with help.
type recorded struct {
	byText map[string]Recorded // normalized question → its recording
	help   string              // NoModelHelp and up to maxExamples recorded questions
}

// maxExamples is how many recorded questions the no-model answer suggests.
const maxExamples = 3

// NewRecorded returns the Model used when no provider is configured. A
// question matches a recorded one regardless of case, whitespace and
// punctuation. It is an error for two recordings to match the same text, or
// for one to have neither SQL nor Answer. The Model reads only the request's
// messages, so it is stateless and safe for concurrent use.
func NewRecorded(qs []Recorded) (Model, error) {
	r := &recorded{byText: make(map[string]Recorded, len(qs))}
	var errs []error
	var help strings.Builder
	help.WriteString(NoModelHelp)
	for _, q := range qs {
		k := normalize(q.Question)
		switch prev, dup := r.byText[k]; {
		case dup:
			errs = append(errs, fmt.Errorf("agent: recorded questions %q and %q have the same text", prev.Question, q.Question))
			continue
		case strings.TrimSpace(q.SQL) == "" && strings.TrimSpace(q.Answer) == "":
			errs = append(errs, fmt.Errorf("agent: recorded question %q has neither SQL nor an answer", q.Question))
			continue
		}
		r.byText[k] = q
		if len(r.byText) == 1 {
			help.WriteString(" Questions I can answer now, for example:")
		}
		if len(r.byText) <= maxExamples {
			help.WriteString("\n• ")
			help.WriteString(q.Question)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	r.help = help.String()
	return r, nil
}

// normalize lowercases s and reduces it to its letters and digits, one space
// between words.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), " ")
}

// Next answers the conversation's last question: with the recording's
// Answer, or by calling run_sql with its SQL and then stating the tool's
// result. It reads nothing but msgs, and offers no tool it was not given.
func (r *recorded) Next(ctx context.Context, msgs []Message, _ []ToolDef) (Reply, error) {
	if err := ctx.Err(); err != nil {
		return Reply{Provider: RecordedProvider}, fmt.Errorf("agent: call recorded model: %w", err)
	}
	// The question is the last user message; what follows it is this
	// question's own tool traffic.
	q := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			q = i
			break
		}
	}
	if q < 0 {
		return Reply{Provider: RecordedProvider}, fmt.Errorf("%w: no question in the request", ErrNoModel)
	}
	rec, ok := r.byText[normalize(msgs[q].Content)]
	if !ok {
		return Reply{Provider: RecordedProvider}, fmt.Errorf("%w: the question is not a recorded one", ErrNoModel)
	}
	if rec.SQL == "" {
		return Reply{Text: rec.Answer, Provider: RecordedProvider}, nil
	}
	var lastTool string
	called := false
	for _, m := range msgs[q+1:] {
		switch {
		case m.Role == RoleAssistant && len(m.Calls) > 0:
			called = true
		case m.Role == RoleTool:
			lastTool = m.Content
		}
	}
	if !called {
		var args strings.Builder
		enc := json.NewEncoder(&args)
		enc.SetEscapeHTML(false) // the trace shows these arguments as they are
		enc.Encode(map[string]string{"sql": rec.SQL})
		return Reply{
			Calls:    []ToolCall{{ID: "recorded_1", Name: ToolRunSQL, Args: strings.TrimSpace(args.String())}},
			Provider: RecordedProvider,
		}, nil
	}
	return Reply{Text: describeToolResult(lastTool), Provider: RecordedProvider}, nil
}

// PreferRecorded returns a Model that answers the questions rec has
// recorded with rec, and every other one with m: a recorded question never
// reaches m, whatever m is, so that it costs no model call and is answered
// the same way every time (through the same tools, guard and Querier as any
// other). rec must be a Model from NewRecorded (or one built on it, such as
// evalrun.NewReference's); it is an error otherwise. As for rec, the
// question is the conversation's last user message, matched regardless of
// case, whitespace and punctuation.
func PreferRecorded(rec, m Model) (Model, error) {
	r, ok := rec.(*recorded)
	if !ok {
		return nil, fmt.Errorf("agent: PreferRecorded: %T is not a recorded model", rec)
	}
	if m == nil {
		return nil, errors.New("agent: PreferRecorded: the other model is nil")
	}
	return &preferRecorded{rec: r, next: m}, nil
}

// preferRecorded is PreferRecorded's Model.
type preferRecorded struct {
	rec  *recorded
	next Model
}

func (p *preferRecorded) Next(ctx context.Context, msgs []Message, tools []ToolDef) (Reply, error) {
	if q, ok := lastQuestion(msgs); ok {
		if _, known := p.rec.byText[normalize(q)]; known {
			return p.rec.Next(ctx, msgs, tools)
		}
	}
	return p.next.Next(ctx, msgs, tools)
}

// lastQuestion returns the content of the last user message of msgs.
func lastQuestion(msgs []Message) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i].Content, true
		}
	}
	return "", false
}

// maxStatedRows is how many rows a recorded answer spells out.
const maxStatedRows = 20

// describeToolResult turns run_sql's JSON into an answer that states the
// figures as that JSON wrote them: a single value, one row's values, or a
// list of rows. It says when it lists only the first rows (because run_sql
// showed fewer than the statement returned, or beyond maxStatedRows) and
// when the result was cut at the row cap.
func describeToolResult(content string) string {
	var out struct {
		Columns   []string            `json:"columns"`
		Rows      [][]json.RawMessage `json:"rows"`
		RowCount  int                 `json:"row_count"`
		Truncated bool                `json:"truncated"`
		Refused   bool                `json:"refused"`
		Layer     string              `json:"layer"`
		Reason    string              `json:"reason"`
		Error     string              `json:"error"`
	}
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		return "The recorded query gave a result I could not read."
	}
	switch {
	case out.Refused:
		return fmt.Sprintf("%s the recorded query was stopped by the %s layer: %s.", RefusedPrefix, out.Layer, out.Reason)
	case out.Error != "":
		return "The recorded query failed: " + out.Error
	case len(out.Rows) == 0:
		return "The recorded query returned no rows."
	}
	var b strings.Builder
	if len(out.Rows) == 1 && out.RowCount == 1 && !out.Truncated {
		row := out.Rows[0]
		if len(row) == 1 && len(out.Columns) == 1 {
			fmt.Fprintf(&b, "The answer is %s (%s).", cellText(row[0]), out.Columns[0])
			return b.String()
		}
		b.WriteString("The answer is ")
		writeRow(&b, out.Columns, row)
		b.WriteString(".")
		return b.String()
	}
	stated := min(len(out.Rows), maxStatedRows)
	if out.Truncated {
		fmt.Fprintf(&b, "The query returned more than %d rows and was cut at the row cap", out.RowCount)
	} else {
		fmt.Fprintf(&b, "The query returned %d rows", out.RowCount)
	}
	if out.Truncated || stated < out.RowCount {
		fmt.Fprintf(&b, "; the first %d are", stated)
	}
	b.WriteString(":")
	for _, row := range out.Rows[:stated] {
		b.WriteString("\n- ")
		writeRow(&b, out.Columns, row)
	}
	return b.String()
}

func writeRow(b *strings.Builder, cols []string, row []json.RawMessage) {
	for i, v := range row {
		if i > 0 {
			b.WriteString(", ")
		}
		if i < len(cols) {
			b.WriteString(cols[i])
			b.WriteString(" ")
		}
		b.WriteString(cellText(v))
	}
}

// cellText writes one JSON value of a row as a person would read it:
// numbers as the tool's JSON wrote them, strings unquoted, NULL as "none".
func cellText(v json.RawMessage) string {
	var s string
	switch {
	case string(v) == "null":
		return "none"
	case json.Unmarshal(v, &s) == nil:
		return s
	}
	return string(v)
}

// noModelAnswer is the answer to a question no configured model can take:
// how to configure one and, from the recorded model, some questions that
// work without one.
func noModelAnswer(m Model) string {
	if r, ok := m.(*recorded); ok {
		return r.help
	}
	return NoModelHelp
}
