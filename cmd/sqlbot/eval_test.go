package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sqlbot/agent/openaitest"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
)

// evalFixture is a demo database in a temporary directory and an
// environment that keeps the cache and home there and configures no model.
type evalFixture struct {
	dir, db string
	environ []string
}

func newEvalFixture(t *testing.T) evalFixture {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	if err := demo.Write(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return evalFixture{dir: dir, db: db, environ: []string{
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "HOME=" + dir, "SQLBOT_LOG_LEVEL=warn",
	}}
}

// run runs sqlbot with args and returns stdout, stderr and the exit code.
func (f evalFixture) run(t *testing.T, environ []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, append(append([]string{}, f.environ...), environ...), &out, &errb)
	code = exitCode(err, &errb) // prints the error on errb
	return out.String(), errb.String(), code
}

// TestEvalReference is `sqlbot eval --model reference --json` on the demo
// database: EX 1.0, every unsafe question held, the database unchanged, one
// progress line per question on stderr, and --out holding the same report.
func TestEvalReference(t *testing.T) {
	f := newEvalFixture(t)
	outFile := filepath.Join(f.dir, "report.json")
	stdout, stderr, code := f.run(t, nil, "eval", "--db", f.db, "--model", "reference", "--json", "--out", outFile)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var rep evalrun.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not one JSON report: %v\n%s", err, stdout)
	}
	if rep.ExecutionAccuracy != 1 || rep.Answerable == 0 || rep.UnsafeHeld != rep.Unsafe || rep.Unsafe == 0 ||
		rep.ChecksumBefore != rep.ChecksumAfter || rep.WritesBlocked == 0 || rep.Model != "reference" || rep.Database != "demo.db" {
		t.Errorf("report: EX %v of %d, held %d of %d, blocked %d, checksums %s/%s, model %q, database %q",
			rep.ExecutionAccuracy, rep.Answerable, rep.UnsafeHeld, rep.Unsafe, rep.WritesBlocked,
			rep.ChecksumBefore, rep.ChecksumAfter, rep.Model, rep.Database)
		for _, q := range rep.NotPassing() {
			t.Errorf("question %s: %s (%s): %s", q.ID, q.Outcome, q.AgentOutcome, q.Reason)
		}
	}
	if n := strings.Count(stderr, "\n"); n != rep.Questions {
		t.Errorf("%d lines on stderr, want %d progress lines:\n%s", n, rep.Questions, stderr)
	}
	if b, err := os.ReadFile(outFile); err != nil || string(b) != stdout {
		t.Errorf("--out file differs from the JSON on stdout (%v)", err)
	}

	// The terminal table, with one kind only.
	stdout, _, code = f.run(t, nil, "eval", "--db", f.db, "--only", "safety")
	if code != exitOK || !strings.Contains(stdout, "unsafe held") || !strings.Contains(stdout, "unchanged") ||
		strings.Contains(stdout, "execution accuracy") {
		t.Errorf("eval --only safety: exit %d\n%s", code, stdout)
	}
}

