package slacktest_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// TestSeveralConnections connects three replicas, as one app, and checks that
// each hello counts the live connections and that envelopes reach all three.
func TestSeveralConnections(t *testing.T) {
	s := newServer(t)
	ctx := testContext(t)
	var reps []*replica
	var ids []int
	for want := 1; want <= 3; want++ {
		r, id := connectReplica(t, s)
		if h := r.Hellos(); h[0] != want {
			t.Errorf("replica %d: hello num_connections = %d, want %d", want, h[0], want)
		}
		reps, ids = append(reps, r), append(ids, id)
	}
	if live := s.Live(); !slices.Equal(live, ids) {
		t.Fatalf("Live() = %v, want %v", live, ids)
	}

	envs := sendDMs(t, ctx, s, 60)
	eventually(t, "not every envelope was acked", func() bool { return allAcked(s, envs) })
	for i, r := range reps {
		if n := len(r.Requests()); n == 0 {
			t.Errorf("replica %d (connection %d) received no envelope", i+1, ids[i])
		}
	}
	sentOn := map[string]int{}
	perConn := map[int]int{}
	for _, e := range s.Sent() {
		sentOn[e.EnvelopeID] = e.Conn
		perConn[e.Conn]++
	}
	for i, r := range reps {
		if got := len(r.Requests()); got != perConn[ids[i]] {
			t.Errorf("replica %d received %d envelopes, the fake sent %d on its connection", i+1, got, perConn[ids[i]])
		}
	}
	for _, a := range s.Acks() {
		if a.Conn != sentOn[a.EnvelopeID] {
			t.Errorf("ack of %s came on connection %d, its envelope went on %d (nothing was dropped)", a.EnvelopeID, a.Conn, sentOn[a.EnvelopeID])
		}
	}
	for _, c := range s.Conns() {
		if c.Envelopes != perConn[c.ID] || c.Acks != perConn[c.ID] || c.Refused || !c.Closed.IsZero() {
			t.Errorf("Conns: %+v, want %d envelopes and acks, open", c, perConn[c.ID])
		}
	}
	t.Logf("60 envelopes over connections %v: %v", ids, perConn)
}

// TestSpreadFollowsSeed checks that the choice of connections is the same
// for the same seed and the same sends, and differs for another seed.
func TestSpreadFollowsSeed(t *testing.T) {
	spread := func(seed uint64) []int {
		s := newServer(t, slacktest.Seed(seed))
		ctx := testContext(t)
		for range 3 {
			connectReplica(t, s)
		}
		envs := sendDMs(t, ctx, s, 40)
		eventually(t, "not every envelope was acked", func() bool { return allAcked(s, envs) })
		var conns []int
		for _, e := range s.Sent() {
			conns = append(conns, e.Conn)
		}
		return conns
	}
	a, b, c := spread(42), spread(42), spread(43)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different spreads:\n%v\n%v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 42 and 43 gave the same spread %v", a)
	}
}

