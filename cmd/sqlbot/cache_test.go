package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
	"sqlbot/agent/openaitest"
	"sqlbot/bot/slacktest"
)

// A question asked in Slack, then through the JSON API and the web page,
// then from the command line, then in Slack again in other words, makes one
// model exchange in all: the repeats are answered from the cache that
// serve's surfaces and ask share through the state file, and say so.
func TestRepeatAnsweredOnceAcrossSurfaces(t *testing.T) {
	db := demoFile(t)
	ai := openaitest.NewServer(t)
	ai.Handle(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if len(openaitest.ToolResults(req)) == 0 {
			return openaitest.Calls(openaitest.Call("run_sql", `{"sql":"SELECT count(*) AS shipped FROM orders WHERE status = 'shipped'"}`))
		}
		return openaitest.Final("2,391 orders were shipped.")
	})
	settings := []string{"OPENAI_BASE_URL=" + ai.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=test-model",
		"SQLBOT_STATE=" + filepath.Join(t.TempDir(), "state.db")}
	slack := newSlack(t, nil)
	addr := freeAddr(t)
	logs := serveInProcess(t, slack, db, append(settings, "SQLBOT_HTTP_ADDR="+addr)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := slack.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "How many orders were shipped?", "1700000001.000100", "")); err != nil {
		t.Fatal(err)
	}
	msgs, err := slack.WaitMessages(ctx, 1)
	if err != nil {
		t.Fatalf("no reply: %v\n%s", err, logs)
	}
	if body := msgs[0].Text + string(msgs[0].Blocks); !strings.Contains(body, "2,391") || strings.Contains(body, "from the cache") {
		t.Fatalf("first reply, want the model's answer, not from the cache:\n%s", body)
	}
	exchanges := ai.Count()
	if exchanges == 0 {
		t.Fatal("the model was not asked")
	}

	base := "http://" + addr
	status, body := apiAsk(t, base, "How many orders were shipped", "")
	var api agent.ResultJSON
	if err := json.Unmarshal(body, &api); err != nil || status != 200 {
		t.Fatalf("POST /api/ask: %d %s\n%s", status, body, logs)
	}
	if !api.Cached || !strings.Contains(api.Answer, "2,391") || !strings.Contains(api.FinalSQL, "status = 'shipped'") || api.Tokens.Prompt != 0 {
		t.Errorf("POST /api/ask = %s\nwant the cached answer with its SQL, and no tokens", body)
	}
	status, page := pageAsk(t, base, "how many orders were SHIPPED?")
	if status != 200 || !strings.Contains(page, "2,391") || !strings.Contains(page, `<span class="cached">from the cache</span>`) {
		t.Errorf("the page: %d, want the answer from the cache:\n%s", status, page)
	}

	out, errOut, code := sqlbot(t, settings, "ask", "--db", db, "--json", "how many orders were shipped")
	if code != exitOK {
		t.Fatalf("ask: exit %d: %s", code, errOut)
	}
	var js struct {
		Answer   string `json:"answer"`
		FinalSQL string `json:"final_sql"`
		Cached   bool   `json:"cached"`
		Rows     [][]any
		Tokens   struct{ Prompt, Completion int }
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("ask --json: %v\n%s", err, out)
	}
	if !js.Cached || !strings.Contains(js.Answer, "2,391") || !strings.Contains(js.FinalSQL, "status = 'shipped'") ||
		len(js.Rows) != 1 || js.Tokens.Prompt != 0 {
		t.Errorf("ask --json = %s\nwant the cached answer with its SQL and rows, and no tokens", out)
	}

	if _, err := slack.SendEvent(ctx, slacktest.MentionEvent("C1", "U2", "HOW MANY ORDERS WERE SHIPPED", "1700000002.000100", "")); err != nil {
		t.Fatal(err)
	}
	msgs, err = slack.WaitMessages(ctx, 2)
	if err != nil {
		t.Fatalf("no second reply: %v\n%s", err, logs)
	}
	if body := msgs[1].Text + string(msgs[1].Blocks); !strings.Contains(body, "2,391") || !strings.Contains(body, "from the cache") ||
		!strings.Contains(body, "status = 'shipped'") {
		t.Errorf("second reply, want the answer with its SQL, from the cache:\n%s", body)
	}
	if n := ai.Count(); n != exchanges {
		t.Errorf("the model got %d requests in all, want the %d of the first answer", n, exchanges)
	}

	// SQLBOT_CACHE_TTL=0 turns it off: the model is asked again.
	if _, errOut, code := sqlbot(t, append(settings, "SQLBOT_CACHE_TTL=0"), "ask", "--db", db, "how many orders were shipped"); code != exitOK {
		t.Fatalf("ask with the cache off: exit %d: %s", code, errOut)
	}
	if n := ai.Count(); n == exchanges {
		t.Error("with SQLBOT_CACHE_TTL=0 the model was not asked")
	}
}
