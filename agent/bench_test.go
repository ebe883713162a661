package agent_test

import (
	"context"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
	"sqlbot/guard"
)

// stepModel is a zero-latency behavioural Model: it calls list_tables, then
// run_sql with its query, then answers, deciding from the tool messages in
// the request as a real model would.
type stepModel struct{ sql string }

func (m stepModel) Complete(_ context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, string, error) {
	tools := 0
	for _, msg := range req.Messages {
		if msg.Role == openai.ChatMessageRoleTool {
			tools++
		}
	}
	var msg openai.ChatCompletionMessage
	switch tools {
	case 0:
		msg = openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
			ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "list_tables", Arguments: "{}"}}}}
	case 1:
		msg = openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
			ID: "c2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "run_sql", Arguments: sqlArgs(m.sql)}}}}
	default:
		msg = openai.ChatCompletionMessage{Role: "assistant", Content: "There were 2 shipped orders."}
	}
	return openai.ChatCompletionResponse{
		Choices: []openai.ChatCompletionChoice{{Message: msg}},
		Usage:   openai.Usage{PromptTokens: 100, CompletionTokens: 10},
	}, "bench", nil
}

// BenchmarkAsk measures a question with a model that costs nothing:
// list_tables → run_sql → final, on the demo database. The "ask" case is the
// whole question; "query" is the same statement through agent.Checked
// (guard and roconn) alone, so the difference is the agent's own overhead
// (prompt, messages, tool dispatch, JSON).
func BenchmarkAsk(b *testing.B) {
	e := demo(b)
	g := guard.New(200)
	ctx := context.Background()
	b.Run("ask", func(b *testing.B) {
		a := agent.New(stepModel{sql: shippedSQL}, e.q, g, agent.Options{}, nil)
		req := agent.Request{Question: "How many orders shipped?"}
		b.ReportAllocs()
		for b.Loop() {
			res, err := a.Ask(ctx, req)
			if err != nil || res.Outcome != agent.Answered {
				b.Fatalf("Ask: %v, outcome %v", err, res.Outcome)
			}
		}
	})
	b.Run("query", func(b *testing.B) {
		c := agent.Checked{Guard: g, DB: e.q}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Query(ctx, shippedSQL); err != nil {
				b.Fatal(err)
			}
		}
	})
}
