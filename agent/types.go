package agent

import (
	"strings"
	"time"

	"sqlbot/roconn"
)

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

// A Status is what became of one statement or tool call. The values are
// stable: they appear in `sqlbot ask --json`, logs and evals.
type Status string

// The statuses.
const (
	StatusOK      Status = "ok"      // it ran (for run_sql: it returned rows, perhaps cut at the row cap)
	StatusRefused Status = "refused" // a safety layer refused the statement (run_sql only)
	StatusError   Status = "error"   // it failed: bad arguments, an unknown tool or table, an SQL error
)

// A Layer names what refused a statement: the guard, or one of roconn's
// layers. Each package owns its own (guard its Rules, roconn its Layers);
// this type is their union, and lives here because Checked is where a
// statement meets both. The values are stable: they appear in `sqlbot sql
// --json`, `sqlbot ask --json`, metrics and evals.
type Layer string

// The layers, in the order a statement meets them.
const (
	LayerGuard      Layer = "guard"                       // guard.Check refused it (a *guard.Refusal)
	LayerAuthorizer       = Layer(roconn.LayerAuthorizer) // the rest are roconn's (a *roconn.Refusal)
	LayerReadOnly         = Layer(roconn.LayerReadOnly)
	LayerLimit            = Layer(roconn.LayerLimit)
	LayerTimeout          = Layer(roconn.LayerTimeout)
)

// LayerModel is no statement's layer: it stands for the model itself when
// an answer refuses (Outcome Refused) with no statement refused, as replies
// and metrics name who refused.
const LayerModel Layer = "model"

// Layers returns the layers that can refuse a statement, in the order a
// statement meets them.
func Layers() []Layer {
	return []Layer{LayerGuard, LayerAuthorizer, LayerReadOnly, LayerLimit, LayerTimeout}
}

// Name names the layer for people: "the SQL guard", "the database
// authorizer", "the read-only connection", "a result limit", "the time
// limit", "the model" (LayerModel, and the empty layer); a layer this
// version does not know is "the <id> check".
func (l Layer) Name() string {
	switch l {
	case LayerGuard:
		return "the SQL guard"
	case LayerAuthorizer:
		return "the database authorizer"
	case LayerReadOnly:
		return "the read-only connection"
	case LayerLimit:
		return "a result limit"
	case LayerTimeout:
		return "the time limit"
	case LayerModel, "":
		return "the model"
	}
	return "the " + string(l) + " check"
}

// Protects reports whether a refusal by l stops a write or a read of what
// the policy does not expose (the guard, the authorizer, the read-only
// connection), rather than a statement that is too large or too slow (the
// limit and timeout layers).
func (l Layer) Protects() bool {
	return l == LayerGuard || l == LayerAuthorizer || l == LayerReadOnly
}

// ProviderModel returns the model part of a provider's name: "gpt-4o-mini"
// of "gpt-4o-mini@api.openai.com" (Reply.Provider). It is what people may
// be shown: the host, which may be an internal one, is for operators.
func ProviderModel(provider string) string {
	if i := strings.LastIndex(provider, "@"); i >= 0 {
		provider = provider[:i]
	}
	return strings.TrimSpace(provider)
}

// A Turn is an earlier question and answer in the same conversation.
type Turn struct {
	Question string
	Answer   string
	SQL      string // the final SQL of that turn, may be empty
}

// A Request is one question, with the conversation's earlier turns (oldest
// first) and examples of verified answers to questions like it (the nearest
// first; at most MaxExamples are used).
type Request struct {
	Question string
	History  []Turn
	Examples []Example
}

// A Statement is one SQL statement the model asked to run, with what happened.
type Statement struct {
	SQL    string `json:"sql"`
	Status Status `json:"status"`
	Layer  Layer  `json:"layer,omitempty"` // set when Status is StatusRefused
	// Reason is empty for StatusOK; for a refusal it is the layer's reason,
	// safe to show anyone; for an error it is what the model was told,
	// SQLite's message included, which is not written for people.
	Reason string `json:"reason"`
}

// A Step is one tool call, for the `[tool status] args` trace.
type Step struct {
	Tool   string // ToolListTables, ToolDescribeTable, ToolRunSQL, or whatever the model named
	Args   string // the arguments as the model sent them
	Status Status
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
	// Cached is set when the answer is an earlier one to the same question
	// on the same data, reused without calling the model (agent/cache):
	// Tokens are then zero, Elapsed is the lookup's, and the rest is the
	// earlier answer's.
	Cached bool
}
