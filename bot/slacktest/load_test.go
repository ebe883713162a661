package slacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// toyBot answers mentions as replicas of a bot with shared state would: one
// reply per event_id whichever replica gets it, at most limit answers per
// person, and one ephemeral notice to a person over the limit. It stands in
// for the real bot so that the fake's load driver can be tested alone.
type toyBot struct {
	limit int
	// replies, when set, says how many replies mention number i gets
	// (from its text "q<i>"), instead of the limit.
	replies func(i int) int
	// notice, when set, says whether mention i gets an ephemeral notice.
	notice func(i int) bool

	mu   sync.Mutex
	seen map[string]bool // event_id → claimed
	used map[string]int  // user → answers
	told map[string]bool
	errs []error
}

func newToyBot(limit int) *toyBot {
	return &toyBot{limit: limit, seen: map[string]bool{}, used: map[string]int{}, told: map[string]bool{}}
}

func (b *toyBot) work(ctx context.Context, r *replica, e socketmode.Event) {
	if e.Type != socketmode.EventTypeEventsAPI {
		return
	}
	api, ok := e.Data.(slackevents.EventsAPIEvent)
	if !ok {
		return
	}
	cb, ok1 := api.Data.(*slackevents.EventsAPICallbackEvent)
	m, ok2 := api.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok1 || !ok2 {
		return
	}
	b.mu.Lock()
	if b.seen[cb.EventID] {
		b.mu.Unlock()
		return
	}
	b.seen[cb.EventID] = true
	replies, tell := 0, false
	if b.replies != nil {
		var i int
		if _, err := fmt.Sscanf(strings.TrimPrefix(m.Text, "<@UBOT> "), "q%d", &i); err == nil {
			replies, tell = b.replies(i), b.notice != nil && b.notice(i)
		}
	} else if b.used[m.User] < b.limit {
		b.used[m.User]++
		replies = 1
	} else if !b.told[m.User] {
		b.told[m.User] = true
		tell = true
	}
	b.mu.Unlock()

	var errs []error
	for range replies {
		_, _, err := r.api.PostMessageContext(ctx, m.Channel, slack.MsgOptionText("the answer", false), slack.MsgOptionTS(m.TimeStamp))
		errs = append(errs, err)
	}
	if tell {
		_, err := r.api.PostEphemeralContext(ctx, m.Channel, m.User, slack.MsgOptionText("over the limit", false), slack.MsgOptionTS(m.TimeStamp))
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil && ctx.Err() == nil {
		b.mu.Lock()
		b.errs = append(b.errs, err)
		b.mu.Unlock()
	}
}

func (b *toyBot) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return errors.Join(b.errs...)
}

// TestLoad is the shape of issue 14's load test with the toy bot in place of
// sqlbot: three replicas, mentions from many people, sockets dropped at
// random, unacknowledged envelopes redelivered; one reply per mention within
// the limit, one notice per person over it.
func TestLoad(t *testing.T) {
	s := newServer(t, slacktest.RedeliverUnacked(raceSlowdown*200*time.Millisecond), slacktest.Seed(5))
	bot := newToyBot(4)
	for range 3 {
		connectReplica(t, s, withWork(bot.work))
	}
	s.DropSockets(0.02, 3)
	const mentions, users = 300, 30
	r, err := s.Load(testContext(t), slacktest.LoadSpec{
		Mentions: mentions, Users: users, Channels: 3,
		Settle: raceSlowdown * 300 * time.Millisecond, Timeout: waitLimit,
	})
	if err != nil {
		t.Fatalf("%v\n%v", err, r)
	}
	t.Logf("\n%v", r)
	if err := bot.err(); err != nil {
		t.Fatal(err)
	}
	if !r.Complete || len(r.Mentions) != mentions || len(r.Users) != users {
		t.Fatalf("report: complete %v, %d mentions, %d users", r.Complete, len(r.Mentions), len(r.Users))
	}
	if want := [3]int{mentions - 4*users, 4 * users, 0}; r.ByReplies != want {
		t.Errorf("mentions by replies %v, want %v", r.ByReplies, want)
	}
	for id, u := range r.Users {
		if u.Mentions != mentions/users || u.Answered != 4 || u.Replies != 4 || u.Notices != 1 {
			t.Errorf("user %s: %+v, want 10 mentions, 4 answered, 1 notice", id, u)
		}
	}
	// A mention may go unacknowledged (its every delivery that was not lost
	// timed out) but it is answered all the same: the one reply per mention
	// above holds with drops.
	if r.Notices != users || r.Envelopes < mentions || r.Lost == 0 || r.Redeliveries == 0 {
		t.Errorf("notices %d, unacked %d, envelopes %d, lost %d, redelivered %d",
			r.Notices, r.Unacked, r.Envelopes, r.Lost, r.Redeliveries)
	}
	if !(0 < r.P50 && r.P50 <= r.P99 && r.P99 <= r.Max) {
		t.Errorf("p50 %v, p99 %v, max %v", r.P50, r.P99, r.Max)
	}
	channels := map[string]int{}
	for _, m := range r.Mentions {
		channels[m.Channel]++
		if (m.Replies > 0) != (m.Latency > 0) || m.FirstSent.IsZero() || m.Envelopes == 0 || !m.Acked && m.Envelopes <= slacktest.MaxRetries {
			t.Errorf("mention %+v", m)
		}
	}
	if len(channels) != 3 {
		t.Errorf("mentions per channel: %v, want 3 channels", channels)
	}
}

