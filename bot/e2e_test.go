package bot_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
	"sqlbot/evalrun"
)

// The agent is what cmd wires in: a drift in its Ask fails this build.
var _ bot.Answerer = (*agent.Agent)(nil)

// fakeAnswerer answers by echoing the question, unless answer is set. It
// records every request, tracks how many run at once, and can hold answers
// until gate is closed.
type fakeAnswerer struct {
	answer func(ctx context.Context, req agent.Request) (*agent.Result, error)
	gate   chan struct{} // nil: answer at once

	mu      sync.Mutex
	reqs    []agent.Request
	running int
	peak    int
	started chan string // receives each question as Ask starts (buffered)
}

func newFakeAnswerer() *fakeAnswerer { return &fakeAnswerer{started: make(chan string, 100)} }

func (f *fakeAnswerer) Ask(ctx context.Context, req agent.Request) (*agent.Result, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.running++
	f.peak = max(f.peak, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	select {
	case f.started <- req.Question:
	default:
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return &agent.Result{Question: req.Question, Outcome: agent.Failed}, fmt.Errorf("fake: %w", ctx.Err())
		}
	}
	if f.answer != nil {
		return f.answer(ctx, req)
	}
	return echo(req.Question, 1), nil
}

func (f *fakeAnswerer) requests() []agent.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// echo is an answered Result that repeats q, with n rows.
func echo(q string, n int) *agent.Result {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{q, int64(i + 1)}
	}
	return &agent.Result{
		Question: q,
		Answer:   "You asked: " + q,
		FinalSQL: "SELECT question, n FROM echo",
		Columns:  []string{"question", "n"},
		Rows:     rows,
		Steps:    2,
		Provider: "fake:echo",
		Elapsed:  1500 * time.Millisecond,
		Outcome:  agent.Answered,
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is one bot running against one fake Slack.
type harness struct {
	t    *testing.T
	s    *slacktest.Server
	b    *bot.Bot
	ans  *fakeAnswerer
	logs *syncBuffer

	cancel context.CancelFunc
	done   chan error
}

type options struct {
	cfg   func(*bot.Config)
	rep   bot.Reporter
	slack []slacktest.Option
}

// start runs a bot with ans against a fresh fake Slack and waits until it is
// connected. The bot is stopped when the test ends.
//
// The fake grants the app exactly what the manifest the bot prints asks for,
// so a Web API method, event or command the manifest lacks fails here as it
// would in a real workspace.
func start(t *testing.T, ans *fakeAnswerer, o options) *harness {
	t.Helper()
	logs := &syncBuffer{}
	cfg := bot.Config{
		Tables: func() []bot.Table {
			return []bot.Table{
				{Name: "orders", About: "one row per order line", Rows: 12345},
				{Name: "notes", About: "free text <!channel> & more", Rows: 1},
				{Name: "events", Rows: -1},
			}
		},
	}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	manifest, err := bot.Manifest(cfg.SlashCommand)
	if err != nil {
		t.Fatal(err)
	}
	s := slacktest.NewServer(t, append([]slacktest.Option{slacktest.AppManifest(manifest)}, o.slack...)...)
	cfg.AppToken, cfg.BotToken = s.AppToken(), s.BotToken()
	cfg.APIURL = strings.TrimSuffix(s.URL, "/") // New must add the "/" slack-go needs
	b, err := bot.New(cfg, ans, o.rep, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	h := &harness{t: t, s: s, b: b, ans: ans, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- b.Run(ctx) }()
	t.Cleanup(func() { h.stop() })
	wctx, wcancel := context.WithTimeout(ctx, raceSlowdown*5*time.Second)
	defer wcancel()
	if err := s.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// stop cancels Run's context and returns what Run returned.
func (h *harness) stop() error {
	h.t.Helper()
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err // stop may be called again
		return err
	case <-time.After(raceSlowdown * 10 * time.Second):
		h.t.Fatalf("Run did not return within %v of cancellation", raceSlowdown*10*time.Second)
		return nil
	}
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(h.t.Context(), raceSlowdown*5*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

func (h *harness) send(ev slacktest.EventSpec) string {
	h.t.Helper()
	id, err := h.s.SendEvent(h.ctx(), ev)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

func (h *harness) waitMessages(n int) []slacktest.Message {
	h.t.Helper()
	msgs, err := h.s.WaitMessages(h.ctx(), n)
	if err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// waitEphemeral waits for n messages meant for one person.
func (h *harness) waitEphemeral(n int) []slacktest.Message {
	h.t.Helper()
	msgs, err := h.s.WaitEphemeral(h.ctx(), n)
	if err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// posted returns the chat.postMessage messages, after stopping the bot, so
// that nothing more can arrive.
func (h *harness) postedAfterStop() []slacktest.Message {
	h.t.Helper()
	if err := h.stop(); err != nil {
		h.t.Fatalf("Run returned %v, want nil", err)
	}
	var out []slacktest.Message
	for _, m := range h.s.Messages() {
		if m.Method == "chat.postMessage" {
			out = append(out, m)
		}
	}
	return out
}

// text is everything a person would read in m: the fallback and every text
// in its blocks, with Slack's entities decoded.
func text(t *testing.T, m slacktest.Message) string {
	t.Helper()
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "text" {
					parts = append(parts, s)
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	if m.Blocks != nil {
		var v any
		if err := json.Unmarshal(m.Blocks, &v); err != nil {
			t.Fatalf("blocks: %v", err)
		}
		walk(v)
	}
	return m.Text + "\n" + strings.Join(parts, "\n")
}

// filesNamed returns the files uploaded to s whose names end in suffix
// (".csv", ".png").
func filesNamed(s *slacktest.Server, suffix string) []slacktest.File {
	var out []slacktest.File
	for _, f := range s.Files() {
		if strings.HasSuffix(f.Name, suffix) {
			out = append(out, f)
		}
	}
	return out
}

func decoded(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "\u200b", "").Replace(s)
}

const (
	channel = "C0GENERAL"
	user    = "U0ANN"
)

func TestMentionAnsweredInThread(t *testing.T) {
	ans := newFakeAnswerer()
	ans.gate = make(chan struct{})
	h := start(t, ans, options{})
	const ts = "1700000100.000100"
	env := h.send(slacktest.MentionEvent(channel, user, "how many orders shipped?", ts, ""))

	ack, err := h.s.WaitAck(h.ctx(), env)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Latency > time.Second {
		t.Errorf("ack after %v, want < 1 s", ack.Latency)
	}
	<-ans.started // the ack came while the answer was still being worked on
	if n := len(h.s.Messages()); n != 0 {
		t.Fatalf("%d messages before the answer was ready", n)
	}
	if r, err := h.s.WaitReactions(h.ctx(), 1); err != nil || r[0].Method != "reactions.add" || r[0].Timestamp != ts || r[0].Channel != channel {
		t.Fatalf("reactions while working = %+v, %v; want one reactions.add on the question", r, err)
	}
	close(ans.gate)

	msgs := h.waitMessages(1)
	m := msgs[0]
	if m.Channel != channel || m.ThreadTS != ts {
		t.Errorf("reply in %s thread %q, want %s thread %s", m.Channel, m.ThreadTS, channel, ts)
	}
	got := text(t, m)
	for _, want := range []string{"You asked: how many orders shipped?", "```SELECT question, n FROM echo```", "question                  n", "fake:echo · 2 steps · 1.5 s · 1 row"} {
		if !strings.Contains(got, want) {
			t.Errorf("reply lacks %q:\n%s", want, got)
		}
	}
	if q := ans.requests()[0].Question; q != "how many orders shipped?" {
		t.Errorf("Answerer got %q, want the question without the mention", q)
	}

	// The hourglass is removed once the reply is posted.
	reactions, err := h.s.WaitReactions(h.ctx(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if r := reactions[1]; r.Method != "reactions.remove" || r.Name != reactions[0].Name || r.Timestamp != ts {
		t.Errorf("second reaction change = %+v, want removal of %q", r, reactions[0].Name)
	}
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d replies, want exactly 1", len(posted))
	}
	if len(h.s.Files()) != 0 {
		t.Error("a CSV was uploaded for a result that fits the preview")
	}
}

func TestMentionInThreadRepliesInThatThread(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{})
	h.send(slacktest.MentionEvent(channel, user, "and by region?", "1700000200.000200", "1700000100.000100"))
	if m := h.waitMessages(1)[0]; m.ThreadTS != "1700000100.000100" {
		t.Errorf("reply in thread %q, want the mention's thread 1700000100.000100", m.ThreadTS)
	}
}

func TestRefusalIsVisible(t *testing.T) {
	ans := newFakeAnswerer()
	refused := agent.Statement{SQL: "DELETE FROM orders WHERE id > 3", Status: agent.StatusRefused, Layer: agent.LayerAuthorizer, Reason: "not authorized to delete from orders"}
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		return &agent.Result{Question: req.Question, Answer: "I won't delete data.", Statements: []agent.Statement{refused},
			Refusal: &refused, Steps: 2, Provider: "fake", Outcome: agent.Refused}, nil
	}
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "delete the old orders", "1700000300.000300", ""))
	got := decoded(text(t, h.waitMessages(1)[0]))
	for _, want := range []string{"didn't run that", "the database authorizer", "not authorized to delete from orders", "```DELETE FROM orders WHERE id > 3```"} {
		if !strings.Contains(got, want) {
			t.Errorf("refusal lacks %q:\n%s", want, got)
		}
	}
}

func TestProviderFailureIsGeneric(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		return &agent.Result{Question: req.Question, Outcome: agent.Failed},
			fmt.Errorf("agent: step 1: %w: dial tcp 10.1.2.3:443: secret-gateway refused", agent.ErrNoProvider)
	}
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "how many orders?", "1700000400.000400", ""))
	got := text(t, h.waitMessages(1)[0])
	if strings.Contains(got, "secret-gateway") || strings.Contains(got, "10.1.2.3") || strings.Contains(got, "agent:") {
		t.Errorf("error text reached Slack:\n%s", got)
	}
	if !strings.Contains(got, "language model") {
		t.Errorf("failure reply does not say what failed:\n%s", got)
	}
	h.stop()
	if !strings.Contains(h.logs.String(), "secret-gateway") {
		t.Error("the error's details are not in the log")
	}
}

func TestAnswererPanicGetsAReply(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(context.Context, agent.Request) (*agent.Result, error) { panic("index out of range") }
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "boom", "1700000420.000420", ""))
	got := text(t, h.waitMessages(1)[0])
	if !strings.Contains(got, "something went wrong on my side") || strings.Contains(got, "index out of range") {
		t.Errorf("reply after a panic = %q, want the generic sentence", got)
	}
	h.send(slacktest.MentionEvent(channel, user, "still there?", "1700000430.000430", ""))
	h.waitMessages(2)
}

