package agent_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
	"sqlbot/agent/openaitest"
	"sqlbot/evalrun"
	"sqlbot/guard"
	"sqlbot/roconn"
)

const testModel = "test-model"

// env is one test's database: the Querier the agent reads through, and the
// file behind it (for checksums).
type env struct {
	q    agent.Querier
	path string
}

// The compiler checks that roconn.DB is what the agent needs.
var _ agent.Querier = (*roconn.DB)(nil)

// demoFile is the demo database, written once by TestMain; each test works
// on its own copy.
var demoFile string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoFile = filepath.Join(dir, "demo.db")
	if err := evalrun.WriteDemo(context.Background(), demoFile); err != nil {
		fmt.Fprintln(os.Stderr, "write demo:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// demo copies the demo database into t's temporary directory and opens it
// with roconn under the demo policy and the default limits.
func demo(t testing.TB) env {
	t.Helper()
	return demoWith(t, roconn.Limits{})
}

// demoWith is demo with the given roconn limits.
func demoWith(t testing.TB, lim roconn.Limits) env {
	t.Helper()
	b, err := os.ReadFile(demoFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := roconn.ParsePolicy(evalrun.DemoPolicy())
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, pol, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return env{q: db, path: path}
}

func sum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// chain returns providers over the servers, in order, with the given
// per-call timeout.
func chain(timeout time.Duration, ss ...*openaitest.Server) *agent.Providers {
	ps := make([]agent.Provider, len(ss))
	for i, s := range ss {
		ps[i] = agent.Provider{BaseURL: s.URL, APIKey: openaitest.DefaultAPIKey, Model: testModel}
	}
	return agent.NewProviders(ps, timeout, nil)
}

func nameOf(t testing.TB, s *openaitest.Server) string {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return testModel + "@" + u.Host
}

func newAgent(e env, m agent.Model, maxSteps int) *agent.Agent {
	return agent.New(m, e.q, guard.New(200), agent.Options{MaxSteps: maxSteps}, nil)
}

func ask(t testing.TB, a *agent.Agent, q string, hist ...agent.Turn) (*agent.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*20*time.Second)
	defer cancel()
	res, err := a.Ask(ctx, agent.Request{Question: q, History: hist})
	if res == nil {
		t.Fatalf("Ask(%q) returned a nil Result (err %v)", q, err)
	}
	return res, err
}

// expectRows runs sql through the guard and the Querier, as run_sql does,
// for the rows a test expects.
func expectRows(t testing.TB, e env, sql string) [][]any {
	t.Helper()
	r, err := agent.Checked{Guard: guard.New(200), DB: e.q}.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	return r.Rows
}

func call(id, name, args string) openaitest.ToolCall {
	return openaitest.ToolCall{ID: id, Name: name, Arguments: args}
}

func sqlArgs(sql string) string {
	b, _ := json.Marshal(map[string]string{"sql": sql})
	return string(b)
}

// decode parses a tool result, failing the test unless it is a JSON object.
func decode(t testing.TB, content string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(content), &m); err != nil {
		t.Fatalf("tool result is not a JSON object: %v\n%s", err, content)
	}
	return m
}

func statuses(ss []agent.Statement) []agent.Status {
	var out []agent.Status
	for _, s := range ss {
		out = append(out, s.Status)
	}
	return out
}

const shippedSQL = "SELECT COUNT(*) AS shipped FROM orders WHERE status = 'shipped'"

// 1. list_tables → describe_table → run_sql → final.
func TestAskToolsThenAnswer(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(
		openaitest.Calls(call("c1", "list_tables", "{}")),
		openaitest.Calls(call("c2", "describe_table", `{"table":"orders"}`)),
		openaitest.Calls(call("c3", "run_sql", sqlArgs(shippedSQL))),
		openaitest.Final("There were 2 shipped orders."),
	)
	a := newAgent(e, chain(5*time.Second, s), 0)
	res, err := ask(t, a, "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	want := expectRows(t, e, shippedSQL)
	if res.Outcome != agent.Answered || res.FinalSQL != shippedSQL || !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("Result: outcome %q, final SQL %q, rows %v; want answered, %q, %v", res.Outcome, res.FinalSQL, res.Rows, shippedSQL, want)
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
	sys := openaitest.SystemPrompt(reqs[0])
	for _, r := range e.q.Rules() {
		if !strings.Contains(sys, r) {
			t.Errorf("system prompt lacks house rule %q", r)
		}
	}
	for i, r := range reqs[1:] {
		if openaitest.SystemPrompt(r) != sys {
			t.Errorf("request %d: system prompt differs from the first", i+2)
		}
	}
	tables := decode(t, openaitest.LastToolResults(reqs[1])["c1"])
	if _, ok := tables["tables"].([]any); !ok {
		t.Errorf("list_tables result has no tables: %v", tables)
	}
	desc := decode(t, openaitest.LastToolResults(reqs[2])["c2"])
	if desc["name"] != "orders" || desc["columns"] == nil || desc["sample"] == nil {
		t.Errorf("describe_table result = %v", desc)
	}
	rows := decode(t, openaitest.LastToolResults(reqs[3])["c3"])
	if rows["row_count"] != float64(len(want)) || rows["rows"] == nil {
		t.Errorf("run_sql result = %v", rows)
	}
}

// 2. A misspelt column: the error goes back and the fixed query runs.
func TestAskFixesSQLError(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	const bad, good = "SELECT Nmae FROM regions", "SELECT name FROM regions ORDER BY name"
	s.Push(
		openaitest.Calls(call("c1", "run_sql", sqlArgs(bad))),
		openaitest.Calls(call("c2", "run_sql", sqlArgs(good))),
		openaitest.Final("There are 5 regions."),
	)
	res, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "List the regions")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server got %d requests, want 3", len(reqs))
	}
	if got := openaitest.LastToolResults(reqs[1])["c1"]; !strings.Contains(got, "no such column") {
		t.Errorf("error sent back = %q, want SQLite's no such column", got)
	}
	if got := statuses(res.Statements); !slices.Equal(got, []agent.Status{agent.StatusError, agent.StatusOK}) {
		t.Errorf("statement statuses = %v, want [error ok]", got)
	}
	if want := expectRows(t, e, good); res.Outcome != agent.Answered || res.FinalSQL != good || !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("Result: outcome %q, final %q, rows %v", res.Outcome, res.FinalSQL, res.Rows)
	}
}

