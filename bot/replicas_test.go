package bot_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
	"sqlbot/bot/state/statetest"
)

// replicas are n Bots, one process's worth each, connected to one fake
// Slack and sharing one Redis through a Failover each, as replicas of one
// deployment are.
type replicas struct {
	t      *testing.T
	s      *slacktest.Server
	bots   []*bot.Bot
	stores []*state.Failover
	logs   *syncBuffer
	stops  []func()
}

// startReplicas starts n bots answering with ans (shared, as the model
// would be) and reporting with rep, against a fresh fake Slack and srv,
// and waits until all are connected. cfg may adjust each bot's Config.
func startReplicas(t *testing.T, srv *statetest.Redis, n int, ans bot.Answerer, rep bot.Reporter, cfg func(*bot.Config), opts ...slacktest.Option) *replicas {
	t.Helper()
	manifest, err := bot.Manifest("")
	if err != nil {
		t.Fatal(err)
	}
	r := &replicas{t: t, s: slacktest.NewServer(t, append([]slacktest.Option{slacktest.AppManifest(manifest)}, opts...)...), logs: &syncBuffer{}}
	prefix := keyPrefix()
	for i := range n {
		lg := slog.New(slog.NewJSONHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", i)
		rs, err := state.NewRedis(srv.URL(), state.RedisOptions{Prefix: prefix, Timeout: 2 * time.Second, Log: lg})
		if err != nil {
			t.Fatal(err)
		}
		f := state.NewFailover(context.Background(), rs, lg, state.FailoverOptions{Probe: 100 * time.Millisecond, CallTimeout: 2 * time.Second})
		c := bot.Config{AppToken: r.s.AppToken(), BotToken: r.s.BotToken(), APIURL: r.s.URL, State: f, StateHealth: f.Health}
		if cfg != nil {
			cfg(&c)
		}
		b, err := bot.New(c, ans, rep, lg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		stopped := false
		stop := func() {
			if stopped {
				return
			}
			stopped = true
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("replica %d: Run returned %v", i, err)
				}
			case <-time.After(raceSlowdown * 20 * time.Second):
				t.Errorf("replica %d: Run did not return", i)
			}
			f.Close()
		}
		r.bots, r.stores, r.stops = append(r.bots, b), append(r.stores, f), append(r.stops, stop)
	}
	t.Cleanup(r.stop)
	ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*10*time.Second)
	defer cancel()
	if err := r.s.Wait(ctx, func() bool { return r.s.Connections() == n }); err != nil {
		t.Fatalf("%d of %d replicas connected: %v", r.s.Connections(), n, err)
	}
	return r
}

// keyPrefix is a Redis key prefix of a test's own.
func keyPrefix() string {
	var b [6]byte
	rand.Read(b[:])
	return "bot-test-" + hex.EncodeToString(b[:]) + ":"
}

// stop stops every replica (once), so that nothing more is posted.
func (r *replicas) stop() {
	for _, stop := range r.stops {
		stop()
	}
}

func (r *replicas) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*20*time.Second)
	r.t.Cleanup(cancel)
	return ctx
}

// conns counts the distinct connections the events_api and slash envelopes
// went to.
func (r *replicas) conns() int {
	seen := map[int]bool{}
	for _, e := range r.s.Sent() {
		seen[e.Conn] = true
	}
	return len(seen)
}

// eachReplicaCount runs f with one replica and with two: what the state
// shares must behave the same.
func eachReplicaCount(t *testing.T, f func(t *testing.T, srv *statetest.Redis, n int)) {
	srv := statetest.StartRedis(t)
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d replicas", n), func(t *testing.T) { f(t, srv, n) })
	}
}

