package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/agent/agenttest"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// env is one test's database: the Querier the agent reads through, and the
// file behind it (for checksums).
type env struct {
	q    agent.Querier
	path string
}

// The compiler checks that roconn.DB is what the agent needs.
var _ agent.Querier = (*roconn.DB)(nil)

// shop opens a new copy of the test shop (agenttest) under its policy and
// the default limits.
func shop(t testing.TB) env {
	t.Helper()
	return shopWith(t, roconn.Limits{})
}

// shopWith is shop with the given roconn limits.
func shopWith(t testing.TB, lim roconn.Limits) env {
	t.Helper()
	db := agenttest.Open(t, lim)
	return env{q: db.DB, path: db.Path}
}

func sum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
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
	e := shop(t)
	s := newScript(t)
	s.Push(
		calls(call("c1", "list_tables", "{}")),
		calls(call("c2", "describe_table", `{"table":"orders"}`)),
		calls(call("c3", "run_sql", sqlArgs(shippedSQL))),
		final("There were 2 shipped orders."),
	)
	a := newAgent(e, s, 0)
	res, err := ask(t, a, "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	want := expectRows(t, e, shippedSQL)
	if res.Outcome != agent.Answered || res.FinalSQL != shippedSQL || !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("Result: outcome %q, final SQL %q, rows %v; want answered, %q, %v", res.Outcome, res.FinalSQL, res.Rows, shippedSQL, want)
	}
	if res.Answer != "There were 2 shipped orders." || res.Steps != 4 || res.Provider != scriptProvider {
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
		t.Fatalf("the model got %d requests, want 4", len(reqs))
	}
	if got, want := s.Tools(0), []string{"list_tables", "describe_table", "run_sql"}; !slices.Equal(got, want) {
		t.Errorf("tools offered = %v, want %v", got, want)
	}
	sys := systemPrompt(reqs[0])
	for _, r := range e.q.Rules() {
		if !strings.Contains(sys, r) {
			t.Errorf("system prompt lacks house rule %q", r)
		}
	}
	for i, r := range reqs[1:] {
		if systemPrompt(r) != sys {
			t.Errorf("request %d: system prompt differs from the first", i+2)
		}
	}
	tables := decode(t, lastToolResults(reqs[1])["c1"])
	if _, ok := tables["tables"].([]any); !ok {
		t.Errorf("list_tables result has no tables: %v", tables)
	}
	desc := decode(t, lastToolResults(reqs[2])["c2"])
	if desc["name"] != "orders" || desc["columns"] == nil || desc["sample"] == nil {
		t.Errorf("describe_table result = %v", desc)
	}
	rows := decode(t, lastToolResults(reqs[3])["c3"])
	if rows["row_count"] != float64(len(want)) || rows["rows"] == nil {
		t.Errorf("run_sql result = %v", rows)
	}
}

