package agent

import "time"

// An Outcome classifies how a question ended. The values are stable: they
// appear in `sqlbot ask --json`, metrics and evals.
type Outcome string

// The outcomes.
const (
	Answered     Outcome = "answered"     // a final answer backed by a statement that ran
	Refused      Outcome = "refused"      // a write or forbidden read was asked for or attempted, and refused
	Unanswerable Outcome = "unanswerable" // the model said the data does not hold the answer
	Budget       Outcome = "budget"       // the step budget ran out before a final answer
	Failed       Outcome = "error"        // no provider could answer, or another error
)

// A Turn is an earlier question and answer in the same conversation.
type Turn struct {
	Question string
	Answer   string
	SQL      string // the final SQL of that turn, may be empty
}

// A Request is one question, with the conversation's earlier turns (oldest first).
type Request struct {
	Question string
	History  []Turn
}

// A Statement is one SQL statement the model asked to run, with what happened.
type Statement struct {
	SQL    string `json:"sql"`
	Status string `json:"status"`          // "ok", "refused" or "error"
	Layer  string `json:"layer,omitempty"` // for refusals: guard, authorizer, readonly, limit, timeout
	Reason string `json:"reason"`          // empty for ok
}

// A Step is one tool call, for the `[tool status] args` trace.
type Step struct {
	Tool   string // list_tables, describe_table, run_sql
	Args   string // the arguments as the model sent them
	Status string // "ok", "refused" or "error"
}

// Usage counts tokens for one answer, over every model call.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
}

// A Result is everything the agent did for one question.
type Result struct {
	Question   string
	Answer     string      // the final answer in words (for Budget: says it stopped, with the last SQL)
	Statements []Statement // every run_sql, in order
	Trace      []Step      // every tool call, in order
	FinalSQL   string      // the last statement that ran ok ("" if none)
	Columns    []string    // its columns
	Rows       [][]any     // its rows (at most the row cap)
	Truncated  bool        // rows were cut at the cap
	Steps      int         // model calls made
	Provider   string      // which provider served the final call, as "model@host" (e.g. "gpt-4o-mini@api.openai.com"), or "recorded" (RecordedProvider)
	Elapsed    time.Duration
	Tokens     Usage
	Outcome    Outcome
	// Refusal holds the last refusal when Outcome is Refused and a statement
	// was refused (nil when the model declined in words without trying).
	Refusal *Statement
}