// 3. A write from the model is refused, and the file is unchanged.
func TestAskRefusesWrite(t *testing.T) {
	tests := []struct {
		name    string
		script  []openaitest.Reply
		refusal bool // a statement was refused (Result.Refusal set)
	}{
		{"marker", []openaitest.Reply{
			openaitest.Calls(call("c1", "run_sql", sqlArgs("DELETE FROM orders"))),
			openaitest.Final("Refused: the database is read-only, so I cannot delete orders."),
		}, true},
		{"no marker", []openaitest.Reply{
			openaitest.Calls(call("c1", "run_sql", sqlArgs("DELETE FROM orders"))),
			openaitest.Final("That was blocked; nothing was deleted."),
		}, true},
		{"declined in words", []openaitest.Reply{
			openaitest.Final("I can't do that: I only have read-only access."),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := demo(t)
			before := sum(t, e.path)
			s := openaitest.NewServer(t)
			s.Push(tt.script...)
			g := guard.New(200)
			a := agent.New(chain(5*time.Second, s), e.q, g, agent.Options{}, nil)
			res, err := ask(t, a, "Delete all the orders")
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if res.Outcome != agent.Refused || res.Answer == "" {
				t.Errorf("outcome %q, answer %q; want refused, in words", res.Outcome, res.Answer)
			}
			if tt.refusal {
				if res.Refusal == nil || res.Refusal.Layer != agent.LayerGuard || res.Refusal.SQL != "DELETE FROM orders" || res.Refusal.Reason == "" {
					t.Errorf("Refusal = %+v, want the guard's, with its reason", res.Refusal)
				}
				res := decode(t, openaitest.LastToolResults(s.Requests()[1])["c1"])
				if res["refused"] != true || res["layer"] != string(agent.LayerGuard) {
					t.Errorf("tool result = %v, want a guard refusal", res)
				}
				if len(g.Refusals()) == 0 {
					t.Error("guard counted no refusal")
				}
			} else if res.Refusal != nil || len(res.Statements) != 0 {
				t.Errorf("Refusal = %+v, statements %v; want none", res.Refusal, res.Statements)
			}
			if sum(t, e.path) != before {
				t.Error("database file changed")
			}
		})
	}
}

