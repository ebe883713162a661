package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"html"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"sqlbot/agent"
	"sqlbot/bot/state"
	"sqlbot/bot/web"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// scriptValue is a value in the test database that a browser would run if
// it were ever taken as HTML: each part sets window.sqlbotPwned.
const scriptValue = `<script>window.sqlbotPwned = 1</script><img src="x" onerror="window.sqlbotPwned = 2"><b>bold?</b>`

// The recorded questions of the test database.
const (
	qShipped = "How many orders were shipped?"
	qNotes   = "Show the notes"
	qDelete  = "Delete the canceled orders"
	qMonthly = "Show revenue by month"
)

// newAgent writes a small database (orders, and notes holding scriptValue)
// and returns it, opened read-only, with an agent whose model answers the
// recorded questions from their SQL, through the guard and roconn.
func newAgent(t testing.TB) (*agent.Agent, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "web.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rw.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL);
INSERT INTO orders (status) VALUES ('shipped'), ('shipped'), ('canceled'), ('pending');
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
INSERT INTO notes (body) VALUES (?), ('plain & simple');
CREATE TABLE sales (month TEXT NOT NULL, revenue REAL NOT NULL);
INSERT INTO sales VALUES ('2025-01', 120.5), ('2025-02', 98), ('2025-03', 143.25), ('2025-04', 160), ('2025-05', 151), ('2025-06', 175.75);`, scriptValue)
	if cerr := rw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	db, err := roconn.Open(context.Background(), path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	model, err := agent.NewRecorded([]agent.Recorded{
		{Question: qShipped, SQL: "SELECT count(*) AS shipped FROM orders WHERE status = 'shipped'"},
		{Question: qNotes, SQL: "SELECT id, body FROM notes ORDER BY id"},
		{Question: qDelete, SQL: "DELETE FROM orders WHERE status = 'canceled'"},
		{Question: qMonthly, SQL: "SELECT month, revenue FROM sales ORDER BY month"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(model, db, guard.New(roconn.DefaultRows), agent.Options{}, nil), path
}

// config is a loopback configuration with generous limits.
func config() web.Config {
	return web.Config{
		Addr:    "127.0.0.1:8080",
		Limiter: state.NewMemory(time.Now), Limits: state.Limits{PerMinute: 100, PerDay: 100, GlobalPerDay: 100},
		MaxQuestionChars: 500, MaxConcurrent: 2, AnswerTimeout: time.Minute,
		Questions: []string{qShipped, qNotes, qDelete},
	}
}

// serve serves the web surface with cfg over a fresh agent.
func serve(t *testing.T, cfg web.Config) *httptest.Server {
	t.Helper()
	ag, _ := newAgent(t)
	s, err := web.New(cfg, ag, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to path with the given headers and returns the status,
// the response's headers and its body.
func post(t *testing.T, srv *httptest.Server, path, contentType, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func askAPI(t *testing.T, srv *httptest.Server, question string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"question": question})
	return post(t, srv, "/api/ask", "application/json", string(body), header...)
}

// POST /api/ask answers with the agent's ResultJSON: its keys, the rows, and
// for a DELETE the refusal with its layer.
func TestAPIAsk(t *testing.T) {
	srv := serve(t, config())
	status, h, body := askAPI(t, srv, qShipped)
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("POST /api/ask: %d %s: %s", status, h.Get("Content-Type"), body)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		t.Fatal(err)
	}
	want := []string{"question", "answer", "sql", "final_sql", "columns", "rows", "steps", "provider", "elapsed_ms", "tokens", "outcome", "cached"}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	var res agent.ResultJSON
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != agent.Answered || !reflect.DeepEqual(res.Columns, []string{"shipped"}) || !reflect.DeepEqual(res.Rows, [][]any{{2.0}}) ||
		res.Question != qShipped || res.Provider != agent.RecordedProvider || len(res.SQL) != 1 || res.SQL[0].Status != agent.StatusOK {
		t.Errorf("POST /api/ask %q = %s", qShipped, body)
	}

	status, _, body = askAPI(t, srv, qDelete)
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if status != 200 || res.Outcome != agent.Refused || len(res.SQL) != 1 || res.SQL[0].Status != agent.StatusRefused ||
		res.SQL[0].Layer != agent.LayerGuard || res.SQL[0].Reason == "" || res.FinalSQL != "" {
		t.Errorf("POST /api/ask %q: %d %s; want the guard's refusal", qDelete, status, body)
	}

	// A question no model can answer here: 503, with the same JSON and a
	// fixed sentence, never the error's text.
	status, _, body = askAPI(t, srv, "What is the meaning of life?")
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || res.Outcome != agent.Failed || res.Error != agent.FailureText(agent.ErrNoModel) {
		t.Errorf("an unrecorded question without a model: %d %s", status, body)
	}
}

// Bad input is a 400 (or 413) with a JSON error that says what to send;
// nothing is asked.
func TestAPIBadInput(t *testing.T) {
	cfg := config()
	cfg.MaxQuestionChars = 40
	srv := serve(t, cfg)
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"empty", `{"question": ""}`, 400, "The question is empty"},
		{"blank", `{"question": " \n\t "}`, 400, "The question is empty"},
		{"no question", `{"q": "How many?"}`, 400, `the body has no "question"`},
		{"not JSON", `question=How many`, 400, "the body must be a JSON object"},
		{"a string", `"How many?"`, 400, "the body must be a JSON object"},
		{"too long", `{"question": "` + strings.Repeat("é", 41) + `"}`, 400, "Your question is 41 characters long; I can take up to 40."},
		{"huge body", `{"question": "` + strings.Repeat("a", 70<<10) + `"}`, 413, "the body is longer than"},
	} {
		status, h, body := post(t, srv, "/api/ask", "application/json", tc.body)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: not JSON: %s", tc.name, body)
		}
		if status != tc.status || !strings.Contains(e.Error, tc.want) || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, status, body, tc.status, tc.want)
		}
	}
}

// The per-person and global limits turn questions away with 429, a
// Retry-After and the limit's name; a refused question is not counted.
func TestAPILimits(t *testing.T) {
	for _, tc := range []struct {
		limits state.Limits
		want   state.Rule
	}{
		{state.Limits{PerMinute: 2, PerDay: 100, GlobalPerDay: 100}, state.RuleUserMinute},
		{state.Limits{PerMinute: 100, PerDay: 2, GlobalPerDay: 100}, state.RuleUserDay},
		{state.Limits{PerMinute: 100, PerDay: 100, GlobalPerDay: 2}, state.RuleGlobalDay},
	} {
		cfg := config()
		cfg.Limits = tc.limits
		srv := serve(t, cfg)
		for i := range 2 {
			if status, _, body := askAPI(t, srv, qShipped); status != 200 {
				t.Fatalf("%s: question %d: %d %s", tc.want, i+1, status, body)
			}
		}
		for range 2 {
			status, h, body := askAPI(t, srv, qShipped)
			var e struct {
				Error        string
				Limit        state.Rule
				RetryAfterMS int64 `json:"retry_after_ms"`
			}
			json.Unmarshal(body, &e)
			if status != http.StatusTooManyRequests || e.Limit != tc.want || e.RetryAfterMS <= 0 || h.Get("Retry-After") == "" || e.Error == "" {
				t.Errorf("%s: third question: %d %v %s", tc.want, status, h, body)
			}
		}
	}
}

// Off loopback, the page and the API need the token: without it, or with
// another one, 401 with a JSON error and nothing asked. The address the
// listener is bound to decides, so the test configures a non-loopback one
// (a documentation address, never bound) and sends requests to the
// handler over loopback.
func TestTokenOffLoopback(t *testing.T) {
	cfg := config()
	cfg.Addr = "192.0.2.10:8080"
	ag, _ := newAgent(t)
	if _, err := web.New(cfg, ag, nil); err == nil {
		t.Fatal("New off loopback without a token succeeded")
	}
	const token = "s3cret-token-for-tests-0123456789"
	cfg.Token = token
	cfg.Limits = state.Limits{PerMinute: 1, PerDay: 100, GlobalPerDay: 100}
	srv := serve(t, cfg)
	for _, auth := range []string{"", "Bearer", "Bearer wrong", "Basic " + token, "Bearer " + token + "x", token} {
		status, h, body := askAPI(t, srv, qShipped, "Authorization", auth)
		var e struct{ Error string }
		if status != http.StatusUnauthorized || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, "SQLBOT_API_TOKEN") ||
			!strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("POST /api/ask with Authorization %q: %d %s; want 401", auth, status, body)
		}
		if status, _, _ := post(t, srv, "/", "application/x-www-form-urlencoded", "question="+url.QueryEscape(qShipped), "Authorization", auth); status != http.StatusUnauthorized {
			t.Errorf("POST / with Authorization %q: %d, want 401", auth, status)
		}
	}
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET / without the token: %d, want 401", resp.StatusCode)
	}
	// The turned-away requests were not counted: the one question a
	// minute is still there, and then the token's limit applies.
	if status, _, body := askAPI(t, srv, qShipped, "Authorization", "Bearer "+token); status != 200 {
		t.Errorf("with the token: %d %s", status, body)
	}
	if status, _, _ := askAPI(t, srv, qShipped, "Authorization", "Bearer "+token); status != http.StatusTooManyRequests {
		t.Errorf("the token's second question in a minute: %d, want 429", status)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.2:80": true, "[::1]:8080": true, "localhost:8080": true, "LOCALHOST:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "192.168.1.5:8080": false, "example.com:80": false,
		"127.0.0.1": false, "": false,
	} {
		if got := web.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// On loopback no token is asked for; the page carries a policy that runs no
// script, and data that reads as HTML arrives as escaped text.
func TestPage(t *testing.T) {
	srv := serve(t, config())
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe") {
		t.Errorf("GET /: %d, CSP %q", resp.StatusCode, csp)
	}
	for _, q := range []string{qShipped, qNotes, qDelete} {
		if !bytes.Contains(page, []byte(`value="`+q+`"`)) {
			t.Errorf("the page does not offer %q", q)
		}
	}
	status, _, body := post(t, srv, "/", "application/x-www-form-urlencoded", "question="+url.QueryEscape(qNotes))
	if status != 200 {
		t.Fatalf("POST / %q: %d", qNotes, status)
	}
	if bytes.Contains(body, []byte("<script>window")) || bytes.Contains(body, []byte(`<img src="x"`)) || bytes.Contains(body, []byte("<b>bold")) {
		t.Errorf("the page carries the data as markup:\n%s", body)
	}
	if !bytes.Contains(body, []byte("&lt;script&gt;window.sqlbotPwned = 1&lt;/script&gt;")) || !bytes.Contains(body, []byte("plain &amp; simple")) {
		t.Errorf("the page lacks the data as escaped text:\n%s", body)
	}
	status, _, body = post(t, srv, "/", "application/x-www-form-urlencoded", "question=")
	if status != 400 || !bytes.Contains(body, []byte("The question is empty")) {
		t.Errorf("POST / with no question: %d", status)
	}
}

// A form posted from another site is refused: a page elsewhere cannot spend
// this server's questions.
func TestCrossOriginFormRefused(t *testing.T) {
	srv := serve(t, config())
	status, _, _ := post(t, srv, "/", "application/x-www-form-urlencoded", "question="+url.QueryEscape(qShipped), "Sec-Fetch-Site", "cross-site")
	if status != http.StatusForbidden {
		t.Errorf("a cross-site form post: %d, want 403", status)
	}
	status, _, _ = askAPI(t, srv, qShipped, "Origin", "https://evil.example")
	if status != http.StatusForbidden {
		t.Errorf("a cross-origin API post: %d, want 403", status)
	}
}

// TestPageChart: a monthly series is drawn inline as a PNG (a data: URL,
// which the page's policy allows for images only) with its description as
// alt text and caption; a one-row answer gets no chart.
func TestPageChart(t *testing.T) {
	srv := serve(t, config())
	status, _, body := post(t, srv, "/", "application/x-www-form-urlencoded", "question="+url.QueryEscape(qMonthly))
	if status != 200 {
		t.Fatalf("POST / %q: %d", qMonthly, status)
	}
	m := regexp.MustCompile(`<figure id="chart" class="chart"><img src="data:image/png;base64,([^"]+)" alt="([^"]+)">`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no chart on the page of %q:\n%s", qMonthly, body)
	}
	data, err := base64.StdEncoding.DecodeString(html.UnescapeString(string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 100 {
		t.Errorf("the chart is %v", b)
	}
	if alt := string(m[2]); !strings.Contains(alt, "6 points") {
		t.Errorf("alt text %q does not say how many points", alt)
	}
	_, _, body = post(t, srv, "/", "application/x-www-form-urlencoded", "question="+url.QueryEscape(qShipped))
	if bytes.Contains(body, []byte(`id="chart"`)) {
		t.Errorf("a one-row answer got a chart")
	}
}
