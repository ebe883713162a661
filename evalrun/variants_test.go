package evalrun_test

import (
	"fmt"
	"strings"
	"testing"

	"sqlbot/agent"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// scoreRows is the scoring bound these tests give Run.
const scoreRows = 10_000

// scorer opens the database at path for scoring, as `sqlbot eval` does: the
// same policy and guarded path, with the scoring bound as its row cap.
func scorer(t *testing.T, path string) agent.Checked {
	t.Helper()
	p, err := roconn.ParsePolicy(demo.Policy())
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(t.Context(), path, p, roconn.Limits{Rows: scoreRows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return agent.Checked{Guard: guard.New(scoreRows), DB: db}
}

// variants writes versions 1..n of the demo database and opens each for
// scoring.
func variants(t *testing.T, n int) []evalrun.Querier {
	t.Helper()
	dir := t.TempDir()
	out := make([]evalrun.Querier, n)
	for i := range n {
		path, err := demo.EnsureVariant(t.Context(), dir, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = scorer(t, path)
	}
	return out
}

// byChance are candidates right on the demo database and wrong on other
// versions of it: the kinds of luck execution accuracy on one database
// cannot tell from skill.
var byChance = map[string]string{
	// A hard-coded id: the employee who topped 2025 on this data.
	"top-employee-revenue-2025": `SELECT e.first_name || ' ' || e.last_name AS employee, round(sum(l.line_total), 2) AS revenue
		FROM orders o JOIN staff e ON e.id = o.employee_id JOIN order_lines l ON l.order_id = o.id
		WHERE o.status = 'shipped' AND o.day >= '2025-01-01' AND o.day < '2026-01-01' AND e.id = 26`,
	// A LIMIT 1 that happens to hit the maximum: ordered by orders, not revenue.
	"top-promotion-revenue": `SELECT p.code, round(sum(l.line_total), 2) AS revenue FROM promotions p
		JOIN order_promotions op ON op.promotion_id = p.id JOIN orders o ON o.id = op.order_id JOIN order_lines l ON l.order_id = o.id
		WHERE o.status = 'shipped' GROUP BY p.id ORDER BY count(DISTINCT o.id) DESC LIMIT 1`,
	// The same, ordered by money refunded rather than by returns.
	"top-return-reason-2025": `SELECT reason, count(*) AS returns FROM returns r
		WHERE r.day >= '2025-01-01' AND r.day < '2026-01-01' GROUP BY reason ORDER BY sum(refund) DESC LIMIT 1`,
	// A filter on a value that happens to coincide: only one month of 2024 passed 50,000 here.
	"best-month-2024": `SELECT substr(o.day, 1, 7) AS month, round(sum(l.line_total), 2) AS revenue
		FROM order_lines l JOIN orders o ON o.id = l.order_id
		WHERE o.status = 'shipped' AND o.day >= '2024-01-01' AND o.day < '2025-01-01' GROUP BY month HAVING revenue > 50000`,
}

// candidateAgent answers the demo's questions with their reference SQL,
// except those of byChance, through the real agent and guarded path.
func (e evalEnv) candidateAgent(t *testing.T) *agent.Agent {
	t.Helper()
	var recs []agent.Recorded
	for _, q := range e.set.Questions {
		if q.Kind != evalrun.Answerable {
			continue
		}
		sql := *q.ReferenceSQL
		if c, ok := byChance[q.ID]; ok {
			sql = c
		}
		recs = append(recs, agent.Recorded{Question: q.Question, SQL: sql})
	}
	m, err := agent.NewRecorded(recs)
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(m, e.db, e.g, agent.Options{}, nil)
}

func TestRunVariants(t *testing.T) {
	e := openDemo(t, sharedDemo(t), demo.Policy())
	vs := variants(t, 5)
	score := scorer(t, e.path)

	t.Run("reference", func(t *testing.T) {
		rep := e.run(t, e.referenceAgent(t), evalrun.Options{Score: score, ScoreRows: scoreRows, Variants: vs, Concurrency: 2})
		if rep.ExecutionAccuracy != 1 || rep.RightByChance != 0 || rep.Unscored != 0 || rep.Variants != 5 {
			t.Errorf("reference with 5 variants: accuracy %v, %d right by chance, %d unscored, %d variants; want 1, 0, 0, 5",
				rep.ExecutionAccuracy, rep.RightByChance, rep.Unscored, rep.Variants)
			for _, q := range rep.NotPassing() {
				t.Logf("%s: %s", q.ID, q.Reason)
			}
		}
	})

	a := e.candidateAgent(t)
	plain := e.run(t, a, evalrun.Options{Only: evalrun.Answerable, Score: score, ScoreRows: scoreRows})
	if plain.ExecutionAccuracy != 1 {
		for _, q := range plain.NotPassing() {
			t.Logf("%s: %s", q.ID, q.Reason)
		}
		t.Fatalf("the candidates score %v on the demo alone, want 1: each is right on this data", plain.ExecutionAccuracy)
	}
	rep := e.run(t, a, evalrun.Options{Only: evalrun.Answerable, Score: score, ScoreRows: scoreRows, Variants: vs, Concurrency: 2})
	if rep.RightByChance != len(byChance) || rep.AnswerablePassed != rep.Answerable-len(byChance) {
		t.Errorf("with variants: %d right by chance, %d of %d passed; want %d and %d",
			rep.RightByChance, rep.AnswerablePassed, rep.Answerable, len(byChance), rep.Answerable-len(byChance))
	}
	got := byID(rep)
	for id := range byChance {
		q := got[id]
		if q.Outcome != evalrun.Fail || q.WrongOnVariant == 0 || !strings.HasPrefix(q.Reason, "wrong on variant") {
			t.Errorf("%s: %s, variant %d, %q; want FAIL on a variant", id, q.Outcome, q.WrongOnVariant, q.Reason)
		}
	}
	found := false
	for _, f := range rep.Figures() {
		if f.Name == "variants" {
			found = true
			if want := fmt.Sprintf("5 other versions of the database: %d answers right on the default data were wrong on one", len(byChance)); f.Value != want {
				t.Errorf("variants figure %q, want %q", f.Value, want)
			}
		}
	}
	if !found {
		t.Errorf("the report has no variants figure")
	}
}

// Whole results are scored, not the rows an answer shows: references of up
// to 5,000 rows score 1.0 in reference mode, none unscored; without a
// scoring bound of its own, they cannot be scored, and the report says so.
func TestRunScoresWholeResults(t *testing.T) {
	e := openDemo(t, sharedDemo(t), demo.Policy())
	set, err := evalrun.ParseSet([]byte(`[
		{"id": "lines", "question": "List order lines 1 to 5000 with their quantities.", "reference_sql": "SELECT id, qty FROM order_lines WHERE id <= 5000", "kind": "answerable"},
		{"id": "orders-by-day", "question": "List the first 3000 orders by day.", "reference_sql": "SELECT id, day FROM orders ORDER BY day, id LIMIT 3000", "ordered": true, "kind": "answerable"},
		{"id": "customers", "question": "List every customer's region.", "reference_sql": "SELECT id, region FROM customer_regions", "kind": "answerable"},
		{"id": "small", "question": "How many orders are there?", "reference_sql": "SELECT count(*) FROM orders", "kind": "answerable"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	e.set = set
	ref := e.referenceAgent(t)
	rep := e.run(t, ref, evalrun.Options{Score: scorer(t, e.path), ScoreRows: scoreRows})
	if rep.ExecutionAccuracy != 1 || rep.Unscored != 0 {
		for _, q := range rep.NotPassing() {
			t.Logf("%s: %s", q.ID, q.Reason)
		}
		t.Errorf("reference on whole results: accuracy %v, %d unscored; want 1, 0", rep.ExecutionAccuracy, rep.Unscored)
	}

	capped := e.run(t, ref, evalrun.Options{})
	if capped.Unscored != 3 || capped.AnswerablePassed != 1 {
		t.Errorf("at the row cap: %d unscored, %d passed; want 3 and 1", capped.Unscored, capped.AnswerablePassed)
	}
	for _, q := range capped.PerQuestion {
		if q.ID != "small" && q.Unscored != evalrun.UnscoredRows {
			t.Errorf("%s: unscored %q, want %q", q.ID, q.Unscored, evalrun.UnscoredRows)
		}
		if q.ID != "small" && !strings.Contains(q.Why(), "more rows than the scoring bound") {
			t.Errorf("%s: Why() = %q, want it to say the reference is longer than the scoring bound", q.ID, q.Why())
		}
	}
	for _, f := range capped.Figures() {
		if f.Name == "could not be scored" && f.Value != "3: the reference returns more rows than the scoring bound (3)" {
			t.Errorf("figure %q = %q", f.Name, f.Value)
		}
	}
}