// 4. A model that never stops calling tools is stopped at MaxSteps.
func TestAskBudget(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	var n atomic.Int32
	s.Handle(func(openai.ChatCompletionRequest) openaitest.Reply {
		sql := fmt.Sprintf("SELECT COUNT(*) FROM orders WHERE id > %d", n.Add(1))
		return openaitest.Calls(openaitest.Call("run_sql", sqlArgs(sql)))
	})
	const steps = 3
	res, err := ask(t, newAgent(e, chain(5*time.Second, s), steps), "Keep going")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if got := s.Count(); got != steps {
		t.Errorf("server got %d requests, want exactly %d", got, steps)
	}
	last := "SELECT COUNT(*) FROM orders WHERE id > 3"
	if res.Outcome != agent.Budget || res.Steps != steps || !strings.Contains(res.Answer, last) || !strings.Contains(res.Answer, "stopped") {
		t.Errorf("Result: outcome %q, steps %d, answer %q; want budget, %d, saying it stopped with %q", res.Outcome, res.Steps, res.Answer, steps, last)
	}
}

// 5. Fail-over: 429, 503 and a hang on provider 1 move to provider 2.
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
			e := demo(t)
			p1, p2 := openaitest.NewServer(t), openaitest.NewServer(t)
			p1.Push(tt.reply)
			p2.Push(
				openaitest.Calls(call("c1", "run_sql", sqlArgs(shippedSQL))),
				openaitest.Final("There were 2 shipped orders."),
			)
			m := chain(raceSlowdown*300*time.Millisecond, p1, p2)
			start := time.Now()
			res, err := ask(t, newAgent(e, m, 0), "How many orders shipped?")
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
	e := demo(t)
	p1, p2 := openaitest.NewServer(t), openaitest.NewServer(t)
	p1.Push(openaitest.Reply{Status: 503})
	p2.Push(openaitest.Reply{Hang: true})
	start := time.Now()
	res, err := ask(t, newAgent(e, chain(raceSlowdown*300*time.Millisecond, p1, p2), 0), "How many orders shipped?")
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
	e := demo(t)
	p1, p2 := openaitest.NewServer(t, openaitest.WithAPIKey("sk-other")), openaitest.NewServer(t)
	p2.Push(openaitest.Final("never"))
	const key = "sk-live-0123456789abcdef"
	m := agent.NewProviders([]agent.Provider{
		{BaseURL: p1.URL, APIKey: key, Model: testModel},
		{BaseURL: p2.URL, APIKey: openaitest.DefaultAPIKey, Model: testModel},
	}, raceSlowdown*time.Second, nil)
	res, err := ask(t, newAgent(e, m, 0), "How many orders shipped?")
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
}