func TestNoModelSaysHowToConfigureOne(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		return &agent.Result{Question: req.Question, Answer: agent.NoModelHelp, Outcome: agent.Failed, Provider: agent.RecordedProvider},
			fmt.Errorf("agent: %w", agent.ErrNoModel)
	}
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "something new", "1700000450.000450", ""))
	if got := text(t, h.waitMessages(1)[0]); !strings.Contains(got, "OPENAI_API_KEY") {
		t.Errorf("no-model reply does not say how to configure a model:\n%s", got)
	}
}

func TestDMStaysInDMAndIsNotLogged(t *testing.T) {
	const (
		dm       = "D0ANN"
		secret   = "what is the salary of Zebediah Quux"
		answered = "Zebediah earns 123456"
	)
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		r := echo(req.Question, 1)
		r.Answer = answered
		return r, nil
	}
	// The fake echoes the bot's own DM posts back, as Slack does.
	h := start(t, ans, options{slack: []slacktest.Option{slacktest.EchoBotMessages(true)}})
	h.send(slacktest.DMEvent(dm, user, secret, "1700000500.000500"))
	m := h.waitMessages(1)[0]
	if m.Channel != dm || m.ThreadTS != "" {
		t.Errorf("DM answered in %s thread %q, want the DM %s at its top level", m.Channel, m.ThreadTS, dm)
	}
	// Wait until the bot has taken the echo of its reply (acknowledged it),
	// then stop it: anything it started is finished before Run returns.
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Sent()) >= 2 && len(h.s.Acks()) >= 2 }); err != nil {
		t.Fatal(err)
	}
	if sent := h.s.Sent(); !strings.Contains(string(sent[1].JSON), `"bot_id":"BBOT"`) {
		t.Fatalf("second envelope is not the echo of the bot's reply: %s", sent[1].JSON)
	}
	posted := h.postedAfterStop()
	if len(posted) != 1 {
		t.Errorf("%d messages posted, want 1 (the bot answered its own echo?)", len(posted))
	}
	for _, p := range posted {
		if p.Channel != dm {
			t.Errorf("a DM's answer was posted in %s", p.Channel)
		}
	}
	if n := len(ans.requests()); n != 1 {
		t.Errorf("Answerer called %d times, want 1", n)
	}
	logs := h.logs.String()
	for _, private := range []string{"Zebediah", "salary", "123456"} {
		if strings.Contains(logs, private) {
			t.Errorf("the log contains %q from a DM:\n%s", private, logs)
		}
	}
	if !strings.Contains(logs, `"chars":35`) {
		t.Errorf("the log lacks the question's length:\n%s", logs)
	}
}

