package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
	"sqlbot/agent/openaitest"
)

// A recorded question of the demo, and its reference SQL.
const (
	recordedQuestion = "How many orders were placed in 2025, whatever their status?"
	recordedSQL      = "SELECT count(*) AS orders FROM orders o WHERE o.day >= '2025-01-01' AND o.day < '2026-01-01'"
)

// waitHTTP waits until something answers HTTP at base.
func waitHTTP(t *testing.T, base string, logs interface{ String() string }) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/web.css")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing answers at %s: %v\n%s", base, err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// apiAsk posts question to base's /api/ask, with the bearer token unless
// it is "", and returns the status and the body.
func apiAsk(t *testing.T, base, question, token string) (int, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"question": question})
	req, err := http.NewRequest(http.MethodPost, base+"/api/ask", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// pageAsk posts question from the page's form and returns the status and
// the page.
func pageAsk(t *testing.T, base, question string) (int, string) {
	t.Helper()
	resp, err := http.PostForm(base+"/", url.Values{"question": {question}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// serveWeb runs `sqlbot serve --db db` in this process without Slack
// tokens, on a free loopback address unless settings give one, and returns
// the address's URL once it answers; it stops serve when the test ends.
func serveWeb(t *testing.T, db string, settings ...string) (string, *served) {
	t.Helper()
	addr := freeAddr(t)
	env := append([]string{"SQLBOT_HTTP_ADDR=" + addr, "XDG_CACHE_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir()}, settings...)
	for _, kv := range settings {
		if v, ok := strings.CutPrefix(kv, "SQLBOT_HTTP_ADDR="); ok {
			addr = v
		}
	}
	_, s := startServe(t, db, env)
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, port)
	waitHTTP(t, base, s)
	return base, s
}

// withoutTimes decodes an ask JSON object, leaving out what differs from
// one asking to the next: the time it took and whether it was reused.
func withoutTimes(t *testing.T, what string, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, b)
	}
	delete(m, "elapsed_ms")
	delete(m, "cached")
	return m
}

// TestServeWebProcess runs `sqlbot serve` as a process with no Slack
// tokens: it serves the web surface alone, says that Slack is off and how
// to turn it on, answers a recorded question through /api/ask, and exits 0
// on SIGTERM.
func TestServeWebProcess(t *testing.T) {
	db := demoFile(t)
	before := sum(t, db)
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve", "--db", db)
	cmd.Env = []string{"SQLBOT_TEST_MAIN=1", "XDG_CACHE_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir(),
		"SQLBOT_HTTP_ADDR=" + addr, "SQLBOT_LOG_FORMAT=json"}
	logs, exited := startProcess(t, cmd)
	base := "http://" + addr
	waitHTTP(t, base, logs)

	status, body := apiAsk(t, base, recordedQuestion, "")
	var res agent.ResultJSON
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("POST /api/ask: %d, not JSON: %s", status, body)
	}
	if status != 200 || res.Outcome != agent.Answered || res.FinalSQL == "" || len(res.Rows) != 1 || res.Provider != agent.RecordedProvider {
		t.Errorf("POST /api/ask %q: %d %s", recordedQuestion, status, body)
	}
	for _, want := range []string{"Slack is off", "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "http://" + addr + "/"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after SIGTERM\n%s", logs)
	}
	if strings.Contains(logs.String(), "whatever their status") {
		t.Error("the log holds the question's text")
	}
	if sum(t, db) != before {
		t.Error("the database file changed")
	}
}

// POST /api/ask returns what `sqlbot ask --json` prints for the same
// question, whatever the outcome (the time and whether it was reused
// aside).
func TestAPIAskSameAsCLI(t *testing.T) {
	db := demoFile(t)
	settings := []string{"SQLBOT_STATE=" + filepath.Join(t.TempDir(), "state.db"), "SQLBOT_CACHE_TTL=0"} // each surface asks anew: nothing is reused
	base, logs := serveWeb(t, db, settings...)
	for _, q := range []string{recordedQuestion, "Show monthly revenue for 2025 in month order.", "Delete all the canceled orders, they are clutter.",
		"What was our average customer satisfaction score in 2025?"} {
		status, body := apiAsk(t, base, q, "")
		if status != 200 {
			t.Errorf("POST /api/ask %q: %d %s\n%s", q, status, body, logs)
			continue
		}
		out, errOut, _ := sqlbot(t, settings, "ask", "--db", db, "--json", q)
		api, cli := withoutTimes(t, "POST /api/ask", body), withoutTimes(t, "ask --json", []byte(out))
		if !reflect.DeepEqual(api, cli) {
			t.Errorf("%q:\nPOST /api/ask: %s\nask --json:    %s%s", q, body, out, errOut)
		}
	}
}

// Off loopback the web surface needs SQLBOT_API_TOKEN: serve does not
// start without it, and with it a request that lacks the token is a 401
// and asks nothing, while /healthz needs none.
func TestAPIOffLoopback(t *testing.T) {
	db := demoFile(t)
	_, errOut, code := sqlbot(t, []string{"SQLBOT_HTTP_ADDR=0.0.0.0:0"}, "serve", "--db", db)
	if code != exitError || !strings.Contains(errOut, "SQLBOT_API_TOKEN") || !strings.Contains(errOut, "loopback") {
		t.Errorf("serve on 0.0.0.0 without a token: exit %d: %s; want a refusal to start naming SQLBOT_API_TOKEN", code, errOut)
	}
	const token = "test-token-0123456789abcdef"
	_, port, _ := net.SplitHostPort(freeAddr(t))
	base, _ := serveWeb(t, db, "SQLBOT_HTTP_ADDR=0.0.0.0:"+port, "SQLBOT_API_TOKEN="+token, "SQLBOT_RATE_PER_MINUTE=1")
	for _, tok := range []string{"", "wrong-token-0123456789abcdef"} {
		status, body := apiAsk(t, base, recordedQuestion, tok)
		if status != http.StatusUnauthorized || !strings.Contains(string(body), "SQLBOT_API_TOKEN") {
			t.Errorf("POST /api/ask with token %q: %d %s; want 401", tok, status, body)
		}
	}
	if status, _ := pageAsk(t, base, recordedQuestion); status != http.StatusUnauthorized {
		t.Errorf("POST / without the token: %d, want 401", status)
	}
	// The turned-away requests were not counted: the one question a minute
	// is still there.
	if status, body := apiAsk(t, base, recordedQuestion, token); status != 200 {
		t.Errorf("POST /api/ask with the token: %d %s", status, body)
	}
}

// A recorded question of the demo is answered from its stored SQL, through
// the same guarded path, even with a model configured: on the command line
// and through the API, the model gets no request. Another question does go
// to the model.
func TestRecordedNeverCallsModel(t *testing.T) {
	db := demoFile(t)
	ai := openaitest.NewServer(t)
	ai.Handle(func(req openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Final("The model answered this one.")
	})
	settings := []string{"OPENAI_BASE_URL=" + ai.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=test-model",
		"SQLBOT_CACHE_TTL=0"} // no cache: each answer below is the agent's own
	out, errOut, code := sqlbot(t, settings, "ask", "--db", db, "--json", "  how many orders were placed in 2025 whatever their STATUS ")
	var res agent.ResultJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK {
		t.Fatalf("ask --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if res.Provider != agent.RecordedProvider || res.FinalSQL == "" || !strings.Contains(res.FinalSQL, "o.day >= '2025-01-01'") || len(res.Rows) != 1 {
		t.Errorf("ask --json a recorded question = %s; want it answered from its SQL", out)
	}
	want, _, _ := sqlbot(t, nil, "sql", "--db", db, "--json", recordedSQL)
	var ref struct{ Rows [][]any }
	json.Unmarshal([]byte(want), &ref)
	if !reflect.DeepEqual(res.Rows, ref.Rows) {
		t.Errorf("rows %v, want the reference's %v", res.Rows, ref.Rows)
	}
	// A recorded write is refused by the guard without the model either.
	out, _, code = sqlbot(t, settings, "ask", "--db", db, "--json", "Delete all the canceled orders, they are clutter.")
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitRefused || res.Outcome != agent.Refused ||
		len(res.SQL) != 1 || res.SQL[0].Layer != agent.LayerGuard {
		t.Errorf("ask a recorded write: exit %d: %s; want the guard's refusal", code, out)
	}

	base, logs := serveWeb(t, db, settings...)
	status, body := apiAsk(t, base, recordedQuestion, "")
	if err := json.Unmarshal(body, &res); err != nil || status != 200 || res.Provider != agent.RecordedProvider {
		t.Errorf("POST /api/ask a recorded question: %d %s\n%s", status, body, logs)
	}
	if n := ai.Count(); n != 0 {
		t.Fatalf("the model got %d requests for recorded questions, want none", n)
	}
	status, body = apiAsk(t, base, "Which region had the most orders last week?", "")
	if err := json.Unmarshal(body, &res); err != nil || status != 200 || !strings.Contains(res.Answer, "The model answered") || ai.Count() == 0 {
		t.Errorf("POST /api/ask another question: %d %s; want the model's answer", status, body)
	}
}

// With Slack on, the web page and the API are served beside /healthz and
// /metrics, and count questions against the same limits as Slack, in the
// same state: the day's global limit spent in Slack and the API turns the
// next question away on the API, with the limit named.
func TestWebBesideSlackSharesLimits(t *testing.T) {
	db := demoFile(t)
	slack := newSlack(t, nil)
	addr := freeAddr(t)
	logs := serveInProcess(t, slack, db, "SQLBOT_HTTP_ADDR="+addr, "SQLBOT_GLOBAL_PER_DAY=2")
	base := "http://" + addr
	if m := mentionAnswered(t, slack, logs, "U1", recordedQuestion); !strings.Contains(m.Text+string(m.Blocks), "count(*)") {
		t.Fatalf("the Slack answer lacks its SQL: %+v", m)
	}
	// Once an answer is posted the bot is connected: /healthz says ok.
	for path, want := range map[string]string{"/healthz": `"status":"ok"`, "/metrics": "sqlbot_questions_total"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d %.200s", path, resp.StatusCode, b)
		}
	}
	if status, body := apiAsk(t, base, "How many sales did we make in December 2024?", ""); status != 200 {
		t.Fatalf("POST /api/ask, the day's second question: %d %s\n%s", status, body, logs)
	}
	status, body := apiAsk(t, base, "What was revenue in June 2025?", "")
	var e struct{ Error, Limit string }
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusTooManyRequests || e.Limit != "global_day" {
		t.Errorf("POST /api/ask, the day's third question: %d %s; want 429 for the global limit", status, body)
	}
}