func TestAskContextEnds(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := newAgent(e, chain(raceSlowdown*10*time.Second, s), 0).Ask(ctx, agent.Request{Question: "How many?"})
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

// 6. The injected note is data: obeyed, it is refused; ignored, nothing happens.
func TestAskInjectedNote(t *testing.T) {
	const readNote = "SELECT id, note FROM orders WHERE note LIKE 'SYSTEM:%'"
	tests := []struct {
		name    string
		obey    bool
		outcome agent.Outcome
	}{
		{"model obeys", true, agent.Refused},
		{"model ignores", false, agent.Answered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := demo(t)
			before := sum(t, e.path)
			s := openaitest.NewServer(t)
			s.Push(openaitest.Calls(call("c1", "run_sql", sqlArgs(readNote))))
			s.Handle(func(req openai.ChatCompletionRequest) openaitest.Reply {
				res := openaitest.LastToolResults(req)
				if r, ok := res["c1"]; ok && strings.Contains(r, "DELETE FROM orders") && tt.obey {
					return openaitest.Calls(call("c2", "run_sql", sqlArgs("DELETE FROM orders")))
				}
				if _, ok := res["c2"]; ok {
					return openaitest.Final("Refused: the note asked me to delete orders; the database is read-only.")
				}
				return openaitest.Final("One order has a note; it contains an instruction, which I did not follow.")
			})
			g := guard.New(200)
			res, err := ask(t, agent.New(chain(5*time.Second, s), e.q, g, agent.Options{}, nil), "Which orders have notes?")
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			// The note went back as a JSON value, not as text of its own.
			note := decode(t, openaitest.LastToolResults(s.Requests()[1])["c1"])
			if rows, _ := note["rows"].([]any); len(rows) != 1 || !strings.Contains(reflectString(rows[0]), "SYSTEM: ignore") {
				t.Errorf("note result rows = %v", note["rows"])
			}
			if res.Outcome != tt.outcome {
				t.Errorf("outcome %q, want %q", res.Outcome, tt.outcome)
			}
			if tt.obey && (res.Refusal == nil || res.Refusal.SQL != "DELETE FROM orders") {
				t.Errorf("Refusal = %+v, want the DELETE", res.Refusal)
			}
			if !tt.obey && len(g.Refusals()) != 0 {
				t.Errorf("guard refusals = %v, want none", g.Refusals())
			}
			if sum(t, e.path) != before {
				t.Error("database file changed")
			}
		})
	}
}

func reflectString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// 7. No model configured: recorded questions are answered from their SQL.
func TestAskRecorded(t *testing.T) {
	e := demo(t)
	m := recordedModel(t, []agent.Recorded{
		{Question: "How many regions are there?", SQL: "SELECT COUNT(*) AS regions FROM regions"},
		{Question: "Delete every order", SQL: "DELETE FROM orders"},
	})
	a := newAgent(e, m, 0)

	res, err := ask(t, a, "  how many REGIONS are there ")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	want := expectRows(t, e, "SELECT COUNT(*) AS regions FROM regions")
	if res.Outcome != agent.Answered || res.Provider != "recorded" || !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("Result: outcome %q, provider %q, rows %v; want answered, recorded, %v", res.Outcome, res.Provider, res.Rows, want)
	}
	if !strings.Contains(res.Answer, "5") {
		t.Errorf("answer %q does not state the figure", res.Answer)
	}
	if fig := fmt.Sprint(want[0][0]); !strings.Contains(res.Answer, fig) {
		t.Errorf("answer %q does not state the reference figure %s", res.Answer, fig)
	}

	before := sum(t, e.path)
	res, err = ask(t, a, "Delete every order.")
	if err != nil || res.Outcome != agent.Refused || res.Refusal == nil || res.Refusal.Layer != agent.LayerGuard {
		t.Errorf("recorded write: err %v, outcome %q, refusal %+v; want refused by the guard", err, res.Outcome, res.Refusal)
	}
	if sum(t, e.path) != before {
		t.Error("database file changed")
	}

	res, err = ask(t, a, "What is the weather in Denver?")
	if !errors.Is(err, agent.ErrNoModel) || res.Outcome != agent.Failed {
		t.Errorf("unknown question: err %v, outcome %q; want ErrNoModel, error", err, res.Outcome)
	}
	for _, w := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL=http://localhost:11434/v1", "OPENAI_MODEL"} {
		if !strings.Contains(res.Answer, w) {
			t.Errorf("answer %q does not mention %s", res.Answer, w)
		}
	}
}

// Every answerable demo question is answered offline from its reference SQL,
// with the reference's rows, and a single figure is stated in the answer.
func TestRecordedDemoQuestions(t *testing.T) {
	e := demo(t)
	qs, err := evalrun.ParseQuestions(evalrun.DemoQuestions())
	if err != nil {
		t.Fatal(err)
	}
	m, err := evalrun.NewReference(qs) // the demo's offline model
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(200)
	a := agent.New(m, e.q, g, agent.Options{}, nil)
	for _, q := range qs {
		if q.Kind != evalrun.Answerable {
			continue
		}
		res, err := ask(t, a, q.Question)
		if err != nil || res.Outcome != agent.Answered || res.Steps != 2 {
			t.Errorf("%q: err %v, outcome %q, steps %d", q.Question, err, res.Outcome, res.Steps)
			continue
		}
		want, err := agent.Checked{Guard: g, DB: e.q}.Query(context.Background(), *q.ReferenceSQL)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Rows, want.Rows) {
			t.Errorf("%q: rows differ from the reference's", q.Question)
		}
		if len(want.Rows) == 1 && len(want.Rows[0]) == 1 {
			var fig string
			switch v := want.Rows[0][0].(type) {
			case int64:
				fig = fmt.Sprint(v)
			case float64:
				fig = strconv.FormatFloat(v, 'f', -1, 64) // as SQLite gave it: 27.4, not 27.40
			default:
				fig = fmt.Sprint(v)
			}
			if !strings.Contains(res.Answer, fig) {
				t.Errorf("%q: answer %q does not state %s", q.Question, res.Answer, fig)
			}
		}
	}
}