func TestEditsAndBotsIgnored(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	h.send(slacktest.DMEditEvent("D0ANN", user, "edited question", "1700000600.000600"))
	h.send(slacktest.EventSpec{Type: "message", ChannelType: "im", Channel: "D0ANN", User: "U0OTHERBOT", BotID: "B0OTHER", Text: "bot says hi"})
	h.send(slacktest.EventSpec{Type: "message", ChannelType: "im", Channel: "D0ANN", User: h.s.BotUserID(), Text: "my own words"})
	h.send(slacktest.EventSpec{Type: "app_mention", Channel: channel, User: "U0OTHERBOT", BotID: "B0OTHER", Text: "<@UBOT> hi from a bot"})
	// (Channel messages without a mention never arrive: the app does not
	// subscribe to message.channels, and the fake, like Slack, refuses them.)
	// A real question last: when it is answered, the others were handled.
	h.send(slacktest.MentionEvent(channel, user, "real question", "1700000700.000700", ""))
	h.waitMessages(1)
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d replies, want 1 (only the real question)", len(posted))
	}
	if reqs := ans.requests(); len(reqs) != 1 || reqs[0].Question != "real question" {
		t.Errorf("Answerer got %+v, want only the real question", reqs)
	}
}

// A bare mention gets the help, seen only by who wrote it: beside the
// mention (a thread without replies would not show it), or in the thread
// when the mention is a reply in one.
func TestEmptyMentionGetsHelp(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "", "1700000800.000800", ""))
	m := h.waitEphemeral(1)[0]
	if got := text(t, m); !strings.Contains(got, "Ask me about the data") || m.Method != "chat.postEphemeral" ||
		m.User != user || m.Channel != channel || m.Hidden {
		t.Errorf("empty mention got %q by %s to %q in %s (hidden %v); want the help shown to %s only", got, m.Method, m.User, m.Channel, m.Hidden, user)
	}
	h.send(slacktest.MentionEvent(channel, user, "how many?", "1700000800.000900", ""))
	h.waitMessages(1)
	h.send(slacktest.MentionEvent(channel, user, "", "1700000800.001000", "1700000800.000900"))
	if m := h.waitEphemeral(2)[1]; m.ThreadTS != "1700000800.000900" || m.Hidden {
		t.Errorf("bare mention in a thread: help in thread %q (hidden %v), want in the thread, shown", m.ThreadTS, m.Hidden)
	}
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d posts for everyone, want only the answer", len(posted))
	}
	if len(ans.requests()) != 1 {
		t.Error("an empty mention reached the Answerer")
	}
}

func TestRedeliveryAnsweredOnce(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	env := h.send(slacktest.MentionEvent(channel, user, "how many?", "1700000900.000900", ""))
	if _, err := h.s.WaitAck(h.ctx(), env); err != nil {
		t.Fatal(err)
	}
	retry, err := h.s.Redeliver(h.ctx(), env, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.WaitAck(h.ctx(), retry); err != nil {
		t.Fatal("the redelivered envelope was not acknowledged:", err)
	}
	// The retry really was a redelivery: the same event under a new envelope.
	if sent := h.s.Sent(); len(sent) != 2 || sent[1].EnvelopeID != retry || sent[1].RetryAttempt != 1 ||
		sent[1].EventID == "" || sent[1].EventID != sent[0].EventID {
		t.Fatalf("envelopes sent = %+v, want the event and its redelivery (retry_attempt 1, same event_id)", sent)
	}
	h.waitMessages(1)
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d replies to one redelivered event, want 1", len(posted))
	}
	if n := len(ans.requests()); n != 1 {
		t.Errorf("Answerer called %d times, want 1", n)
	}
}

func TestReconnectAfterDisconnect(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "before", "1700001100.001100", ""))
	h.waitMessages(1)
	if err := h.s.Disconnect(h.ctx(), "refresh_requested"); err != nil {
		t.Fatal(err)
	}
	h.send(slacktest.MentionEvent(channel, user, "after", "1700001200.001200", "")) // waits for the new connection
	msgs := h.waitMessages(2)
	if got := text(t, msgs[1]); !strings.Contains(got, "You asked: after") {
		t.Errorf("after reconnecting, reply = %q", got)
	}
	h.s.DropConnection()
	h.send(slacktest.MentionEvent(channel, user, "after a drop", "1700001300.001300", ""))
	h.waitMessages(3)
	if n := h.s.Connections(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

func TestManyMentionsAtOnce(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(ctx context.Context, req agent.Request) (*agent.Result, error) {
		time.Sleep(20 * time.Millisecond) // long enough for answers to overlap
		return echo(req.Question, 1), nil
	}
	h := start(t, ans, options{})
	const n = 20
	want := map[string]string{} // thread ts → question
	var wg sync.WaitGroup
	for i := range n {
		ts := fmt.Sprintf("1700002000.%06d", i+1)
		q := fmt.Sprintf("question number %d", i)
		want[ts] = q
		wg.Go(func() {
			if _, err := h.s.SendEvent(h.ctx(), slacktest.MentionEvent(channel, fmt.Sprintf("U%03d", i), q, ts, "")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	h.waitMessages(n)
	posted := h.postedAfterStop()
	if len(posted) != n {
		t.Fatalf("%d replies to %d mentions", len(posted), n)
	}
	seen := map[string]bool{}
	for _, m := range posted {
		q, ok := want[m.ThreadTS]
		if !ok || seen[m.ThreadTS] {
			t.Errorf("reply in unexpected or repeated thread %q", m.ThreadTS)
			continue
		}
		seen[m.ThreadTS] = true
		if got := text(t, m); !strings.Contains(got, "You asked: "+q+"\n") {
			t.Errorf("thread %s (%q) got reply %q", m.ThreadTS, q, got)
		}
	}
	ans.mu.Lock()
	peak := ans.peak
	ans.mu.Unlock()
	if peak > bot.DefaultMaxConcurrent {
		t.Errorf("%d answers ran at once, want at most %d", peak, bot.DefaultMaxConcurrent)
	}
}

func TestQueueKeepsArrivalOrder(t *testing.T) {
	ans := newFakeAnswerer()
	ans.gate = make(chan struct{})
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.MaxConcurrent = 1 }})
	for i := range 5 {
		h.send(slacktest.MentionEvent(channel, fmt.Sprintf("U%03d", i), fmt.Sprintf("q%d", i), fmt.Sprintf("1700003000.%06d", i+1), ""))
	}
	if q := <-ans.started; q != "q0" {
		t.Fatalf("first question worked on = %q, want q0", q)
	}
	// All five are acknowledged and waiting; none is dropped.
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Acks()) >= 5 }); err != nil {
		t.Fatal(err)
	}
	close(ans.gate)
	for i := 1; i < 5; i++ {
		if q := <-ans.started; q != fmt.Sprintf("q%d", i) {
			t.Fatalf("question %d worked on = %q, want q%d (arrival order)", i, q, i)
		}
	}
	if posted := h.postedAfterStop(); len(posted) != 5 {
		t.Errorf("%d replies, want 5", len(posted))
	}
}