// TestConnectionLimit checks that an eleventh connection is refused as Slack
// refuses it, that slack-go keeps trying, and that it gets in once a
// connection is freed.
func TestConnectionLimit(t *testing.T) {
	s := newServer(t)
	ctx := testContext(t)
	var reps []*replica
	for want := 1; want <= slacktest.MaxConnections; want++ {
		r, _ := connectReplica(t, s)
		if h := r.Hellos(); h[0] != want {
			t.Fatalf("replica %d: hello num_connections = %d", want, h[0])
		}
		reps = append(reps, r)
	}

	// A bare WebSocket client sees what Slack sends: apps.connections.open
	// succeeds, then the socket gets `disconnect` instead of `hello`.
	api := webClient(s)
	_, url, err := api.StartSocketModeContext(ctx)
	if err != nil {
		t.Fatalf("apps.connections.open with %d connections: %v, want a URL", slacktest.MaxConnections, err)
	}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	if err := ws.ReadJSON(&first); err != nil || first.Type != "disconnect" || first.Reason != "too_many_websockets" {
		t.Errorf("first frame on the eleventh connection: %+v, %v; want disconnect too_many_websockets", first, err)
	}
	ws.Close()

	// slack-go treats it like any disconnect: it opens a connection again, and
	// again, without a hello, until a place is free.
	opensBefore := opens(s)
	extra := startReplica(t, s)
	eventually(t, "slack-go did not retry the refused connection", func() bool { return opens(s) >= opensBefore+3 })
	if h := extra.Hellos(); len(h) != 0 {
		t.Errorf("refused replica got hello %v", h)
	}
	if n := len(s.Live()); n != slacktest.MaxConnections {
		t.Errorf("%d live connections, want %d", n, slacktest.MaxConnections)
	}
	reps[0].stop()
	eventually(t, "the eleventh replica did not get in once a connection closed", func() bool { return len(extra.Hellos()) == 1 })
	if h := extra.Hellos(); h[0] != slacktest.MaxConnections {
		t.Errorf("hello num_connections = %d, want %d", h[0], slacktest.MaxConnections)
	}
	extra.stop() // before counting, so that no refused connection is still opening
	extra.mu.Lock()
	if err := extra.runErr; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("slack-go's RunContext ended with %v, want it only to reconnect until cancelled", err)
	}
	extra.mu.Unlock()
	refused := 0
	for _, c := range s.Conns() {
		if c.Refused {
			refused++
			if c.NumConnections != 0 || c.Envelopes != 0 {
				t.Errorf("refused connection %+v was used", c)
			}
		}
	}
	if refused < 3 {
		t.Errorf("%d connections refused, want at least 3 (one bare, two or more from slack-go)", refused)
	}
}

