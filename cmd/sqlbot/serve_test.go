package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sqlbot/agent/openaitest"
	"sqlbot/bot/slacktest"
	"sqlbot/evalrun/demo"
	"sqlbot/roconn"
)

// TestMain lets the test binary stand in for the sqlbot binary: with
// SQLBOT_TEST_MAIN=1 it runs main, so a test can start `sqlbot serve` as a
// real process and signal it.
func TestMain(m *testing.M) {
	if os.Getenv("SQLBOT_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// safeBuffer is a bytes.Buffer that a process (or a goroutine) writes while
// the test reads it.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newSlack starts a fake Slack that grants the app exactly what `sqlbot
// manifest` asks for (with the environment's SQLBOT_SLASH_COMMAND, if any),
// so that a Web API method, an event or a command the manifest lacks fails
// here as it would in a workspace.
func newSlack(t *testing.T, environ []string, opts ...slacktest.Option) *slacktest.Server {
	t.Helper()
	manifest, errOut, code := sqlbot(t, environ, "manifest")
	if code != 0 {
		t.Fatalf("sqlbot manifest: exit %d: %s", code, errOut)
	}
	return slacktest.NewServer(t, append([]slacktest.Option{slacktest.AppManifest([]byte(manifest))}, opts...)...)
}

// TestServeProcess runs `sqlbot serve` as a process against a local Slack
// and a local OpenAI-compatible server: it answers a mention in its thread,
// serves /healthz and /metrics, and on SIGTERM posts the answer still in
// flight before it exits 0. The model holds that answer until the process
// has logged that it is draining, and the test checks that the process was
// still running then: a drain that does not wait fails here.
func TestServeProcess(t *testing.T) {
	db := demoFile(t)
	before := sum(t, db)
	slack := newSlack(t, nil, slacktest.PingInterval(time.Second))
	ai := openaitest.NewServer(t)
	holding := make(chan struct{}) // closed when the model holds the slow answer
	release := make(chan struct{}) // closed by the test once the process drains
	var holdOnce, releaseOnce sync.Once
	releaseModel := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseModel) // before ai's Close, which waits for its handlers
	ai.Handle(func(req openaitest.Request) openaitest.Reply {
		if len(openaitest.ToolResults(req)) == 0 {
			return openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT count(*) AS shipped FROM orders WHERE status = 'shipped'"}`))
		}
		if strings.Contains(openaitest.LastUser(req), "slowly") {
			holdOnce.Do(func() { close(holding) })
			<-release
		}
		return openaitest.Final("2,391 orders were shipped.")
	})
	httpAddr := freeAddr(t)

	cmd := exec.Command(os.Args[0], "serve", "--db", db)
	// An environment of its own: nothing from the developer's shell
	// (SQLBOT_POLICY, OPENAI_*, …) reaches the bot.
	cmd.Env = append([]string{}, "SQLBOT_TEST_MAIN=1",
		"XDG_CACHE_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(),
		"SLACK_APP_TOKEN="+slack.AppToken(), "SLACK_BOT_TOKEN="+slack.BotToken(), "SLACK_API_URL="+slack.URL,
		"OPENAI_BASE_URL="+ai.URL, "OPENAI_API_KEY="+openaitest.DefaultAPIKey, "OPENAI_MODEL=test-model",
		"SQLBOT_HTTP_ADDR="+httpAddr, "SQLBOT_LOG_FORMAT=json")
	logs, exited := startProcess(t, cmd)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := slack.WaitConnected(ctx); err != nil {
		t.Fatalf("the bot never connected: %v\n%s", err, logs.String())
	}

	// A mention is answered once, in its thread, with the SQL.
	if _, err := slack.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "How many orders were shipped?", "1700000001.000100", "")); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitMessages(ctx, 1)
	if err != nil {
		t.Fatalf("no reply: %v\n%s", err, logs.String())
	}
	reply := msgs[0]
	if reply.Channel != "C1" || reply.ThreadTS != "1700000001.000100" {
		t.Errorf("reply in channel %s thread %q; want C1, thread 1700000001.000100", reply.Channel, reply.ThreadTS)
	}
	body := reply.Text + string(reply.Blocks)
	for _, want := range []string{"2,391", "```", "status = 'shipped'"} {
		if !strings.Contains(body, want) {
			t.Errorf("reply lacks %q:\n%s", want, body)
		}
	}

	for path, want := range map[string]string{"/healthz": `"status":"ok"`, "/metrics": "sqlbot_questions_total"} {
		resp, err := http.Get("http://" + httpAddr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d %.200s", path, resp.StatusCode, b)
		}
	}

	// SIGTERM while an answer is provably in flight: the model holds it.
	if _, err := slack.SendEvent(ctx, slacktest.MentionEvent("C1", "U2", "Count shipped orders slowly", "1700000002.000100", "")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-holding:
	case <-ctx.Done():
		t.Fatalf("the second question never reached the model's last turn\n%s", logs.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), `"msg":"bot: draining"`) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the process exited (%v) with an answer in flight, before it was delivered\n%s", err, logs.String())
		case <-ctx.Done():
			t.Fatalf("no drain within 30 s of SIGTERM\n%s", logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("the process exited (%v) while an answer was in flight\n%s", err, logs.String())
	default:
	}
	releaseModel()
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-ctx.Done():
		t.Fatalf("still running 30 s after SIGTERM\n%s", logs.String())
	}
	var answered bool
	for _, m := range slack.Messages() {
		if m.ThreadTS == "1700000002.000100" && strings.Contains(m.Text+string(m.Blocks), "2,391") {
			answered = true
		}
	}
	if !answered {
		t.Errorf("the in-flight answer was not posted before exit; messages: %+v", slack.Messages())
	}
	if strings.Contains(logs.String(), "slowly") {
		t.Error("the logs contain a question's text")
	}
	if sum(t, db) != before {
		t.Error("the database file changed")
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeSlashTables runs serve in-process without a model and asks
// `/sqlbot tables`: the reply lists every table the demo's policy exposes,
// under one heading. SLACK_API_URL is given without its trailing "/", which
// the bot adds.
func TestServeSlashTables(t *testing.T) {
	db := demoFile(t)
	slack := newSlack(t, nil)
	logs := serveInProcess(t, slack, db)
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if _, err := slack.SendSlash(wctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "tables", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitEphemeral(wctx, 1)
	if err != nil {
		t.Fatalf("no reply: %v\n%s", err, logs.String())
	}
	m := msgs[0]
	blocks := string(m.Blocks)
	if m.ResponseType != "ephemeral" {
		t.Errorf("tables reply is %q, want ephemeral", m.ResponseType)
	}
	if n := strings.Count(blocks, "What I can read"); n != 1 {
		t.Errorf("the heading appears %d times, want 1:\n%s", n, blocks)
	}
	policy, err := roconn.ParsePolicy(demo.Policy())
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := roconn.Open(wctx, db, policy, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	objs := rdb.Objects()
	if len(objs) < 3 {
		t.Fatalf("the demo exposes %d objects", len(objs))
	}
	for _, o := range objs {
		if want := fmt.Sprintf("• `%s` (", o.Name); !strings.Contains(blocks, want) {
			t.Errorf("the tables reply lacks %q:\n%s", want, blocks)
		}
	}
}

// A served is `sqlbot serve` running in this process for a test.
type served struct {
	mu   sync.Mutex
	logs bytes.Buffer // serve's stderr, written while it runs
	stop func() error // cancels serve and returns what run returned
}

func (s *served) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.Write(p)
}

// String returns what serve has logged so far.
func (s *served) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// startServe runs `sqlbot serve --db db` with env in this process, and
// stops it when the test ends (or on s.stop). ctx ends when it is stopped.
func startServe(t *testing.T, db string, env []string) (ctx context.Context, s *served) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s = &served{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--db", db}, env, io.Discard, s) }()
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { s.stop() })
	return ctx, s
}

// serveInProcess runs `sqlbot serve --db db` in this process against slack,
// with settings added to the Slack ones (SLACK_API_URL without its trailing
// "/", which the bot must add), waits until it is connected, and stops it
// when the test ends.
func serveInProcess(t *testing.T, slack *slacktest.Server, db string, settings ...string) *served {
	t.Helper()
	env := append([]string{
		"SLACK_APP_TOKEN=" + slack.AppToken(), "SLACK_BOT_TOKEN=" + slack.BotToken(),
		"SLACK_API_URL=" + strings.TrimSuffix(slack.URL, "/"),
		"SQLBOT_LOG_LEVEL=error", "XDG_CACHE_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir(),
	}, settings...)
	ctx, s := startServe(t, db, env)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := slack.WaitConnected(wctx); err != nil {
		t.Fatalf("serve never connected: %v\n%s", err, s)
	}
	return s
}

// TestHealthzWhileBusy: with every pooled connection running a runaway
// statement that four questions' model asked for, /healthz still answers
// 200 at once: its check of the database has a connection of its own and
// never queues behind questions.
func TestHealthzWhileBusy(t *testing.T) {
	db := demoFile(t)
	slack := slacktest.NewServer(t)
	ai := openaitest.NewServer(t)
	const runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	ai.Handle(func(req openaitest.Request) openaitest.Reply {
		if len(openaitest.ToolResults(req)) == 0 {
			args, _ := json.Marshal(map[string]string{"sql": runaway})
			return openaitest.Calls(openaitest.Call("run_sql", string(args)))
		}
		return openaitest.Final("That query ran too long.")
	})
	addr := freeAddr(t)
	logs := serveInProcess(t, slack, db, "OPENAI_BASE_URL="+ai.URL, "OPENAI_API_KEY="+openaitest.DefaultAPIKey, "OPENAI_MODEL=m",
		"SQLBOT_HTTP_ADDR="+addr, "SQLBOT_QUERY_TIMEOUT=3s", "SQLBOT_MAX_CONCURRENT=4")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 4 {
		ev := slacktest.MentionEvent("C1", fmt.Sprintf("U%d", i), "Count forever", fmt.Sprintf("1700000010.00010%d", i), "")
		if _, err := slack.SendEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	for ai.Count() < 4 {
		if ctx.Err() != nil {
			t.Fatalf("the questions never reached the model\n%s", logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the four statements are running
	var slowest time.Duration
	for range 5 {
		start := time.Now()
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		slowest = max(slowest, took)
		if resp.StatusCode != 200 || took > time.Second {
			t.Errorf("/healthz with the pool busy: %d after %v, want 200 at once", resp.StatusCode, took)
		}
	}
	if ai.Count() >= 8 {
		t.Errorf("the runaway statements ended before /healthz was asked (%d model calls); the test proves nothing", ai.Count())
	}
	t.Logf("/healthz answered within %v while four runaway statements held the pool", slowest)
	if _, err := slack.WaitMessages(ctx, 4); err != nil {
		t.Errorf("the four questions were not answered: %v", err)
	}
}

// startProcess starts cmd with its stderr in logs (written by the process's
// output copier while the test reads it) and returns logs and a channel
// that receives cmd.Wait's error once; a receiver that also needs the
// cleanup to see it sends it back. The process is killed when the test
// ends.
func startProcess(t *testing.T, cmd *exec.Cmd) (*safeBuffer, chan error) {
	t.Helper()
	logs := &safeBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return logs, exited
}