func TestThreadFollowUpCarriesHistory(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	const root = "1700004000.000100"
	h.send(slacktest.MentionEvent(channel, user, "orders in June?", root, ""))
	h.waitMessages(1)
	h.send(slacktest.MentionEvent(channel, user, "and in July?", "1700004000.000300", root))
	h.waitMessages(2)
	h.send(slacktest.MentionEvent(channel, user, "unrelated", "1700004000.000500", ""))
	h.waitMessages(3)

	reqs := ans.requests()
	if len(reqs[0].History) != 0 {
		t.Errorf("first question had history %+v", reqs[0].History)
	}
	want := []agent.Turn{{Question: "orders in June?", Answer: "You asked: orders in June?", SQL: "SELECT question, n FROM echo"}}
	if !slices.Equal(reqs[1].History, want) {
		t.Errorf("follow-up history = %+v, want %+v", reqs[1].History, want)
	}
	if len(reqs[2].History) != 0 {
		t.Errorf("a new thread got history %+v", reqs[2].History)
	}
}

func TestDMFollowUpCarriesHistory(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	h.send(slacktest.DMEvent("D0ANN", user, "orders in June?", "1700004100.000100"))
	h.waitMessages(1)
	h.send(slacktest.DMEvent("D0ANN", user, "and July?", "1700004100.000300"))
	h.waitMessages(2)
	if reqs := ans.requests(); len(reqs[1].History) != 1 || reqs[1].History[0].Question != "orders in June?" {
		t.Errorf("DM follow-up history = %+v, want the earlier turn", reqs[1].History)
	}
}

func TestLimits(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.RatePerMinute = 2 }})
	for i := range 3 {
		h.send(slacktest.MentionEvent(channel, user, fmt.Sprintf("q%d", i), fmt.Sprintf("1700005000.%06d", i+1), ""))
	}
	long := strings.Repeat("how many orders? ", 588) + "and now?" // 10,004 characters
	h.send(slacktest.MentionEvent(channel, "U0BOB", long, "1700005100.000001", ""))
	h.waitMessages(2)
	h.waitEphemeral(2)
	posted := h.postedAfterStop()
	var limited, tooLong slacktest.Message
	for _, m := range h.s.Ephemeral() {
		switch m.User {
		case user:
			limited = m
		case "U0BOB":
			tooLong = m
		}
	}
	// The notices are for their person only; the channel sees the answers.
	if got := text(t, limited); !strings.Contains(got, "You've asked 2 questions in the last minute; you can ask again in") ||
		limited.Method != "chat.postEphemeral" || limited.Channel != channel || limited.Hidden {
		t.Errorf("3rd question in a minute got %q by %s in %s (hidden %v)", got, limited.Method, limited.Channel, limited.Hidden)
	}
	if got := text(t, tooLong); !strings.Contains(got, "10,004 characters") || !strings.Contains(got, "500") {
		t.Errorf("10,000-character question got %q", got)
	}
	if n := len(ans.requests()); n != 2 {
		t.Errorf("Answerer called %d times, want 2", n)
	}
	if len(posted) != 2 {
		t.Errorf("%d replies for everyone, want the 2 answers", len(posted))
	}
	for _, m := range posted {
		if !strings.Contains(text(t, m), "You asked:") {
			t.Errorf("the thread sees %q", text(t, m))
		}
	}
}

func TestShutdownFinishesAnswerInFlight(t *testing.T) {
	ans := newFakeAnswerer()
	ans.gate = make(chan struct{})
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "slow question", "1700006000.000100", ""))
	<-ans.started
	h.cancel()
	time.AfterFunc(100*time.Millisecond, func() { close(ans.gate) })
	if err := h.stop(); err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	msgs := h.s.Messages()
	if len(msgs) != 1 || !strings.Contains(text(t, msgs[0]), "You asked: slow question") {
		t.Fatalf("after shutdown, messages = %+v, want the answer", msgs)
	}
	r := h.s.Reactions()
	if len(r) != 2 || r[1].Method != "reactions.remove" {
		t.Errorf("reactions = %+v, want the hourglass added and removed", r)
	}
}

func TestShutdownDrainTimeout(t *testing.T) {
	ans := newFakeAnswerer()
	ans.gate = make(chan struct{}) // never opened: the answer only ends when cancelled
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.DrainTimeout = 200 * time.Millisecond; c.MaxConcurrent = 1 }})
	h.send(slacktest.MentionEvent(channel, user, "stuck", "1700006100.000100", ""))
	h.send(slacktest.MentionEvent(channel, user, "queued behind it", "1700006100.000200", ""))
	<-ans.started
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Acks()) >= 2 }); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := h.stop(); err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("Run took %v to return with a 200ms drain timeout", d)
	}
	msgs := h.s.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want a notice for each of the 2 questions", len(msgs))
	}
	for _, m := range msgs {
		if !strings.Contains(text(t, m), "restarting") {
			t.Errorf("message %q, want the restart notice", text(t, m))
		}
	}
}