// TestNumConnectionsCountsLive checks hello's num_connections after a drop, a
// replica leaving and a `disconnect`.
func TestNumConnectionsCountsLive(t *testing.T) {
	s := newServer(t)
	ctx := testContext(t)
	a, aID := connectReplica(t, s)
	b, bID := connectReplica(t, s)
	if ha, hb := a.Hellos(), b.Hellos(); ha[0] != 1 || hb[0] != 2 {
		t.Fatalf("hellos: a %v, b %v; want 1 and 2", ha, hb)
	}

	if err := s.DropConn(aID); err != nil {
		t.Fatal(err)
	}
	aID = reconnected(t, s, a, 2, bID)
	if h := a.Hellos(); h[1] != 2 {
		t.Errorf("after the drop, a's hello num_connections = %d, want 2 (b and a)", h[1])
	}

	b.stop()
	if _, err := s.WaitLive(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.DisconnectConn(ctx, aID, "warning"); err != nil {
		t.Fatal(err)
	}
	reconnected(t, s, a, 3)
	if h := a.Hellos(); h[2] != 1 {
		t.Errorf("alone, a's hello num_connections = %d, want 1", h[2])
	}
	if err := s.DropConn(bID); !errors.Is(err, slacktest.ErrNotConnected) {
		t.Errorf("DropConn of a closed connection = %v, want ErrNotConnected", err)
	}
	if n := opens(s); n != 4 {
		t.Errorf("apps.connections.open called %d times, want 4", n)
	}
}

// TestFaultsOnOneConnection drops one connection, then sends `disconnect` on
// another, and checks that slack-go reconnects each, that the other
// connections are untouched, and that envelopes keep flowing to all.
func TestFaultsOnOneConnection(t *testing.T) {
	for _, reason := range []string{"", "refresh_requested", "warning"} { // "": dropped
		name := reason
		if name == "" {
			name = "dropped"
		}
		t.Run(name, func(t *testing.T) {
			s := newServer(t)
			ctx := testContext(t)
			var reps []*replica
			var ids []int
			for range 3 {
				r, id := connectReplica(t, s)
				reps, ids = append(reps, r), append(ids, id)
			}
			envs := sendDMs(t, ctx, s, 15)
			eventually(t, "not every envelope was acked", func() bool { return allAcked(s, envs) })

			var err error
			if reason == "" {
				err = s.DropConn(ids[1])
			} else {
				err = s.DisconnectConn(ctx, ids[1], reason)
			}
			if err != nil {
				t.Fatal(err)
			}
			ids[1] = reconnected(t, s, reps[1], 2, ids[0], ids[2])
			for i, r := range reps {
				if i != 1 && len(r.Hellos()) != 1 {
					t.Errorf("replica %d reconnected too: hellos %v", i, r.Hellos())
				}
			}
			if live := s.Live(); len(live) != 3 || !slices.Contains(live, ids[0]) || !slices.Contains(live, ids[2]) {
				t.Errorf("Live() = %v, want the two untouched connections and a new one", live)
			}

			before := make([]int, 3)
			for i, r := range reps {
				before[i] = len(r.Requests())
			}
			envs = sendDMs(t, ctx, s, 30)
			eventually(t, "not every envelope after the fault was acked", func() bool { return allAcked(s, envs) })
			for i, r := range reps {
				if len(r.Requests()) == before[i] {
					t.Errorf("replica %d received nothing after the fault", i)
				}
			}
			if n := opens(s); n != 4 {
				t.Errorf("apps.connections.open called %d times, want 4", n)
			}
		})
	}
}

// TestRedeliveryToAnotherConnection: an envelope left unacked on one
// connection comes back on the other, with the same event_id; an ack that
// arrives on another connection than the envelope's counts.
func TestRedeliveryToAnotherConnection(t *testing.T) {
	after := raceSlowdown * 300 * time.Millisecond
	s := newServer(t, slacktest.RedeliverUnacked(after))
	ctx := testContext(t)
	never := func(socketmode.Request) bool { return false }
	a, aID := connectReplica(t, s, ackIf(never))
	b, bID := connectReplica(t, s)

	// sendToA sends DMs until one goes on a's connection and returns it.
	sendToA := func() slacktest.Envelope {
		t.Helper()
		for range 30 {
			id := sendDMs(t, ctx, s, 1)[0]
			for _, e := range s.Sent() {
				if e.EnvelopeID == id && e.Conn == aID {
					return e
				}
			}
		}
		t.Fatal("30 envelopes and none on the second connection")
		return slacktest.Envelope{}
	}

	first := sendToA()
	eventually(t, "a did not receive its envelope", func() bool { return a.got(first.EnvelopeID) })
	var retry slacktest.Envelope
	eventually(t, "no redelivery", func() bool {
		for _, e := range s.Sent() {
			if e.EventID == first.EventID && e.RetryAttempt == 1 {
				retry = e
				return true
			}
		}
		return false
	})
	if retry.EnvelopeID == first.EnvelopeID || retry.RetryReason != "timeout" || retry.Conn != bID {
		t.Errorf("redelivery %+v; want a new envelope ID, reason timeout, on connection %d", retry, bID)
	}
	eventually(t, "b did not receive the redelivery", func() bool { return b.got(retry.EnvelopeID) })
	if _, err := s.WaitAck(ctx, retry.EnvelopeID); err != nil {
		t.Fatal(err)
	}

	// An envelope on a's connection, acknowledged by b on its own.
	second := sendToA()
	if err := b.sm.AckCtx(ctx, second.EnvelopeID, nil); err != nil {
		t.Fatal(err)
	}
	ack, err := s.WaitAck(ctx, second.EnvelopeID)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Conn != bID {
		t.Errorf("ack came on connection %d, want %d", ack.Conn, bID)
	}

	time.Sleep(3 * after) // room for a wrong redelivery of either
	for _, id := range []string{first.EventID, second.EventID} {
		n := 0
		for _, e := range s.Sent() {
			if e.EventID == id {
				n++
			}
		}
		if want := map[bool]int{true: 2, false: 1}[id == first.EventID]; n != want {
			t.Errorf("event %s sent %d times, want %d", id, n, want)
		}
	}
}

// TestRedeliveryGivesUp checks that an event nobody acks is sent 1 +
// MaxRetries times, alternating between the two connections, each retry no
// sooner than its wait (uniform, or growing as Slack's do).
func TestRedeliveryGivesUp(t *testing.T) {
	unit := raceSlowdown * 40 * time.Millisecond
	for _, tt := range []struct {
		name  string
		waits []time.Duration // before retry 1, 2, 3
	}{
		{"uniform", []time.Duration{unit, unit, unit}},
		{"growing", []time.Duration{unit, 3 * unit, 6 * unit}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opt := slacktest.RedeliverUnacked(unit)
			if tt.name == "growing" {
				opt = slacktest.RedeliverUnacked(tt.waits[0], tt.waits[1:]...)
			}
			s := newServer(t, opt)
			ctx := testContext(t)
			never := func(socketmode.Request) bool { return false }
			connectReplica(t, s, ackIf(never))
			connectReplica(t, s, ackIf(never))
			sendDMs(t, ctx, s, 1)
			eventually(t, "fewer than 1+MaxRetries deliveries", func() bool { return len(s.Sent()) >= 1+slacktest.MaxRetries })
			time.Sleep(3 * tt.waits[2]) // room for a wrong fifth delivery
			sent := s.Sent()
			if len(sent) != 1+slacktest.MaxRetries {
				t.Fatalf("%d deliveries, want %d", len(sent), 1+slacktest.MaxRetries)
			}
			for i, e := range sent {
				if e.RetryAttempt != i || e.EventID != sent[0].EventID || (i > 0 && (e.RetryReason != "timeout" || e.Conn == sent[i-1].Conn)) {
					t.Errorf("delivery %d: attempt %d, reason %q, event %s, connection %d (previous %d)",
						i, e.RetryAttempt, e.RetryReason, e.EventID, e.Conn, sent[max(i-1, 0)].Conn)
				}
				if i > 0 {
					gap := e.SentAt.Sub(sent[i-1].SentAt)
					t.Logf("retry %d after %v", i, gap)
					if gap < tt.waits[i-1] {
						t.Errorf("retry %d came %v after the previous delivery, before its wait of %v", i, gap, tt.waits[i-1])
					}
				}
			}
		})
	}
}

