package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"sqlbot/agent"
	"sqlbot/agent/agenttest"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// fakeQuerier is the test shop with some answers changed: Query returns
// cols and rows when cols is set, and with uncounted every object's RowCount
// is -1, as when roconn's count was stopped by a limit.
type fakeQuerier struct {
	agent.Querier
	cols      []string
	rows      [][]any
	uncounted bool
}

func (f fakeQuerier) Query(ctx context.Context, query string) (*roconn.Result, error) {
	if f.cols == nil {
		return f.Querier.Query(ctx, query)
	}
	return &roconn.Result{SQL: query, Columns: f.cols, Rows: f.rows}, nil
}

func (f fakeQuerier) Objects() []roconn.Object {
	objs := f.Querier.Objects()
	for i := range objs {
		objs[i] = f.change(objs[i])
	}
	return objs
}

func (f fakeQuerier) Object(name string) (roconn.Object, bool) {
	o, ok := f.Querier.Object(name)
	return f.change(o), ok
}

func (f fakeQuerier) Describe(ctx context.Context, name string) (roconn.Object, bool) {
	o, ok := f.Querier.Describe(ctx, name)
	return f.change(o), ok
}

func (f fakeQuerier) Known(name string) (roconn.Object, bool) {
	o, ok := f.Querier.Known(name)
	return f.change(o), ok
}

func (f fakeQuerier) change(o roconn.Object) roconn.Object {
	if f.uncounted {
		o.RowCount = -1
	}
	return o
}

// wide returns n rows of 40 text columns of 480 bytes each: one row alone
// is more than a tool message's budget for rows.
func wide(n int) ([]string, [][]any) {
	cols := make([]string, 40)
	for j := range cols {
		cols[j] = fmt.Sprintf("c%d", j)
	}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = make([]any, len(cols))
		for j := range cols {
			rows[i][j] = fmt.Sprintf("r%dc%d:", i, j) + strings.Repeat("x", 480-7)
		}
	}
	return cols, rows
}

// A first row too wide for the budget is still shown; the rest are left out
// and the note says so.
func TestRunSQLWideRows(t *testing.T) {
	cols, rows := wide(2)
	q := fakeQuerier{Querier: shop(t).q, cols: cols, rows: rows}
	s := newScript(t)
	s.Push(calls(call("c1", "run_sql", sqlArgs("SELECT * FROM orders"))), final("ok"))
	res, err := ask(t, agent.New(s, q, guard.New(200), agent.Options{}, nil), "Show orders")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if len(res.Rows) != 2 {
		t.Errorf("Result has %d rows, want all 2", len(res.Rows))
	}
	r := decode(t, lastToolResults(s.Requests()[1])["c1"])
	shown, _ := r["rows"].([]any)
	if len(shown) != 1 || r["row_count"] != float64(2) {
		t.Fatalf("tool result shows %d rows, row_count %v; want the first row of 2", len(shown), r["row_count"])
	}
	if first, _ := shown[0].([]any); len(first) != len(cols) || first[0] != rows[0][0] {
		t.Errorf("the row shown is not the first row in full")
	}
	if note, _ := r["note"].(string); !strings.Contains(note, "first 1 of 2") {
		t.Errorf("note = %q, want it to say only the first 1 of 2 rows are shown", note)
	}
}

