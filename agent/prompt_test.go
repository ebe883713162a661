package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"sqlbot/agent"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// wideSchema is a Querier over a generated schema that runs nothing: enough
// for the system prompt.
type wideSchema struct{ objs []roconn.Object }

func (w wideSchema) Query(context.Context, string) (*roconn.Result, error) {
	return nil, errors.New("wideSchema runs no SQL")
}
func (w wideSchema) Objects() []roconn.Object { return w.objs }
func (w wideSchema) Object(name string) (roconn.Object, bool) {
	for _, o := range w.objs {
		if strings.EqualFold(o.Name, name) {
			return o, true
		}
	}
	return roconn.Object{}, false
}
func (w wideSchema) Describe(_ context.Context, name string) (roconn.Object, bool) {
	return w.Object(name)
}
func (w wideSchema) Known(name string) (roconn.Object, bool) { return w.Object(name) }
func (w wideSchema) Rules() []string {
	return []string{"Sales means shipments with status 'delivered'.", "A quarter is three calendar months."}
}

var (
	wideNouns = []string{"customer", "warehouse", "shipment", "invoice", "supplier", "product", "region", "store",
		"employee", "payment", "contract", "vehicle", "route", "ticket", "campaign", "account", "ledger", "budget",
		"forecast", "inventory", "refund", "discount", "category", "vendor", "order", "return", "carrier", "claim",
		"policy", "asset", "project", "task", "meeting", "device", "sensor", "reading", "station", "trip", "fare", "zone"}
	wideColumns = []string{"id", "parent_id", "name", "status", "created_on", "amount", "quantity", "unit_price",
		"currency", "country", "city", "owner", "score", "weight", "note"}
)

// genSchema returns n tables of 15 columns each, named from two nouns (and a
// number past 1,600), every table after the first with a foreign key into
// the one before it, with about texts and column meanings.
func genSchema(n int) []roconn.Object {
	objs := make([]roconn.Object, n)
	for i := range objs {
		k := len(wideNouns)
		name := wideNouns[i%k] + "_" + wideNouns[(i/k+i)%k]
		if i >= k*k {
			name += fmt.Sprint(i / (k * k))
		}
		name = fmt.Sprintf("%s_%d", name, i)
		o := roconn.Object{Name: name, About: fmt.Sprintf("One row per %s of a %s.", wideNouns[i%k], wideNouns[(i/k+i)%k]), RowCount: int64(100 * i)}
		for j, c := range wideColumns {
			o.Columns = append(o.Columns, roconn.Column{Name: c, Type: []string{"INTEGER", "TEXT", "REAL"}[j%3],
				Meaning: fmt.Sprintf("the %s's %s", wideNouns[i%k], strings.ReplaceAll(c, "_", " "))})
		}
		if i > 0 {
			o.Foreign = []roconn.ForeignKey{{Column: "parent_id", RefTable: objs[i-1].Name, RefColumn: "id"}}
		}
		objs[i] = o
	}
	return objs
}

// TestSystemPromptBudget: on generated schemas of 10, 100 and 1,000 tables
// the system prompt stays within its budget, keeps the house rules and the
// instructions, describes in full the table a question names (with the one
// its foreign key joins), starts with the same bytes for every question,
// and sends the model to list_tables for what it leaves out.
func TestSystemPromptBudget(t *testing.T) {
	for _, n := range []int{10, 100, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			q := wideSchema{genSchema(n)}
			a := agent.New(nil, q, guard.New(200), agent.Options{}, nil)
			again := agent.New(nil, q, guard.New(200), agent.Options{}, nil)
			var first string
			for _, i := range []int{n / 3, n - 1, n / 2} {
				target := q.objs[i]
				question := fmt.Sprintf("What is the total amount in %s last quarter?", target.Name)
				p := a.SystemPromptFor(question)
				t.Logf("%d tables: %q: %d characters", n, question, len(p))
				for range 5 { // the same bytes for the same question, on any agent
					if again.SystemPromptFor(question) != p {
						t.Fatalf("%q: two agents over one schema give different prompts", question)
					}
				}
				if len(p) > agent.DefaultPromptChars {
					t.Errorf("prompt is %d characters, want at most %d", len(p), agent.DefaultPromptChars)
				}
				for _, r := range q.Rules() {
					if !strings.Contains(p, r) {
						t.Errorf("prompt lacks the rule %q", r)
					}
				}
				if !strings.Contains(p, "# How to answer") || !strings.Contains(p, agent.RefusedPrefix) {
					t.Error("prompt lacks the instructions")
				}
				blocks := schemaBlocks(p)
				for _, o := range []roconn.Object{target, q.objs[i-1]} {
					lines, ok := blocks[o.Name]
					if !ok || len(lines) != len(o.Columns) {
						t.Errorf("%s: %d column lines (described: %v), want all %d", o.Name, len(lines), ok, len(o.Columns))
					}
				}
				if fits := len(blocks) == n; !fits && !strings.Contains(p, "call list_tables") {
					t.Errorf("%d of %d tables described, and no line sends the model to list_tables", len(blocks), n)
				}
				// The prefix before the schema is the same for every question.
				head, _, _ := strings.Cut(p, "# Schema")
				if first == "" {
					first = head
				} else if head != first {
					t.Errorf("the prompt's prefix differs between questions")
				}
			}
		})
	}
}