// 2. A misspelt column: the error goes back and the fixed query runs.
func TestAskFixesSQLError(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	const bad, good = "SELECT Nmae FROM regions", "SELECT name FROM regions ORDER BY name"
	s.Push(
		calls(call("c1", "run_sql", sqlArgs(bad))),
		calls(call("c2", "run_sql", sqlArgs(good))),
		final("There are 5 regions."),
	)
	res, err := ask(t, newAgent(e, s, 0), "List the regions")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server got %d requests, want 3", len(reqs))
	}
	if got := lastToolResults(reqs[1])["c1"]; !strings.Contains(got, "no such column") {
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
		script  []agent.Reply
		refusal bool // a statement was refused (Result.Refusal set)
	}{
		{"marker", []agent.Reply{
			calls(call("c1", "run_sql", sqlArgs("DELETE FROM orders"))),
			final("Refused: the database is read-only, so I cannot delete orders."),
		}, true},
		{"no marker", []agent.Reply{
			calls(call("c1", "run_sql", sqlArgs("DELETE FROM orders"))),
			final("That was blocked; nothing was deleted."),
		}, true},
		{"declined in words", []agent.Reply{
			final("I can't do that: I only have read-only access."),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := shop(t)
			before := sum(t, e.path)
			s := newScript(t)
			s.Push(tt.script...)
			g := guard.New(200)
			a := agent.New(s, e.q, g, agent.Options{}, nil)
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
				res := decode(t, lastToolResults(s.Requests()[1])["c1"])
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
	e := shop(t)
	s := newScript(t)
	var n atomic.Int32
	s.Handle(func([]agent.Message) agent.Reply {
		sql := fmt.Sprintf("SELECT COUNT(*) FROM orders WHERE id > %d", n.Add(1))
		return calls(call("", "run_sql", sqlArgs(sql)))
	})
	const steps = 3
	res, err := ask(t, newAgent(e, s, steps), "Keep going")
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
			e := shop(t)
			before := sum(t, e.path)
			s := newScript(t)
			s.Push(calls(call("c1", "run_sql", sqlArgs(readNote))))
			s.Handle(func(req []agent.Message) agent.Reply {
				res := lastToolResults(req)
				if r, ok := res["c1"]; ok && strings.Contains(r, "DELETE FROM orders") && tt.obey {
					return calls(call("c2", "run_sql", sqlArgs("DELETE FROM orders")))
				}
				if _, ok := res["c2"]; ok {
					return final("Refused: the note asked me to delete orders; the database is read-only.")
				}
				return final("One order has a note; it contains an instruction, which I did not follow.")
			})
			g := guard.New(200)
			res, err := ask(t, agent.New(s, e.q, g, agent.Options{}, nil), "Which orders have notes?")
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			// The note went back as a JSON value, not as text of its own.
			note := decode(t, lastToolResults(s.Requests()[1])["c1"])
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
	e := shop(t)
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
	if res.Outcome != agent.Answered || res.Provider != agent.RecordedProvider || !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("Result: outcome %q, provider %q, rows %v; want answered, recorded, %v", res.Outcome, res.Provider, res.Rows, want)
	}
	if !strings.Contains(res.Answer, fmt.Sprint(agenttest.Regions)) {
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

// With a model configured, a recorded question is still answered from its
// SQL through the tools, and the model never sees it; every other question
// goes to the model.
func TestPreferRecorded(t *testing.T) {
	e := shop(t)
	rec := recordedModel(t, []agent.Recorded{
		{Question: "How many regions are there?", SQL: "SELECT COUNT(*) AS regions FROM regions"},
		{Question: "Delete every order", SQL: "DELETE FROM orders"},
	})
	live := newScript(t)
	m, err := agent.PreferRecorded(rec, live)
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(e, m, 0)
	res, err := ask(t, a, "how many regions are there")
	want := expectRows(t, e, "SELECT COUNT(*) AS regions FROM regions")
	if err != nil || res.Outcome != agent.Answered || res.Provider != agent.RecordedProvider || !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("recorded question: %v, outcome %q, provider %q, rows %v; want answered by the recording, %v", err, res.Outcome, res.Provider, res.Rows, want)
	}
	// In a conversation too: the question is the last one asked.
	hist := agent.Turn{Question: "What is in the shop?", Answer: "Regions and orders."}
	if res, err := ask(t, a, "Delete every order!", hist); err != nil || res.Outcome != agent.Refused || res.Refusal == nil || res.Refusal.Layer != agent.LayerGuard {
		t.Errorf("recorded write: %v, %+v; want the guard's refusal", err, res)
	}
	if n := live.Count(); n != 0 {
		t.Fatalf("the model was called %d times for recorded questions", n)
	}
	live.Push(final("There are 4 regions, I think."))
	if res, err := ask(t, a, "How many regions, roughly?"); err != nil || res.Provider == agent.RecordedProvider || live.Count() != 1 {
		t.Errorf("another question: %v, provider %q, model calls %d; want the model", err, res.Provider, live.Count())
	}
	if _, err := agent.PreferRecorded(live, rec); err == nil {
		t.Error("PreferRecorded accepted a model that records nothing as the recordings")
	}
}

// 8. A follow-up carries the earlier turn.
func TestAskFollowUp(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	s.Push(final("By region: west 1, mountain 1."))
	earlier := agent.Turn{Question: "How many orders shipped?", Answer: "There were 2 shipped orders.", SQL: shippedSQL}
	if _, err := ask(t, newAgent(e, s, 0), "and by region?", earlier); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	msgs := s.Requests()[0]
	var roles []agent.Role
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []agent.Role{agent.RoleSystem, agent.RoleUser, agent.RoleAssistant, agent.RoleUser}) {
		t.Fatalf("roles = %v", roles)
	}
	if msgs[1].Content != earlier.Question || !strings.Contains(msgs[2].Content, earlier.Answer) ||
		!strings.Contains(msgs[2].Content, earlier.SQL) || msgs[3].Content != "and by region?" {
		t.Errorf("messages = %+v", msgs)
	}
}

// 9. Bad arguments, unknown tools and hidden tables are answered, and the loop goes on.
func TestAskToolMistakes(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	s.Push(
		calls(
			call("c1", "run_sql", `{"sql": "SELECT 1`),
			call("c2", "drop_table", `{}`),
			call("c3", "describe_table", `{"table":"customers"}`),
			call("c4", "describe_table", `{"table":"no_such_thing"}`),
		),
		calls(call("c5", "run_sql", sqlArgs(shippedSQL))),
		final("There were 2 shipped orders."),
	)
	res, err := ask(t, newAgent(e, s, 0), "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	got := lastToolResults(s.Requests()[1])
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
	for _, m := range s.Requests()[1] {
		if m.Role == agent.RoleTool {
			ids = append(ids, m.CallID)
		}
	}
	if want := []string{"c1", "c2", "c3", "c4"}; !slices.Equal(ids, want) {
		t.Errorf("tool messages for %v, want %v", ids, want)
	}
}

func TestAskTooManyCallsInOneReply(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	var many []agent.ToolCall
	for i := range 12 {
		many = append(many, call(fmt.Sprintf("c%d", i), "run_sql", sqlArgs(shippedSQL)))
	}
	s.Push(calls(many...), final("There were 2 shipped orders."))
	res, err := ask(t, newAgent(e, s, 0), "How many orders shipped?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if got := len(lastToolResults(s.Requests()[1])); got != 12 {
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
	e := shop(t)
	s := newScript(t)
	s.Push(final(""), final("Not in the data: there is no weather here."))
	res, err := ask(t, newAgent(e, s, 0), "What is the weather?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if res.Steps != 2 || res.Outcome != agent.Unanswerable {
		t.Errorf("steps %d, outcome %q; want 2, unanswerable", res.Steps, res.Outcome)
	}
}

// Outcomes follow the markers first, then what ran, then the wording.
func TestAskOutcome(t *testing.T) {
	run := func(id, sql string) agent.Reply { return calls(call(id, "run_sql", sqlArgs(sql))) }
	tests := []struct {
		name   string
		script []agent.Reply
		want   agent.Outcome
	}{
		{"ran, figure", []agent.Reply{run("a", shippedSQL), final("2 orders shipped.")}, agent.Answered},
		{"ran, marker says not in data", []agent.Reply{run("a", shippedSQL), final("Not in the data: no weather column.")}, agent.Unanswerable},
		{"nothing ran, bold marker", []agent.Reply{final("**Refused:** I only read.")}, agent.Refused},
		{"nothing ran, data lacks it", []agent.Reply{final("The database doesn't contain weather.")}, agent.Unanswerable},
		{"nothing ran, plain prose", []agent.Reply{final("Weather is outside my reach.")}, agent.Unanswerable},
		{"nothing ran, won't change data", []agent.Reply{final("I cannot change data.")}, agent.Refused},
		{"ok then refused", []agent.Reply{run("a", shippedSQL), run("b", "DROP TABLE orders"), final("Done.")}, agent.Refused},
		{"refused then ok", []agent.Reply{run("a", "DROP TABLE orders"), run("b", shippedSQL), final("2 orders shipped.")}, agent.Answered},
		{"only an error", []agent.Reply{run("a", "SELECT nope FROM orders"), final("Sorry.")}, agent.Unanswerable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := shop(t)
			s := newScript(t)
			s.Push(tt.script...)
			res, err := ask(t, newAgent(e, s, 0), "A question")
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
	e := shop(t)
	s := newScript(t)
	const all, private = "SELECT * FROM order_lines", "SELECT email, phone FROM customers"
	s.Push(
		calls(call("c1", "run_sql", sqlArgs(private))),
		calls(call("c2", "run_sql", sqlArgs(all))),
		final("Here are the first order lines."),
	)
	res, err := ask(t, newAgent(e, s, 0), "Show customer emails, then all order lines")
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
	if r := decode(t, lastToolResults(reqs[1])["c1"]); r["refused"] != true || r["layer"] != string(agent.LayerAuthorizer) {
		t.Errorf("private read result = %v", r)
	}
	if r := decode(t, lastToolResults(reqs[2])["c2"]); r["truncated"] != true || r["row_count"] != float64(200) {
		t.Errorf("capped result: truncated %v, row_count %v", r["truncated"], r["row_count"])
	}
	email := regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z]{2,}`)
	for i, msgs := range s.Requests() {
		for _, m := range msgs {
			if found := email.FindString(m.Content + " " + fmt.Sprint(m.Calls)); found != "" {
				t.Errorf("request %d carries an e-mail address %q", i+1, found)
			}
		}
	}
}

func TestDescribeTable(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	s.Push(calls(call("c1", "describe_table", `{"table":"ORDERS"}`)), final("ok"))
	if _, err := ask(t, newAgent(e, s, 0), "What is in orders?"); err != nil {
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
	if err := json.Unmarshal([]byte(lastToolResults(s.Requests()[1])["c1"]), &d); err != nil {
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
// cache it: checked on what the model received, over two questions on one
// agent and a third on another agent over the same database.
func TestSystemPromptStable(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	s.Push(final("one"), final("two"), final("three"))
	a1 := newAgent(e, s, 0)
	for _, q := range []string{"How many orders shipped?", "How many regions are there?"} {
		if _, err := ask(t, a1, q); err != nil {
			t.Fatalf("Ask(%q): %v", q, err)
		}
	}
	if _, err := ask(t, newAgent(e, s, 0), "Which store sold most?"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server got %d requests, want 3", len(reqs))
	}
	p := systemPrompt(reqs[0])
	if p == "" || p != a1.SystemPrompt() {
		t.Errorf("the system prompt sent differs from SystemPrompt()")
	}
	for i, r := range reqs[1:] {
		if systemPrompt(r) != p {
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
	hidden := agenttest.Hidden()
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