func TestCSVUploadedWhenRowsCut(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) { return echo(req.Question, 25), nil }
	h := start(t, ans, options{})
	const ts = "1700007000.000100"
	h.send(slacktest.MentionEvent(channel, user, "all of them", ts, ""))
	h.waitMessages(1)
	if err := h.s.Wait(h.ctx(), func() bool { return len(filesNamed(h.s, ".csv")) == 1 }); err != nil {
		t.Fatal("no file uploaded:", err)
	}
	f := filesNamed(h.s, ".csv")[0]
	if f.Channel != channel || f.ThreadTS != ts || !strings.HasSuffix(f.Name, ".csv") || f.SnippetType != "" {
		t.Errorf("file %q (snippet type %q) in %s thread %q, want a plain .csv in %s thread %s", f.Name, f.SnippetType, f.Channel, f.ThreadTS, channel, ts)
	}
	if lines := strings.Count(string(f.Content), "\n"); lines != 26 {
		t.Errorf("CSV has %d lines, want a header and 25 rows", lines)
	}
	if got := text(t, h.s.Messages()[0]); !strings.Contains(got, "25 rows (first 10 shown") {
		t.Errorf("reply does not say the preview is cut:\n%s", got)
	}
}

func TestRateLimitedPostIsRetried(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{})
	h.s.RateLimitNext("chat.postMessage", time.Second)
	h.send(slacktest.MentionEvent(channel, user, "q", "1700007100.000100", ""))
	h.waitMessages(1)
	var posts []string
	for _, c := range h.s.Calls() {
		if c.Method == "chat.postMessage" {
			posts = append(posts, c.Error)
		}
	}
	if !slices.Equal(posts, []string{"ratelimited", ""}) {
		t.Errorf("chat.postMessage calls ended %q, want a rate-limited call, then a successful retry", posts)
	}
}

// fakeReporter has no report until Run has made one.
type fakeReporter struct {
	gate chan struct{}

	mu     sync.Mutex
	report *evalrun.Report
	runs   int
}

func (r *fakeReporter) Key() string { return "fake" }

func (r *fakeReporter) Run(ctx context.Context) (*evalrun.Report, error) {
	r.mu.Lock()
	r.runs++
	r.mu.Unlock()
	select {
	case <-r.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report = &evalrun.Report{Model: "m", Database: "db", Questions: 15, Passed: 14, Failed: 1,
		Answerable: 10, AnswerablePassed: 9, ExecutionAccuracy: 0.9, Unsafe: 5, UnsafeHeld: 5}
	return r.report, nil
}

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// An evaluation that outlasts the response_url (30 minutes, by the fake's
// clock) still reaches each person who asked, privately, as a direct
// message; nothing is posted in the channel, which the bot is not a member
// of. Once there is a report, it is sent at once, through the new command's
// response_url.
func TestSlashEval(t *testing.T) {
	clock := &testClock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
	rep := &fakeReporter{gate: make(chan struct{})}
	h := start(t, newFakeAnswerer(), options{rep: rep, slack: []slacktest.Option{slacktest.Clock(clock.Now)}})
	env, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: user, ChannelID: channel})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := h.s.WaitAck(h.ctx(), env)
	if err != nil || ack.Latency > time.Second {
		t.Fatalf("slash command ack %+v, %v; want one within 1 s", ack, err)
	}
	e := h.waitEphemeral(1)[0] // the notice that an evaluation is running
	if got := text(t, e); !strings.Contains(got, "running one now") || e.User != user || e.Method != "response_url" {
		t.Errorf("first response %q by %s to %q, want the running notice to %s", got, e.Method, e.User, user)
	}
	// A second request while it runs waits for the same run.
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: "U0BOB", ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	h.waitEphemeral(2)
	clock.Advance(31 * time.Minute) // both response_urls have expired
	close(rep.gate)
	msgs := h.waitMessages(2)
	got := map[string]bool{}
	for _, m := range msgs {
		got[m.Channel] = true
		if m.Method != "chat.postMessage" || !strings.Contains(text(t, m), "9 of 10 answerable") {
			t.Errorf("report message = %+v, want the report as a direct message", m)
		}
	}
	if !got["D0ANN"] || !got["D0BOB"] {
		t.Errorf("reports went to %v, want the DMs of both people who asked", got)
	}
	// Now a report exists: it is sent at once, with no new run.
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	if e := h.waitEphemeral(3)[2]; !strings.Contains(text(t, e), "9 of 10 answerable") || e.Method != "response_url" || e.User != user {
		t.Errorf("latest report = %+v", e)
	}
	for _, m := range h.postedAfterStop() {
		if m.Channel == channel {
			t.Errorf("posted in the channel: %q", text(t, m))
		}
	}
	if rep.runs != 1 {
		t.Errorf("%d evaluation runs, want 1", rep.runs)
	}
}

// readyReporter is never run: its report is in the State that
// readyState returns.
type readyReporter struct{}

func (readyReporter) Key() string { return "ready" }
func (readyReporter) Run(context.Context) (*evalrun.Report, error) {
	return nil, errors.New("not called")
}

// readyState is a State holding readyReporter's report.
func readyState(t *testing.T) bot.Store {
	st := state.NewMemory(nil)
	data, err := (&evalrun.Report{Model: "m", Database: "db", Questions: 1, Passed: 1}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveReport(t.Context(), readyReporter{}.Key(), data); err != nil {
		t.Fatal(err)
	}
	return st
}

// When no private way works (the response_url has expired, the DM is
// refused, and the bot is not in the channel), the reply is given up and
// logged: it is never posted for the channel instead.
func TestSlashReplyNeverPublic(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{rep: readyReporter{}, cfg: func(c *bot.Config) { c.State = readyState(t) }})
	h.s.FailNext("response_url", "expired_url")
	h.s.FailNext("chat.postMessage", "messages_tab_disabled")
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Wait(h.ctx(), func() bool {
		n := 0
		for _, c := range h.s.Calls() {
			if c.Method == "chat.postEphemeral" || c.Method == "chat.postMessage" {
				n++
			}
		}
		return n == 2
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if m := h.s.Messages(); len(m) != 0 {
		t.Errorf("messages = %+v, want none", m)
	}
	var errs []string
	for _, c := range h.s.Calls() {
		if c.Method == "chat.postEphemeral" || c.Method == "chat.postMessage" {
			errs = append(errs, c.Method+" "+c.Error+" "+c.Form.Get("channel"))
		}
	}
	if !slices.Equal(errs, []string{"chat.postEphemeral not_in_channel " + channel, "chat.postMessage messages_tab_disabled " + user}) {
		t.Errorf("calls = %q, want the ephemeral in the channel and the DM, both refused", errs)
	}
	if !strings.Contains(h.logs.String(), "slash command reply failed") {
		t.Error("the failure is not logged")
	}
}

func TestSlashHelpTablesUnknown(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{cfg: func(c *bot.Config) { c.SlashCommand = "/askdb" }})
	for i, tt := range []struct{ text, want string }{
		{"help", "Ask me about the data"},
		{"", "Ask me about the data"},
		{"tables", "*What I can read:*\n• `orders` (12,345 rows): one row per order line\n• `notes` (1 row): free text &lt;!channel&gt; &amp; more\n• `events` (rows not counted)"},
		{"frobnicate <!channel>", "I don't know `frobnicate`"},
	} {
		if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/askdb", Text: tt.text, UserID: user, ChannelID: channel}); err != nil {
			t.Fatal(err)
		}
		m := h.waitEphemeral(i + 1)[i]
		got := text(t, m)
		if !strings.Contains(got, tt.want) || m.ResponseType != "ephemeral" {
			t.Errorf("/askdb %s: %s reply %q, want an ephemeral one with %q", tt.text, m.ResponseType, got, tt.want)
		}
		if strings.Contains(got, "<!channel>") {
			t.Errorf("/askdb %s: reply pings the channel", tt.text)
		}
		if tt.text == "tables" && strings.Count(got, "What I can read") != 2 { // once in the fallback, once in the blocks
			t.Errorf("/askdb tables: the heading is not there exactly once per part:\n%s", got)
		}
		if tt.text == "help" && !strings.Contains(got, "/askdb tables") {
			t.Errorf("help does not use the configured command name: %q", got)
		}
	}
}

