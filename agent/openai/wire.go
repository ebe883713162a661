package openai

import (
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
)

// wireMessages turns the agent's conversation into chat-completions messages.
func wireMessages(msgs []agent.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		w := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.CallID}
		if len(m.Calls) > 0 {
			w.ToolCalls = make([]openai.ToolCall, len(m.Calls))
			for j, c := range m.Calls {
				w.ToolCalls[j] = openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Name, Arguments: c.Args}}
			}
		}
		out[i] = w
	}
	return out
}

// wireTools turns tool definitions into chat-completions function tools.
func wireTools(defs []agent.ToolDef) []openai.Tool {
	if len(defs) == 0 {
		return nil
	}
	out := make([]openai.Tool, len(defs))
	for i, d := range defs {
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: d.Name, Description: d.Description, Parameters: d.Parameters,
		}}
	}
	return out
}

// reply turns provider name's response into the agent's Reply: the first
// choice's words, structured refusal and tool calls, and the usage. A
// response with no choice is an error.
func reply(resp openai.ChatCompletionResponse, name string) (agent.Reply, error) {
	r := agent.Reply{
		Provider: name,
		Usage:    agent.Usage{Prompt: resp.Usage.PromptTokens, Completion: resp.Usage.CompletionTokens},
	}
	if len(resp.Choices) == 0 {
		return r, fmt.Errorf("openai: %s returned no choices", name)
	}
	msg := resp.Choices[0].Message
	r.Text, r.Refusal = msg.Content, msg.Refusal
	for _, c := range msg.ToolCalls {
		r.Calls = append(r.Calls, agent.ToolCall{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
	}
	return r, nil
}
