package bot_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/bot"
	"sqlbot/bot/slacktest"
)

// What a real workspace does to a bot, through the real slack-go client
// against the strict fake: big files, private notices, a slow reaction,
// DMs with files, a misconfigured model provider, several connections.

// bigResult is an answered result of about size bytes of CSV: rows of one
// id and one long text cell.
func bigResult(q string, size int) *agent.Result {
	const cell = 1000
	n := size / (cell + 8)
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i + 1), strings.Repeat(string(rune('a'+i%26)), cell)}
	}
	return &agent.Result{
		Question: q, Answer: fmt.Sprintf("Here are the %d notes.", n),
		FinalSQL: "SELECT id, note FROM notes", Columns: []string{"id", "note"}, Rows: rows,
		Steps: 2, Provider: "fake:big", Elapsed: time.Second, Outcome: agent.Answered,
	}
}

// A 2 MB result reaches the thread as a plain .csv file (a snippet is
// limited to 1 MB) holding every row, and the reply's promise holds.
func TestBigResultReachesThreadAsFile(t *testing.T) {
	res := bigResult("all notes", 2<<20)
	ans := newFakeAnswerer()
	ans.answer = func(context.Context, agent.Request) (*agent.Result, error) { return res, nil }
	h := start(t, ans, options{})
	const ts = "1700010000.000100"
	h.send(slacktest.MentionEvent(channel, user, "all notes", ts, ""))
	reply := h.waitMessages(1)[0]
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Files()) == 1 }); err != nil {
		t.Fatal("no file uploaded:", err)
	}
	f := h.s.Files()[0]
	if f.SnippetType != "" || !strings.HasSuffix(f.Name, ".csv") || f.Channel != channel || f.ThreadTS != ts {
		t.Errorf("file %q (snippet type %q) in %s thread %q; want a plain .csv in the question's thread", f.Name, f.SnippetType, f.Channel, f.ThreadTS)
	}
	if len(f.Content) < 2_000_000 {
		t.Errorf("the file has %d bytes, want the whole 2 MB result", len(f.Content))
	}
	recs, err := csv.NewReader(bytes.NewReader(f.Content)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(res.Rows)+1 || !slices.Equal(recs[0], []string{"id", "note"}) {
		t.Fatalf("the file has %d records, want a header and %d rows", len(recs), len(res.Rows))
	}
	for i, row := range res.Rows {
		if recs[i+1][0] != fmt.Sprint(row[0]) || recs[i+1][1] != row[1] {
			t.Fatalf("row %d of the file differs from the result", i+1)
		}
	}
	if got := text(t, reply); !strings.Contains(got, "all in the CSV below") {
		t.Errorf("the reply does not promise the file:\n%s", got)
	}
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d replies, want 1", len(posted))
	}
}

// A CSV longer than MaxCSVBytes holds the first rows that fit, and the reply
// says how many.
func TestCSVCappedAtMaxCSVBytes(t *testing.T) {
	res := bigResult("notes", 20_000)
	ans := newFakeAnswerer()
	ans.answer = func(context.Context, agent.Request) (*agent.Result, error) { return res, nil }
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.MaxCSVBytes = 5000 }})
	h.send(slacktest.MentionEvent(channel, user, "notes", "1700010100.000100", ""))
	reply := h.waitMessages(1)[0]
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Files()) == 1 }); err != nil {
		t.Fatal(err)
	}
	f := h.s.Files()[0]
	recs, err := csv.NewReader(bytes.NewReader(f.Content)).ReadAll()
	if err != nil || len(f.Content) > 5000 || len(recs) < 2 || len(recs)-1 >= len(res.Rows) {
		t.Fatalf("file of %d bytes with %d records (%v); want at most 5000 bytes of whole rows, fewer than %d", len(f.Content), len(recs), err, len(res.Rows))
	}
	want := fmt.Sprintf("the first %d in the CSV below, which is limited to 4.9 KiB", len(recs)-1)
	if got := text(t, reply); !strings.Contains(got, want) {
		t.Errorf("reply lacks %q:\n%s", want, got)
	}
}