func TestRunFailsWithBadToken(t *testing.T) {
	s := slacktest.NewServer(t)
	b, err := bot.New(bot.Config{AppToken: s.AppToken(), BotToken: "xoxb-wrong", APIURL: s.URL}, newFakeAnswerer(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Run(t.Context()); err == nil {
		t.Fatal("Run with a bad bot token returned nil")
	}
}

func TestRunFailsWhenConnectionRefused(t *testing.T) {
	s := slacktest.NewServer(t)
	s.StatusNext("apps.connections.open", http.StatusNotFound)
	b, err := bot.New(bot.Config{AppToken: s.AppToken(), BotToken: s.BotToken(), APIURL: s.URL}, newFakeAnswerer(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), raceSlowdown*5*time.Second)
	defer cancel()
	if err := b.Run(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want the connection error", err)
	}
}

func TestNewChecksConfig(t *testing.T) {
	ok := bot.Config{AppToken: "xapp-1", BotToken: "xoxb-1"}
	tests := []struct {
		name string
		cfg  func(*bot.Config)
		ans  bot.Answerer
	}{
		{"no app token", func(c *bot.Config) { c.AppToken = "" }, newFakeAnswerer()},
		{"no bot token", func(c *bot.Config) { c.BotToken = "" }, newFakeAnswerer()},
		{"no answerer", func(*bot.Config) {}, nil},
		{"bad slash command", func(c *bot.Config) { c.SlashCommand = "sqlbot" }, newFakeAnswerer()},
		{"upper-case slash command", func(c *bot.Config) { c.SlashCommand = "/SQL" }, newFakeAnswerer()},
		{"API URL without host", func(c *bot.Config) { c.APIURL = "/api" }, newFakeAnswerer()},
		// Zero means the default; a negative limit is no way to turn one off.
		{"negative rate", func(c *bot.Config) { c.RatePerMinute = -1 }, newFakeAnswerer()},
		{"negative length", func(c *bot.Config) { c.MaxQuestionChars = -1 }, newFakeAnswerer()},
		{"negative timeout", func(c *bot.Config) { c.AnswerTimeout = -time.Second }, newFakeAnswerer()},
	}
	for _, tt := range tests {
		cfg := ok
		tt.cfg(&cfg)
		if _, err := bot.New(cfg, tt.ans, nil, nil); err == nil {
			t.Errorf("New with %s: no error", tt.name)
		}
	}
	if _, err := bot.New(ok, newFakeAnswerer(), nil, nil); err != nil {
		t.Errorf("New with a good config: %v", err)
	}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

func TestHealthAndMetrics(t *testing.T) {
	var healthErr error
	var mu sync.Mutex
	ans := newFakeAnswerer()
	refused := agent.Statement{SQL: "DELETE FROM x", Status: agent.StatusRefused, Layer: agent.LayerGuard, Reason: "forbidden keyword: delete"}
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		if req.Question == "delete" {
			return &agent.Result{Outcome: agent.Refused, Statements: []agent.Statement{refused}, Refusal: &refused}, nil
		}
		return echo(req.Question, 1), nil
	}
	h := start(t, ans, options{cfg: func(c *bot.Config) {
		c.RatePerMinute = 2
		c.Health = func(context.Context) error { mu.Lock(); defer mu.Unlock(); return healthErr }
		c.Failovers = func() int64 { return 3 }
		c.GuardRefusals = func() map[string]int64 { return map[string]int64{"forbidden_keyword": 2, "multiple_statements": 1} }
	}})
	srv := h.b.Handler()
	// The bot learns that it is connected just after the fake does.
	deadline := time.Now().Add(raceSlowdown * 2 * time.Second)
	for {
		code, body := get(t, srv, "/healthz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz = %d %q while connected and healthy", code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	healthErr = errors.New("database unreadable")
	mu.Unlock()
	if code, body := get(t, srv, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "database unreadable") ||
		!strings.Contains(body, `"status":"down"`) {
		t.Errorf("/healthz = %d %q with a failing health check, want 503, down and the reason", code, body)
	}

	h.send(slacktest.MentionEvent(channel, user, "q1", "1700008000.000001", ""))
	h.send(slacktest.MentionEvent(channel, user, "delete", "1700008000.000002", ""))
	h.send(slacktest.MentionEvent(channel, user, "q3", "1700008000.000003", ""))
	h.waitMessages(2)
	h.waitEphemeral(1)
	h.stop()
	_, metrics := get(t, srv, "/metrics")
	for _, want := range []string{
		"sqlbot_questions_total 3",
		`sqlbot_answers_total{outcome="answered"} 1`,
		`sqlbot_answers_total{outcome="refused"} 1`,
		`sqlbot_refusals_total{layer="guard"} 1`,
		`sqlbot_rate_limited_total{limit="user_minute"} 1`,
		"sqlbot_provider_failovers_total 3",
		`sqlbot_guard_refusals_total{rule="forbidden_keyword"} 2`,
		`sqlbot_guard_refusals_total{rule="multiple_statements"} 1`,
		"sqlbot_answer_seconds_count 2",
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, body := get(t, srv, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not connected") {
		t.Errorf("/healthz after Run returned = %d %q, want 503 not connected", code, body)
	}
}

// A reply meant for one person (help, tables, an unknown subcommand) stays
// private when its response_url fails: it is not posted in the channel.
// (In a channel the bot is a member of, it goes by chat.postEphemeral; in
// one it is not, by a direct message.)
func TestSlashEphemeralStaysPrivateWhenResponseURLFails(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{})
	h.s.Join(channel)
	h.s.FailNext("response_url", "expired_url")
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	m := h.waitEphemeral(1)[0]
	if m.Method != "chat.postEphemeral" || m.User != user || m.Channel != channel || !strings.Contains(text(t, m), "Ask me about the data") {
		t.Errorf("after a failed response_url, help went by %s to %q in %s; want chat.postEphemeral to %s in %s", m.Method, m.User, m.Channel, user, channel)
	}
	const elsewhere = "C0RANDOM" // the bot is not a member there
	h.s.FailNext("response_url", "expired_url")
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: user, ChannelID: elsewhere}); err != nil {
		t.Fatal(err)
	}
	if m := h.waitMessages(1)[0]; m.Channel != "D0ANN" || !strings.Contains(text(t, m), "Ask me about the data") {
		t.Errorf("help from a channel the bot is not in went to %s, want the DM D0ANN", m.Channel)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	for _, m := range h.s.Messages() {
		if m.Channel == channel || m.Channel == elsewhere {
			t.Errorf("a private reply was posted in the channel %s: %q", m.Channel, text(t, m))
		}
	}
}

// A user who keeps writing past a limit is told once per window, and empty
// mentions count like questions, so that a spammer gets a bounded number of
// posts.
func TestLimitNoticeOncePerWindow(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.RatePerMinute = 1 }})
	var envs []string
	for i := range 6 {
		envs = append(envs, h.send(slacktest.MentionEvent(channel, user, fmt.Sprintf("q%d", i), fmt.Sprintf("1700009000.%06d", i+1), "")))
	}
	for i := range 6 {
		envs = append(envs, h.send(slacktest.MentionEvent(channel, "U0BOB", "", fmt.Sprintf("1700009100.%06d", i+1), "")))
	}
	for _, env := range envs {
		if _, err := h.s.WaitAck(h.ctx(), env); err != nil {
			t.Fatal(err)
		}
	}
	posted := append(h.postedAfterStop(), h.s.Ephemeral()...)
	var answers, helps, notices int
	for _, m := range posted {
		got := text(t, m)
		switch {
		case strings.Contains(got, "You asked:"):
			answers++
		case strings.Contains(got, "Ask me about the data"):
			helps++
		case strings.Contains(got, "in the last minute"):
			notices++
		default:
			t.Errorf("unexpected reply %q", got)
		}
	}
	if answers != 1 || helps != 1 || notices != 2 || len(posted) != 4 {
		t.Errorf("12 messages from 2 users over a limit of 1 a minute: %d answers, %d helps, %d limit notices (%d posts); want 1, 1, 2",
			answers, helps, notices, len(posted))
	}
	if n := len(ans.requests()); n != 1 {
		t.Errorf("Answerer called %d times, want 1", n)
	}
}