// A redelivered event (Slack's retry after a late ack, on another
// connection) is answered once, whichever replica gets it.
func TestReplicasRedeliveryAnsweredOnce(t *testing.T) {
	eachReplicaCount(t, func(t *testing.T, srv *statetest.Redis, n int) {
		ans := newFakeAnswerer()
		r := startReplicas(t, srv, n, ans, nil, nil)
		ctx := r.ctx()
		env, err := r.s.SendEvent(ctx, slacktest.MentionEvent(channel, user, "how many?", "1700000900.000900", ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.WaitAck(ctx, env); err != nil {
			t.Fatal(err)
		}
		retry, err := r.s.Redeliver(ctx, env, "timeout")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.WaitAck(ctx, retry); err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.WaitMessages(ctx, 1); err != nil {
			t.Fatal(err)
		}
		r.stop()
		if got := r.conns(); got != n {
			t.Errorf("the event and its redelivery went to %d connections, want %d", got, n)
		}
		if posted := r.s.Messages(); len(posted) != 1 {
			t.Errorf("%d replies to one redelivered event, want 1", len(posted))
		}
		if got := len(ans.requests()); got != 1 {
			t.Errorf("the answerer was asked %d times, want 1", got)
		}
	})
}

// A person's limit holds across replicas: two questions a minute, whichever
// replicas their mentions reach, and one notice.
func TestReplicasLimitsHold(t *testing.T) {
	eachReplicaCount(t, func(t *testing.T, srv *statetest.Redis, n int) {
		ans := newFakeAnswerer()
		r := startReplicas(t, srv, n, ans, nil, func(c *bot.Config) { c.RatePerMinute = 2 })
		ctx := r.ctx()
		for i := range 8 {
			if _, err := r.s.SendEvent(ctx, slacktest.MentionEvent(channel, user, fmt.Sprintf("q%d", i), fmt.Sprintf("1700005000.%06d", i+1), "")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.s.WaitMessages(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.WaitEphemeral(ctx, 1); err != nil {
			t.Fatal(err)
		}
		// Every envelope acknowledged means every mention was decided.
		for _, e := range r.s.Sent() {
			if _, err := r.s.WaitAck(ctx, e.EnvelopeID); err != nil {
				t.Fatal(err)
			}
		}
		r.stop()
		if got := r.conns(); got != n {
			t.Errorf("the mentions went to %d connections, want %d", got, n)
		}
		if got := len(r.s.Messages()); got != 2 {
			t.Errorf("%d answers to 8 questions in a minute, want 2", got)
		}
		if got := len(ans.requests()); got != 2 {
			t.Errorf("the answerer was asked %d times, want 2", got)
		}
		if got := len(r.s.Ephemeral()); got != 1 {
			t.Errorf("%d limit notices, want 1 (told once per window)", got)
		}
	})
}

// A follow-up in a thread carries the thread's history whichever replica
// answered before.
func TestReplicasThreadHistory(t *testing.T) {
	eachReplicaCount(t, func(t *testing.T, srv *statetest.Redis, n int) {
		ans := newFakeAnswerer()
		r := startReplicas(t, srv, n, ans, nil, nil)
		ctx := r.ctx()
		const top = "1700006000.000001"
		if _, err := r.s.SendEvent(ctx, slacktest.MentionEvent(channel, user, "orders in June", top, "")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.WaitMessages(ctx, 1); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			if _, err := r.s.SendEvent(ctx, slacktest.MentionEvent(channel, user, fmt.Sprintf("and in month %d?", 7+i),
				fmt.Sprintf("1700006001.%06d", i+1), top)); err != nil {
				t.Fatal(err)
			}
			if _, err := r.s.WaitMessages(ctx, 2+i); err != nil {
				t.Fatal(err)
			}
		}
		r.stop()
		if got := r.conns(); got != n {
			t.Errorf("the thread's mentions went to %d connections, want %d", got, n)
		}
		reqs := ans.requests()
		if len(reqs) != 5 {
			t.Fatalf("%d questions answered, want 5", len(reqs))
		}
		for i, req := range reqs[1:] {
			if len(req.History) != i+1 || req.History[0].Question != "orders in June" || req.History[0].Answer != "You asked: orders in June" {
				t.Errorf("follow-up %d: history %+v, want the %d earlier turns, from the first", i+1, req.History, i+1)
			}
		}
	})
}

// One evaluation runs at a time across replicas: people asking on each
// replica while it runs all get its report, and it runs once.
func TestReplicasOneEvaluation(t *testing.T) {
	eachReplicaCount(t, func(t *testing.T, srv *statetest.Redis, n int) {
		rep := &fakeReporter{gate: make(chan struct{})}
		r := startReplicas(t, srv, n, newFakeAnswerer(), rep, nil)
		ctx := r.ctx()
		people := []string{"U0ANN", "U0BOB", "U0CAT", "U0DAN"}
		for _, u := range people {
			if _, err := r.s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: u, ChannelID: channel}); err != nil {
				t.Fatal(err)
			}
		}
		// Each was told that an evaluation is running (or starts now).
		if _, err := r.s.WaitEphemeral(ctx, len(people)); err != nil {
			t.Fatal(err)
		}
		close(rep.gate)
		if _, err := r.s.WaitEphemeral(ctx, 2*len(people)); err != nil {
			t.Fatalf("not every person got the report: %v\n%+v", err, r.s.Ephemeral())
		}
		r.stop()
		if got := r.conns(); got != n {
			t.Errorf("the commands went to %d connections, want %d", got, n)
		}
		reports := map[string]int{}
		for _, m := range r.s.Ephemeral() {
			if strings.Contains(text(t, m), "9 of 10 answerable") {
				reports[m.User]++
			}
		}
		for _, u := range people {
			if reports[u] != 1 {
				t.Errorf("%s got %d reports, want 1", u, reports[u])
			}
		}
		if rep.runs != 1 {
			t.Errorf("%d evaluation runs, want 1", rep.runs)
		}
	})
}

// /healthz says whether the state is shared: degraded while Redis is away,
// shared again when it is back, and the log says each once per replica.
func TestReplicasHealthFollowsRedis(t *testing.T) {
	srv := statetest.StartRedis(t)
	r := startReplicas(t, srv, 2, newFakeAnswerer(), nil, nil)
	state := func(b *bot.Bot) (code int, h map[string]any) {
		rec := httptest.NewRecorder()
		b.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		body, _ := io.ReadAll(rec.Body)
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("/healthz: %v: %s", err, body)
		}
		return rec.Code, h
	}
	wait := func(want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), raceSlowdown*20*time.Second)
		defer cancel()
		for i, b := range r.bots {
			for {
				// The status stays ok (200) in both states: the bot answers.
				code, h := state(b)
				if h["state"] == want && code == http.StatusOK && h["status"] == "ok" {
					if want == "degraded" && h["state_reason"] == "" {
						t.Errorf("replica %d: degraded without a reason: %v", i, h)
					}
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("replica %d: /healthz %d %v, want 200, status ok and state %s", i, code, h, want)
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	}
	wait("shared")
	srv.Stop()
	wait("degraded")
	// While degraded the bot still answers.
	ctx := r.ctx()
	if _, err := r.s.SendEvent(ctx, slacktest.MentionEvent(channel, user, "still there?", "1700007000.000001", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.WaitMessages(ctx, 1); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	wait("shared")
	metrics := httptest.NewRecorder()
	r.bots[0].Handler().ServeHTTP(metrics, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(metrics.Body.String(), "sqlbot_state_shared 1") {
		t.Errorf("/metrics lacks sqlbot_state_shared 1")
	}
	r.stop()
	logs := r.logs.String()
	for _, msg := range []string{"redis unavailable", "redis is back"} {
		if got := strings.Count(logs, msg); got != 2 {
			t.Errorf("%q logged %d times, want once per replica", msg, got)
		}
	}
}
