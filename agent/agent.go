// Package agent answers one question about a database by letting a language
// model call three tools (list_tables, describe_table, run_sql), within a
// budget of model calls. It talks to a Model of its own (messages in, a Reply
// out); package agent/openai is the Model for OpenAI-compatible APIs, and
// NewRecorded needs none. The tools (Tools) can be called without the loop,
// by an MCP server for one; package agent/present formats their results for
// people.
//
// Safety contract: the model never touches the database directly. Every
// statement it proposes goes through guard.Check and then the read-only
// Querier (roconn), in that order (Checked); schema descriptions come from
// the Querier's Objects and Describe (roconn's own reads), never from
// model-written SQL. Refusals
// and SQL errors are results that go back to the model as JSON tool
// messages: a refusal as {"refused": true, "layer", "reason"}, an SQL error
// as {"error": "no such column: Nmae"} in SQLite's own words. A result whose
// statement compared a readable column to a string it does not hold says so
// in unknown_values, with the values the column does hold, read through the
// same guarded path (never a hidden column's). Tool results are passed as
// data, never as instructions; so are a Request's verified Examples, sent as
// earlier turns after the system prompt (which stays the same bytes for
// every question while the schema fits the prompt's budget; beyond it, the
// schema part depends on the question, after a prefix that does not: see
// Agent.SystemPromptFor). The loop is bounded by
// Options.MaxSteps model calls; only context errors and model failures end
// it early. Logs never carry the question, the answer or the SQL.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"sqlbot/agent/present"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// Querier is what the loop needs of roconn.DB: run a checked statement, the
// description of what the policy exposes (Objects and Object, computed at
// Open), an object with its row count and sample rows (Describe, which may
// read them, bounded; Known, which returns them only if read already), and
// the house rules.
type Querier interface {
	Query(ctx context.Context, query string) (*roconn.Result, error)
	Objects() []roconn.Object
	Object(name string) (roconn.Object, bool)
	Describe(ctx context.Context, name string) (roconn.Object, bool)
	Known(name string) (roconn.Object, bool)
	Rules() []string
}

// DefaultMaxSteps is the number of model calls per question when
// Options.MaxSteps is zero.
const DefaultMaxSteps = 6

// MaxHistoryTurns bounds how many earlier turns of a conversation are sent
// with a question; older ones are dropped, oldest first.
const MaxHistoryTurns = 8

// Options are an Agent's tunables. The zero value is usable.
type Options struct {
	// MaxSteps is the most model calls per question (default DefaultMaxSteps).
	MaxSteps int
	// PromptChars bounds the system prompt, in bytes (default
	// DefaultPromptChars). A schema that does not fit is described in part,
	// the objects most relevant to the question first (see SystemPromptFor).
	PromptChars int
}

// An Agent answers questions with a Model over a Querier. It is safe for
// concurrent use: Ask keeps all of its state on its own stack.
type Agent struct {
	model  Model
	tools  *Tools
	log    *slog.Logger
	opt    Options
	prompt *prompter // the system prompt, for a question
	defs   []ToolDef // the tool definitions, identical for every question
}

// New returns an Agent that asks m and offers it the Tools over q, whose
// SQL runs through g and then q. The system prompt is prepared here from
// q.Objects and q.Rules (a row count is in it only if q had it then): the
// same for every question when the whole schema fits its budget, else per
// question (see SystemPromptFor). Logs go to lg (nil: discarded).
func New(m Model, q Querier, g *guard.Guard, opt Options, lg *slog.Logger) *Agent {
	if opt.MaxSteps <= 0 {
		opt.MaxSteps = DefaultMaxSteps
	}
	if opt.PromptChars <= 0 {
		opt.PromptChars = DefaultPromptChars
	}
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	a := &Agent{model: m, tools: NewTools(q, g, lg), log: lg, opt: opt}
	a.defs = a.tools.Defs()
	a.prompt = newPrompter(q.Objects(), q.Rules(), opt.MaxSteps, opt.PromptChars)
	return a
}

// SystemPrompt returns the system message for a question that names nothing
// in the schema. When the whole schema fits Options.PromptChars, that is the
// message sent with every question. See SystemPromptFor.
func (a *Agent) SystemPrompt() string { return a.prompt.forRequest(Request{}) }

// SystemPromptFor returns the system message sent with question (without
// earlier turns or examples).
//
// When the exposed schema with its meanings, the house rules and the
// instructions fit Options.PromptChars, the message is that, the same bytes
// for every question. When they do not, it is the house rules and the
// instructions (the same bytes for every question: the prefix a provider can
// cache), then the objects most relevant to the question in full, then the
// names of the others while they fit, and a line sending the model to
// list_tables and describe_table for the rest; it stays within the budget
// unless the house rules and the instructions alone exceed it, which are
// never cut. Relevance: the question's words (lower-cased, a plural "s"
// dropped, function words left out) found in an object's name (weight 3),
// its column names (1), its about and its columns' meanings (0.5), each
// weighted by how rare the word is among the objects (ln(1 + objects /
// objects with the word)); the object's whole name in the question adds 6;
// the words of earlier turns and of the examples' SQL count half; and an
// object joined by a foreign key to one of the best matches (at least half
// the top score) gets 0.4 of that match's score. Ties go by name.
func (a *Agent) SystemPromptFor(question string) string {
	return a.prompt.forRequest(Request{Question: question})
}

