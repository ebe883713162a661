package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent/openaitest"
	"sqlbot/bot/slacktest"
	"sqlbot/evalrun"
)

// TestVerifiedAnswersEndToEnd: through the fake Slack, a mention is
// answered; a non-verifier's ✅ stores nothing, a verifier's stores the
// answer; `/sqlbot verified` lists it; removing the ✅ withdraws it; a
// restart (a new serve on the same state file) keeps it; and `sqlbot eval
// --questions verified --model reference` scores it correct, and exports
// it as a question file that evaluates the same.
func TestVerifiedAnswersEndToEnd(t *testing.T) {
	db := demoFile(t)
	stateFile := filepath.Join(t.TempDir(), "state.db")
	const (
		verifier = "U0VERA"
		asker    = "U0ANN"
		question = "How many orders were shipped?"
		sqlText  = "SELECT count(*) AS shipped FROM orders WHERE status = 'shipped'"
	)
	ai := openaitest.NewServer(t)
	ai.Handle(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if len(openaitest.ToolResults(req)) == 0 {
			args, _ := json.Marshal(map[string]string{"sql": sqlText})
			return openaitest.Calls(openaitest.Call("run_sql", string(args)))
		}
		return openaitest.Final("That many orders were shipped.")
	})
	settings := []string{"SQLBOT_STATE=" + stateFile, "SQLBOT_VERIFIERS=" + verifier,
		"OPENAI_BASE_URL=" + ai.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=test-model"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	slack := newSlack(t, nil)
	served := serveInProcess(t, slack, db, settings...)
	answer := mentionAnswered(t, slack, served, asker, question)
	verifiedList := func(s *slacktest.Server, n int) string {
		t.Helper()
		if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "verified", UserID: asker, ChannelID: "C1"}); err != nil {
			t.Fatal(err)
		}
		eph, err := s.WaitEphemeral(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		m := eph[n-1]
		return m.Text + string(m.Blocks)
	}
	send := func(ev slacktest.EventSpec) {
		t.Helper()
		if _, err := slack.SendEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}

	send(slacktest.ReactionAddedEvent("C1", asker, "white_check_mark", answer.TS)) // not a verifier
	if _, err := slack.WaitEphemeral(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := verifiedList(slack, 2); strings.Contains(got, question) {
		t.Fatalf("a non-verifier's ✅ verified it: %s", got)
	}
	send(slacktest.ReactionAddedEvent("C1", verifier, "white_check_mark", answer.TS))
	if _, err := slack.WaitEphemeral(ctx, 3); err != nil { // the verifier's confirmation
		t.Fatal(err)
	}
	if got := verifiedList(slack, 4); !strings.Contains(got, question) || !strings.Contains(got, "status = &#39;shipped&#39;") && !strings.Contains(got, "status = 'shipped'") {
		t.Fatalf("/sqlbot verified after the verifier's ✅: %s", got)
	}
	send(slacktest.ReactionRemovedEvent("C1", verifier, "white_check_mark", answer.TS))
	if _, err := slack.WaitEphemeral(ctx, 5); err != nil { // "withdrawn"
		t.Fatal(err)
	}
	if got := verifiedList(slack, 6); strings.Contains(got, question) {
		t.Fatalf("still listed after the ✅ was removed: %s", got)
	}
	send(slacktest.ReactionAddedEvent("C1", verifier, "white_check_mark", answer.TS))
	if _, err := slack.WaitEphemeral(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := served.stop(); err != nil {
		t.Fatal(err)
	}

	// A restart, with a new connection to Slack, on the same state file.
	slack2 := newSlack(t, nil)
	served2 := serveInProcess(t, slack2, db, settings...)
	if got := verifiedList(slack2, 1); !strings.Contains(got, question) {
		t.Fatalf("after a restart, /sqlbot verified = %s", got)
	}
	if err := served2.stop(); err != nil {
		t.Fatal(err)
	}

	env := []string{"SQLBOT_STATE=" + stateFile}
	out, errOut, code := sqlbot(t, env, "eval", "--db", db, "--questions", "verified", "--model", "reference", "--json")
	if code != 0 {
		t.Fatalf("eval --questions verified: exit %d\n%s", code, errOut)
	}
	var rep evalrun.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Answerable != 1 || rep.ExecutionAccuracy != 1 || rep.Passed != 1 {
		t.Errorf("eval of the verified answers: %d answerable, accuracy %v, %d passed; want the one, correct\n%s", rep.Answerable, rep.ExecutionAccuracy, rep.Passed, errOut)
	}

	file := filepath.Join(t.TempDir(), "verified.json")
	if _, errOut, code := sqlbot(t, env, "eval", "export-verified", "--out", file); code != 0 {
		t.Fatalf("export-verified: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := evalrun.ParseQuestions(data)
	if err != nil || len(qs) != 1 || qs[0].Question != question || qs[0].ReferenceSQL == nil || *qs[0].ReferenceSQL != sqlText || qs[0].Kind != evalrun.Answerable {
		t.Fatalf("exported %s (%v), want the one verified answer as an answerable question", data, err)
	}
	out, errOut, code = sqlbot(t, nil, "eval", "--db", db, "--questions", file, "--model", "reference", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.ExecutionAccuracy != 1 {
		t.Errorf("eval of the exported file: exit %d, %+v, %v\n%s", code, rep, err, errOut)
	}
}

// TestEvalVerifiedNone: with no verified answer yet, eval --questions
// verified says how to get some, and export-verified writes nothing.
func TestEvalVerifiedNone(t *testing.T) {
	db := demoFile(t)
	env := []string{"SQLBOT_STATE=" + filepath.Join(t.TempDir(), "state.db")}
	_, errOut, code := sqlbot(t, env, "eval", "--db", db, "--questions", "verified", "--model", "reference")
	if code != exitError || !strings.Contains(errOut, "white_check_mark") && !strings.Contains(errOut, "✅") {
		t.Errorf("no verified answers: exit %d, %q; want 1 and how to verify one", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "out.json")
	if _, _, code := sqlbot(t, env, "eval", "export-verified", "--out", file); code != exitError {
		t.Errorf("export of nothing: exit %d, want 1", code)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("an empty export was written")
	}
}
