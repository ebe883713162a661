package agent_test

import (
	"context"
	"testing"

	"sqlbot/agent"
	"sqlbot/guard"
)

// stepModel is a zero-latency behavioural Model: it calls list_tables, then
// run_sql with its query, then answers, deciding from the tool messages in
// the request as a real model would.
type stepModel struct{ sql string }

func (m stepModel) Next(_ context.Context, msgs []agent.Message, _ []agent.ToolDef) (agent.Reply, error) {
	tools := 0
	for _, msg := range msgs {
		if msg.Role == agent.RoleTool {
			tools++
		}
	}
	r := agent.Reply{Usage: agent.Usage{Prompt: 100, Completion: 10}, Provider: "bench"}
	switch tools {
	case 0:
		r.Calls = []agent.ToolCall{{ID: "c1", Name: "list_tables", Args: "{}"}}
	case 1:
		r.Calls = []agent.ToolCall{{ID: "c2", Name: "run_sql", Args: sqlArgs(m.sql)}}
	default:
		r.Text = "There were 2 shipped orders."
	}
	return r, nil
}

// BenchmarkAsk measures a question with a model that costs nothing:
// list_tables → run_sql → final, on the test shop. The "ask" case is the
// whole question; "query" is the same statement through agent.Checked
// (guard and roconn) alone, so the difference is the agent's own overhead
// (prompt, messages, tool dispatch, JSON).
func BenchmarkAsk(b *testing.B) {
	e := shop(b)
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
