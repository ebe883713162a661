package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
	"sqlbot/agent/agenttest"
	"sqlbot/agent/openai"
	"sqlbot/agent/openaitest"
	"sqlbot/guard"
	"sqlbot/roconn"
)

const testModel = "test-model"

const shippedSQL = "SELECT COUNT(*) AS shipped FROM orders WHERE status = 'shipped'"

// The compiler checks that Providers is a Model.
var _ agent.Model = (*openai.Providers)(nil)

// chain returns providers over the servers, in order, with the given
// per-call timeout.
func chain(timeout time.Duration, ss ...*openaitest.Server) *openai.Providers {
	ps := make([]openai.Provider, len(ss))
	for i, s := range ss {
		ps[i] = openai.Provider{BaseURL: s.URL, APIKey: openaitest.DefaultAPIKey, Model: testModel}
	}
	return openai.NewProviders(ps, timeout, nil)
}

func nameOf(t testing.TB, s *openaitest.Server) string {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return testModel + "@" + u.Host
}

// shop opens the agent's test database.
func shop(t testing.TB) *roconn.DB { return agenttest.Open(t, roconn.Limits{}).DB }

func newAgent(q agent.Querier, m agent.Model) *agent.Agent {
	return agent.New(m, q, guard.New(200), agent.Options{}, nil)
}

func ask(t testing.TB, a *agent.Agent, q string) (*agent.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*20*time.Second)
	defer cancel()
	res, err := a.Ask(ctx, agent.Request{Question: q})
	if res == nil {
		t.Fatalf("Ask(%q) returned a nil Result (err %v)", q, err)
	}
	return res, err
}

func call(id, name, args string) openaitest.ToolCall {
	return openaitest.ToolCall{ID: id, Name: name, Arguments: args}
}

func sqlArgs(sql string) string {
	b, _ := json.Marshal(map[string]string{"sql": sql})
	return string(b)
}

func decode(t testing.TB, content string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(content), &m); err != nil {
		t.Fatalf("tool result is not a JSON object: %v\n%s", err, content)
	}
	return m
}

// The agent over the wire: list_tables → describe_table → run_sql → final,
// with go-openai against the strict fake server. What the server received is
// what the agent meant: the tools and their schemas, the same system prompt
// every time, each tool result as a tool message answering its call.
func TestAskOverTheWire(t *testing.T) {
	db := shop(t)
	s := openaitest.NewServer(t)
	s.Push(
		openaitest.Calls(call("c1", "list_tables", "{}")),
		openaitest.Calls(call("c2", "describe_table", `{"table":"orders"}`)),
		openaitest.Calls(call("c3", "run_sql", sqlArgs(shippedSQL))),
		openaitest.Final("There were 2 shipped orders."),
	)
	a := newAgent(db, chain(5*time.Second, s))
	res, err := ask(t, a, "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	want, err := agent.Checked{Guard: guard.New(200), DB: db}.Query(context.Background(), shippedSQL)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != agent.Answered || res.FinalSQL != shippedSQL || !reflect.DeepEqual(res.Rows, want.Rows) {
		t.Errorf("Result: outcome %q, final SQL %q, rows %v; want answered, %q, %v", res.Outcome, res.FinalSQL, res.Rows, shippedSQL, want.Rows)
	}
	if res.Answer != "There were 2 shipped orders." || res.Steps != 4 || res.Provider != nameOf(t, s) {
		t.Errorf("Result: answer %q, steps %d, provider %q", res.Answer, res.Steps, res.Provider)
	}
	if res.Tokens.Prompt <= 0 || res.Tokens.Completion <= 0 {
		t.Errorf("Tokens = %+v, want both counted", res.Tokens)
	}
	if got := len(res.Trace); got != 3 {
		t.Errorf("Trace has %d steps, want 3", got)
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("server got %d requests, want 4", len(reqs))
	}
	if got, want := openaitest.Tools(reqs[0]), []string{"list_tables", "describe_table", "run_sql"}; !slices.Equal(got, want) {
		t.Errorf("tools offered = %v, want %v", got, want)
	}
	for _, tool := range reqs[0].Tools {
		if schema, _ := tool.Function.Parameters.(map[string]any); schema["type"] != "object" {
			t.Errorf("tool %s: parameters %v, want a JSON Schema object", tool.Function.Name, tool.Function.Parameters)
		}
	}
	sys := openaitest.SystemPrompt(reqs[0])
	if sys == "" || sys != a.SystemPrompt() {
		t.Errorf("the system prompt sent differs from SystemPrompt()")
	}
	for i, r := range reqs[1:] {
		if openaitest.SystemPrompt(r) != sys {
			t.Errorf("request %d: system prompt differs from the first", i+2)
		}
	}
	if _, ok := decode(t, openaitest.LastToolResults(reqs[1])["c1"])["tables"].([]any); !ok {
		t.Errorf("list_tables result has no tables: %s", openaitest.LastToolResults(reqs[1])["c1"])
	}
	desc := decode(t, openaitest.LastToolResults(reqs[2])["c2"])
	if desc["name"] != "orders" || desc["columns"] == nil || desc["sample"] == nil {
		t.Errorf("describe_table result = %v", desc)
	}
	rows := decode(t, openaitest.LastToolResults(reqs[3])["c3"])
	if rows["row_count"] != float64(len(want.Rows)) || rows["rows"] == nil {
		t.Errorf("run_sql result = %v", rows)
	}
}