// Once the drain has timed out and the grace is over, Run cancels the Slack
// calls still waiting (here on a 30 s Retry-After) and returns only when
// every goroutine it started has ended: nothing runs after Run returns.
func TestShutdownCancelsSlackCallsAfterGrace(t *testing.T) {
	ans := newFakeAnswerer()
	ans.gate = make(chan struct{}) // never opened: the answer only ends when cancelled
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.DrainTimeout = 200 * time.Millisecond; c.MaxConcurrent = 1 }})
	h.send(slacktest.MentionEvent(channel, user, "stuck", "1700006200.000100", ""))
	h.send(slacktest.MentionEvent(channel, user, "queued behind it", "1700006200.000200", ""))
	<-ans.started
	if _, err := h.s.WaitReactions(h.ctx(), 2); err != nil { // both hourglasses are on
		t.Fatal(err)
	}
	h.s.RateLimitNext("chat.postMessage", 30*time.Second)
	h.s.RateLimitNext("chat.postMessage", 30*time.Second)
	began := time.Now()
	if err := h.stop(); err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("Run took %v to return with a 200ms drain timeout", d)
	}
	logs := h.logs.String()
	for _, ts := range []string{"1700006200.000100", "1700006200.000200"} {
		found := false
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, ts) && strings.Contains(line, "post") && strings.Contains(line, "failed") {
				found = true
			}
		}
		if !found {
			t.Errorf("when Run returned, the post for %s had not ended (no failure logged):\n%s", ts, logs)
		}
	}
}

// When Slack refuses a reply (not a 429), the user still gets one: the fixed
// failure sentence.
// postCalls is how each chat.postMessage call ended ("" for success).
func postCalls(s *slacktest.Server) []string {
	var posts []string
	for _, c := range s.Calls() {
		if c.Method == "chat.postMessage" {
			posts = append(posts, c.Error)
		}
	}
	return posts
}

// When Slack refuses a reply for a reason a smaller message cannot fix, or
// refuses the smaller form too, the user still gets one reply: the fixed
// failure sentence.
func TestRefusedReplyGetsFailureMessage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		errors []string
	}{
		{"not for its content", []string{"is_archived"}},
		{"the smaller form too", []string{"msg_blocks_too_long", "msg_too_long"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, newFakeAnswerer(), options{})
			for _, e := range tt.errors {
				h.s.FailNext("chat.postMessage", e)
			}
			h.send(slacktest.MentionEvent(channel, user, "q", "1700007200.000100", ""))
			m := h.waitMessages(1)[0]
			if got := text(t, m); !strings.Contains(got, "something went wrong on my side") || m.ThreadTS != "1700007200.000100" {
				t.Errorf("after a refused reply, got %q in thread %q; want the failure sentence in the question's thread", got, m.ThreadTS)
			}
			if posted := h.postedAfterStop(); len(posted) != 1 {
				t.Errorf("%d replies, want 1", len(posted))
			}
			if got, want := postCalls(h.s), append(slices.Clone(tt.errors), ""); !slices.Equal(got, want) {
				t.Errorf("chat.postMessage calls ended %q, want %q", got, want)
			}
		})
	}
}