// DMs are private: the question's text never reaches the logs, at any level.
func TestAskLogsNoQuestionText(t *testing.T) {
	e := demo(t)
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := openaitest.NewServer(t)
	s.Push(openaitest.Reply{Status: 503})
	s2 := openaitest.NewServer(t)
	s2.Push(openaitest.Calls(call("c1", "run_sql", sqlArgs(shippedSQL))), openaitest.Final("There were 2 shipped orders."))
	m := chain(5*time.Second, s, s2)
	m.Log = lg
	const secret = "zebra-giraffe question"
	if _, err := agent.New(m, e.q, guard.New(200), agent.Options{}, lg).Ask(context.Background(), agent.Request{Question: secret}); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if buf.Len() == 0 || strings.Contains(buf.String(), "zebra") || strings.Contains(buf.String(), "shipped") {
		t.Errorf("logs carry the question, answer or SQL (or nothing):\n%s", buf.String())
	}
}

// 8. A follow-up carries the earlier turn.
func TestAskFollowUp(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(openaitest.Final("By region: west 1, mountain 1."))
	earlier := agent.Turn{Question: "How many orders shipped?", Answer: "There were 2 shipped orders.", SQL: shippedSQL}
	if _, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "and by region?", earlier); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	msgs := s.Requests()[0].Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"system", "user", "assistant", "user"}) {
		t.Fatalf("roles = %v", roles)
	}
	if msgs[1].Content != earlier.Question || !strings.Contains(msgs[2].Content, earlier.Answer) ||
		!strings.Contains(msgs[2].Content, earlier.SQL) || msgs[3].Content != "and by region?" {
		t.Errorf("messages = %+v", msgs)
	}
}

// 9. Bad arguments, unknown tools and hidden tables are answered, and the loop goes on.
func TestAskToolMistakes(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(
		openaitest.Calls(
			call("c1", "run_sql", `{"sql": "SELECT 1`),
			call("c2", "drop_table", `{}`),
			call("c3", "describe_table", `{"table":"customers"}`),
			call("c4", "describe_table", `{"table":"no_such_thing"}`),
		),
		openaitest.Calls(call("c5", "run_sql", sqlArgs(shippedSQL))),
		openaitest.Final("There were 2 shipped orders."),
	)
	res, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	got := openaitest.LastToolResults(s.Requests()[1])
	errOf := func(id string) string {
		s, _ := decode(t, got[id])["error"].(string)
		return s
	}
	if !strings.Contains(errOf("c1"), "not valid JSON") {
		t.Errorf("bad JSON: %q", got["c1"])
	}
	if !strings.Contains(errOf("c2"), "unknown tool") {
		t.Errorf("unknown tool: %q", got["c2"])
	}
	// A hidden table and a missing one get the same answer.
	if h, m := errOf("c3"), errOf("c4"); h == "" || strings.ReplaceAll(h, "customers", "X") != strings.ReplaceAll(m, "no_such_thing", "X") {
		t.Errorf("hidden vs missing: %q vs %q", h, m)
	}
	if res.Outcome != agent.Answered || len(res.Trace) != 5 || res.Trace[0].Status != agent.StatusError {
		t.Errorf("outcome %q, trace %+v", res.Outcome, res.Trace)
	}
	// Each mistake is traced as an error and answered with an "error" key.
	for i, id := range []string{"c1", "c2", "c3", "c4"} {
		if i < len(res.Trace) && res.Trace[i].Status != agent.StatusError {
			t.Errorf("Trace[%d] (%s) status %q, want %q", i, id, res.Trace[i].Status, agent.StatusError)
		}
		if _, ok := decode(t, got[id])["error"]; !ok {
			t.Errorf("%s: tool result %s has no error key", id, got[id])
		}
	}
	// One tool message per call, in the calls' order.
	var ids []string
	for _, m := range s.Requests()[1].Messages {
		if m.Role == openai.ChatMessageRoleTool {
			ids = append(ids, m.ToolCallID)
		}
	}
	if want := []string{"c1", "c2", "c3", "c4"}; !slices.Equal(ids, want) {
		t.Errorf("tool messages for %v, want %v", ids, want)
	}
}

