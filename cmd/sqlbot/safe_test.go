package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent/openaitest"
	"sqlbot/bot/slacktest"
)

// TestServeNeedsPolicy: serve on a database other than the demo does not
// start without a policy, and says how to make one and how to pass it; the
// same database serves with an explicit `expose: all`.
func TestServeNeedsPolicy(t *testing.T) {
	db := chinookPath(t)
	slack := newSlack(t, nil)
	env := []string{"SLACK_APP_TOKEN=" + slack.AppToken(), "SLACK_BOT_TOKEN=" + slack.BotToken(), "SLACK_API_URL=" + slack.URL}
	_, errOut, code := sqlbot(t, env, "serve", "--db", db)
	if code != exitError {
		t.Fatalf("serve without a policy: exit %d, want %d\n%s", code, exitError, errOut)
	}
	for _, want := range []string{"sqlbot policy draft --db " + db + " --out", "--policy", "SQLBOT_POLICY", "expose: all"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the message lacks %q:\n%s", want, errOut)
		}
	}
	if slack.Connections() != 0 {
		t.Error("serve connected to Slack before refusing to start")
	}

	all := filepath.Join(t.TempDir(), "all.yaml")
	if err := os.WriteFile(all, []byte("expose: all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, slack, db, "SQLBOT_POLICY="+all)
}

// TestServeDraftedPolicyChinook: the policy `sqlbot policy draft` writes for
// Chinook loads in serve, which then answers a mention, and a read of a
// column the draft hid is refused.
func TestServeDraftedPolicyChinook(t *testing.T) {
	db := chinookPath(t)
	before := sum(t, db)
	policy := filepath.Join(t.TempDir(), "chinook-policy.yaml")
	if _, errOut, code := sqlbot(t, nil, "policy", "draft", "--db", db, "--out", policy); code != 0 {
		t.Fatalf("policy draft: exit %d: %s", code, errOut)
	}
	ai := openaitest.NewServer(t)
	var emailResult string
	ai.Handle(func(req openai.ChatCompletionRequest) openaitest.Reply {
		results := openaitest.ToolResults(req)
		switch len(results) {
		case 0:
			return openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT Email FROM Customer"}`))
		case 1:
			for _, r := range results {
				emailResult = r
			}
			return openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT count(*) AS tracks FROM Track"}`))
		}
		return openaitest.Final("Chinook holds 3503 tracks.")
	})
	slack := newSlack(t, nil)
	logs := serveInProcess(t, slack, db, "SQLBOT_POLICY="+policy,
		"OPENAI_BASE_URL="+ai.URL, "OPENAI_API_KEY="+openaitest.DefaultAPIKey, "OPENAI_MODEL=test-model")
	answer := mentionAnswered(t, slack, logs, "U1", "How many tracks are there?")
	reply := answer.Text + string(answer.Blocks)
	if !strings.Contains(reply, "3503") || !strings.Contains(reply, "FROM Track") {
		t.Errorf("reply %s, want the figure and its SQL", reply)
	}
	if !strings.Contains(emailResult, "Email") || strings.Contains(emailResult, "@") {
		t.Errorf("the model's read of Customer.Email gave %q, want a refusal naming the column and no address", emailResult)
	}
	if sum(t, db) != before {
		t.Error("Chinook's file changed")
	}
}

// mentionAnswered mentions the bot served with logs in channel C1, as user
// asking question, and returns the first message the bot posts.
func mentionAnswered(t *testing.T, slack *slacktest.Server, logs *served, user, question string) slacktest.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := slack.SendEvent(ctx, slacktest.MentionEvent("C1", user, question, "", "")); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitMessages(ctx, 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	// The bot is done with the question once its working reaction is gone
	// (it records the answer after posting it, before that).
	if _, err := slack.WaitReactions(ctx, 2); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	return msgs[0]
}

// TestTerminalWithoutPolicyWarns: sql, ask and eval on a database other
// than the demo, without a policy, run (the person at the terminal can read
// the file anyway) and warn on stderr how to make one; with a policy, or on
// the demo, they do not warn.
func TestTerminalWithoutPolicyWarns(t *testing.T) {
	db := chinookPath(t)
	out, errOut, code := sqlbot(t, nil, "sql", "--db", db, "SELECT count(*) AS n FROM Track")
	if code != 0 || !strings.Contains(out, "3503") {
		t.Fatalf("sql without a policy: exit %d, %s %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "no policy") || !strings.Contains(errOut, "sqlbot policy draft --db "+db) {
		t.Errorf("sql without a policy warns %q, want it to say so and how to draft one", errOut)
	}
	if strings.Contains(out, "policy") {
		t.Errorf("the warning went to stdout: %q", out)
	}
	_, errOut, _ = sqlbot(t, nil, "ask", "--db", db, "How many tracks are there?")
	if !strings.Contains(errOut, "sqlbot policy draft --db "+db) {
		t.Errorf("ask without a policy warns %q, want how to draft one", errOut)
	}
	_, errOut, _ = sqlbot(t, nil, "sql", "--db", db, "--policy", "testdata/chinook/policy.yaml", "SELECT count(*) FROM Track")
	if strings.Contains(errOut, "policy draft") {
		t.Errorf("sql with a policy warns %q", errOut)
	}
	_, errOut, _ = sqlbot(t, nil, "sql", "--db", demoFile(t), "SELECT count(*) FROM orders")
	if strings.Contains(errOut, "policy draft") {
		t.Errorf("sql on the demo warns %q", errOut)
	}
}