// When the CSV cannot be uploaded, the reply is corrected: it no longer
// promises the file, and says it could not be attached. If even the edit
// fails, a line in the thread says it.
func TestCSVUploadFailureSaidInThread(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) { return echo(req.Question, 25), nil }
	h := start(t, ans, options{})
	h.s.FailNext("files.getUploadURLExternal", "file_uploads_disabled")
	const ts = "1700010200.000100"
	h.send(slacktest.MentionEvent(channel, user, "all of them", ts, ""))
	msgs := h.waitMessages(2)
	if msgs[1].Method != "chat.update" || msgs[1].TS != msgs[0].TS {
		t.Fatalf("messages = %+v, want the reply, then an edit of it", msgs)
	}
	if got := text(t, msgs[1]); strings.Contains(got, "CSV below") || !strings.Contains(got, "could not be attached") {
		t.Errorf("the corrected reply still promises the file, or does not say it failed:\n%s", got)
	}

	h.s.FailNext("files.getUploadURLExternal", "file_uploads_disabled")
	h.s.FailNext("chat.update", "cant_update_message")
	const ts2 = "1700010200.000200"
	h.send(slacktest.MentionEvent(channel, user, "all of them again", ts2, ""))
	msgs = h.waitMessages(4)
	if m := msgs[3]; m.Method != "chat.postMessage" || m.ThreadTS != ts2 || !strings.Contains(text(t, m), "couldn't attach the CSV file") {
		t.Errorf("after a failed edit: %+v, want a line in the thread saying the file is missing", m)
	}
	if n := len(h.s.Files()); n != 0 {
		t.Errorf("%d files, want none", n)
	}
}

// Notices meant for one person sent on a follow-up in an answered thread (a
// rate limit, a question too long) go to that person only, with
// chat.postEphemeral into that thread, where Slack shows them; the thread
// itself gets nothing for the others to see.
func TestNoticesInAThreadArePrivate(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.RatePerMinute = 1 }})
	const root = "1700010150.000100"
	h.send(slacktest.MentionEvent(channel, user, "orders in June?", root, ""))
	h.waitMessages(1)
	h.send(slacktest.MentionEvent(channel, user, "and in July?", "1700010150.000200", root))
	long := strings.Repeat("and what about the orders in August? ", 20) // over 700 characters
	h.send(slacktest.MentionEvent(channel, "U0BOB", long, "1700010150.000300", root))
	h.waitEphemeral(2)
	posted := h.postedAfterStop()

	want := map[string]string{user: "You've asked 1 question in the last minute", "U0BOB": "characters long; I can take up to 500."}
	for _, m := range h.s.Ephemeral() {
		w, ok := want[m.User]
		if !ok {
			t.Errorf("a notice for %s, who was not limited: %q", m.User, text(t, m))
			continue
		}
		delete(want, m.User)
		if got := text(t, m); !strings.Contains(got, w) || m.Method != "chat.postEphemeral" || m.Channel != channel ||
			m.ThreadTS != root || m.Hidden {
			t.Errorf("the notice for %s: %q by %s in %s thread %q (hidden %v); want %q shown in thread %s",
				m.User, got, m.Method, m.Channel, m.ThreadTS, m.Hidden, w, root)
		}
	}
	for u := range want {
		t.Errorf("no notice for %s", u)
	}
	if len(posted) != 1 || posted[0].ThreadTS != root || !strings.Contains(text(t, posted[0]), "You asked: orders in June?") {
		t.Errorf("the thread shows %d messages for everyone, want only the first answer: %+v", len(posted), posted)
	}
	for _, m := range h.s.Messages() {
		if m.Method != "chat.postMessage" {
			t.Errorf("the thread's messages were changed: %s %q", m.Method, text(t, m))
		}
	}
	if n := len(ans.requests()); n != 1 {
		t.Errorf("Answerer called %d times, want 1", n)
	}
}