// TestLoadReport checks the report against a responder whose replies are
// known: none, one, two, and a notice.
func TestLoadReport(t *testing.T) {
	s := newServer(t)
	bot := newToyBot(0)
	bot.replies = func(i int) int { return map[int]int{0: 2, 1: 0}[i] + map[bool]int{true: 1}[i > 1] }
	bot.notice = func(i int) bool { return i == 2 }
	connectReplica(t, s, withWork(bot.work))
	r, err := s.Load(testContext(t), slacktest.LoadSpec{
		Mentions: 6, Users: 2, Text: func(i int) string { return fmt.Sprintf("q%d", i) },
		Settle: raceSlowdown * 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.err(); err != nil {
		t.Fatal(err)
	}
	if r.ByReplies != [3]int{1, 4, 1} || r.Mentions[0].Replies != 2 || r.Mentions[1].Replies != 0 || r.Mentions[1].Latency != 0 {
		t.Errorf("by replies %v; mention 0: %+v; mention 1: %+v", r.ByReplies, r.Mentions[0], r.Mentions[1])
	}
	if r.Notices != 1 || r.Mentions[2].Notices != 1 || r.Users[r.Mentions[2].User].Notices != 1 || r.HiddenNotices != 0 {
		t.Errorf("notices %d (hidden %d); mention 2: %+v", r.Notices, r.HiddenNotices, r.Mentions[2])
	}
	u1, u2 := r.Users["ULOAD00001"], r.Users["ULOAD00002"]
	if u1 != (slacktest.UserResult{Mentions: 3, Answered: 3, Replies: 4, Notices: 1}) || u2 != (slacktest.UserResult{Mentions: 3, Answered: 2, Replies: 2}) {
		t.Errorf("users: %+v, %+v", u1, u2)
	}
	if r.Envelopes != 6 || r.Redeliveries != 0 || r.Unacked != 0 || !r.Complete {
		t.Errorf("report %+v", r)
	}
	// Replies in the fake's own record, matched by thread.
	replies := 0
	for _, m := range s.Messages() {
		if m.ThreadTS == r.Mentions[0].TS && m.Channel == r.Mentions[0].Channel {
			replies++
			if m.At.Sub(r.Mentions[0].FirstSent) < r.Mentions[0].Latency {
				t.Errorf("a reply at %v came before the first one the report saw", m.At)
			}
		}
	}
	if replies != 2 {
		t.Errorf("%d messages in mention 0's thread, want 2", replies)
	}
}

// TestLoadBounds checks the spec's bounds and that a run that cannot settle
// ends at its Timeout with a report of what happened.
func TestLoadBounds(t *testing.T) {
	s := newServer(t, slacktest.RedeliverUnacked(time.Hour))
	ctx := testContext(t)
	for _, spec := range []slacktest.LoadSpec{
		{Mentions: 0, Users: 1},
		{Mentions: slacktest.MaxLoadMentions + 1, Users: 1},
		{Mentions: 1, Users: 0},
		{Mentions: 1, Users: 1, Timeout: slacktest.MaxLoadTimeout + 1},
		{Mentions: 1, Users: 1, Rate: -1},
	} {
		if r, err := s.Load(ctx, spec); err == nil || r != nil {
			t.Errorf("Load(%+v) = %v, %v; want an error", spec, r, err)
		}
	}
	never := func(socketmode.Request) bool { return false }
	connectReplica(t, s, ackIf(never))
	r, err := s.Load(ctx, slacktest.LoadSpec{Mentions: 3, Users: 1, Settle: time.Millisecond, Timeout: 200 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || r == nil || r.Complete || r.Unacked != 3 || r.ByReplies != [3]int{3, 0, 0} {
		t.Errorf("Load with envelopes awaiting redelivery = %v, %v; want a report of 3 unacked mentions and DeadlineExceeded", r, err)
	}
}

// BenchmarkEnvelopes measures how many envelopes per second the fake sends
// to three clients that ack each one: real slack-go clients, which parse
// every envelope fully, and bare WebSocket clients that read only the
// envelope ID, which leave the fake most of the CPU.
func BenchmarkEnvelopes(b *testing.B) {
	b.Run("client=slack-go", func(b *testing.B) {
		s := slacktest.NewServer(b, slacktest.PingInterval(serverPing), slacktest.RedeliverUnacked(3*time.Second))
		for range 3 {
			connectReplica(b, s)
		}
		benchmarkEnvelopes(b, s)
	})
	b.Run("client=bare", func(b *testing.B) {
		s := slacktest.NewServer(b, slacktest.PingInterval(serverPing), slacktest.RedeliverUnacked(3*time.Second))
		for range 3 {
			bareClient(b, s)
		}
		if _, err := s.WaitLive(b.Context(), 3); err != nil {
			b.Fatal(err)
		}
		benchmarkEnvelopes(b, s)
	})
}

func benchmarkEnvelopes(b *testing.B, s *slacktest.Server) {
	ctx := b.Context()
	ev := slacktest.MentionEvent("C1", "U1", "how many orders in June?", "", "")
	const senders = 4
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make([]error, senders)
	for w := range senders {
		wg.Go(func() {
			for i := w; i < b.N; i += senders {
				if _, err := s.SendEvent(ctx, ev); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	for s.Counts().Acks < b.N {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "envelopes/s")
}

// bareClient opens a Socket Mode connection with gorilla/websocket alone
// and acks every envelope, reading nothing but its ID.
func bareClient(b *testing.B, s *slacktest.Server) {
	b.Helper()
	_, url, err := webClient(s).StartSocketModeContext(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	ws, _, err := websocket.DefaultDialer.DialContext(b.Context(), url, nil)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var env struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(data, &env) != nil || env.EnvelopeID == "" {
				continue
			}
			if ws.WriteMessage(websocket.TextMessage, []byte(`{"envelope_id":"`+env.EnvelopeID+`"}`)) != nil {
				return
			}
		}
	})
	b.Cleanup(func() {
		ws.Close()
		wg.Wait()
	})
}

// BenchmarkLoad runs Load (1,000 mentions from 50 people, in a burst or at
// a steady rate) over three replicas of the toy bot, which answer every
// mention with chat.postMessage, and reports the throughput from the first
// envelope to the last reply and the latency percentiles: the floor a load
// test of the real bot starts from. With drops, a delivery lost with its
// socket is redelivered without counting against MaxRetries, so every
// mention is answered: a run with a mention unanswered or answered twice
// fails (0 to 15 went unanswered when the fake counted lost deliveries as
// retries).
func BenchmarkLoad(b *testing.B) {
	for _, bc := range []struct {
		name string
		rate float64 // mentions per second; 0: a burst
		drop float64
	}{{"burst", 0, 0}, {"rate=200/s", 200, 0}, {"burst,drops=0.2%", 0, 0.002}, {"burst,drops=1%", 0, 0.01}} {
		b.Run(bc.name, func(b *testing.B) {
			s := slacktest.NewServer(b, slacktest.PingInterval(serverPing), slacktest.RedeliverUnacked(200*time.Millisecond))
			bot := newToyBot(1 << 30)
			for range 3 {
				connectReplica(b, s, withWork(bot.work))
			}
			var p50, p99, rate, redelivered float64
			runs := 0
			for b.Loop() {
				s.DropSockets(bc.drop, uint64(runs))
				r, err := s.Load(b.Context(), slacktest.LoadSpec{Mentions: 1000, Users: 50, Channels: 2, Rate: bc.rate, Settle: 300 * time.Millisecond})
				if err != nil {
					b.Fatal(err)
				}
				if r.ByReplies[2] != 0 || r.ByReplies[0] != 0 {
					b.Fatalf("replies: %v\n%v", r.ByReplies, r)
				}
				var first, last time.Time
				for _, m := range r.Mentions {
					if first.IsZero() || m.FirstSent.Before(first) {
						first = m.FirstSent
					}
					if m.FirstReply.After(last) {
						last = m.FirstReply
					}
				}
				p50 += float64(r.P50.Microseconds()) / 1000
				p99 += float64(r.P99.Microseconds()) / 1000
				rate += float64(r.ByReplies[1]) / last.Sub(first).Seconds()
				redelivered += float64(r.Redeliveries)
				runs++
			}
			if err := bot.err(); err != nil {
				b.Fatal(err)
			}
			n := float64(runs)
			b.ReportMetric(rate/n, "replies/s")
			b.ReportMetric(p50/n, "p50-ms")
			b.ReportMetric(p99/n, "p99-ms")
			b.ReportMetric(redelivered/n, "redelivered/run")
		})
	}
}
