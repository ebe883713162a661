package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// A Model is a language model, or a chain of them with fail-over: given the
// conversation so far and the tools it may call, it returns its next reply.
//
// Next must honour ctx. It returns an error when no reply could be had: an
// error wrapping ErrNoProvider when every provider failed in a way another
// attempt might not (a timeout, HTTP 429 or 5xx, a lost connection), a
// *ProviderError when a provider refused the request itself (a bad key, an
// unknown model), an error wrapping ErrNoModel when no model is configured
// for the question, or ctx's error. Reply.Provider names the provider that
// answered, and, with an error, the one that refused when there was one.
//
// The agent's own implementations: NewRecorded (no language model), and
// package agent/openai (OpenAI-compatible chat-completions APIs).
type Model interface {
	Next(ctx context.Context, msgs []Message, tools []ToolDef) (Reply, error)
}

// A Role says who wrote a Message.
type Role string

// The roles.
const (
	RoleSystem    Role = "system"    // the system prompt
	RoleUser      Role = "user"      // the person's questions
	RoleAssistant Role = "assistant" // the model's replies
	RoleTool      Role = "tool"      // a tool's result
)

// A Message is one message of a conversation with a Model.
type Message struct {
	Role Role
	// Content is the text. For RoleTool it is the tool's result, JSON data
	// that is never an instruction.
	Content string
	// Calls, for RoleAssistant, are the tools the model called, in order.
	// Every call is answered by one RoleTool message, in the same order,
	// before the next RoleAssistant message.
	Calls []ToolCall
	// CallID, for RoleTool, is the ID of the ToolCall answered.
	CallID string
}

// A ToolCall is one call of a tool by the model.
type ToolCall struct {
	ID   string // unique within the conversation (the agent makes it so)
	Name string // the tool named; a model may name one it was not offered
	Args string // the arguments as the model wrote them: JSON, unchecked
}

// A ToolDef describes a tool to a model (or an MCP client): its name, what
// it does, and a JSON Schema of its arguments object.
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// A Reply is a model's answer to one request: words, tool calls, or both.
type Reply struct {
	// Text is the reply in words; with no Calls, it is the final answer.
	Text string
	// Calls are the tools the model wants run before it answers.
	Calls []ToolCall
	// Refusal is the provider's structured refusal (OpenAI's "refusal"
	// field), when the model refused that way instead of in Text.
	Refusal string
	// Usage counts the tokens of this request and reply.
	Usage Usage
	// Provider names who served it: "model@host" for an API (never a key),
	// RecordedProvider for the recorded model.
	Provider string
}

// ErrNoProvider is wrapped by the error a Model returns (and so Agent.Ask)
// when every provider failed in a way another attempt might not (HTTP 429 or
// 5xx, a timeout, a connection failure), or none is configured.
var ErrNoProvider = errors.New("agent: no provider could answer")

// A ProviderError is returned by a Model when a provider answered with an
// HTTP status that another provider, or another attempt, would not fix (a 4xx
// other than 408 and 429: a bad key, an unknown model, a malformed request).
// Fail-over stops there, so that a misconfiguration is loud rather than
// hidden.
type ProviderError struct {
	Provider string // the provider's name, as in Reply.Provider
	Status   int    // the HTTP status code
	Message  string // the provider's message, clipped; for logs, not for people
	Err      error  // the client's error
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("agent: provider %s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Misconfigured reports whether the provider refuses the deployment's
// settings rather than one request: HTTP 401 (the key), 403 (the key's
// permissions, or the region) or 404 (the model or the URL). No question can
// be answered until someone fixes them.
func (e *ProviderError) Misconfigured() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound
}
