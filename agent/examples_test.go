package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"sqlbot/agent"
)

// TestNearestExamples: the verified pairs nearest a question by the words
// they share, at most k, the closest first; unrelated ones are left out.
func TestNearestExamples(t *testing.T) {
	pool := []agent.Example{
		{Question: "How many orders were shipped in June 2025?", SQL: "SELECT count(*) FROM orders WHERE status = 'shipped' AND day >= '2025-06-01'"},
		{Question: "What is the average price of a product?", SQL: "SELECT avg(price) FROM products"},
		{Question: "Which region has the most customers?", SQL: "SELECT region, count(*) FROM customer_regions GROUP BY region ORDER BY 2 DESC LIMIT 1"},
		{Question: "How many orders shipped?", SQL: "SELECT count(*) FROM orders WHERE status = 'shipped'"},
		{Question: "List the products", SQL: "SELECT name FROM products"},
	}
	got := agent.NearestExamples("how many ORDERS were shipped in July 2025", pool, 3)
	var qs []string
	for _, e := range got {
		qs = append(qs, e.Question)
	}
	if len(got) != 2 || got[0] != pool[0] || got[1] != pool[3] {
		t.Errorf("nearest = %q, want the June question, then the plain shipped count, and nothing unrelated", qs)
	}
	if got := agent.NearestExamples("price of products on average", pool, 1); len(got) != 1 || got[0] != pool[1] {
		t.Errorf("nearest = %+v, want the average price", got)
	}
	if got := agent.NearestExamples("what's the weather", pool, 3); len(got) != 0 {
		t.Errorf("an unrelated question got examples %+v", got)
	}
	if got := agent.NearestExamples("orders shipped", nil, 3); len(got) != 0 {
		t.Errorf("no pool gave %+v", got)
	}
}

// TestAskWithExamples: verified examples reach the model after the stable
// system prompt, as data, before the earlier turns, and the question stays
// the last user message; at most MaxExamples are sent.
func TestAskWithExamples(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	s.Push(final("2 orders were shipped."))
	s.Push(final("2 orders were shipped."))
	a := newAgent(e, s, 0)
	var examples []agent.Example
	for i := range agent.MaxExamples + 2 {
		examples = append(examples, agent.Example{Question: fmt.Sprintf("How many orders shipped in week %d?", i), SQL: shippedSQL + fmt.Sprintf(" AND %d = %d", i, i)})
	}
	earlier := agent.Turn{Question: "Hello?", Answer: "Hi."}
	ctx := context.Background()
	if _, err := a.Ask(ctx, agent.Request{Question: "How many orders shipped?", History: []agent.Turn{earlier}, Examples: examples}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Ask(ctx, agent.Request{Question: "How many orders shipped?"}); err != nil {
		t.Fatal(err)
	}
	with, without := s.Requests()[0], s.Requests()[1]
	if with[0].Role != without[0].Role || with[0].Content != without[0].Content {
		t.Error("examples changed the system prompt: the cached prefix is lost")
	}
	var shown []string
	for _, m := range with[1 : len(with)-3] {
		shown = append(shown, m.Content)
	}
	text := strings.Join(shown, "\n")
	for i, ex := range examples {
		if in := strings.Contains(text, ex.SQL); in != (i < agent.MaxExamples) {
			t.Errorf("example %d sent: %v, want only the first %d", i, in, agent.MaxExamples)
		}
	}
	if n := len(with); n != 1+2*agent.MaxExamples+2+1 {
		t.Fatalf("%d messages, want system, %d example pairs, the earlier turn and the question", n, agent.MaxExamples)
	}
	roles := []agent.Role{}
	for _, m := range with {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles[len(roles)-3:], []agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleUser}) ||
		with[len(with)-3].Content != earlier.Question || with[len(with)-1].Content != "How many orders shipped?" {
		t.Errorf("the earlier turn and the question do not come last: %v", roles)
	}
	if !strings.Contains(with[1].Content, "verified") {
		t.Errorf("the first example does not say what it is: %q", with[1].Content)
	}
}
