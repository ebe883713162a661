package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"sqlbot/agent/openaitest"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
)

// sqlbot runs the command line in-process with environ (plus a private cache
// directory) and returns what it printed and its exit code.
func sqlbot(t *testing.T, environ []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := append([]string{"XDG_CACHE_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}, environ...)
	err := run(context.Background(), args, env, &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// demoFile writes the demo database into a temporary directory.
func demoFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := demo.Write(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	return path
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// The first acceptance check: with no setup, the demo answers, and a
// DELETE is refused with exit 3.
func TestSQLOnTheDefaultDemo(t *testing.T) {
	out, errOut, code := sqlbot(t, nil, "sql", "SELECT region, count(*) FROM customer_regions GROUP BY region")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, region := range []string{"west", "mountain", "midwest", "south", "northeast"} {
		if !strings.Contains(out, region) {
			t.Errorf("output lacks region %q:\n%s", region, out)
		}
	}
	out, _, code = sqlbot(t, nil, "sql", "DELETE FROM orders")
	if code != exitRefused || !strings.Contains(out, "guard") {
		t.Errorf("DELETE: exit %d, output %q; want exit 3 and the layer named", code, out)
	}
}

func TestSQLJSON(t *testing.T) {
	db := demoFile(t)
	before := sum(t, db)
	out, errOut, code := sqlbot(t, nil, "sql", "--db", db, "--json", "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		SQL       string   `json:"sql"`
		Columns   []string `json:"columns"`
		Rows      [][]any  `json:"rows"`
		RowCount  int      `json:"row_count"`
		Truncated *bool    `json:"truncated"`
		ElapsedMS *int64   `json:"elapsed_ms"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if got.SQL == "" || !slices.Equal(got.Columns, []string{"status", "n"}) || got.RowCount != 4 || len(got.Rows) != 4 ||
		got.Truncated == nil || *got.Truncated || got.ElapsedMS == nil {
		t.Errorf("sql --json = %+v", got)
	}
	var total float64
	for _, r := range got.Rows {
		total += r[1].(float64)
	}
	if total != 3000 {
		t.Errorf("order counts add up to %v, want 3000", total)
	}

	tests := []struct {
		sql, layer string
	}{
		{"DELETE FROM orders", "guard"},
		{"SELECT email FROM customers", "authorizer"},
		{"SELECT length(printf('%.*c', 2000000, 'x'))", "limit"},
	}
	for _, tt := range tests {
		out, _, code := sqlbot(t, nil, "sql", "--db", db, "--json", tt.sql)
		var r struct {
			Refused bool   `json:"refused"`
			Layer   string `json:"layer"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitRefused || !r.Refused || r.Layer != tt.layer || r.Reason == "" {
			t.Errorf("sql --json %q: exit %d, %+v (%v); want refused by %s, exit 3", tt.sql, code, r, err, tt.layer)
		}
	}
	if sum(t, db) != before {
		t.Error("the database file changed")
	}
}

func TestSQLTimeoutAndRowCap(t *testing.T) {
	db := demoFile(t)
	out, _, code := sqlbot(t, []string{"SQLBOT_QUERY_TIMEOUT=200ms"}, "sql", "--db", db, "--json",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c")
	if code != exitRefused || !strings.Contains(out, `"timeout"`) {
		t.Errorf("runaway statement: exit %d, %s; want refused by timeout", code, out)
	}
	out, _, code = sqlbot(t, []string{"SQLBOT_ROW_CAP=7"}, "sql", "--db", db, "--json", "SELECT id FROM orders -- all of them")
	var got struct {
		RowCount  int  `json:"row_count"`
		Truncated bool `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || got.RowCount != 7 || !got.Truncated {
		t.Errorf("row cap 7: exit %d, %+v (%v)", code, got, err)
	}
}

// "--" ends the flags, so a statement can start with a comment.
func TestSQLDoubleDash(t *testing.T) {
	db := demoFile(t)
	out, errOut, code := sqlbot(t, nil, "sql", "--db", db, "--json", "--", "-- count them\nSELECT count(*) AS n FROM regions")
	if code != 0 || !strings.Contains(out, `"row_count": 1`) || !strings.Contains(out, "5") {
		t.Errorf("exit %d, out %s, err %s", code, out, errOut)
	}
}

// Any SQLite file works with the default policy: every user table readable,
// the schema tables hidden.
func TestSQLAnyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE pets(name TEXT, legs INT)", "INSERT INTO pets VALUES ('cat', 4), ('bird', 2)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	before := sum(t, path)
	out, errOut, code := sqlbot(t, nil, "sql", "--db", path, "SELECT sum(legs) FROM pets")
	if code != 0 || !strings.Contains(out, "6") {
		t.Errorf("default policy: exit %d, %s %s", code, out, errOut)
	}
	for _, q := range []string{"SELECT sql FROM sqlite_master", "DROP TABLE pets", "SELECT * FROM pragma_table_info('pets')"} {
		if _, _, code := sqlbot(t, nil, "sql", "--db", path, q); code != exitRefused {
			t.Errorf("%q on the default policy: exit %d, want 3", q, code)
		}
	}
	if sum(t, path) != before {
		t.Error("the database file changed")
	}
}

// Chinook, a public sample database nobody here designed, when it is present.
func TestSQLChinook(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	before := sum(t, path)
	out, errOut, code := sqlbot(t, nil, "sql", "--db", path, "--json",
		"SELECT ar.Name, count(*) AS tracks FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId JOIN Track t ON t.AlbumId = al.AlbumId GROUP BY ar.ArtistId ORDER BY tracks DESC LIMIT 3")
	if code != 0 || !strings.Contains(out, "Iron Maiden") {
		t.Errorf("Chinook: exit %d, %s %s", code, out, errOut)
	}
	out, _, code = sqlbot(t, nil, "sql", "--db", path, "--json", "SELECT InvoiceDate FROM Invoice ORDER BY InvoiceId LIMIT 1")
	// InvoiceDate is a DATETIME column holding '2021-01-01 00:00:00': the
	// driver parses it; roconn must give back the text as stored.
	if code != 0 || !strings.Contains(out, `"2021-01-01 00:00:00"`) {
		t.Errorf("Chinook dates: exit %d, %s", code, out)
	}
	if _, _, code := sqlbot(t, nil, "sql", "--db", path, "DELETE FROM Track"); code != exitRefused {
		t.Errorf("DELETE on Chinook: exit %d, want 3", code)
	}
	if sum(t, path) != before {
		t.Error("Chinook's file changed")
	}
}

// TestEvalChinook brings a database nobody here designed, with its own policy
// and question file, as a user would: the reference evaluation must score
// every answerable question correct (a tie for fifth place included), and
// every write or private read must be refused with the file unchanged.
func TestEvalChinook(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	before := sum(t, path)
	out, errOut, code := sqlbot(t, nil, "eval", "--db", path, "--policy", "testdata/chinook/policy.yaml",
		"--questions", "testdata/chinook/questions.json", "--model", "reference", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rep struct {
		Answerable           int     `json:"answerable"`
		ExecutionAccuracy    float64 `json:"execution_accuracy"`
		Unsafe               int     `json:"unsafe"`
		UnsafeHeld           int     `json:"unsafe_held"`
		WritesBlocked        int     `json:"writes_blocked"`
		Unanswerable         int     `json:"unanswerable"`
		UnanswerableDeclined int     `json:"unanswerable_declined"`
		ChecksumBefore       string  `json:"checksum_before"`
		ChecksumAfter        string  `json:"checksum_after"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Answerable != 9 || rep.ExecutionAccuracy != 1 || rep.Unsafe != 4 || rep.UnsafeHeld != 4 || rep.WritesBlocked != 4 ||
		rep.Unanswerable != 2 || rep.UnanswerableDeclined != 2 || rep.ChecksumBefore == "" || rep.ChecksumBefore != rep.ChecksumAfter {
		t.Errorf("Chinook evaluation: %+v\n%s", rep, errOut)
	}
	if sum(t, path) != before {
		t.Error("Chinook's file changed")
	}
}

func TestDemoCommandSameBytes(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, p := range []string{a, b} {
		if _, errOut, code := sqlbot(t, nil, "demo", "--out", p); code != 0 {
			t.Fatalf("demo --out %s: exit %d %s", p, code, errOut)
		}
	}
	if sum(t, a) != sum(t, b) {
		t.Error("two demo databases differ")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"sql"}, {"sql", "--nope", "SELECT 1"}, {"demo"}} {
		if _, _, code := sqlbot(t, nil, args...); code != exitUsage {
			t.Errorf("sqlbot %q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if _, errOut, code := sqlbot(t, []string{"SQLBOT_ROW_CAP=many"}, "sql", "SELECT 1"); code != exitError || !strings.Contains(errOut, "SQLBOT_ROW_CAP") {
		t.Errorf("bad setting: exit %d, %q; want 1 and the variable named", code, errOut)
	}
}

// ask --json against a local OpenAI-compatible server prints its stable keys.
func TestAskJSON(t *testing.T) {
	db := demoFile(t)
	s := openaitest.NewServer(t)
	s.Push(
		openaitest.Calls(openaitest.Call("list_tables", `{}`)),
		openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT count(*) AS orders FROM orders WHERE status = 'shipped'"}`)),
		openaitest.Final("2,391 orders were shipped."),
	)
	env := []string{"OPENAI_BASE_URL=" + s.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=test-model"}
	out, errOut, code := sqlbot(t, env, "ask", "--db", db, "--json", "How many orders were shipped?")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"question", "answer", "sql", "final_sql", "columns", "rows", "steps", "provider", "elapsed_ms", "tokens", "outcome"} {
		if _, ok := got[k]; !ok {
			t.Errorf("ask --json lacks key %q", k)
		}
	}
	var res struct {
		Outcome string `json:"outcome"`
		Steps   int    `json:"steps"`
		Rows    [][]any
		SQL     []struct{ SQL, Status string }
		Tokens  struct{ Prompt, Completion int }
	}
	json.Unmarshal([]byte(out), &res)
	if res.Outcome != "answered" || res.Steps != 3 || len(res.SQL) != 1 || res.SQL[0].Status != "ok" || len(res.Rows) != 1 || res.Tokens.Prompt == 0 {
		t.Errorf("ask --json = %+v", res)
	}
	if !strings.Contains(string(got["provider"]), "test-model") {
		t.Errorf("provider = %s, want the model named", got["provider"])
	}
}

func TestAskExitCodes(t *testing.T) {
	db := demoFile(t)
	before := sum(t, db)
	s := openaitest.NewServer(t)
	env := []string{"OPENAI_BASE_URL=" + s.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=m", "SQLBOT_MAX_STEPS=2"}

	s.Push(openaitest.Calls(openaitest.Call("run_sql", `{"sql":"DELETE FROM orders"}`)),
		openaitest.Final("Refused: I can only read data."))
	out, _, code := sqlbot(t, env, "ask", "--db", db, "Delete every order")
	if code != exitRefused || !strings.Contains(out, "guard") {
		t.Errorf("refused: exit %d\n%s", code, out)
	}

	s.Push(openaitest.Calls(openaitest.Call("list_tables", `{}`)), openaitest.Calls(openaitest.Call("list_tables", `{}`)))
	if out, _, code = sqlbot(t, env, "ask", "--db", db, "Keep going"); code != exitBudget {
		t.Errorf("budget: exit %d\n%s", code, out)
	}

	s.Push(openaitest.Reply{Status: 503}, openaitest.Reply{Status: 503})
	if out, _, code = sqlbot(t, env, "ask", "--db", db, "Anything"); code != exitError {
		t.Errorf("provider down: exit %d\n%s", code, out)
	}
	if sum(t, db) != before {
		t.Error("the database file changed")
	}
}

// With no model configured, a recorded demo question is answered from its
// stored SQL, and any other question says how to configure a model.
func TestAskWithoutModel(t *testing.T) {
	qs, err := evalrun.ParseQuestions(demo.Questions())
	if err != nil {
		t.Fatal(err)
	}
	var q evalrun.Question
	for _, c := range qs {
		if c.Kind == evalrun.Answerable {
			q = c
			break
		}
	}
	out, errOut, code := sqlbot(t, nil, "ask", "--json", q.Question)
	if code != 0 || !strings.Contains(out, `"outcome": "answered"`) || !strings.Contains(out, `"provider": "recorded"`) {
		t.Errorf("recorded question %q: exit %d\n%s\n%s", q.Question, code, out, errOut)
	}
	out, _, code = sqlbot(t, nil, "ask", "What is the meaning of life?")
	// It says how to configure a model, and suggests questions that work now.
	if code != exitError || !strings.Contains(out, "OPENAI_API_KEY") || !strings.Contains(out, "OPENAI_BASE_URL") || !strings.Contains(out, q.Question) {
		t.Errorf("unknown question without a model: exit %d\n%s", code, out)
	}
}

func TestManifest(t *testing.T) {
	out, _, code := sqlbot(t, []string{"SQLBOT_SLASH_COMMAND=/askdata"}, "manifest")
	var m struct {
		Settings struct {
			SocketModeEnabled  bool `json:"socket_mode_enabled"`
			EventSubscriptions struct {
				BotEvents []string `json:"bot_events"`
			} `json:"event_subscriptions"`
		} `json:"settings"`
		Features struct {
			SlashCommands []struct{ Command string } `json:"slash_commands"`
		} `json:"features"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || code != 0 {
		t.Fatalf("manifest: exit %d, %v\n%s", code, err, out)
	}
	if !m.Settings.SocketModeEnabled || !slices.Contains(m.Settings.EventSubscriptions.BotEvents, "app_mention") ||
		!slices.Contains(m.Settings.EventSubscriptions.BotEvents, "message.im") ||
		len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/askdata" {
		t.Errorf("manifest = %+v", m)
	}
}

// Help and manifest work whatever the environment holds; the commands that
// use the settings report every bad one at once, each with what it expected.
func TestHelpWhateverTheEnvironment(t *testing.T) {
	bad := []string{"SQLBOT_LOG_LEVEL=loud", "SQLBOT_ROW_CAP=lots", "SQLBOT_LOG_FORMAT=xml", "OPENAI_API_KEY=k"}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"-help"}} {
		out, errOut, code := sqlbot(t, bad, args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("sqlbot %s with a bad environment: exit %d, %q %q; want 0 and the usage", args[0], code, out, errOut)
		}
	}
	if _, errOut, code := sqlbot(t, []string{"SQLBOT_LOG_LEVEL=loud"}, "--help"); code != 0 {
		t.Errorf("SQLBOT_LOG_LEVEL=loud sqlbot --help: exit %d, %s", code, errOut)
	}
	for _, cmd := range []string{"sql", "ask", "serve", "eval", "demo"} {
		if _, errOut, code := sqlbot(t, bad, cmd, "-h"); code != 0 {
			t.Errorf("sqlbot %s -h with a bad environment: exit %d, %s", cmd, code, errOut)
		}
	}
	out, errOut, code := sqlbot(t, append(bad, "SQLBOT_SLASH_COMMAND=/askdata"), "manifest")
	if code != 0 || !strings.Contains(out, `"/askdata"`) {
		t.Errorf("manifest with a bad environment: exit %d, %s", code, errOut)
	}
	if _, errOut, code := sqlbot(t, []string{"SQLBOT_SLASH_COMMAND=/Ask Data"}, "manifest"); code != exitError || !strings.Contains(errOut, "SQLBOT_SLASH_COMMAND") {
		t.Errorf("manifest with a bad slash command: exit %d, %q; want 1 and the variable named", code, errOut)
	}
}

func TestEveryBadVariableNamed(t *testing.T) {
	_, errOut, code := sqlbot(t, []string{"SQLBOT_ROW_CAP=lots", "SQLBOT_LOG_FORMAT=xml"}, "ask", "x")
	if code != exitError {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{`SQLBOT_ROW_CAP must be a whole number, got "lots"`, `SQLBOT_LOG_FORMAT must be text or json, got "xml"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// No help text or message cites a document that does not ship with the
// binary.
func TestNoTextCitesMissingDocs(t *testing.T) {
	var texts []string
	out, _, _ := sqlbot(t, nil, "help")
	texts = append(texts, out)
	for _, cmd := range []string{"sql", "ask", "serve", "eval", "demo", "manifest"} {
		_, errOut, _ := sqlbot(t, nil, cmd, "-h")
		texts = append(texts, errOut)
	}
	_, errOut, _ := sqlbot(t, []string{"SLACK_APP_TOKEN=xapp-1"}, "serve") // one Slack token: says how to get the other
	texts = append(texts, errOut)
	_, errOut, _ = sqlbot(t, []string{"SQLBOT_HTTP_ADDR=0.0.0.0:0"}, "serve") // off loopback without a token
	texts = append(texts, errOut)
	_, errOut, _ = sqlbot(t, []string{"SQLBOT_ROW_CAP=lots"}, "sql", "SELECT 1")
	texts = append(texts, errOut)
	for _, text := range texts {
		for _, doc := range []string{"README", "SPEC", "STYLE", "§", ".md"} {
			if strings.Contains(text, doc) {
				t.Errorf("a message cites %q, which does not ship with the binary:\n%s", doc, text)
			}
		}
	}
	if !strings.Contains(texts[0], "SQLBOT_QUESTIONS") || !strings.Contains(texts[0], "OPENAI_API_KEY") {
		t.Errorf("sqlbot help does not list the settings:\n%s", texts[0])
	}
	if !strings.Contains(texts[len(texts)-3], "SLACK_BOT_TOKEN") {
		t.Errorf("serve with one Slack token does not say which is missing: %s", texts[len(texts)-3])
	}
	if !strings.Contains(texts[len(texts)-2], "SQLBOT_API_TOKEN") {
		t.Errorf("serve off loopback without a token does not say which setting: %s", texts[len(texts)-2])
	}
}

// `sqlbot eval` reads SQLBOT_QUESTIONS when --questions is not given.
func TestEvalUsesSQLBOTQuestions(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	out, errOut, code := sqlbot(t, []string{"SQLBOT_QUESTIONS=testdata/chinook/questions.json", "SQLBOT_POLICY=testdata/chinook/policy.yaml"},
		"eval", "--db", path, "--model", "reference", "--only", "answerable", "--json")
	var rep struct {
		Answerable        int     `json:"answerable"`
		ExecutionAccuracy float64 `json:"execution_accuracy"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Answerable != 9 || rep.ExecutionAccuracy != 1 {
		t.Errorf("eval with SQLBOT_QUESTIONS: exit %d, %+v (%v)\n%s", code, rep, err, errOut)
	}
	_, errOut, code = sqlbot(t, []string{"SQLBOT_QUESTIONS=" + filepath.Join(t.TempDir(), "none.json")}, "eval", "--model", "reference")
	if code != exitError || !strings.Contains(errOut, "SQLBOT_QUESTIONS") {
		t.Errorf("eval with a missing SQLBOT_QUESTIONS file: exit %d, %q; want 1 and the variable named", code, errOut)
	}
}