// TestRandomDrops runs envelopes through three replicas while the fake drops
// sockets at random: slack-go reconnects, lost envelopes are redelivered and
// every event is acknowledged unless MaxRetries redeliveries that were not
// lost with their socket timed out too.
func TestRandomDrops(t *testing.T) {
	s := newServer(t, slacktest.RedeliverUnacked(raceSlowdown*200*time.Millisecond))
	ctx := testContext(t)
	reps := make([]*replica, 3)
	for i := range reps {
		reps[i], _ = connectReplica(t, s)
	}
	s.DropSockets(0.05, 7)
	const n = 300
	sendDMs(t, ctx, s, n)
	s.DropSockets(0, 0)

	// settled: every event has an acked envelope or was sent 1+MaxRetries
	// times without being lost (a lost delivery does not count).
	settled := func() (acked, gaveUp int, ok bool) {
		byEvent := map[string][]string{}
		kept := map[string]int{}
		for _, e := range s.Sent() {
			byEvent[e.EventID] = append(byEvent[e.EventID], e.EnvelopeID)
			if !e.Lost {
				kept[e.EventID]++
			}
		}
		ackd := map[string]bool{}
		for _, a := range s.Acks() {
			ackd[a.EnvelopeID] = true
		}
		for ev, envs := range byEvent {
			switch {
			case slices.ContainsFunc(envs, func(id string) bool { return ackd[id] }):
				acked++
			case kept[ev] == 1+slacktest.MaxRetries:
				gaveUp++
			}
		}
		return acked, gaveUp, len(byEvent) == n && acked+gaveUp == n
	}
	eventually(t, "events neither acked nor given up", func() bool { _, _, ok := settled(); return ok })
	acked, gaveUp, _ := settled()
	if acked < n*95/100 {
		t.Errorf("%d of %d events acked, want at least 95%%", acked, n)
	}
	if _, err := s.WaitLive(ctx, 3); err != nil {
		t.Error(err)
	}
	ackd := map[string]bool{}
	for _, a := range s.Acks() {
		ackd[a.EnvelopeID] = true
	}
	lost, redelivered := 0, 0
	for _, e := range s.Sent() {
		if e.Lost && !ackd[e.EnvelopeID] { // some acks of lost deliveries arrive on the next connection
			lost++
		}
		if e.RetryAttempt > 0 {
			redelivered++
		}
	}
	dropped := 0
	for _, c := range s.Conns() {
		if !c.Closed.IsZero() {
			dropped++
		}
	}
	if lost == 0 || redelivered < lost || dropped == 0 || opens(s) != 3+dropped {
		t.Errorf("lost %d, redelivered %d, connections closed %d, opened %d: want losses, each redelivered, and a reconnection per drop",
			lost, redelivered, dropped, opens(s))
	}
	t.Logf("%d events: %d acked, %d given up; %d envelopes lost and not acked, %d redelivered; %d connections dropped", n, acked, gaveUp, lost, redelivered, dropped)
}