// Row counts that roconn could not take (-1) are left out, not shown as -1.
func TestUnknownRowCount(t *testing.T) {
	q := fakeQuerier{Querier: shop(t).q, uncounted: true}
	s := newScript(t)
	s.Push(
		calls(call("c1", "list_tables", "{}"), call("c2", "describe_table", `{"table":"orders"}`)),
		final("ok"),
	)
	if _, err := ask(t, agent.New(s, q, guard.New(200), agent.Options{}, nil), "What is there?"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	reqs := s.Requests()
	p := systemPrompt(reqs[0])
	if strings.Contains(p, "-1 rows") || !strings.Contains(p, "\norders (table): ") {
		t.Errorf("prompt shows an unknown row count:\n%s", p)
	}
	got := lastToolResults(reqs[1])
	tables, _ := decode(t, got["c1"])["tables"].([]any)
	if len(tables) == 0 {
		t.Fatalf("list_tables result = %s", got["c1"])
	}
	for _, tb := range tables {
		if _, ok := tb.(map[string]any)["rows"]; ok {
			t.Errorf("list_tables: %v has a row count", tb)
		}
	}
	if d := decode(t, got["c2"]); d["name"] != "orders" || d["rows"] != nil {
		t.Errorf("describe_table(orders): name %v, rows %v; want orders, no row count", d["name"], d["rows"])
	}

	// A known count, zero included, is still sent.
	s = newScript(t)
	s.Push(calls(call("c1", "list_tables", "{}")), final("ok"))
	if _, err := ask(t, newAgent(shop(t), s, 0), "What is there?"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	tables, _ = decode(t, lastToolResults(s.Requests()[1])["c1"])["tables"].([]any)
	for _, tb := range tables {
		if n, ok := tb.(map[string]any)["rows"].(float64); !ok || n < 0 {
			t.Errorf("list_tables: %v lacks its row count", tb)
		}
	}
}

// The recorded model says how much of a result it states: the first rows
// when the tool showed fewer than came back, and that the result was cut
// at the row cap.
func TestRecordedStatesPartialResults(t *testing.T) {
	const question = "Show the order lines"
	m := recordedModel(t, []agent.Recorded{{Question: question, SQL: "SELECT id FROM order_lines ORDER BY id"}})

	t.Run("cut by size", func(t *testing.T) {
		cols, rows := wide(2)
		q := fakeQuerier{Querier: shop(t).q, cols: cols, rows: rows}
		res, err := ask(t, agent.New(m, q, guard.New(200), agent.Options{}, nil), question)
		if err != nil {
			t.Fatalf("Ask: %v", err)
		}
		if !strings.Contains(res.Answer, "2 rows") || !strings.Contains(res.Answer, "the first 1 ") {
			t.Errorf("answer %.200q… does not say it states the first 1 of 2 rows", res.Answer)
		}
	})
	t.Run("cut at the row cap", func(t *testing.T) {
		res, err := ask(t, agent.New(m, shopWith(t, roconn.Limits{Rows: 3}).q, guard.New(3), agent.Options{}, nil), question)
		if err != nil {
			t.Fatalf("Ask: %v", err)
		}
		if !res.Truncated || !strings.Contains(res.Answer, "row cap") {
			t.Errorf("truncated %v, answer %q; want it to say the result was cut at the row cap", res.Truncated, res.Answer)
		}
		for _, id := range []string{"id 1", "id 2", "id 3"} {
			if !strings.Contains(res.Answer, id) {
				t.Errorf("answer %q does not state %s", res.Answer, id)
			}
		}
	})
}

// The tools answer without the loop, typed and by name, with the same guard,
// connection and policy as the model gets.
func TestToolsWithoutTheLoop(t *testing.T) {
	e := shop(t)
	g := guard.New(200)
	tools := agent.NewTools(e.q, g, nil)

	var names []string
	for _, d := range tools.Defs() {
		names = append(names, d.Name)
		var schema map[string]any
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema["type"] != "object" || d.Description == "" {
			t.Errorf("%s: description %q, parameters %s; want a description and a JSON Schema object", d.Name, d.Description, d.Parameters)
		}
	}
	if want := []string{agent.ToolListTables, agent.ToolDescribeTable, agent.ToolRunSQL}; !slices.Equal(names, want) {
		t.Errorf("Defs() names %v, want %v", names, want)
	}

	tables := tools.Tables()
	if len(tables) != len(e.q.Objects()) {
		t.Errorf("Tables() lists %d objects, want the %d exposed", len(tables), len(e.q.Objects()))
	}
	for _, tb := range tables {
		if slices.Contains(agenttest.Hidden(), tb.Name) {
			t.Errorf("Tables() lists the hidden %s", tb.Name)
		}
	}
	if d, ok := tools.Describe(t.Context(), " main.ORDERS "); !ok || d.Name != "orders" || len(d.Sample.Rows) != 3 {
		t.Errorf("Describe(main.ORDERS) = %+v, %v; want orders with 3 sample rows", d, ok)
	}
	if _, ok := tools.Describe(t.Context(), "customers"); ok {
		t.Error("Describe(customers) describes a hidden table")
	}

	ctx := context.Background()
	run, err := tools.RunSQL(ctx, "  "+shippedSQL+"  ")
	if err != nil || run.Statement.Status != agent.StatusOK || run.Statement.SQL != shippedSQL || run.Result == nil ||
		!reflect.DeepEqual(run.Result.Rows, expectRows(t, e, shippedSQL)) {
		t.Errorf("RunSQL(shipped) = %+v, %v; want its rows", run, err)
	}
	run, err = tools.RunSQL(ctx, "DELETE FROM orders")
	if err != nil || run.Statement.Status != agent.StatusRefused || run.Statement.Layer != agent.LayerGuard || run.Result != nil {
		t.Errorf("RunSQL(DELETE) = %+v, %v; want the guard's refusal", run, err)
	}
	run, err = tools.RunSQL(ctx, "SELECT email FROM customers")
	if err != nil || run.Statement.Status != agent.StatusRefused || run.Statement.Layer != agent.LayerAuthorizer {
		t.Errorf("RunSQL(private) = %+v, %v; want the authorizer's refusal", run, err)
	}
	run, err = tools.RunSQL(ctx, "SELECT Nmae FROM regions")
	if err != nil || run.Statement.Status != agent.StatusError || run.Statement.Reason != "no such column: Nmae" {
		t.Errorf("RunSQL(Nmae) = %+v, %v; want SQLite's own words", run, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tools.RunSQL(cancelled, shippedSQL); !errors.Is(err, context.Canceled) {
		t.Errorf("RunSQL with an ended context: err %v, want context.Canceled", err)
	}

	// By name, as an MCP client or a model calls them.
	res, err := tools.Call(ctx, agent.ToolRunSQL, sqlArgs(shippedSQL))
	if err != nil || res.Status != agent.StatusOK || res.Run == nil || decode(t, res.Content)["row_count"] != float64(1) {
		t.Errorf("Call(run_sql) = %+v, %v", res, err)
	}
	res, _ = tools.Call(ctx, agent.ToolListTables, "")
	if got, _ := decode(t, res.Content)["tables"].([]any); len(got) != len(tables) || res.Status != agent.StatusOK {
		t.Errorf("Call(list_tables) = %+v", res)
	}
	res, _ = tools.Call(ctx, "drop_table", "{}")
	if res.Status != agent.StatusError || res.Run != nil || !strings.Contains(decode(t, res.Content)["error"].(string), "unknown tool") {
		t.Errorf("Call(drop_table) = %+v", res)
	}
	if len(g.Refusals()) != 1 {
		t.Errorf("guard refusals %v, want the DELETE's", g.Refusals())
	}
}

// lazyQuerier is the test shop as a large database looks after Open: no
// object counted until Describe reads it.
type lazyQuerier struct {
	agent.Querier
	mu   sync.Mutex
	read map[string]bool
}

func (l *lazyQuerier) hide(o roconn.Object) roconn.Object {
	o.RowCount, o.Sample, o.Counted = -1, nil, false
	return o
}

func (l *lazyQuerier) Objects() []roconn.Object {
	objs := l.Querier.Objects()
	for i := range objs {
		objs[i] = l.hide(objs[i])
	}
	return objs
}

func (l *lazyQuerier) Object(name string) (roconn.Object, bool) {
	o, ok := l.Querier.Object(name)
	return l.hide(o), ok
}

func (l *lazyQuerier) Known(name string) (roconn.Object, bool) {
	o, ok := l.Querier.Object(name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.read[o.Name] {
		return l.hide(o), ok
	}
	return o, ok
}

func (l *lazyQuerier) Describe(_ context.Context, name string) (roconn.Object, bool) {
	o, ok := l.Querier.Object(name)
	l.mu.Lock()
	l.read[o.Name] = true
	l.mu.Unlock()
	return o, ok
}

// On a database described lazily, list_tables gives the counts read so far
// and says why the others are missing; describe_table reads an object's
// count and sample, and list_tables then has that count.
func TestToolsLazyCounts(t *testing.T) {
	e := shop(t)
	lq := &lazyQuerier{Querier: e.q, read: map[string]bool{}}
	tools := agent.NewTools(lq, guard.New(200), nil)
	list := func() map[string]any {
		tr, err := tools.Call(t.Context(), agent.ToolListTables, "{}")
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, tr.Content)
	}
	rows := func(m map[string]any, name string) any {
		for _, tb := range m["tables"].([]any) {
			if tb := tb.(map[string]any); tb["name"] == name {
				return tb["rows"]
			}
		}
		t.Fatalf("list_tables lacks %s", name)
		return nil
	}
	before := list()
	if rows(before, "orders") != nil || before["note"] == nil {
		t.Errorf("before describe_table: orders rows %v, note %v; want none, and a note", rows(before, "orders"), before["note"])
	}
	tr, err := tools.Call(t.Context(), agent.ToolDescribeTable, `{"table": "orders"}`)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, tr.Content)
	if d["rows"] == nil || len(d["sample"].(map[string]any)["rows"].([]any)) != 3 {
		t.Errorf("describe_table(orders) = %v; want its rows and 3 sample rows", d)
	}
	after := list()
	if rows(after, "orders") == nil || rows(after, "products") != nil {
		t.Errorf("after describe_table(orders): orders rows %v, products rows %v; want orders counted only", rows(after, "orders"), rows(after, "products"))
	}
}