// A notice for someone who is no longer in the channel (they left before it
// was sent) is refused by Slack with user_not_in_channel: the bot logs it
// once, does not try again, and posts nothing in its place.
func TestNoticeToSomeoneNotInChannel(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	hold := h.s.HoldNext("chat.postEphemeral")
	defer hold.Release()
	h.send(slacktest.MentionEvent(channel, user, "", "1700010170.000100", "")) // a bare mention: the help, for user only
	select {
	case <-hold.Arrived():
	case <-h.ctx().Done():
		t.Fatal("the notice was never sent")
	}
	h.s.UserLeave(channel, user)
	hold.Release()
	// The failure is logged once the call is over, retries and all.
	deadline := time.Now().Add(raceSlowdown * 5 * time.Second)
	for !strings.Contains(h.logs.String(), "user_not_in_channel") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the refused notice:\n%s", h.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, c := range h.s.Calls() {
		switch c.Method {
		case "chat.postEphemeral", "chat.postMessage", "chat.update", "files.completeUploadExternal":
			calls = append(calls, c.Method+":"+c.Error)
		}
	}
	if !slices.Equal(calls, []string{"chat.postEphemeral:user_not_in_channel"}) {
		t.Errorf("calls = %q, want one refused chat.postEphemeral and nothing else", calls)
	}
	if n := len(h.s.Messages()) + len(h.s.Ephemeral()); n != 0 {
		t.Errorf("%d messages posted, want none", n)
	}
	var logged int
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "post notice failed") && strings.Contains(line, "user_not_in_channel") {
			logged++
		}
	}
	if logged != 1 {
		t.Errorf("the refused notice was logged %d times, want once:\n%s", logged, h.logs.String())
	}
}

// The CSV can fail at each of upload v2's three steps, not only the first:
// when files.completeUploadExternal refuses to share it, or when the POST
// of its bytes fails, the reply is corrected as well, or, if the edit fails
// too, a line in the thread says the file is missing. Nothing is shared.
func TestCSVUploadFailsAtEveryStep(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault func(s *slacktest.Server)
		step  string // the call recorded as failed
	}{
		{"complete refused", func(s *slacktest.Server) { s.FailNext("files.completeUploadExternal", "file_update_failed") },
			"files.completeUploadExternal"},
		{"bytes not taken", func(s *slacktest.Server) { s.StatusNext("upload_url", http.StatusInternalServerError) }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ans := newFakeAnswerer()
			ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) { return echo(req.Question, 25), nil }
			h := start(t, ans, options{})
			tt.fault(h.s)
			const ts = "1700010250.000100"
			h.send(slacktest.MentionEvent(channel, user, "all of them", ts, ""))
			msgs := h.waitMessages(2)
			if !strings.Contains(text(t, msgs[0]), "CSV below") {
				t.Fatalf("the reply does not promise a file, so the test shows nothing:\n%s", text(t, msgs[0]))
			}
			if msgs[1].Method != "chat.update" || msgs[1].TS != msgs[0].TS {
				t.Fatalf("messages = %+v, want the reply, then an edit of it", msgs)
			}
			if got := text(t, msgs[1]); strings.Contains(got, "CSV below") || !strings.Contains(got, "could not be attached") {
				t.Errorf("the corrected reply still promises the file, or does not say it failed:\n%s", got)
			}

			tt.fault(h.s)
			h.s.FailNext("chat.update", "cant_update_message")
			const ts2 = "1700010250.000200"
			h.send(slacktest.MentionEvent(channel, user, "all of them again", ts2, ""))
			msgs = h.waitMessages(4)
			if m := msgs[3]; m.Method != "chat.postMessage" || m.ThreadTS != ts2 || !strings.Contains(text(t, m), "couldn't attach the CSV file") {
				t.Errorf("after a failed edit: %+v, want a line in the thread saying the file is missing", m)
			}
			if posted := h.postedAfterStop(); len(posted) != 3 {
				t.Errorf("%d posts, want the two replies and the line", len(posted))
			}
			if f := filesNamed(h.s, ".csv"); len(f) != 0 {
				t.Errorf("%d CSV files shared, want none", len(f))
			}
			if tt.step != "" {
				n := 0
				for _, c := range h.s.Calls() {
					if c.Method == tt.step && c.Error != "" {
						n++
					}
				}
				if n != 2 {
					t.Errorf("%d failed %s calls, want the 2 injected", n, tt.step)
				}
			}
		})
	}
}

