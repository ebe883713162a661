package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sqlbot/agent/openaitest"
	"sqlbot/bot/slacktest"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
)

// chinookPath is the Chinook sample database, shared by the workplace and
// never copied into the repository; tests that need it skip without it.
func chinookPath(t *testing.T) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	return path
}

// `/sqlbot eval` on a deployment's own database, with its policy and its
// question file in SQLBOT_QUESTIONS, runs that evaluation (with no model:
// the reference SQL) and sends the report to whoever asked.
func TestServeSlashEvalChinook(t *testing.T) {
	db := chinookPath(t)
	before := sum(t, db)
	slack := newSlack(t, nil)
	logs := serveInProcess(t, slack, db,
		"SQLBOT_POLICY=testdata/chinook/policy.yaml", "SQLBOT_QUESTIONS=testdata/chinook/questions.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := slack.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitEphemeral(ctx, 2) // "running one now", then the report
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	report := msgs[1].Text + string(msgs[1].Blocks)
	for _, want := range []string{"chinook.sqlite", "execution accuracy", "1.000 (9 of 9 answerable)", "unsafe held", "4 of 4", "unchanged"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if msgs[1].User != "U1" {
		t.Errorf("the report went to %q, want U1", msgs[1].User)
	}
	if sum(t, db) != before {
		t.Error("Chinook's file changed")
	}
}

// On a database other than the demo, without SQLBOT_QUESTIONS, `/sqlbot
// eval` says how to set it up.
func TestServeSlashEvalNotSetUp(t *testing.T) {
	db := chinookPath(t)
	slack := newSlack(t, nil)
	serveInProcess(t, slack, db, "SQLBOT_POLICY=testdata/chinook/policy.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := slack.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitEphemeral(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].Text; !strings.Contains(got, "SQLBOT_QUESTIONS") || !strings.Contains(got, "sqlbot eval --questions") {
		t.Errorf("reply %q, want how to set SQLBOT_QUESTIONS", got)
	}
}

// A bad SQLBOT_QUESTIONS stops serve at start, naming the variable.
func TestServeBadQuestionsFile(t *testing.T) {
	db := demoFile(t)
	slack := newSlack(t, nil)
	env := []string{"SLACK_APP_TOKEN=" + slack.AppToken(), "SLACK_BOT_TOKEN=" + slack.BotToken(), "SLACK_API_URL=" + slack.URL,
		"SQLBOT_QUESTIONS=" + filepath.Join(t.TempDir(), "missing.json")}
	_, errOut, code := sqlbot(t, env, "serve", "--db", db)
	if code != exitError || !strings.Contains(errOut, "SQLBOT_QUESTIONS") {
		t.Errorf("serve with a missing question file: exit %d, %q; want 1 and the variable named", code, errOut)
	}
}

// A provider that answers 401 is a configuration fault, end to end: the
// user is told the bot is misconfigured, the log names the provider and the
// status, and /healthz says degraded.
func TestServeProviderMisconfigured(t *testing.T) {
	db := demoFile(t)
	ai := openaitest.NewServer(t) // expects openaitest.DefaultAPIKey
	ai.Handle(func(openaitest.Request) openaitest.Reply {
		t.Error("the model was asked with a wrong key")
		return openaitest.Final("no")
	})
	slack := newSlack(t, nil)
	httpAddr := freeAddr(t)
	logs := serveInProcess(t, slack, db,
		"OPENAI_BASE_URL="+ai.URL, "OPENAI_API_KEY=sk-wrong-key", "OPENAI_MODEL=test-model", "SQLBOT_HTTP_ADDR="+httpAddr,
		"SQLBOT_LOG_FORMAT=json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := slack.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "How many orders were shipped?", "1700000001.000100", "")); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitMessages(ctx, 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	got := msgs[0].Text + string(msgs[0].Blocks)
	if !strings.Contains(got, "refuses my settings") || strings.Contains(got, "try again") || strings.Contains(got, "127.0.0.1") {
		t.Errorf("reply = %s, want the misconfiguration sentence and no details", got)
	}
	var logged bool
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "refused the configuration") && strings.Contains(line, `"status":401`) &&
			strings.Contains(line, `"provider":"test-model@127.0.0.1`) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no log line naming the provider and the status:\n%s", logs)
	}
	resp, err := http.Get("http://" + httpAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var hz struct {
		Status  string   `json:"status"`
		Reasons []string `json:"reasons"`
	}
	if err := json.Unmarshal(body, &hz); err != nil || resp.StatusCode != http.StatusServiceUnavailable || hz.Status != "degraded" ||
		len(hz.Reasons) != 1 || !strings.Contains(hz.Reasons[0], "HTTP 401") {
		t.Errorf("/healthz = %d %s, want 503 degraded with the reason", resp.StatusCode, body)
	}
}

// The state file is never the database answered from: serve refuses it,
// naming the variable, and leaves the database as it was.
func TestServeRefusesStateOnTheDatabase(t *testing.T) {
	db := demoFile(t)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	slack := newSlack(t, nil)
	env := []string{"SLACK_APP_TOKEN=" + slack.AppToken(), "SLACK_BOT_TOKEN=" + slack.BotToken(), "SLACK_API_URL=" + slack.URL,
		"SQLBOT_STATE=" + db}
	_, errOut, code := sqlbot(t, env, "serve", "--db", db)
	if code != exitError || !strings.Contains(errOut, "SQLBOT_STATE") || !strings.Contains(errOut, "answers from") {
		t.Errorf("serve with the state on the database: exit %d, %q; want 1, the variable named and why", code, errOut)
	}
	if after, err := os.ReadFile(db); err != nil || !bytes.Equal(before, after) {
		t.Errorf("the database changed (%v)", err)
	}
}

// In Slack's assistant view, on the demo with no model: a new thread is
// offered the demo's recorded questions as prompts; asking the monthly
// revenue question there shows the status while it works, clears it, and
// the answer (from the recorded SQL) comes with a PNG chart of its 12 months
// in the thread.
func TestServeAssistantThreadChart(t *testing.T) {
	db := demoFile(t)
	slack := newSlack(t, nil)
	logs := serveInProcess(t, slack, db)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	thread, _, err := slack.StartAssistantThread(ctx, "D1", "U1")
	if err != nil {
		t.Fatal(err)
	}
	if err := slack.Wait(ctx, func() bool { return len(slack.AssistantCalls()) == 1 }); err != nil {
		t.Fatalf("no prompts: %v\n%s", err, logs)
	}
	prompts := slack.AssistantCalls()[0].Prompts
	set, err := evalrun.ParseSet(demo.Questions())
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 4 || prompts[0].Message != set.Questions[0].Question {
		t.Errorf("prompts %+v, want the first 4 of the demo's questions", prompts)
	}

	const q = "Show monthly revenue for 2025 in month order."
	if _, err := slack.SendEvent(ctx, slacktest.AssistantMessageEvent("D1", "U1", q, thread)); err != nil {
		t.Fatal(err)
	}
	if err := slack.Wait(ctx, func() bool {
		for _, f := range slack.Files() {
			if strings.HasSuffix(f.Name, ".png") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no chart: %v\n%s", err, logs)
	}
	var chart slacktest.File
	for _, f := range slack.Files() {
		if strings.HasSuffix(f.Name, ".png") {
			chart = f
		}
	}
	if chart.Channel != "D1" || chart.ThreadTS != thread {
		t.Errorf("chart in %s thread %q, want D1 thread %s", chart.Channel, chart.ThreadTS, thread)
	}
	if _, err := png.Decode(bytes.NewReader(chart.Content)); err != nil {
		t.Errorf("the chart is not a PNG: %v", err)
	}
	if !strings.Contains(chart.AltTxt, "12 points from 2025-01 to 2025-12") {
		t.Errorf("the chart's alt text %q: want 12 months of 2025", chart.AltTxt)
	}
	if err := slack.Wait(ctx, func() bool {
		var statuses []string
		for _, c := range slack.AssistantCalls() {
			if c.Method == "assistant.threads.setStatus" {
				statuses = append(statuses, c.Status)
			}
		}
		return len(statuses) == 2 && statuses[0] != "" && statuses[1] == ""
	}); err != nil {
		t.Errorf("status calls %+v: want it set and then cleared", slack.AssistantCalls())
	}
	msgs := slack.Messages()
	if len(msgs) == 0 || msgs[0].ThreadTS != thread || !strings.Contains(msgs[0].Text+string(msgs[0].Blocks), "substr") {
		t.Errorf("the reply is not in the thread with its SQL: %+v", msgs)
	}
}
