package evalrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
)

// ReferenceProvider is the provider name the reference model reports.
const ReferenceProvider = "reference"

// ErrNotInSet is returned, wrapped, by the reference model for a question
// that is not in its question set.
var ErrNotInSet = errors.New("evalrun: the question is not in the reference set")

// reference is the model behind `sqlbot eval --model reference`.
type reference struct {
	byText map[string]Question // normalized question text → question
}

// NewReference returns an agent.Model that answers the questions of qs as
// the question set says they should be answered, with no language model, so
// that running it through a real agent.Agent (guard and roconn included)
// checks the scorer and the safety layers themselves:
//
//   - answerable: it calls run_sql with the reference_sql, then answers by
//     stating every value of the rows that came back (at most 20 rows);
//   - unsafe with attack_sql: it calls run_sql with the attack, then, if a
//     layer refused it, replies "Refused: …" naming the layer and its reason.
//     If the attack was not refused it claims success ("Done."), so that the
//     evaluation fails the question: a layer let the attack through;
//   - unsafe without attack_sql: it replies "Refused: …" without SQL;
//   - unanswerable: it replies "Not in the data: …" without SQL.
//
// Questions are matched by their text, ignoring case, punctuation and
// spacing. It is an error for two questions of qs to match the same text.
// The model reads only the request, so it is safe for concurrent use; it
// reports ReferenceProvider and uses no tokens.
func NewReference(qs []Question) (agent.Model, error) {
	r := &reference{byText: make(map[string]Question, len(qs))}
	var errs []error
	for _, q := range qs {
		k := normalize(q.Question)
		if prev, dup := r.byText[k]; dup {
			errs = append(errs, fmt.Errorf("evalrun: reference model: questions %q and %q have the same text", prev.ID, q.ID))
			continue
		}
		r.byText[k] = q
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// normalize lowercases s and keeps its letters and digits, one space
// between words.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), " ")
}

func (r *reference) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, string, error) {
	if err := ctx.Err(); err != nil {
		return openai.ChatCompletionResponse{}, ReferenceProvider, fmt.Errorf("evalrun: reference model: %w", err)
	}
	// The question is the last user message; what follows is its own tool
	// traffic.
	at := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			at = i
			break
		}
	}
	if at < 0 {
		return openai.ChatCompletionResponse{}, ReferenceProvider, fmt.Errorf("%w: the request has no question", ErrNotInSet)
	}
	q, ok := r.byText[normalize(req.Messages[at].Content)]
	if !ok {
		return openai.ChatCompletionResponse{}, ReferenceProvider, ErrNotInSet
	}
	called, result := false, ""
	for _, m := range req.Messages[at+1:] {
		switch {
		case m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0:
			called = true
		case m.Role == openai.ChatMessageRoleTool:
			result = m.Content
		}
	}
	switch {
	case q.Kind == Answerable && !called:
		return runSQL(*q.ReferenceSQL), ReferenceProvider, nil
	case q.Kind == Answerable:
		return final(stateResult(result)), ReferenceProvider, nil
	case q.Kind == Unsafe && q.AttackSQL != "" && !called:
		return runSQL(q.AttackSQL), ReferenceProvider, nil
	case q.Kind == Unsafe && q.AttackSQL != "":
		return final(attackOutcome(result)), ReferenceProvider, nil
	case q.Kind == Unsafe:
		return final(refusedMarker + " this bot reads the database and may not change it or show private data."), ReferenceProvider, nil
	}
	return final(notInDataMarker + " the database holds nothing that answers this question."), ReferenceProvider, nil
}

func runSQL(sql string) openai.ChatCompletionResponse {
	args, _ := json.Marshal(map[string]string{"sql": sql}) // a map of strings always encodes
	return response(openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleAssistant,
		ToolCalls: []openai.ToolCall{{
			ID: "reference_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "run_sql", Arguments: string(args)},
		}},
	})
}

func final(text string) openai.ChatCompletionResponse {
	return response(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text})
}

func response(m openai.ChatCompletionMessage) openai.ChatCompletionResponse {
	finish := openai.FinishReasonStop
	if len(m.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	return openai.ChatCompletionResponse{
		Object:  "chat.completion",
		Model:   ReferenceProvider,
		Choices: []openai.ChatCompletionChoice{{Message: m, FinishReason: finish}},
	}
}

// toolResult is run_sql's JSON result, as the agent sends it, but its rows.
type toolResult struct {
	Columns  []string `json:"columns"`
	RowCount int      `json:"row_count"`
	Refused  bool     `json:"refused"`
	Layer    string   `json:"layer"`
	Reason   string   `json:"reason"`
	Error    string   `json:"error"`
}

// parseResult reads run_sql's result, keeping numbers as written. Values
// that are not numbers come back as their JSON text decoded (strings) or
// "none" (null).
func parseResult(content string) (out toolResult, rows [][]string, ok bool) {
	var raw struct {
		toolResult
		Rows [][]json.RawMessage `json:"rows"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(content)))
	if err := dec.Decode(&raw); err != nil {
		return out, nil, false
	}
	out = raw.toolResult
	for _, r := range raw.Rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = cellText(v)
		}
		rows = append(rows, cells)
	}
	return out, rows, true
}

func cellText(v json.RawMessage) string {
	var s string
	switch {
	case string(v) == "null":
		return "none"
	case json.Unmarshal(v, &s) == nil:
		return s
	}
	return string(v) // a number, as written
}

// maxStatedRows is how many rows a reference answer spells out.
const maxStatedRows = 20

// stateResult answers with the figures of run_sql's result.
func stateResult(content string) string {
	res, rows, ok := parseResult(content)
	switch {
	case !ok:
		return "The reference query gave a result that could not be read."
	case res.Refused:
		return fmt.Sprintf("%s the reference query was stopped by the %s layer: %s", refusedMarker, res.Layer, res.Reason)
	case res.Error != "":
		return "The reference query failed: " + res.Error
	case len(rows) == 0:
		return "The reference query returned no rows."
	case len(rows) == 1:
		return "The answer is " + rowText(res.Columns, rows[0]) + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The answer has %d rows", res.RowCount)
	if len(rows) > maxStatedRows {
		fmt.Fprintf(&b, "; the first %d are", maxStatedRows)
	}
	b.WriteString(":")
	for i, r := range rows {
		if i == maxStatedRows {
			break
		}
		b.WriteString("\n- ")
		b.WriteString(rowText(res.Columns, r))
	}
	return b.String()
}

func rowText(cols, row []string) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if i < len(cols) {
			parts[i] = cols[i] + " " + v
		} else {
			parts[i] = v
		}
	}
	return strings.Join(parts, ", ")
}

// attackOutcome answers after an unsafe question's attack: a refusal naming
// the layer if one stopped it; else, so that the evaluation fails the
// question, the statement's error, or a claim of success if it ran.
func attackOutcome(content string) string {
	res, _, ok := parseResult(content)
	switch {
	case ok && res.Refused:
		return fmt.Sprintf("%s this bot may only read, and only what its policy exposes; the %s layer refused the statement: %s.",
			refusedMarker, res.Layer, res.Reason)
	case ok && res.Error != "":
		return "The statement failed: " + res.Error
	}
	return "Done."
}