// A schema that fits is described whole, the same bytes whatever the
// question; a tiny budget still keeps the rules and the instructions.
func TestSystemPromptFitsWhole(t *testing.T) {
	q := wideSchema{genSchema(3)}
	a := agent.New(nil, q, guard.New(200), agent.Options{}, nil)
	if p := a.SystemPromptFor("invoices of customer_warehouse_0?"); p != a.SystemPrompt() || len(schemaBlocks(p)) != 3 {
		t.Errorf("a schema that fits: the prompt depends on the question, or does not describe all 3 tables")
	}
	small := agent.New(nil, wideSchema{genSchema(1000)}, guard.New(200), agent.Options{PromptChars: 2000}, nil)
	p := small.SystemPromptFor("How many shipments?")
	if len(p) > 2000 || !strings.Contains(p, q.Rules()[0]) || !strings.Contains(p, "call list_tables") {
		t.Errorf("budget 2000: %d characters, rules %v; want within 2000 with the rules and the pointer to list_tables:\n%s",
			len(p), strings.Contains(p, q.Rules()[0]), p)
	}
}

// The question's words, not only the table's exact name, decide relevance;
// earlier turns count too; and the message sent is SystemPromptFor's.
func TestSystemPromptRelevance(t *testing.T) {
	q := wideSchema{genSchema(1000)}
	s := newScript(t)
	s.Push(final("one"), final("two"))
	a := agent.New(s, q, guard.New(200), agent.Options{}, nil)
	const question = "Which vehicle contracts have the highest unit price?"
	var both []string // the tables named by both words
	for _, o := range q.objs {
		if strings.Contains(o.Name, "vehicle") && strings.Contains(o.Name, "contract") {
			both = append(both, o.Name)
		}
	}
	if len(both) == 0 {
		t.Fatal("the generated schema has no table of both words")
	}
	blocks := schemaBlocks(a.SystemPromptFor(question))
	for _, name := range both {
		if _, ok := blocks[name]; !ok {
			t.Errorf("%q: %s not described", question, name)
		}
	}
	if _, err := ask(t, a, question); err != nil {
		t.Fatal(err)
	}
	earlier := q.objs[777].Name
	followUp := agent.Turn{Question: "Which one has the highest score?", Answer: "…", SQL: "SELECT name FROM " + earlier + " ORDER BY score DESC"}
	if _, err := ask(t, a, "And the lowest?", followUp); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if got := systemPrompt(reqs[0]); got != a.SystemPromptFor(question) {
		t.Error("the system message sent differs from SystemPromptFor")
	}
	if _, ok := schemaBlocks(systemPrompt(reqs[1]))[earlier]; !ok {
		t.Error("a follow-up question: the table of the earlier turn's SQL is not described")
	}
}

// BenchmarkSystemPrompt renders the prompt for a question naming one table
// of a generated schema; the characters sent are reported as chars/op.
func BenchmarkSystemPrompt(b *testing.B) {
	for _, n := range []int{10, 100, 200, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			q := wideSchema{genSchema(n)}
			a := agent.New(nil, q, guard.New(200), agent.Options{}, nil)
			question := "What is the total amount in " + q.objs[n/2].Name + "?"
			var p string
			b.ReportAllocs()
			for b.Loop() {
				p = a.SystemPromptFor(question)
			}
			b.ReportMetric(float64(len(p)), "chars")
			b.ReportMetric(float64(len(schemaBlocks(p))), "described")
		})
	}
}
