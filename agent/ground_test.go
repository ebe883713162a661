package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sqlbot/agent"
	"sqlbot/agent/agenttest"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// unknownValues returns a run_sql tool result's unknown_values.
func unknownValues(t testing.TB, content string) []agent.ValueHint {
	t.Helper()
	var r struct {
		UnknownValues []agent.ValueHint `json:"unknown_values"`
	}
	if err := json.Unmarshal([]byte(content), &r); err != nil {
		t.Fatalf("tool result is not JSON: %v\n%s", err, content)
	}
	return r.UnknownValues
}

// A model that writes a value the column does not hold is told the values
// it does hold, and its next statement, written from them, is right.
func TestGroundingCorrectsTheLiteral(t *testing.T) {
	e := shop(t)
	s := newScript(t)
	s.Push(calls(call("c1", "run_sql", sqlArgs("SELECT count(*) AS n FROM orders WHERE status = 'complete'"))))
	// The second statement is written from what the first result said:
	// the known value closest to what the model meant ("shipped" is the
	// only one a sale could be; the fake picks it only if it was offered).
	s.Handle(func(msgs []agent.Message) agent.Reply {
		if len(lastToolResults(msgs)) == 0 || strings.Contains(lastToolResults(msgs)["c2"], "row") {
			return final("2 orders were shipped.")
		}
		hints := unknownValues(t, lastToolResults(msgs)["c1"])
		lit := "complete"
		for _, h := range hints {
			if h.Column == "orders.status" && slices.Contains(h.Known, "shipped") {
				lit = "shipped"
			}
		}
		return calls(call("c2", "run_sql", sqlArgs("SELECT count(*) AS n FROM orders WHERE status = '"+lit+"'")))
	})
	res, err := ask(t, newAgent(e, s, 6), "How many orders were completed?")
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	hints := unknownValues(t, lastToolResults(s.Requests()[1])["c1"])
	want := []agent.ValueHint{{Column: "orders.status", Value: "complete", Known: []string{"canceled", "pending", "returned", "shipped"}, All: true}}
	if !hintsEqual(hints, want) {
		t.Fatalf("first tool result's unknown_values = %+v, want %+v", hints, want)
	}
	if len(res.Statements) != 2 || !strings.Contains(res.FinalSQL, "'shipped'") {
		t.Fatalf("statements %+v, final SQL %q: want a second statement with 'shipped'", res.Statements, res.FinalSQL)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != int64(2) {
		t.Errorf("final rows = %v, want [[2]]", res.Rows)
	}
	if h := unknownValues(t, lastToolResults(s.Requests()[2])["c2"]); len(h) != 0 {
		t.Errorf("the right statement got hints %+v", h)
	}
}

func hintsEqual(a, b []agent.ValueHint) bool {
	return slices.EqualFunc(a, b, func(x, y agent.ValueHint) bool {
		return x.Column == y.Column && x.Value == y.Value && x.All == y.All && slices.Equal(x.Known, y.Known)
	})
}

// town is a database with a column of many values (people.city), a hidden
// column (people.secret), and a table that only a view exposes, and only
// some of its rows (payroll through dept_pay, without the board).
const townSQL = `
CREATE TABLE people (id INTEGER PRIMARY KEY, city TEXT NOT NULL, country TEXT NOT NULL, secret TEXT NOT NULL);
CREATE TABLE payroll (id INTEGER PRIMARY KEY, dept TEXT NOT NULL, salary INTEGER NOT NULL);
CREATE VIEW dept_pay AS SELECT dept, avg(salary) AS pay FROM payroll WHERE dept <> 'board' GROUP BY dept;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
INSERT INTO people SELECT i,
  CASE i WHEN 7 THEN 'Springfield' WHEN 8 THEN 'Shelbyville' ELSE 'Town ' || i END,
  CASE i % 3 WHEN 0 THEN 'USA' WHEN 1 THEN 'Canada' ELSE 'Mexico' END,
  'pin-' || (1000 + i) FROM n;
INSERT INTO payroll (dept, salary) VALUES ('sales', 50), ('support', 40), ('board', 900), ('sales', 70);
`

const townPolicy = `
expose:
  people: {hide: [secret]}
  dept_pay: {}
`

func town(t testing.TB) *roconn.DB {
	t.Helper()
	return agenttest.OpenWith(t, townSQL, []byte(townPolicy), roconn.Limits{}).DB
}

func TestGroundingTools(t *testing.T) {
	tools := agent.NewTools(town(t), guard.New(200), nil)
	tests := []struct {
		sql  string
		want []agent.ValueHint // Known: for All false, only the first is compared
	}{
		// A column of many values: the closest by spelling.
		{"SELECT count(*) FROM people WHERE city = 'Springfeld'", []agent.ValueHint{{Column: "people.city", Value: "Springfeld", Known: []string{"Springfield"}}}},
		{"SELECT count(*) FROM people p WHERE p.city IN ('Shelbyville', 'Shelbyvile')", []agent.ValueHint{{Column: "people.city", Value: "Shelbyvile", Known: []string{"Shelbyville"}}}},
		{"SELECT count(*) FROM people WHERE 'springfield' = city", []agent.ValueHint{{Column: "people.city", Value: "springfield", Known: []string{"Springfield"}}}},
		// A column of few values: all of them; != and NOT IN and LIKE too.
		{"SELECT count(*) FROM people WHERE country != 'US'", []agent.ValueHint{{Column: "people.country", Value: "US", Known: []string{"Canada", "Mexico", "USA"}, All: true}}},
		{"SELECT count(*) FROM main.people AS x WHERE x.country NOT IN ('USA', 'Mexcio')", []agent.ValueHint{{Column: "people.country", Value: "Mexcio", Known: []string{"Canada", "Mexico", "USA"}, All: true}}},
		{"SELECT count(*) FROM people WHERE country LIKE 'United States'", []agent.ValueHint{{Column: "people.country", Value: "United States", Known: []string{"Canada", "Mexico", "USA"}, All: true}}},
		// Values held, LIKE as SQLite reads it (without case), wildcards: no hint.
		{"SELECT count(*) FROM people WHERE country = 'USA' AND city <> 'Town 9'", nil},
		{"SELECT count(*) FROM people WHERE country LIKE 'usa'", nil},
		{"SELECT count(*) FROM people WHERE country LIKE 'US%'", nil},
		{"SELECT count(*) FROM people WHERE id = '5'", nil},
		{"SELECT count(*) FROM people WHERE country = 'usa' COLLATE NOCASE", nil},
		{"SELECT count(*) FROM people WHERE country GLOB 'USA'", nil},
		{"SELECT count(*) FROM people WHERE country GLOB 'Mex*'", nil},
		{"SELECT count(*) FROM people WHERE country GLOB 'usa'", []agent.ValueHint{{Column: "people.country", Value: "usa", Known: []string{"Canada", "Mexico", "USA"}, All: true}}},
		{"SELECT count(*) FROM people WHERE country IS NOT 'Mexco'", []agent.ValueHint{{Column: "people.country", Value: "Mexco", Known: []string{"Canada", "Mexico", "USA"}, All: true}}},
		{"SELECT count(*) FROM people WHERE country IS NULL", nil},
		// Through a view: only what the view shows; the board is not a value of dept_pay.dept.
		{"SELECT pay FROM dept_pay WHERE dept = 'Sales'", []agent.ValueHint{{Column: "dept_pay.dept", Value: "Sales", Known: []string{"sales", "support"}, All: true}}},
		{"SELECT pay FROM dept_pay WHERE dept = 'boardroom'", []agent.ValueHint{{Column: "dept_pay.dept", Value: "boardroom", Known: []string{"sales", "support"}, All: true}}},
		// A CTE or subquery's columns are not checked.
		{"WITH c AS (SELECT city AS town FROM people) SELECT count(*) FROM c WHERE town = 'Nowhere'", nil},
	}
	for _, tt := range tests {
		run, err := tools.RunSQL(context.Background(), tt.sql)
		if err != nil || run.Statement.Status != agent.StatusOK {
			t.Fatalf("RunSQL(%q): %+v, %v", tt.sql, run.Statement, err)
		}
		got := run.Hints
		if len(got) != len(tt.want) {
			t.Errorf("RunSQL(%q).Hints = %+v, want %+v", tt.sql, got, tt.want)
			continue
		}
		for i, w := range tt.want {
			g := got[i]
			ok := g.Column == w.Column && g.Value == w.Value && g.All == w.All
			if w.All {
				ok = ok && slices.Equal(g.Known, w.Known)
			} else {
				ok = ok && len(g.Known) > 0 && g.Known[0] == w.Known[0] && len(g.Known) <= 5
			}
			if !ok {
				t.Errorf("RunSQL(%q).Hints[%d] = %+v, want %+v", tt.sql, i, g, w)
			}
		}
	}
}

// A hidden column's values, and rows a view leaves out, are never
// suggested, whatever the model compares.
func TestGroundingNeverShowsHidden(t *testing.T) {
	db := town(t)
	s := newScript(t)
	stmts := []string{
		"SELECT count(*) FROM people WHERE secret = 'pin-1'",
		"SELECT count(*) FROM people p WHERE p.secret IN ('pin-1', 'x')",
		"SELECT count(*) FROM people WHERE city = 'pin-1007'",
		"SELECT count(*) FROM payroll WHERE dept = 'boards'",
		"SELECT count(*) FROM dept_pay d JOIN people p ON p.city = d.dept WHERE d.dept = 'boards' OR p.secret = 'pin'",
		"SELECT count(*) FROM people WHERE country = 'board'",
	}
	for i, q := range stmts {
		s.Push(calls(call(fmt.Sprintf("c%d", i), "run_sql", sqlArgs(q))))
	}
	s.Push(final("done"))
	a := agent.New(s, db, guard.New(200), agent.Options{MaxSteps: len(stmts) + 1}, nil)
	if _, err := ask(t, a, "Tell me the secrets"); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	suggested := 0
	for _, m := range s.Requests()[len(stmts)] { // the last request holds every tool result
		if m.Role != agent.RoleTool {
			continue
		}
		if strings.Contains(m.Content, "900") {
			t.Errorf("a tool result shows hidden data: %s", m.Content)
		}
		for _, h := range unknownValues(t, m.Content) {
			for _, k := range h.Known {
				if strings.HasPrefix(k, "pin-") || k == "board" {
					t.Errorf("hint %+v suggests hidden data", h)
				}
			}
			suggested++
		}
	}
	if suggested != 2 { // city = 'pin-1007' and country = 'board': readable columns, real values
		t.Errorf("%d hints, want 2", suggested)
	}
}

// BenchmarkGrounding measures run_sql with the value check: a statement
// with no literal (no check), one whose literal the column holds, and ones
// whose literal it does not hold (a column of few values, listed whole; a
// column of many, ranked by spelling).
func BenchmarkGrounding(b *testing.B) {
	shopTools := agent.NewTools(shop(b).q, guard.New(200), nil)
	townTools := agent.NewTools(town(b), guard.New(200), nil)
	cases := []struct {
		name  string
		tools *agent.Tools
		sql   string
		hints int
	}{
		{"no-literal", shopTools, "SELECT count(*) FROM orders WHERE id > 3", 0},
		{"held", shopTools, "SELECT count(*) FROM orders WHERE status = 'shipped'", 0},
		{"few-values", shopTools, "SELECT count(*) FROM orders WHERE status = 'complete'", 1},
		{"many-values", townTools, "SELECT count(*) FROM people WHERE city = 'Springfeld'", 1},
	}
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				run, err := c.tools.RunSQL(ctx, c.sql)
				if err != nil || run.Statement.Status != agent.StatusOK || len(run.Hints) != c.hints {
					b.Fatalf("RunSQL: %+v, %d hints, %v", run.Statement, len(run.Hints), err)
				}
			}
		})
	}
}

// On Chinook (every table readable): a country written the way people say
// it, and an artist misspelt, are answered with the real values.
func TestGroundingChinook(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	db, err := roconn.Open(t.Context(), path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tools := agent.NewTools(db, guard.New(200), nil)
	for _, tt := range []struct{ sql, column, first string }{
		{"SELECT count(*) FROM Customer WHERE Country = 'US'", "Customer.Country", "USA"},
		{"SELECT count(*) FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId WHERE ar.Name = 'AC/CD'", "Artist.Name", "AC/DC"},
		{"SELECT count(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = 'HipHop'", "Genre.Name", "Hip Hop/Rap"},
	} {
		run, err := tools.RunSQL(t.Context(), tt.sql)
		if err != nil || len(run.Hints) != 1 {
			t.Errorf("RunSQL(%q): %+v, %v", tt.sql, run.Hints, err)
			continue
		}
		h := run.Hints[0]
		if h.Column != tt.column || !slices.Contains(h.Known, tt.first) || !h.All && h.Known[0] != tt.first {
			t.Errorf("RunSQL(%q) hint %+v, want %s offering %q", tt.sql, h, tt.column, tt.first)
		}
	}
}
