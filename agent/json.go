package agent

import (
	"context"
	"errors"
	"fmt"

	"sqlbot/agent/present"
)

// A ResultJSON is a Result as `sqlbot ask --json` prints it and the web
// API's POST /api/ask returns it: one object with stable keys. Rows hold
// roconn's values, with NaN and the infinities as strings (present.JSONRows).
type ResultJSON struct {
	Question  string      `json:"question"`
	Answer    string      `json:"answer"`
	SQL       []Statement `json:"sql"` // every statement tried, in order; [] when none
	FinalSQL  string      `json:"final_sql"`
	Columns   []string    `json:"columns"`
	Rows      [][]any     `json:"rows"`
	Steps     int         `json:"steps"`
	Provider  string      `json:"provider"`
	ElapsedMS int64       `json:"elapsed_ms"`
	Tokens    Usage       `json:"tokens"`
	Outcome   Outcome     `json:"outcome"`
	Cached    bool        `json:"cached"` // an earlier answer to the same question, no model call
	// Error says why there is no answer when Outcome is Failed. Each surface
	// fills it for its reader: the terminal with the error itself (for the
	// operator), a network API with FailureText.
	Error string `json:"error,omitempty"`
}

// JSON returns r as a ResultJSON, with Error empty.
func (r *Result) JSON() ResultJSON {
	stmts := r.Statements
	if stmts == nil {
		stmts = []Statement{}
	}
	return ResultJSON{
		Question: r.Question, Answer: r.Answer, SQL: stmts, FinalSQL: r.FinalSQL,
		Columns: r.Columns, Rows: present.JSONRows(r.Rows), Steps: r.Steps, Provider: r.Provider,
		ElapsedMS: r.Elapsed.Milliseconds(), Tokens: r.Tokens, Outcome: r.Outcome, Cached: r.Cached,
	}
}

// FailureText says, for people, why a question got no answer (Ask's error):
// a fixed sentence by the kind of failure, never the error's text, which
// can hold a provider's host and message (the debug log has it).
func FailureText(err error) string {
	var pe *ProviderError
	switch {
	case errors.As(err, &pe) && pe.Misconfigured():
		return fmt.Sprintf("the model provider refuses the settings (HTTP %d): check OPENAI_API_KEY, OPENAI_MODEL and OPENAI_BASE_URL", pe.Status)
	case errors.As(err, &pe):
		return fmt.Sprintf("the model provider refused the request (HTTP %d; SQLBOT_LOG_LEVEL=debug logs why)", pe.Status)
	case errors.Is(err, ErrNoProvider):
		return "no model provider could answer; try again later (SQLBOT_LOG_LEVEL=debug logs why)"
	case errors.Is(err, ErrNoModel):
		return "no model is configured: set OPENAI_API_KEY and OPENAI_MODEL (or OPENAI_BASE_URL for a local server)"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "stopped before an answer"
	}
	return "the question could not be answered (SQLBOT_LOG_LEVEL=debug logs why)"
}