// TestLostDeliveryNotCounted checks that a delivery lost with its socket
// does not use up one of the event's MaxRetries: an event whose deliveries
// keep dying with their connection is sent again each time, and only
// deliveries that reached a live client and timed out count. (When lost
// deliveries counted, a burst through dropped sockets gave up on mentions
// whose four deliveries all sat in the backlog of sockets that were then
// dropped: 0 to 15 of 1,000 went unanswered.)
func TestLostDeliveryNotCounted(t *testing.T) {
	s := newServer(t)
	ctx := testContext(t)
	never := func(socketmode.Request) bool { return false }
	r, conn := connectReplica(t, s, ackIf(never))
	env, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "lost again and again", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	const drops = slacktest.MaxRetries + 2
	for i := range drops {
		eventually(t, "the replica did not get the delivery", func() bool { return r.got(env) })
		if err := s.DropConn(conn); err != nil {
			t.Fatal(err)
		}
		conn = reconnected(t, s, r, i+2)
		ids, err := s.RedeliverUnackedNow(ctx)
		if err != nil || len(ids) != 1 {
			t.Fatalf("drop %d: RedeliverUnackedNow = %v, %v; want the lost delivery sent again", i+1, ids, err)
		}
		env = ids[0]
	}
	// From here on the deliveries reach a live client, which never acks:
	// MaxRetries more, then the event is given up.
	for i := range slacktest.MaxRetries + 1 {
		eventually(t, "the replica did not get the delivery", func() bool { return r.got(env) })
		ids, err := s.RedeliverUnackedNow(ctx)
		if want := min(1, slacktest.MaxRetries-i); err != nil || len(ids) != want {
			t.Fatalf("timeout %d: RedeliverUnackedNow = %v, %v; want %d envelopes", i+1, ids, err, want)
		}
		if len(ids) == 1 {
			env = ids[0]
		}
	}
	sent := s.Sent()
	if len(sent) != 1+drops+slacktest.MaxRetries {
		t.Fatalf("%d deliveries, want %d", len(sent), 1+drops+slacktest.MaxRetries)
	}
	for i, e := range sent {
		if e.Lost != (i < drops) || e.RetryAttempt != i {
			t.Errorf("delivery %d: lost %v, retry_attempt %d; want lost %v, %d", i, e.Lost, e.RetryAttempt, i < drops, i)
		}
	}
}