// Every call in a reply gets its tool message, in order, even those past
// the agent's cap on calls run per reply and those the model got wrong: the
// real API refuses (and the fake server answers 400 to) a request where one
// is missing.
func TestToolMessagesOnTheWire(t *testing.T) {
	db := shop(t)
	s := openaitest.NewServer(t)
	var calls []openaitest.ToolCall
	calls = append(calls, call("bad", "run_sql", `{"sql": "SELECT 1`), call("unknown", "drop_table", `{}`))
	for i := range 10 {
		calls = append(calls, call(fmt.Sprintf("c%d", i), "run_sql", sqlArgs(shippedSQL)))
	}
	s.Push(openaitest.Calls(calls...), openaitest.Final("There were 2 shipped orders."))
	res, err := ask(t, newAgent(db, chain(5*time.Second, s)), "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if res.Outcome != agent.Answered || len(res.Trace) != len(calls) {
		t.Errorf("outcome %q, %d traced; want answered, %d", res.Outcome, len(res.Trace), len(calls))
	}
	var ids []string
	for _, m := range s.Requests()[1].Messages {
		if m.Role == goopenai.ChatMessageRoleTool {
			ids = append(ids, m.ToolCallID)
		}
	}
	var want []string
	for _, c := range calls {
		want = append(want, c.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("tool messages for %v, want %v", ids, want)
	}
}

// Fail-over: 429, 503 and a hang on provider 1 move to provider 2.
func TestAskFailover(t *testing.T) {
	tests := []struct {
		name  string
		reply openaitest.Reply
	}{
		{"429", openaitest.Reply{Status: 429, RetryAfter: "5"}}, // long enough to still cool down at step 2
		{"503", openaitest.Reply{Status: 503}},
		{"502 html", openaitest.Reply{Status: 502, Body: "<html>bad gateway</html>"}},
		{"hang", openaitest.Reply{Hang: true}},
		{"drop", openaitest.Reply{Drop: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := shop(t)
			p1, p2 := openaitest.NewServer(t), openaitest.NewServer(t)
			p1.Push(tt.reply)
			p2.Push(
				openaitest.Calls(call("c1", "run_sql", sqlArgs(shippedSQL))),
				openaitest.Final("There were 2 shipped orders."),
			)
			m := chain(raceSlowdown*300*time.Millisecond, p1, p2)
			start := time.Now()
			res, err := ask(t, newAgent(db, m), "How many orders shipped?")
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if res.Provider != nameOf(t, p2) || res.Outcome != agent.Answered {
				t.Errorf("provider %q, outcome %q; want %q, answered", res.Provider, res.Outcome, nameOf(t, p2))
			}
			// The failed provider cools down: the second step goes straight to p2.
			if p1.Count() != 1 || p2.Count() != 2 {
				t.Errorf("requests: p1 %d, p2 %d; want 1, 2", p1.Count(), p2.Count())
			}
			if m.Failovers() != 1 {
				t.Errorf("Failovers() = %d, want 1", m.Failovers())
			}
			if d := time.Since(start); d > raceSlowdown*3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestAskAllProvidersFail(t *testing.T) {
	db := shop(t)
	p1, p2 := openaitest.NewServer(t), openaitest.NewServer(t)
	p1.Push(openaitest.Reply{Status: 503})
	p2.Push(openaitest.Reply{Hang: true})
	start := time.Now()
	res, err := ask(t, newAgent(db, chain(raceSlowdown*300*time.Millisecond, p1, p2)), "How many orders shipped?")
	if !errors.Is(err, agent.ErrNoProvider) {
		t.Errorf("err = %v, want ErrNoProvider", err)
	}
	if res.Outcome != agent.Failed {
		t.Errorf("outcome %q, want error", res.Outcome)
	}
	if d := time.Since(start); d > raceSlowdown*3*time.Second {
		t.Errorf("took %v, want about one call timeout", d)
	}
}

func TestAskNoFailoverOn4xx(t *testing.T) {
	db := shop(t)
	p1, p2 := openaitest.NewServer(t, openaitest.WithAPIKey("sk-other")), openaitest.NewServer(t)
	p2.Push(openaitest.Final("never"))
	const key = "sk-live-0123456789abcdef"
	m := openai.NewProviders([]openai.Provider{
		{BaseURL: p1.URL, APIKey: key, Model: testModel},
		{BaseURL: p2.URL, APIKey: openaitest.DefaultAPIKey, Model: testModel},
	}, raceSlowdown*time.Second, nil)
	res, err := ask(t, newAgent(db, m), "How many orders shipped?")
	if err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("error %q contains the API key", err)
	}
	var pe *agent.ProviderError
	if !errors.As(err, &pe) || pe.Status != 401 || pe.Provider != nameOf(t, p1) {
		t.Fatalf("err = %v, want a *ProviderError for %s with status 401", err, nameOf(t, p1))
	}
	if errors.Is(err, agent.ErrNoProvider) || res.Outcome != agent.Failed || p2.Count() != 0 {
		t.Errorf("outcome %q, p2 requests %d; want error and none", res.Outcome, p2.Count())
	}
	if res.Provider != nameOf(t, p1) {
		t.Errorf("provider %q, want the one that refused, %s", res.Provider, nameOf(t, p1))
	}
}

func TestAskContextEnds(t *testing.T) {
	db := shop(t)
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := newAgent(db, chain(raceSlowdown*10*time.Second, s)).Ask(ctx, agent.Request{Question: "How many?"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, agent.ErrNoProvider) {
		t.Errorf("err = %v, want the context's deadline", err)
	}
	if res == nil || res.Outcome != agent.Failed {
		t.Errorf("Result = %+v, want outcome error", res)
	}
	if d := time.Since(start); d > raceSlowdown*2*time.Second {
		t.Errorf("took %v", d)
	}
}

// DMs are private: the question's text never reaches the logs, at any
// level, neither the agent's nor the providers' (which log a fail-over).
func TestAskLogsNoQuestionText(t *testing.T) {
	db := shop(t)
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Status: 503})
	s2 := openaitest.NewServer(t)
	s2.Push(openaitest.Calls(call("c1", "run_sql", sqlArgs(shippedSQL))), openaitest.Final("There were 2 shipped orders."))
	m := chain(5*time.Second, s, s2)
	m.Log = lg
	const secret = "zebra-giraffe question"
	if _, err := agent.New(m, db, guard.New(200), agent.Options{}, lg).Ask(context.Background(), agent.Request{Question: secret}); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if buf.Len() == 0 || strings.Contains(buf.String(), "zebra") || strings.Contains(buf.String(), "shipped") {
		t.Errorf("logs carry the question, answer or SQL (or nothing):\n%s", buf.String())
	}
}

// No private value goes over the wire: the private read is refused, and the
// rows that come back hold none.
func TestNoPrivateValueOnTheWire(t *testing.T) {
	db := shop(t)
	s := openaitest.NewServer(t)
	s.Push(
		openaitest.Calls(call("c1", "run_sql", sqlArgs("SELECT email, phone FROM customers"))),
		openaitest.Calls(call("c2", "describe_table", `{"table":"customer_regions"}`), call("c3", "run_sql", sqlArgs("SELECT * FROM order_lines"))),
		openaitest.Final("Here are the first order lines."),
	)
	if _, err := ask(t, newAgent(db, chain(5*time.Second, s)), "Show customer emails"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	email := regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z]{2,}`)
	for i, x := range s.Exchanges() {
		if m := email.Find(x.Body); m != nil {
			t.Errorf("request %d carries an e-mail address %q", i+1, m)
		}
	}
}

// A provider with no URL or model is OpenAI's API and DefaultModel: config
// leaves them empty when only a key is set.
func TestProviderDefaults(t *testing.T) {
	p := openai.NewProviders([]openai.Provider{{APIKey: "sk-x"}}, 0, nil)
	if got, want := p.Names(), []string{openai.DefaultModel + "@api.openai.com"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
}