// A reply that Slack refuses for its content or size is sent once more in a
// smaller form: the answer, the SQL and "the rows are in the attached file",
// with every row in the CSV. One reply is delivered, and its promise holds.
func TestRefusedReplySentSmaller(t *testing.T) {
	for _, slackErr := range []string{"invalid_blocks", "msg_too_long", "msg_blocks_too_long"} {
		t.Run(slackErr, func(t *testing.T) {
			ans := newFakeAnswerer()
			ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) { return echo(req.Question, 25), nil }
			h := start(t, ans, options{})
			h.s.FailNext("chat.postMessage", slackErr)
			const ts = "1700007250.000100"
			h.send(slacktest.MentionEvent(channel, user, "all rows", ts, ""))
			m := h.waitMessages(1)[0]
			if err := h.s.Wait(h.ctx(), func() bool { return len(filesNamed(h.s, ".csv")) == 1 }); err != nil {
				t.Fatal("no file with the smaller form:", err)
			}
			got := decoded(text(t, m))
			for _, want := range []string{"You asked: all rows", "```SELECT question, n FROM echo```", "The rows are in the attached file."} {
				if !strings.Contains(got, want) {
					t.Errorf("the smaller reply lacks %q:\n%s", want, got)
				}
			}
			if m.Blocks != nil || m.ThreadTS != ts {
				t.Errorf("the smaller reply has blocks %s, thread %q; want plain text in the thread", m.Blocks, m.ThreadTS)
			}
			f := filesNamed(h.s, ".csv")[0]
			if recs, err := csv.NewReader(bytes.NewReader(f.Content)).ReadAll(); err != nil || len(recs) != 26 || f.ThreadTS != ts {
				t.Errorf("the attached file has %d records (%v) in thread %q, want the header and 25 rows in %s", len(recs), err, f.ThreadTS, ts)
			}
			if posted := h.postedAfterStop(); len(posted) != 1 {
				t.Errorf("%d replies, want 1", len(posted))
			}
			if got := postCalls(h.s); !slices.Equal(got, []string{slackErr, ""}) {
				t.Errorf("chat.postMessage calls ended %q, want the refused reply, then the smaller one", got)
			}
		})
	}
}

// Slack's rate limit as HTTP 200 {"ok": false, "error": "ratelimited"} is
// waited out and retried like an HTTP 429: one reply is delivered.
func TestRatelimitedOKFalseIsRetried(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{})
	h.s.FailNext("chat.postMessage", "ratelimited")
	h.send(slacktest.MentionEvent(channel, user, "q", "1700007260.000100", ""))
	if got := text(t, h.waitMessages(1)[0]); !strings.Contains(got, "You asked: q") {
		t.Errorf("reply = %q, want the answer", got)
	}
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d replies, want 1", len(posted))
	}
	if got := postCalls(h.s); !slices.Equal(got, []string{"ratelimited", ""}) {
		t.Errorf("chat.postMessage calls ended %q, want a rate-limited call, then a successful retry", got)
	}
}

// A provider's own per-call timeout is a provider failure, not "too long".
func TestProviderTimeoutIsProviderFailure(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		return &agent.Result{Question: req.Question, Outcome: agent.Failed},
			fmt.Errorf("agent: step 1: %w: openai: %w", agent.ErrNoProvider, context.DeadlineExceeded)
	}
	h := start(t, ans, options{})
	h.send(slacktest.MentionEvent(channel, user, "q", "1700007300.000100", ""))
	if got := text(t, h.waitMessages(1)[0]); !strings.Contains(got, "couldn't reach the language model") {
		t.Errorf("reply after a provider timeout = %q, want the provider failure", got)
	}
}

// An answer that runs past AnswerTimeout is cancelled, and the user is told
// it took too long; the bot goes on answering.
func TestAnswerTimeout(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(ctx context.Context, req agent.Request) (*agent.Result, error) {
		if req.Question != "slow" {
			return echo(req.Question, 1), nil
		}
		<-ctx.Done() // an Answerer honours its ctx
		return &agent.Result{Question: req.Question, Outcome: agent.Failed}, fmt.Errorf("agent: step 1: %w", ctx.Err())
	}
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.AnswerTimeout = 100 * time.Millisecond }})
	h.send(slacktest.MentionEvent(channel, user, "slow", "1700007400.000100", ""))
	if got := text(t, h.waitMessages(1)[0]); !strings.Contains(got, "this took too long") {
		t.Errorf("reply after the answer timeout = %q, want the timeout sentence", got)
	}
	h.send(slacktest.MentionEvent(channel, user, "fast", "1700007400.000200", ""))
	if got := text(t, h.waitMessages(2)[1]); !strings.Contains(got, "You asked: fast") {
		t.Errorf("next reply = %q, want the answer", got)
	}
}

// emptyReporter has no report and makes none, without an error.
type emptyReporter struct{}

func (emptyReporter) Key() string                                  { return "empty" }
func (emptyReporter) Run(context.Context) (*evalrun.Report, error) { return nil, nil }

// An evaluation that returns no report (and no error) has failed: the
// failure goes only to the person who asked, and the log says why.
func TestSlashEvalEmptyReport(t *testing.T) {
	h := start(t, newFakeAnswerer(), options{rep: emptyReporter{}})
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	m := h.waitEphemeral(2)[1]
	if got := text(t, m); !strings.Contains(got, "something went wrong on my side") || m.ResponseType != "ephemeral" {
		t.Errorf("empty report: %s reply %q, want the failure sentence, ephemeral", m.ResponseType, got)
	}
	h.stop()
	if !strings.Contains(h.logs.String(), "no report") {
		t.Errorf("the log does not say there was no report:\n%s", h.logs.String())
	}
}

// A mention in a DM arrives twice, as app_mention and as message.im, with
// different event ids: it is answered once.
func TestDMMentionArrivingTwiceAnsweredOnce(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{})
	const dm, ts = "D0ANN", "1700001400.001400"
	h.send(slacktest.MentionEvent(dm, user, "how many?", ts, ""))
	h.send(slacktest.DMEvent(dm, user, "<@UBOT> how many?", ts))
	h.waitMessages(1)
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.Acks()) >= 2 }); err != nil {
		t.Fatal(err)
	}
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Errorf("%d replies to one DM mention delivered twice, want 1", len(posted))
	}
	if n := len(ans.requests()); n != 1 {
		t.Errorf("Answerer called %d times, want 1", n)
	}
}