// The working reaction is added and removed beside the answer: a
// reactions.add still under way does not hold the reply back nor a slot,
// and a 429 with a 10 s Retry-After on it is not retried.
func TestWorkingReactionNeverDelaysAnswer(t *testing.T) {
	t.Run("held", func(t *testing.T) {
		h := start(t, newFakeAnswerer(), options{cfg: func(c *bot.Config) { c.MaxConcurrent = 1 }})
		hold := h.s.HoldNext("reactions.add")
		h.send(slacktest.MentionEvent(channel, user, "first", "1700010300.000100", ""))
		select {
		case <-hold.Arrived(): // the first question's hourglass is on its way
		case <-h.ctx().Done():
			t.Fatal("reactions.add never called")
		}
		h.send(slacktest.MentionEvent(channel, user, "second", "1700010300.000200", ""))
		// Both answers are delivered while the first reactions.add is held.
		h.waitMessages(2)
		if r := h.s.Reactions(); slices.ContainsFunc(r, func(r slacktest.Reaction) bool { return r.Timestamp == "1700010300.000100" }) {
			t.Errorf("reactions on the first question before the hold was released: %+v", r)
		}
		hold.Release()
		// Then the held hourglass is added and removed after all.
		if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Reactions()) == 4 }); err != nil {
			t.Fatalf("reactions = %+v: %v", h.s.Reactions(), err)
		}
		var first []string
		for _, r := range h.s.Reactions() {
			if r.Timestamp == "1700010300.000100" {
				first = append(first, r.Method)
			}
		}
		if !slices.Equal(first, []string{"reactions.add", "reactions.remove"}) {
			t.Errorf("the first question's reactions = %v, want added, then removed", first)
		}
	})
	t.Run("rate limited", func(t *testing.T) {
		h := start(t, newFakeAnswerer(), options{})
		// reactions.add is held until the reply is posted, and then answered
		// with a 429: an answer that waited for the reaction, or for any
		// retry of it, would never be posted (nothing here depends on how
		// fast the machine is).
		hold := h.s.HoldNext("reactions.add")
		defer hold.Release()
		h.s.RateLimitNext("reactions.add", 10*time.Second)
		h.send(slacktest.MentionEvent(channel, user, "q", "1700010400.000100", ""))
		select {
		case <-hold.Arrived():
		case <-h.ctx().Done():
			t.Fatal("reactions.add never called")
		}
		h.waitMessages(1) // posted while reactions.add is held
		hold.Release()
		if err := h.s.Wait(h.ctx(), func() bool {
			return slices.ContainsFunc(h.s.Calls(), func(c slacktest.Call) bool { return c.Method == "reactions.add" })
		}); err != nil {
			t.Fatal("the held reactions.add was never answered:", err)
		}
		if err := h.stop(); err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, c := range h.s.Calls() {
			switch c.Method {
			case "reactions.add", "reactions.remove", "chat.postMessage":
				calls = append(calls, c.Method+":"+c.Error)
			}
		}
		// One reactions.add (refused), never retried, and nothing to remove;
		// the two ran side by side, so their order is not fixed.
		slices.Sort(calls)
		if !slices.Equal(calls, []string{"chat.postMessage:", "reactions.add:ratelimited"}) {
			t.Errorf("calls = %q, want the reply and one rate-limited reactions.add", calls)
		}
	})
}

// A DM is never met with silence: a message with a file (file_share) is
// answered from its words, a file alone gets one line saying why not, and a
// thread reply also sent to the conversation (thread_broadcast) is
// answered in its thread.
func TestDMsNeverGetSilence(t *testing.T) {
	const dm = "D0ANN"
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	h.send(slacktest.DMFileEvent(dm, user, "how many orders are in this?", "1700010500.000100"))
	m := h.waitMessages(1)[0]
	if got := text(t, m); m.Channel != dm || !strings.Contains(got, "You asked: how many orders are in this?") {
		t.Errorf("a DM with a file got %q in %s, want the answer in the DM", got, m.Channel)
	}
	h.send(slacktest.DMFileEvent(dm, user, "", "1700010500.000200"))
	if e := h.waitEphemeral(1)[0]; e.Channel != dm || e.User != user || !strings.Contains(text(t, e), "not the files") {
		t.Errorf("a DM with only a file got %+v, want one line saying why not", e)
	}
	h.send(slacktest.EventSpec{Type: "message", Subtype: "thread_broadcast", ChannelType: "im", Channel: dm, User: user,
		Text: "and last month?", TS: "1700010500.000400", ThreadTS: "1700010500.000100"})
	if m := h.waitMessages(2)[1]; m.ThreadTS != "1700010500.000100" || !strings.Contains(text(t, m), "You asked: and last month?") {
		t.Errorf("a thread_broadcast got %q in thread %q, want the answer in its thread", text(t, m), m.ThreadTS)
	}
	if reqs := ans.requests(); len(reqs) != 2 {
		t.Errorf("Answerer called %d times, want 2", len(reqs))
	}
}