// TestEvalLive runs the default model, live because a provider is
// configured, against a scripted server that declines every question.
func TestEvalLive(t *testing.T) {
	f := newEvalFixture(t)
	s := openaitest.NewServer(t)
	s.Handle(func(openaitest.Request) openaitest.Reply {
		return openaitest.Final("Not in the data: nothing about that is recorded.")
	})
	env := []string{"OPENAI_BASE_URL=" + s.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=scripted"}
	stdout, stderr, code := f.run(t, env, "eval", "--db", f.db, "--only", "unanswerable", "--json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var rep evalrun.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Model != "scripted" || !strings.HasPrefix(rep.Provider, "scripted@127.0.0.1:") ||
		rep.Unanswerable != 7 || rep.UnanswerableDeclined != 7 || rep.Questions != 7 || len(s.Requests()) != 7 {
		t.Errorf("model %q, provider %q, declined %d of %d, %d questions, %d requests",
			rep.Model, rep.Provider, rep.UnanswerableDeclined, rep.Unanswerable, rep.Questions, len(s.Requests()))
	}
}

func TestEvalErrors(t *testing.T) {
	f := newEvalFixture(t)
	// Not the demo database, and no question file.
	other := filepath.Join(f.dir, "other.db")
	db, err := sql.Open("sqlite", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	tests := []struct {
		name    string
		args    []string
		code    int
		mention string
	}{
		{"live without a provider", []string{"eval", "--db", f.db, "--model", "live"}, exitError, "OPENAI_API_KEY"},
		{"no question file", []string{"eval", "--db", other}, exitError, "--questions"},
		{"unknown kind", []string{"eval", "--db", f.db, "--only", "everything"}, exitUsage, "--only"},
		{"unknown model", []string{"eval", "--db", f.db, "--model", "gpt"}, exitUsage, "--model"},
		{"a stray argument", []string{"eval", "--db", f.db, "now"}, exitUsage, "no arguments"},
		{"score with one statement", []string{"eval", "score", "--db", f.db, "SELECT 1"}, exitUsage, "2 statements"},
	}
	for _, tt := range tests {
		_, stderr, code := f.run(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.mention) {
			t.Errorf("%s: exit %d, want %d, with stderr naming %q:\n%s", tt.name, code, tt.code, tt.mention, stderr)
		}
	}
}

// TestEvalScore is `sqlbot eval score`: exit 0 for a correct candidate, 5
// for a wrong one, 1 when a statement cannot run; both result sets and the
// reason are printed.
func TestEvalScore(t *testing.T) {
	f := newEvalFixture(t)
	const ref = "SELECT count(*) AS sales FROM orders WHERE status = 'shipped' AND day >= '2024-12-01' AND day < '2025-01-01'"
	tests := []struct {
		name, cand string
		ordered    bool
		code       int
	}{
		{"same figure, other shape", "SELECT status, count(*) AS n FROM orders WHERE status = 'shipped' AND day LIKE '2024-12-%' GROUP BY status", false, exitOK},
		{"returned counted as sales", "SELECT count(*) FROM orders WHERE status IN ('shipped', 'returned') AND day LIKE '2024-12-%'", false, exitWrong},
		{"a write", "DELETE FROM orders", false, exitError},
		{"a private column", "SELECT email FROM customers", false, exitError},
		{"an error", "SELECT nope FROM orders", false, exitError},
	}
	for _, tt := range tests {
		stdout, stderr, code := f.run(t, nil, "eval", "score", "--db", f.db, ref, tt.cand)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tt.name, code, tt.code, stdout, stderr)
		}
		if tt.code != exitError && (!strings.Contains(stdout, "Reference:") || !strings.Contains(stdout, "Candidate:") ||
			!strings.Contains(stdout, map[int]string{exitOK: "correct:", exitWrong: "wrong:"}[tt.code])) {
			t.Errorf("%s: output lacks a result set or the verdict:\n%s", tt.name, stdout)
		}
	}

	// A candidate cut at the scoring bound is wrong even when the rows kept
	// are the reference's, which ends exactly at the bound.
	stdout, stderr, code := f.run(t, []string{"SQLBOT_ROW_CAP=50", "SQLBOT_SCORE_ROWS=50"}, "eval", "score", "--db", f.db, "--ordered",
		"SELECT id FROM orders ORDER BY id LIMIT 50", "SELECT id FROM orders ORDER BY id")
	if code != exitWrong || !strings.Contains(stdout, "wrong: the candidate has more rows than the row cap") {
		t.Errorf("a candidate cut at the scoring bound: exit %d, want %d\n%s%s", code, exitWrong, stdout, stderr)
	}
	// Scoring reads past the row cap, up to its own bound: whole results.
	stdout, stderr, code = f.run(t, []string{"SQLBOT_ROW_CAP=50"}, "eval", "score", "--db", f.db, "--ordered",
		"SELECT id FROM orders ORDER BY id LIMIT 500", "SELECT id FROM orders WHERE id <= 500 ORDER BY id")
	if code != exitOK || !strings.Contains(stdout, "(500 rows)") {
		t.Errorf("500 rows with a row cap of 50: exit %d, want %d\n%s", code, exitOK, stderr)
	}

	// --json, and --ordered deciding a verdict.
	const asc, desc = "SELECT id FROM regions ORDER BY id", "SELECT id FROM regions ORDER BY id DESC"
	for _, tt := range []struct {
		ordered bool
		code    int
	}{{false, exitOK}, {true, exitWrong}} {
		args := []string{"eval", "score", "--db", f.db, "--json"}
		if tt.ordered {
			args = append(args, "--ordered")
		}
		stdout, _, code := f.run(t, nil, append(args, asc, desc)...)
		var got struct {
			Correct   bool   `json:"correct"`
			Reason    string `json:"reason"`
			Reference struct {
				Rows [][]any `json:"rows"`
			} `json:"reference"`
			Candidate struct {
				Rows [][]any `json:"rows"`
			} `json:"candidate"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("--json: %v\n%s", err, stdout)
		}
		if code != tt.code || got.Correct != (tt.code == exitOK) || len(got.Reference.Rows) != 5 || len(got.Candidate.Rows) != 5 || got.Reason == "" {
			t.Errorf("--ordered=%v: exit %d, %+v", tt.ordered, code, got)
		}
	}
}

// `sqlbot eval --variants 5 --model reference` checks every reference
// answer on five other versions of the demo and scores 1.0; --variants
// needs the demo database.
func TestEvalVariants(t *testing.T) {
	f := newEvalFixture(t)
	stdout, stderr, code := f.run(t, nil, "eval", "--db", f.db, "--model", "reference", "--only", "answerable", "--variants", "5", "--json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var rep evalrun.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not one JSON report: %v\n%s", err, stdout)
	}
	if rep.ExecutionAccuracy != 1 || rep.Variants != 5 || rep.RightByChance != 0 || rep.Unscored != 0 || rep.ScoreRows != evalrun.DefaultScoreRows {
		t.Errorf("accuracy %v, %d variants, %d right by chance, %d unscored, score rows %d; want 1, 5, 0, 0, %d",
			rep.ExecutionAccuracy, rep.Variants, rep.RightByChance, rep.Unscored, rep.ScoreRows, evalrun.DefaultScoreRows)
	}
	entries, _ := os.ReadDir(filepath.Join(f.dir, "cache", "sqlbot"))
	if len(entries) != 5 {
		t.Errorf("the cache holds %d files, want the 5 variants", len(entries))
	}

	other := filepath.Join(f.dir, "other.db")
	mk, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mk.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	mk.Close()
	qs := filepath.Join(f.dir, "q.json")
	os.WriteFile(qs, []byte(`[{"id": "x", "question": "x?", "reference_sql": "SELECT x FROM t", "kind": "answerable"}]`), 0o644)
	_, stderr, code = f.run(t, nil, "eval", "--db", other, "--questions", qs, "--model", "reference", "--variants", "2")
	if code != exitUsage || !strings.Contains(stderr, "--variants needs the demo database") {
		t.Errorf("--variants on another database: exit %d, stderr %q; want a usage error", code, stderr)
	}
	_, stderr, code = f.run(t, []string{"SQLBOT_SCORE_ROWS=0"}, "eval", "--db", f.db, "--model", "reference")
	if code == exitOK || !strings.Contains(stderr, "SQLBOT_SCORE_ROWS") {
		t.Errorf("SQLBOT_SCORE_ROWS=0: exit %d, stderr %q; want an error naming it", code, stderr)
	}
}
