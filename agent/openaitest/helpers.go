package openaitest

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// A Request is the chat completion request the server received, as the
// client sent it on the wire.
type Request = openai.ChatCompletionRequest

// Call returns a tool call of the function name with argsJSON as its raw
// arguments text (delivered as-is, valid JSON or not).
func Call(name, argsJSON string) ToolCall {
	return ToolCall{Name: name, Arguments: argsJSON}
}

// Calls returns a reply that asks for the given tool calls.
func Calls(calls ...ToolCall) Reply {
	return Reply{ToolCalls: calls}
}

// Final returns a reply that answers with text and finish_reason "stop".
func Final(text string) Reply {
	return Reply{Content: text}
}

// Tools returns the names of the functions req offers, in order.
func Tools(req openai.ChatCompletionRequest) []string {
	var names []string
	for _, t := range req.Tools {
		if t.Function != nil {
			names = append(names, t.Function.Name)
		}
	}
	return names
}

// LastToolResults returns the tool results the client passed back for the
// latest assistant turn: the contents of the tool messages after the last
// assistant message, by tool_call_id. It is empty when the request does not
// end with tool results.
func LastToolResults(req openai.ChatCompletionRequest) map[string]string {
	out := map[string]string{}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != openai.ChatMessageRoleTool {
			break
		}
		out[m.ToolCallID] = text(m)
	}
	return out
}

// ToolResults returns every tool result in req, by tool_call_id.
func ToolResults(req openai.ChatCompletionRequest) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out[m.ToolCallID] = text(m)
		}
	}
	return out
}

// SystemPrompt returns the text of req's system (or developer) messages,
// joined by blank lines; usually there is one.
func SystemPrompt(req openai.ChatCompletionRequest) string {
	var parts []string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper {
			parts = append(parts, text(m))
		}
	}
	return strings.Join(parts, "\n\n")
}

// LastUser returns the text of req's last user message: the question being
// answered, for a Handle function that answers per question.
func LastUser(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			return text(req.Messages[i])
		}
	}
	return ""
}

// text returns a message's text, whether sent as a string or as parts.
func text(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