// A model provider that answers 401, 403 or 404 is a configuration fault:
// the user is told the bot is misconfigured (not to try again later), the
// log names the provider and the status, and /healthz says degraded until
// an answer succeeds.
func TestProviderMisconfiguration(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			ans := newFakeAnswerer()
			ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
				if req.Question == "fixed" {
					r := echo(req.Question, 1)
					r.Provider = "gpt-4o-mini@api.example.com"
					return r, nil
				}
				return &agent.Result{Question: req.Question, Outcome: agent.Failed}, fmt.Errorf("agent: step 1: %w",
					&agent.ProviderError{Provider: "gpt-4o-mini@api.example.com", Status: status, Message: "Incorrect API key provided: sk-***"})
			}
			h := start(t, ans, options{})
			srv := h.b.Handler()
			h.send(slacktest.MentionEvent(channel, user, "q", "1700010600.000100", ""))
			got := text(t, h.waitMessages(1)[0])
			if !strings.Contains(got, "refuses my settings") || strings.Contains(got, "try again") ||
				strings.Contains(got, "api.example.com") || strings.Contains(got, "sk-") {
				t.Errorf("reply = %q, want the misconfiguration sentence, without details", got)
			}
			code, body := get(t, srv, "/healthz")
			var hz struct {
				Status  string
				Reasons []string
			}
			if err := json.Unmarshal([]byte(body), &hz); err != nil || code != http.StatusServiceUnavailable || hz.Status != "degraded" ||
				len(hz.Reasons) != 1 || !strings.Contains(hz.Reasons[0], fmt.Sprintf("gpt-4o-mini@api.example.com answered HTTP %d", status)) {
				t.Errorf("/healthz = %d %s (%v), want 503 degraded naming the provider and status", code, body, err)
			}
			var logged bool
			for _, line := range strings.Split(h.logs.String(), "\n") {
				if strings.Contains(line, "refused the configuration") && strings.Contains(line, `"provider":"gpt-4o-mini@api.example.com"`) &&
					strings.Contains(line, fmt.Sprintf(`"status":%d`, status)) && strings.Contains(line, `"level":"ERROR"`) {
					logged = true
				}
			}
			if !logged {
				t.Errorf("no error log naming the provider and status:\n%s", h.logs.String())
			}
			h.send(slacktest.MentionEvent(channel, user, "fixed", "1700010600.000200", ""))
			h.waitMessages(2)
			if code, body := get(t, srv, "/healthz"); code != http.StatusOK || !strings.Contains(body, `"status":"ok"`) {
				t.Errorf("/healthz after an answer succeeded = %d %s, want 200 ok", code, body)
			}
		})
	}
}

// When Slack's hello says the app has more than one connection, the bot
// warns that its limits, de-duplication and thread memory are per process.
func TestWarnsOfSeveralConnections(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{})
	if strings.Contains(h.logs.String(), "more than one Socket Mode connection") {
		t.Fatal("warned with one connection")
	}
	logs := &syncBuffer{}
	b2, err := bot.New(bot.Config{AppToken: h.s.AppToken(), BotToken: h.s.BotToken(), APIURL: h.s.URL}, newFakeAnswerer(), nil,
		slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b2.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := h.s.Wait(h.ctx(), func() bool { return h.s.Connections() == 2 }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(raceSlowdown * 5 * time.Second) // the log line follows the hello
	for !strings.Contains(logs.String(), "more than one Socket Mode connection") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning with two connections:\n%s", logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), `"num_connections":2`) || !strings.Contains(logs.String(), "per process") {
		t.Errorf("the warning does not say how many or why it matters:\n%s", logs)
	}
}