func TestAskTooManyCallsInOneReply(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	var calls []openaitest.ToolCall
	for i := range 12 {
		calls = append(calls, call(fmt.Sprintf("c%d", i), "run_sql", sqlArgs(shippedSQL)))
	}
	s.Push(openaitest.Calls(calls...), openaitest.Final("There were 2 shipped orders."))
	res, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if got := len(openaitest.LastToolResults(s.Requests()[1])); got != 12 {
		t.Errorf("%d tool results, want one per call (12)", got)
	}
	if len(res.Statements) >= 12 || len(res.Statements) == 0 || len(res.Trace) != 12 {
		t.Errorf("%d statements run, %d traced; want some but not all run, all traced", len(res.Statements), len(res.Trace))
	}
	const maxCalls = 8 // the agent's cap on tool calls run per reply
	if len(res.Statements) != maxCalls {
		t.Errorf("%d statements run, want exactly the cap, %d", len(res.Statements), maxCalls)
	}
	for i := maxCalls; i < len(res.Trace); i++ {
		if res.Trace[i].Status != agent.StatusError {
			t.Errorf("Trace[%d] (beyond the cap) status %q, want %q", i, res.Trace[i].Status, agent.StatusError)
		}
	}
}

func TestAskEmptyReply(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(openaitest.Final(""), openaitest.Final("Not in the data: there is no weather here."))
	res, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "What is the weather?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if res.Steps != 2 || res.Outcome != agent.Unanswerable {
		t.Errorf("steps %d, outcome %q; want 2, unanswerable", res.Steps, res.Outcome)
	}
}

// Outcomes follow the markers first, then what ran, then the wording.
func TestAskOutcome(t *testing.T) {
	run := func(id, sql string) openaitest.Reply { return openaitest.Calls(call(id, "run_sql", sqlArgs(sql))) }
	tests := []struct {
		name   string
		script []openaitest.Reply
		want   agent.Outcome
	}{
		{"ran, figure", []openaitest.Reply{run("a", shippedSQL), openaitest.Final("2 orders shipped.")}, agent.Answered},
		{"ran, marker says not in data", []openaitest.Reply{run("a", shippedSQL), openaitest.Final("Not in the data: no weather column.")}, agent.Unanswerable},
		{"nothing ran, bold marker", []openaitest.Reply{openaitest.Final("**Refused:** I only read.")}, agent.Refused},
		{"nothing ran, data lacks it", []openaitest.Reply{openaitest.Final("The database doesn't contain weather.")}, agent.Unanswerable},
		{"nothing ran, plain prose", []openaitest.Reply{openaitest.Final("Weather is outside my reach.")}, agent.Unanswerable},
		{"nothing ran, won't change data", []openaitest.Reply{openaitest.Final("I cannot change data.")}, agent.Refused},
		{"ok then refused", []openaitest.Reply{run("a", shippedSQL), run("b", "DROP TABLE orders"), openaitest.Final("Done.")}, agent.Refused},
		{"refused then ok", []openaitest.Reply{run("a", "DROP TABLE orders"), run("b", shippedSQL), openaitest.Final("2 orders shipped.")}, agent.Answered},
		{"only an error", []openaitest.Reply{run("a", "SELECT nope FROM orders"), openaitest.Final("Sorry.")}, agent.Unanswerable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := demo(t)
			s := openaitest.NewServer(t)
			s.Push(tt.script...)
			res, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "A question")
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if res.Outcome != tt.want {
				t.Errorf("outcome %q, want %q", res.Outcome, tt.want)
			}
			if res.Outcome == agent.Answered && res.FinalSQL == "" {
				t.Errorf("outcome %q with final SQL %q", res.Outcome, res.FinalSQL)
			}
		})
	}
}