// Ask answers one question, with the conversation's earlier turns.
//
// Ask returns a non-nil Result whenever it can. The error is non-nil exactly
// when Result.Outcome is Failed: the model could not be reached (it wraps
// ErrNoProvider, or is a *ProviderError for a 4xx answer), no model is
// configured (it wraps ErrNoModel, and Result.Answer says how to set one), or
// ctx ended (it wraps ctx.Err()). A spent budget is not an error: the Result
// has Outcome Budget and an Answer that says so, with the last SQL.
func (a *Agent) Ask(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	res := &Result{Question: req.Question}
	msgs := a.messages(req)

	err := a.loop(ctx, res, msgs)
	res.Elapsed = time.Since(start)
	if err != nil {
		res.Outcome = Failed
		if errors.Is(err, ErrNoModel) {
			res.Answer = noModelAnswer(a.model)
		}
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "agent: question done",
		slog.Int("question_chars", len(req.Question)),
		slog.Int("history_turns", len(req.History)),
		slog.Int("examples", min(len(req.Examples), MaxExamples)),
		slog.String("outcome", string(res.Outcome)),
		slog.Int("steps", res.Steps),
		slog.Int("statements", len(res.Statements)),
		slog.String("provider", res.Provider),
		slog.Duration("elapsed", res.Elapsed),
		slog.Int("prompt_tokens", res.Tokens.Prompt),
		slog.Int("completion_tokens", res.Tokens.Completion),
		slog.Bool("failed", err != nil),
	)
	return res, err
}

// loop calls the model at most MaxSteps times, running the tools it asks
// for, and fills in res. It returns an error only when the model could not
// be called or ctx ended.
func (a *Agent) loop(ctx context.Context, res *Result, msgs []Message) error {
	for step := 1; step <= a.opt.MaxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("agent: step %d: %w", step, err)
		}
		reply, err := a.model.Next(ctx, msgs, a.defs)
		if reply.Provider != "" {
			res.Provider = reply.Provider
		}
		if err != nil { // a Model's errors say which package they come from
			return fmt.Errorf("%w (at step %d)", err, step)
		}
		res.Steps++
		res.Tokens.Prompt += reply.Usage.Prompt
		res.Tokens.Completion += reply.Usage.Completion
		if len(reply.Calls) == 0 {
			text := strings.TrimSpace(reply.Text)
			if text == "" {
				text = strings.TrimSpace(reply.Refusal) // a provider's structured refusal
				if text != "" && !hasPrefixFold(text, RefusedPrefix) {
					text = RefusedPrefix + " " + text
				}
			}
			if text != "" {
				res.Answer = text
				res.Outcome = classify(text, res.Statements)
				if res.Outcome == Refused {
					res.Refusal = lastRefusal(res.Statements)
				}
				return nil
			}
			// An empty reply (some local servers produce one): ask again,
			// within the same budget.
			msgs = append(msgs,
				Message{Role: RoleAssistant, Content: "(no reply)"},
				Message{Role: RoleUser, Content: emptyReplyNudge})
			continue
		}

		calls := make([]ToolCall, len(reply.Calls))
		seen := make(map[string]bool, len(reply.Calls))
		for i, c := range reply.Calls {
			// Some local servers omit or repeat ids; every tool message must
			// still answer exactly one call.
			if c.ID == "" || seen[c.ID] {
				c.ID = fmt.Sprintf("call_%d_%d", step, i+1)
			}
			seen[c.ID] = true
			calls[i] = c
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Content: reply.Text, Calls: calls})
		for i, c := range calls {
			var out string
			if i < maxCallsPerStep {
				out, err = a.runTool(ctx, res, c.Name, c.Args)
				if err != nil {
					return fmt.Errorf("agent: step %d: %s: %w", step, c.Name, err)
				}
			} else { // every call still needs its tool message
				out = tooManyCalls
				res.Trace = append(res.Trace, Step{Tool: c.Name, Args: c.Args, Status: StatusError})
			}
			msgs = append(msgs, Message{Role: RoleTool, Content: out, CallID: c.ID})
		}
	}
	res.Outcome = Budget
	res.Answer = budgetAnswer(a.opt.MaxSteps, res.Statements)
	return nil
}

// runTool runs one tool call, records it in res (its Step, and for run_sql
// its Statement and the rows of the last that ran), and returns the tool
// message's content, always JSON. It returns an error only when ctx has
// ended.
func (a *Agent) runTool(ctx context.Context, res *Result, name, args string) (string, error) {
	tr, err := a.tools.Call(ctx, name, args)
	if run := tr.Run; run != nil {
		res.Statements = append(res.Statements, run.Statement)
		if run.Result != nil {
			res.FinalSQL = run.Statement.SQL
			res.Columns, res.Rows, res.Truncated = run.Result.Columns, run.Result.Rows, run.Result.Truncated
		}
	}
	if err != nil {
		return "", err
	}
	res.Trace = append(res.Trace, Step{Tool: name, Args: args, Status: tr.Status})
	a.log.LogAttrs(ctx, slog.LevelDebug, "agent: tool", slog.String("tool", present.Clip(name, 64)),
		slog.String("status", string(tr.Status)), slog.Int("args_bytes", len(args)))
	return tr.Content, nil
}

// maxCallsPerStep bounds the tool calls run for one model reply; further
// calls in the same reply are answered with an error and not run.
const maxCallsPerStep = 8

var tooManyCalls = fmt.Sprintf(`{"error":"too many tool calls in one turn; at most %d run, the rest were skipped"}`, maxCallsPerStep)

const emptyReplyNudge = "Your last reply was empty. Call a tool, or give your final answer in words."
