package slacktest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// replica is one real slack-go Socket Mode client with its own Web API
// client, as one replica of a bot would run it. It acks what ack accepts
// (everything when ack is nil) at once, then queues work, if any, for a
// pool of four workers.
type replica struct {
	api  *slack.Client
	sm   *socketmode.Client
	ack  func(socketmode.Request) bool
	work func(ctx context.Context, r *replica, e socketmode.Event)

	hc     *http.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	pool   chan struct{}

	mu     sync.Mutex
	hellos []int                // num_connections of every hello, in order
	reqs   []socketmode.Request // events_api and slash_commands requests received
	runErr error
}

// ackWait bounds how long a replica waits to hand an ack to slack-go. An
// ack later than Slack's 3 s is useless anyway.
const ackWait = 100 * time.Millisecond

type replicaOption func(*replica)

func ackIf(f func(socketmode.Request) bool) replicaOption { return func(r *replica) { r.ack = f } }

func withWork(f func(ctx context.Context, r *replica, e socketmode.Event)) replicaOption {
	return func(r *replica) { r.work = f }
}

func startReplica(t testing.TB, s *slacktest.Server, opts ...replicaOption) *replica {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL), slack.OptionAppLevelToken(s.AppToken()), slack.OptionHTTPClient(hc))
	r := &replica{
		api:  api,
		sm:   socketmode.New(api, socketmode.OptionPingInterval(clientPing)),
		hc:   hc,
		pool: make(chan struct{}, 4),
	}
	for _, o := range opts {
		o(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Go(func() {
		err := r.sm.RunContext(ctx)
		r.mu.Lock()
		r.runErr = err
		r.mu.Unlock()
	})
	r.wg.Go(func() { r.loop(ctx) })
	t.Cleanup(r.stop)
	return r
}

func (r *replica) loop(ctx context.Context) {
	for {
		var e socketmode.Event
		select {
		case e = <-r.sm.Events:
		case <-ctx.Done():
			return
		}
		switch e.Type {
		case socketmode.EventTypeHello:
			r.mu.Lock()
			r.hellos = append(r.hellos, e.Request.NumConnections)
			r.mu.Unlock()
			continue
		case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand:
		default:
			continue
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, *e.Request)
		r.mu.Unlock()
		if r.ack == nil || r.ack(*e.Request) {
			// Bounded: slack-go queues acks for the connection's writer,
			// which, when a write fails on a dropped socket, blocks on
			// reporting it into Events, which this loop drains. An ack
			// that waits for ever deadlocks the client.
			actx, cancel := context.WithTimeout(ctx, ackWait)
			_ = r.sm.AckCtx(actx, e.Request.EnvelopeID, nil) // a lost ack is redelivered
			cancel()
		}
		if r.work == nil {
			continue
		}
		r.wg.Go(func() { // queued: the next envelope is acked without waiting
			select {
			case r.pool <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-r.pool }()
			r.work(ctx, r, e)
		})
	}
}

// stop ends the replica's Socket Mode client and work, and waits for them.
func (r *replica) stop() {
	r.once.Do(func() {
		r.cancel()
		r.wg.Wait()
		r.hc.CloseIdleConnections()
	})
}

func (r *replica) Hellos() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hellos)
}

func (r *replica) Requests() []socketmode.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// got reports whether the replica received envelope id.
func (r *replica) got(id string) bool {
	return slices.ContainsFunc(r.Requests(), func(q socketmode.Request) bool { return q.EnvelopeID == id })
}

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", waitLimit, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// connectReplica starts a replica and waits for its hello; it returns the
// replica and the ID of its connection, found as the one new live connection.
func connectReplica(t testing.TB, s *slacktest.Server, opts ...replicaOption) (*replica, int) {
	t.Helper()
	before := s.Live()
	r := startReplica(t, s, opts...)
	eventually(t, "no hello for a new replica", func() bool { return len(r.Hellos()) == 1 })
	var id int
	eventually(t, "no new live connection", func() bool {
		for _, l := range s.Live() {
			if !slices.Contains(before, l) {
				id = l
				return true
			}
		}
		return false
	})
	return r, id
}

// reconnected waits until r has had n hellos and returns the ID of the one
// live connection that is not in others.
func reconnected(t testing.TB, s *slacktest.Server, r *replica, n int, others ...int) int {
	t.Helper()
	eventually(t, fmt.Sprintf("replica did not get hello number %d", n), func() bool { return len(r.Hellos()) >= n })
	var id int
	eventually(t, "the replica's new connection is not live", func() bool {
		for _, l := range s.Live() {
			if !slices.Contains(others, l) {
				id = l
				return true
			}
		}
		return false
	})
	return id
}

func opens(s *slacktest.Server) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Method == "apps.connections.open" && c.Error == "" {
			n++
		}
	}
	return n
}

// allAcked reports whether every envelope in ids was acknowledged.
func allAcked(s *slacktest.Server, ids []string) bool {
	acked := map[string]bool{}
	for _, a := range s.Acks() {
		if !a.Dropped {
			acked[a.EnvelopeID] = true
		}
	}
	for _, id := range ids {
		if !acked[id] {
			return false
		}
	}
	return true
}

func sendDMs(t testing.TB, ctx context.Context, s *slacktest.Server, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		id, err := s.SendEvent(ctx, slacktest.DMEvent("D1", "U1", fmt.Sprintf("question %d", i), ""))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}