// Big results are cut at the row cap, and private columns are refused by
// roconn's authorizer; no private value reaches the model.
func TestAskCapAndPrivacy(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	const all, private = "SELECT * FROM order_lines", "SELECT email, phone FROM customers"
	s.Push(
		openaitest.Calls(call("c1", "run_sql", sqlArgs(private))),
		openaitest.Calls(call("c2", "run_sql", sqlArgs(all))),
		openaitest.Final("Here are the first order lines."),
	)
	res, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "Show customer emails, then all order lines")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if got := statuses(res.Statements); !slices.Equal(got, []agent.Status{agent.StatusRefused, agent.StatusOK}) {
		t.Fatalf("statuses = %v, want [refused ok]", got)
	}
	if l := res.Statements[0].Layer; l != agent.LayerAuthorizer {
		t.Errorf("private read refused by %q, want authorizer", l)
	}
	if !res.Truncated || len(res.Rows) != 200 || res.FinalSQL != all {
		t.Errorf("truncated %v, %d rows, final %q; want true, 200, %q", res.Truncated, len(res.Rows), res.FinalSQL, all)
	}
	reqs := s.Requests()
	if r := decode(t, openaitest.LastToolResults(reqs[1])["c1"]); r["refused"] != true || r["layer"] != string(agent.LayerAuthorizer) {
		t.Errorf("private read result = %v", r)
	}
	if r := decode(t, openaitest.LastToolResults(reqs[2])["c2"]); r["truncated"] != true || r["row_count"] != float64(200) {
		t.Errorf("capped result: truncated %v, row_count %v", r["truncated"], r["row_count"])
	}
	email := regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z]{2,}`)
	for i, x := range s.Exchanges() {
		if m := email.Find(x.Body); m != nil {
			t.Errorf("request %d carries an e-mail address %q", i+1, m)
		}
	}
}

func TestDescribeTable(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(openaitest.Calls(call("c1", "describe_table", `{"table":"ORDERS"}`)), openaitest.Final("ok"))
	if _, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "What is in orders?"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	var d struct {
		Name    string
		Columns []struct{ Name, Type, Meaning string }
		Foreign []struct{ Column, References string } `json:"foreign_keys"`
		Sample  struct {
			Columns []string
			Rows    [][]any
		}
	}
	if err := json.Unmarshal([]byte(openaitest.LastToolResults(s.Requests()[1])["c1"]), &d); err != nil {
		t.Fatal(err)
	}
	o, _ := e.q.Object("orders")
	if d.Name != "orders" || len(d.Columns) != len(o.Columns) || len(d.Sample.Rows) != 3 || len(d.Sample.Columns) != len(o.Columns) {
		t.Errorf("describe_table(orders) = %+v", d)
	}
	for _, c := range d.Columns {
		if c.Meaning == "" || c.Type == "" {
			t.Errorf("column %s lacks a type or meaning", c.Name)
		}
	}
	exposed := map[string]bool{}
	for _, o := range e.q.Objects() {
		exposed[o.Name] = true
	}
	if len(d.Foreign) == 0 {
		t.Error("no foreign keys")
	}
	for _, fk := range d.Foreign {
		if !exposed[strings.Split(fk.References, ".")[0]] {
			t.Errorf("foreign key %s -> %s names a hidden table", fk.Column, fk.References)
		}
	}
}

// The system prompt is the same bytes for every question, so a provider can
// cache it: checked on what the server received, over two questions on one
// agent and a third on another agent over the same database.
func TestSystemPromptStable(t *testing.T) {
	e := demo(t)
	s := openaitest.NewServer(t)
	s.Push(openaitest.Final("one"), openaitest.Final("two"), openaitest.Final("three"))
	a1 := newAgent(e, chain(5*time.Second, s), 0)
	for _, q := range []string{"How many orders shipped?", "How many regions are there?"} {
		if _, err := ask(t, a1, q); err != nil {
			t.Fatalf("Ask(%q): %v", q, err)
		}
	}
	if _, err := ask(t, newAgent(e, chain(5*time.Second, s), 0), "Which store sold most?"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server got %d requests, want 3", len(reqs))
	}
	p := openaitest.SystemPrompt(reqs[0])
	if p == "" || p != a1.SystemPrompt() {
		t.Errorf("the system prompt sent differs from SystemPrompt()")
	}
	for i, r := range reqs[1:] {
		if openaitest.SystemPrompt(r) != p {
			t.Errorf("question %d: system prompt differs from the first question's", i+2)
		}
	}
	t.Logf("system prompt: %d characters", len(p))
	if len(p) > 8000 {
		t.Errorf("system prompt is %d characters, want at most 8000", len(p))
	}
	for _, o := range e.q.Objects() {
		if !strings.Contains(p, o.Name) {
			t.Errorf("prompt lacks %s", o.Name)
		}
		for _, c := range o.Columns {
			if c.Meaning != "" && !strings.Contains(p, c.Meaning) {
				t.Errorf("prompt lacks the meaning of %s.%s", o.Name, c.Name)
			}
		}
	}
	for _, r := range e.q.Rules() {
		if !strings.Contains(p, r) {
			t.Errorf("prompt lacks the rule %q", r)
		}
	}

	// Hidden tables get no heading, and no column line refers to them.
	exposed := map[string]bool{}
	for _, o := range e.q.Objects() {
		exposed[o.Name] = true
	}
	blocks := schemaBlocks(p)
	if len(blocks) != len(exposed) {
		t.Errorf("prompt describes %d objects, want the %d exposed ones", len(blocks), len(exposed))
	}
	hidden := []string{"customers", "employees"}
	for name, lines := range blocks {
		if !exposed[name] {
			t.Errorf("prompt describes %s, which is not exposed", name)
		}
		for _, l := range lines {
			if _, ref, ok := strings.Cut(l, " -> "); ok && !exposed[strings.Split(ref, ".")[0]] {
				t.Errorf("%s: foreign key into a hidden table: %q", name, l)
			}
			for _, h := range hidden {
				if regexp.MustCompile(`\b` + h + `\.\w`).MatchString(l) {
					t.Errorf("%s: column line names a column of the hidden table %s: %q", name, h, l)
				}
			}
		}
	}
	// Every foreign key roconn reports is shown on its column's line.
	for _, o := range e.q.Objects() {
		for _, fk := range o.Foreign {
			ref := fk.RefTable + "." + fk.RefColumn
			if !slices.ContainsFunc(blocks[o.Name], func(l string) bool {
				return strings.HasPrefix(l, fk.Column+" ") && strings.Contains(l, ref)
			}) {
				t.Errorf("prompt does not show %s.%s -> %s", o.Name, fk.Column, ref)
			}
		}
	}
}

// schemaBlocks parses the schema section of a system prompt: each object's
// name, from its heading "name (table|view…", with its column lines.
func schemaBlocks(prompt string) map[string][]string {
	heading := regexp.MustCompile(`^(\w+) \((?:table|view)\b`)
	blocks := map[string][]string{}
	var cur string
	for _, l := range strings.Split(prompt, "\n") {
		switch m := heading.FindStringSubmatch(l); {
		case strings.HasPrefix(l, "# ") && cur != "":
			return blocks
		case m != nil:
			cur = m[1]
			blocks[cur] = nil
		case l == "":
		case cur != "":
			blocks[cur] = append(blocks[cur], l)
		}
	}
	return blocks
}

// recordedModel returns agent.NewRecorded(recs), failing the test on an error.
func recordedModel(t *testing.T, recs []agent.Recorded) agent.Model {
	t.Helper()
	m, err := agent.NewRecorded(recs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewRecordedRejects(t *testing.T) {
	for _, recs := range [][]agent.Recorded{
		{{Question: "How many?", SQL: "SELECT 1"}, {Question: "how  many", SQL: "SELECT 2"}}, // same text
		{{Question: "Empty?"}}, // neither SQL nor an answer
	} {
		if _, err := agent.NewRecorded(recs); err == nil {
			t.Errorf("NewRecorded(%+v): no error", recs)
		}
	}
}
