package slacktest

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxAckSize is Slack's limit for a Socket Mode response: at or above it the
// response is silently dropped.
const maxAckSize = 20 * 1024

// MaxConnections is how many Socket Mode connections Slack keeps open at once
// for one app. A connection beyond it is sent {"type": "disconnect",
// "reason": "too_many_websockets"} instead of `hello` and then dropped, as
// Slack does; apps.connections.open itself still answers with a URL.
const MaxConnections = 10

// disconnectGrace is how long the fake keeps a connection open after sending
// it `disconnect`, for the client to close it first (slack-go does at once).
const disconnectGrace = 10 * time.Second

// conn is one Socket Mode WebSocket connection.
type conn struct {
	id   int
	ws   *websocket.Conn
	wmu  sync.Mutex // gorilla allows one writer at a time
	once sync.Once
	done chan struct{} // closed when the read loop has ended and c is forgotten

	// Guarded by Server.mu.
	info  *ConnInfo
	ready bool // `hello` was written
}

// A ConnInfo describes one Socket Mode connection the fake accepted.
type ConnInfo struct {
	// ID numbers connections 1, 2, … in the order they were upgraded.
	ID int
	// NumConnections is what the connection's `hello` carried: how many
	// connections were live, this one included. Zero when Refused.
	NumConnections int
	// Refused is set on a connection beyond MaxConnections, which was sent
	// `disconnect` (too_many_websockets) instead of `hello`.
	Refused bool
	Opened  time.Time
	Closed  time.Time // zero while open
	// Envelopes counts the envelopes sent on it (lost ones included, see
	// DropSockets); Acks the frames received on it.
	Envelopes int
	Acks      int
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(b)
}

// writeLocked writes b; c.wmu must be held.
func (c *conn) writeLocked(b []byte) error {
	if err := c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// close drops the TCP connection without a close frame, as Slack does.
func (c *conn) close() {
	c.once.Do(func() { _ = c.ws.Close() })
}

// envelope is one events_api or slash_commands envelope.
type envelope struct {
	id      string
	typ     string
	eventID string
	payload json.RawMessage
	retry   int
	reason  string
	frame   []byte // never modified once built
	slash   *slash // slash_commands only

	// Guarded by Server.mu.
	sentAt time.Time
	conn   int // the connection it was (last) sent on
	// lost is set when the fake dropped its connection before the write, or
	// after it but before the ack came (see loseLocked).
	lost  bool
	acked bool
	// lostBefore counts the earlier deliveries of its event that were lost
	// with their connection; sentIdx is its index in Server.sent (-1 until
	// recorded).
	lostBefore int
	sentIdx    int
	// redelivered is set once a redelivery of this envelope was made.
	redelivered bool
}

// publicLocked returns what Sent reports about e; Server.mu must be held.
func (e *envelope) publicLocked() Envelope {
	return Envelope{
		EnvelopeID:   e.id,
		Type:         e.typ,
		EventID:      e.eventID,
		RetryAttempt: e.retry,
		RetryReason:  e.reason,
		JSON:         e.frame,
		SentAt:       e.sentAt,
		Conn:         e.conn,
		Lost:         e.lost,
	}
}

// wireEnvelope is the JSON shape of a Socket Mode envelope.
type wireEnvelope struct {
	EnvelopeID             string          `json:"envelope_id"`
	Payload                json.RawMessage `json:"payload"`
	Type                   string          `json:"type"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           *int            `json:"retry_attempt,omitempty"`
	RetryReason            *string         `json:"retry_reason,omitempty"`
}

func newEnvelope(typ string, payload json.RawMessage, eventID string, retry int, reason string) *envelope {
	e := &envelope{id: newUUID(), typ: typ, eventID: eventID, payload: payload, retry: retry, reason: reason, sentIdx: -1}
	w := wireEnvelope{EnvelopeID: e.id, Payload: payload, Type: typ}
	if typ == "events_api" {
		w.RetryAttempt, w.RetryReason = &e.retry, &e.reason
	} else {
		w.AcceptsResponsePayload = true // slash commands may be answered in the ack
	}
	e.frame, _ = json.Marshal(w) // marshalling plain strings and valid raw JSON cannot fail
	return e
}

// disconnectFrame is Slack's `disconnect` message.
func disconnectFrame(reason string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type":       "disconnect",
		"reason":     reason,
		"debug_info": map[string]any{"host": "applink-slacktest"},
	})
	return b
}

// handleSocket serves the Socket Mode WebSocket at the URL that
// apps.connections.open handed out. Each ticket opens one connection; one
// beyond MaxConnections is refused with `disconnect`.
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.tickets[ticket] && !s.closed
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	// slack-go dials with Origin: https://api.slack.com, which the default
	// same-origin check would refuse with 403.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	ws.SetReadLimit(1 << 20)
	c := &conn{ws: ws, done: make(chan struct{})}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return
	}
	open := 0
	for o := range s.conns {
		if !o.info.Refused {
			open++
		}
	}
	s.connSeq++
	c.id = s.connSeq
	c.info = &ConnInfo{ID: c.id, Opened: time.Now(), Refused: open >= MaxConnections}
	s.connLog = append(s.connLog, c.info)
	s.conns[c] = true
	// After the hijack httptest no longer waits for this handler; Close does.
	s.wg.Add(2)
	refused := c.info.Refused
	s.notifyLocked()
	s.mu.Unlock()

	go s.pinger(c)
	defer s.wg.Done()
	defer s.forget(c)

	if refused {
		// Give the client the time Slack does to close it first.
		if c.write(disconnectFrame("too_many_websockets")) != nil || ws.SetReadDeadline(time.Now().Add(disconnectGrace)) != nil {
			return
		}
		s.readLoop(c)
		return
	}

	// The connection is live before `hello` is written, so that it counts
	// itself, but nothing can be written on it before `hello`.
	c.wmu.Lock()
	s.mu.Lock()
	if !s.conns[c] { // Close got there first
		s.mu.Unlock()
		c.wmu.Unlock()
		return
	}
	s.live = append(s.live, c)
	n := len(s.live)
	c.info.NumConnections = n
	s.mu.Unlock()
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": n,
		"debug_info": map[string]any{
			"host":                        "applink-slacktest",
			"build_number":                1,
			"approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": appID},
	})
	err = c.writeLocked(hello)
	c.wmu.Unlock()
	if err != nil {
		return
	}
	s.mu.Lock()
	c.ready = true
	s.connections++
	s.notifyLocked()
	s.mu.Unlock()
	s.readLoop(c)
}

// readLoop records every frame the client sends on c until c fails.
func (s *Server) readLoop(c *conn) {
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		s.recordAck(c, data)
	}
}

// forget closes c and removes it from the Server's connections.
func (s *Server) forget(c *conn) {
	c.close()
	s.mu.Lock()
	delete(s.conns, c)
	s.unliveLocked(c)
	c.info.Closed = time.Now()
	s.notifyLocked()
	s.mu.Unlock()
	close(c.done)
}

// drop closes c abruptly, after taking it out of the live connections so
// that no envelope and no hello counts it any more. What was sent on c and
// not acknowledged is lost with it (see loseLocked).
func (s *Server) drop(c *conn) {
	s.mu.Lock()
	s.unliveLocked(c)
	s.loseLocked(c)
	s.notifyLocked()
	s.mu.Unlock()
	c.close()
}

// loseLocked marks every envelope sent on c and not acknowledged as lost
// with c, which the fake is dropping: a socket closed abruptly takes with it
// whatever was still in flight, in the kernel's buffers or in the client's,
// not just the envelope being written, and the client may have read an
// envelope whose ack never made it back. Slack sees the socket die under
// them; a lost delivery is redelivered without counting against MaxRetries
// (see mayRetryLocked).
func (s *Server) loseLocked(c *conn) {
	for _, e := range s.envelopes {
		if e.conn != c.id || e.acked || e.lost || e.sentIdx < 0 {
			continue
		}
		e.lost = true
		s.sent[e.sentIdx].Lost = true
	}
}

// mayRetryLocked reports whether env, not acknowledged, is to be sent again:
// an event is redelivered at most MaxRetries times after a delivery timed
// out on a live connection, and a delivery lost with its connection (see
// loseLocked) does not count, up to maxLostRetries such redeliveries.
func (env *envelope) mayRetryLocked() bool {
	if env.typ != "events_api" || env.acked || env.redelivered {
		return false
	}
	lost := env.lostBefore
	if env.lost {
		lost++
	}
	timedOut := env.retry + 1 - lost // the deliveries so far that reached a live client and were not acked
	return timedOut <= MaxRetries && lost <= maxLostRetries
}

// maxLostRetries bounds the redeliveries of one event that were not counted
// against MaxRetries because the delivery before was lost with its
// connection, so that a run with drops ends.
const maxLostRetries = 10

// unliveLocked takes c out of the connections envelopes are sent on.
func (s *Server) unliveLocked(c *conn) {
	for i, l := range s.live {
		if l == c {
			s.live = append(s.live[:i:i], s.live[i+1:]...)
			return
		}
	}
}

// pinger pings c every PingInterval until c or the Server closes.
func (s *Server) pinger(c *conn) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-s.ctx.Done():
			return
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second)); err != nil {
				s.drop(c)
				return
			}
		}
	}
}

// recordAck records one frame the client sent on c. An ack counts whichever
// connection it arrives on, as Slack's do.
func (s *Server) recordAck(c *conn, data []byte) {
	var in struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	_ = json.Unmarshal(data, &in) // a frame that is not an ack is recorded with no envelope ID
	now := time.Now()
	a := Ack{EnvelopeID: in.EnvelopeID, At: now, Size: len(data), Dropped: len(data) >= maxAckSize, Conn: c.id}
	if len(in.Payload) > 0 && string(in.Payload) != "null" {
		a.Payload = in.Payload
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.info.Acks++
	if env := s.envelopes[in.EnvelopeID]; env != nil {
		a.Latency = now.Sub(env.sentAt)
		if !a.Dropped {
			env.acked = true
			if env.slash != nil && a.Payload != nil {
				s.recordSlashAckLocked(env.slash, a.Payload)
			}
		}
	}
	s.acks = append(s.acks, a)
	s.notifyLocked()
}

// recordSlashAckLocked records the response carried in a slash command's ack,
// which Slack shows to the command's user.
func (s *Server) recordSlashAckLocked(sl *slash, payload json.RawMessage) {
	var p struct {
		Text         string          `json:"text"`
		Blocks       json.RawMessage `json:"blocks"`
		ResponseType string          `json:"response_type"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return
	}
	if string(p.Blocks) == "null" {
		p.Blocks = nil
	}
	if p.Text == "" && p.Blocks == nil {
		return
	}
	m := Message{Method: "ack", Channel: sl.channel, User: sl.user, Text: p.Text,
		Blocks: p.Blocks, ResponseType: p.ResponseType}
	if p.ResponseType == "in_channel" {
		s.addMessageLocked(m)
	} else {
		s.addEphemeralLocked(m)
	}
}

// pickLocked chooses the live connection for the next envelope: one at
// random (from the Seed), other than the connection numbered avoid when
// there is another. It returns nil when no connection is live.
func (s *Server) pickLocked(avoid int) *conn {
	n := len(s.live)
	if n == 0 {
		return nil
	}
	if avoid != 0 && n > 1 {
		for i, c := range s.live {
			if c.id == avoid {
				k := s.spread.IntN(n - 1)
				if k >= i {
					k++
				}
				return s.live[k]
			}
		}
	}
	return s.live[s.spread.IntN(n)]
}

// dropLocked draws, for one envelope, whether DropSockets drops the
// connection it goes on: before the write (the envelope is lost in it) or
// after it (the envelope may still arrive; its ack may not).
func (s *Server) dropLocked() (before, after bool) {
	if s.dropRate <= 0 {
		return false, false
	}
	u := s.dropRNG.Float64()
	return u < s.dropRate/2, u >= s.dropRate/2 && u < s.dropRate
}

// recordSentLocked records env as sent on c.
func (s *Server) recordSentLocked(env *envelope, c *conn) {
	env.sentIdx = len(s.sent)
	s.sent = append(s.sent, env.publicLocked())
	c.info.Envelopes++
	s.notifyLocked()
}

// deliver sends env on one live connection (see pickLocked), waiting for one
// if there is none. A connection that fails the write is dropped and
// delivery retried on another, as Slack does.
func (s *Server) deliver(ctx context.Context, env *envelope, avoid int) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		c := s.pickLocked(avoid)
		var before, after bool
		if c != nil {
			// Registered before the write so that a fast ack finds it.
			env.sentAt = time.Now()
			env.conn = c.id
			s.envelopes[env.id] = env
			if before, after = s.dropLocked(); before {
				env.lost = true
				s.recordSentLocked(env, c)
				s.unliveLocked(c)
				s.loseLocked(c)
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if c != nil {
			if before {
				c.close() // Slack wrote it into a socket that was already dead
				return nil
			}
			if err := c.write(env.frame); err == nil {
				s.mu.Lock()
				s.recordSentLocked(env, c)
				s.mu.Unlock()
				if after {
					s.drop(c)
				}
				return nil
			}
			s.drop(c)
			ch = c.done
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sendAsync delivers env in the background and watches for its ack.
func (s *Server) sendAsync(env *envelope) {
	s.spawn(func() {
		if s.deliver(s.ctx, env, 0) == nil {
			s.watchAck(env)
		}
	})
}

// pendingAck is an envelope whose ack is awaited until due.
type pendingAck struct {
	env *envelope
	due time.Time
}

// ackHeap is a min-heap of pendingAck by due time (container/heap).
type ackHeap []pendingAck

func (h ackHeap) Len() int           { return len(h) }
func (h ackHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h ackHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ackHeap) Push(x any)        { *h = append(*h, x.(pendingAck)) }
func (h *ackHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// watchAck queues env for redelivery if RedeliverUnacked is on and env may
// be retried, due after the wait for its retry number (counting only the
// deliveries that were not lost with their connection). Whether it is
// retried is decided when it is due (see mayRetryLocked): it may be lost,
// or acknowledged, meanwhile.
func (s *Server) watchAck(env *envelope) {
	waits := s.cfg.redeliverAfter
	if len(waits) == 0 || env.typ != "events_api" || env.retry >= MaxRetries+maxLostRetries {
		return
	}
	s.mu.Lock()
	n := env.retry - env.lostBefore
	s.mu.Unlock()
	wait := waits[min(n, len(waits)-1)]
	s.mu.Lock()
	heap.Push(&s.ackq, pendingAck{env: env, due: time.Now().Add(wait)})
	s.mu.Unlock()
	select {
	case s.ackWake <- struct{}{}:
	default:
	}
}

// redeliverLoop redelivers, once due, every envelope in the ack queue that
// was neither acknowledged nor redelivered already, on another connection
// when there is one. It runs while the Server is open.
func (s *Server) redeliverLoop() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		s.mu.Lock()
		now := time.Now()
		var due []*envelope
		for len(s.ackq) > 0 && !s.ackq[0].due.After(now) {
			env := heap.Pop(&s.ackq).(pendingAck).env
			if env.mayRetryLocked() {
				env.redelivered = true
				s.redelivering++
				due = append(due, env)
			}
		}
		wait := time.Hour
		if len(s.ackq) > 0 {
			wait = s.ackq[0].due.Sub(now)
		} else {
			s.ackq = nil // let the drained backing array go
		}
		s.mu.Unlock()
		for _, env := range due {
			s.spawn(func() {
				s.redeliverOne(env)
				s.mu.Lock()
				s.redelivering--
				s.notifyLocked()
				s.mu.Unlock()
			})
		}
		t.Reset(wait)
		select {
		case <-s.ctx.Done():
			return
		case <-s.ackWake:
		case <-t.C:
		}
	}
}

// redeliverOne sends env's payload again as Slack does after a timeout.
func (s *Server) redeliverOne(env *envelope) {
	next := s.nextDelivery(env, "timeout")
	s.mu.Lock()
	avoid := env.conn
	s.mu.Unlock()
	if s.deliver(s.ctx, next, avoid) == nil {
		s.watchAck(next)
	}
}

// nextDelivery returns the redelivery of env: the same payload and
// event_id, a new envelope_id, retry_attempt one higher and retry_reason
// reason.
func (s *Server) nextDelivery(env *envelope, reason string) *envelope {
	next := newEnvelope(env.typ, env.payload, env.eventID, env.retry+1, reason)
	s.mu.Lock()
	next.lostBefore = env.lostBefore
	if env.lost {
		next.lostBefore++
	}
	s.mu.Unlock()
	return next
}

// disconnect stops sending on conns, sends each `disconnect` with reason and
// drops them once the client has closed them or disconnectGrace has passed.
func (s *Server) disconnect(ctx context.Context, conns []*conn, reason string) error {
	s.mu.Lock()
	for _, c := range conns {
		s.unliveLocked(c)
	}
	s.notifyLocked()
	s.mu.Unlock()
	frame := disconnectFrame(reason)
	for _, c := range conns {
		_ = c.write(frame) // a connection that is already gone needs no notice
	}
	grace := time.NewTimer(disconnectGrace)
	defer grace.Stop()
	expired := false
	for _, c := range conns {
		if !expired {
			select {
			case <-c.done:
				continue
			case <-grace.C:
				expired = true
			case <-ctx.Done():
				for _, c := range conns {
					c.close() // already taken out of the live ones
				}
				return fmt.Errorf("slacktest: disconnect: %w", ctx.Err())
			}
		}
		c.close()
		<-c.done // the read loop ends as soon as its connection is closed
	}
	return nil
}

// connByID returns the open connection numbered id, or nil.
func (s *Server) connByID(id int) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.id == id {
			return c
		}
	}
	return nil
}

// DisconnectConn sends `disconnect` with reason ("refresh_requested",
// "warning", …) on the connection numbered id only (see Conns), then drops
// it as Disconnect does. No envelope is sent on it after the notice. It
// returns an error wrapping ErrNotConnected if that connection is not open.
func (s *Server) DisconnectConn(ctx context.Context, id int, reason string) error {
	c := s.connByID(id)
	if c == nil {
		return fmt.Errorf("slacktest: disconnect connection %d: %w", id, ErrNotConnected)
	}
	return s.disconnect(ctx, []*conn{c}, reason)
}

// DropConn closes the connection numbered id abruptly, with no `disconnect`
// and no close frame, as a dead TCP connection would end, and returns once it
// is gone. slack-go sees a read error and reconnects. It returns an error
// wrapping ErrNotConnected if that connection is not open.
func (s *Server) DropConn(id int) error {
	c := s.connByID(id)
	if c == nil {
		return fmt.Errorf("slacktest: drop connection %d: %w", id, ErrNotConnected)
	}
	s.drop(c)
	<-c.done
	return nil
}

// DropSockets makes the fake drop connections at random while it sends
// envelopes: for each envelope, with probability p (0 turns it off), the
// connection chosen for it is closed abruptly, half the time before the
// envelope is written (as an envelope Slack wrote into a socket that had
// died) and half the time just after (it may arrive; its ack may not).
// Either way every envelope on that connection not yet acknowledged, this
// one included, is recorded in Sent with Lost set: a connection dropped with
// a backlog loses all of it. The draws come from a generator seeded with
// seed, so a run's sequence of faults is the same for the same seed and
// order of sends. Clients reconnect as they would to Slack; pair this with
// RedeliverUnacked so that what was lost is sent again: a lost delivery does
// not count against MaxRetries, so with RedeliverUnacked no event is given up
// for drops alone.
func (s *Server) DropSockets(p float64, seed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropRate = min(max(p, 0), 1)
	s.dropRNG = rand.New(rand.NewPCG(seed, dropStream))
}

// Conns returns every Socket Mode connection the fake accepted, in the order
// they were opened, closed ones included.
func (s *Server) Conns() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ConnInfo, len(s.connLog))
	for i, c := range s.connLog {
		out[i] = *c
	}
	return out
}

// Live returns the IDs of the connections envelopes can be sent on now (open
// and sent `hello`), oldest first.
func (s *Server) Live() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int
	for _, c := range s.live {
		if c.ready {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// WaitLive blocks until exactly n connections are live (see Live) and
// returns their IDs.
func (s *Server) WaitLive(ctx context.Context, n int) ([]int, error) {
	var ids []int
	err := s.Wait(ctx, func() bool {
		ids = s.Live()
		return len(ids) == n
	})
	if err != nil {
		return ids, fmt.Errorf("slacktest: wait for %d live connections (have %d): %w", n, len(ids), err)
	}
	return ids, nil
}

// An EventSpec describes one events_api envelope for SendEvent. Build it with
// MentionEvent, DMEvent, DMEditEvent, ReactionAddedEvent or
// ReactionRemovedEvent, or set Raw for any other event.
type EventSpec struct {
	// Type is the inner event's type: "app_mention", "message",
	// "reaction_added" or "reaction_removed".
	Type string
	// Channel, User and Text are the message's. TS is its timestamp; when
	// empty the fake assigns a fresh one. ThreadTS puts it in a thread.
	// For a reaction, User is who reacted and Channel and TS name the
	// message reacted to, which must be in the fake's history.
	Channel  string
	User     string
	Text     string
	TS       string
	ThreadTS string
	// ChannelType is "im" for a direct message; app_mention events have none.
	ChannelType string
	// BotID and Subtype are set on messages from bots and on edits, joins, …
	BotID   string
	Subtype string
	// Reaction is a reaction event's emoji name, such as "white_check_mark".
	Reaction string
	// Raw, when set, is sent verbatim as the inner event and the fields above
	// are ignored. It must be a JSON object with a "type".
	Raw json.RawMessage

	// EventID is the payload's event_id; empty means a fresh one. A
	// redelivery repeats the first delivery's event_id with RetryAttempt >= 1
	// and a RetryReason such as "timeout" (see also Server.Redeliver).
	EventID      string
	RetryAttempt int
	RetryReason  string
}

// MentionEvent returns an app_mention event by user in channel. The text is
// prefixed with "<@UBOT> " unless it already mentions the bot. Leave ts empty
// for a fresh timestamp; a non-empty threadTS places the mention in that
// thread.
func MentionEvent(channel, user, text, ts, threadTS string) EventSpec {
	if !strings.Contains(text, "<@"+botUserID+">") {
		text = "<@" + botUserID + "> " + text
	}
	return EventSpec{Type: "app_mention", Channel: channel, User: user, Text: text, TS: ts, ThreadTS: threadTS}
}

// DMEvent returns a direct message (type "message", channel_type "im") from
// user in DM channel channel (an ID starting with "D"). Leave ts empty for a
// fresh timestamp.
func DMEvent(channel, user, text, ts string) EventSpec {
	return EventSpec{Type: "message", ChannelType: "im", Channel: channel, User: user, Text: text, TS: ts}
}

// DMFileEvent returns the message (subtype file_share) Slack sends when user
// shares a file in DM channel channel, with text as the message typed with
// it (possibly empty). Unlike other subtypes it is a person's message, with
// a user and a text, and deserves an answer.
func DMFileEvent(channel, user, text, ts string) EventSpec {
	return EventSpec{Type: "message", Subtype: "file_share", ChannelType: "im", Channel: channel, User: user, Text: text, TS: ts}
}

// ReactionAddedEvent returns the reaction_added event Slack sends when user
// adds the reaction (an emoji name without colons, such as
// "white_check_mark") to the message ts in channel. The message must be in
// the fake's history (a message the bot posted, or an event sent earlier);
// the event names its author as item_user.
func ReactionAddedEvent(channel, user, reaction, ts string) EventSpec {
	return EventSpec{Type: "reaction_added", Channel: channel, User: user, Reaction: reaction, TS: ts}
}

// ReactionRemovedEvent returns the reaction_removed event Slack sends when
// user removes the reaction from the message ts in channel (see
// ReactionAddedEvent).
func ReactionRemovedEvent(channel, user, reaction, ts string) EventSpec {
	return EventSpec{Type: "reaction_removed", Channel: channel, User: user, Reaction: reaction, TS: ts}
}

// DMEditEvent returns the message_changed event Slack sends when user edits
// their direct message ts to read text. A bot should not answer it.
func DMEditEvent(channel, user, text, ts string) EventSpec {
	return EventSpec{Type: "message", Subtype: "message_changed", ChannelType: "im", Channel: channel, User: user, Text: text, TS: ts}
}

// SendEvent sends ev to the connected client as an events_api envelope with a
// fresh envelope_id, waiting for a connection if there is none, and returns
// the envelope ID. The event's message is also recorded in the channel's
// history, so that conversations.replies returns it, and an app_mention makes
// the bot a member of its channel (see Join). With AppManifest, an event the
// manifest does not subscribe to is refused with ErrNotSubscribed.
func (s *Server) SendEvent(ctx context.Context, ev EventSpec) (string, error) {
	env, _, err := s.sendEvent(ctx, ev)
	if err != nil {
		return "", err
	}
	return env.id, nil
}

// sendEvent is SendEvent; it returns the envelope and the event's ts.
func (s *Server) sendEvent(ctx context.Context, ev EventSpec) (*envelope, string, error) {
	s.mu.Lock()
	inner, cb, ts, err := s.eventPayloadLocked(ev)
	s.mu.Unlock()
	var payload json.RawMessage
	if err == nil {
		payload, err = cb.payload(inner) // encoded without the lock
	}
	if err != nil {
		return nil, "", fmt.Errorf("slacktest: send event: %w", err)
	}
	eventID := cb.EventID
	env := newEnvelope("events_api", payload, eventID, ev.RetryAttempt, ev.RetryReason)
	if err := s.deliver(ctx, env, 0); err != nil {
		return nil, "", fmt.Errorf("slacktest: send event %s: %w", eventID, err)
	}
	s.watchAck(env)
	return env, ts, nil
}

// Redeliver sends the payload of the events_api envelope envelopeID again, as
// Slack does when an ack is late: same event_id, new envelope_id,
// retry_attempt one higher and retry_reason reason, on another connection
// than the first when there is one. It returns the new envelope ID, or an
// error wrapping ErrUnknownEnvelope.
func (s *Server) Redeliver(ctx context.Context, envelopeID, reason string) (string, error) {
	s.mu.Lock()
	old := s.envelopes[envelopeID]
	var avoid int
	if old != nil {
		old.redelivered = true
		avoid = old.conn
	}
	s.mu.Unlock()
	if old == nil || old.typ != "events_api" {
		return "", fmt.Errorf("slacktest: redeliver %s: %w", envelopeID, ErrUnknownEnvelope)
	}
	env := s.nextDelivery(old, reason)
	if err := s.deliver(ctx, env, avoid); err != nil {
		return "", fmt.Errorf("slacktest: redeliver %s: %w", envelopeID, err)
	}
	s.watchAck(env)
	return env.id, nil
}

// RedeliverUnackedNow does at once what RedeliverUnacked does after its
// delay: every events_api envelope sent and not acknowledged (and not already
// redelivered) is sent again with the same event_id under a new envelope_id,
// retry_attempt one higher and retry_reason "timeout", on another connection
// than before when there is one, unless it was retried MaxRetries times
// already. It returns the new envelope IDs in the order the originals were
// sent. Unlike the timer, it lets a test decide when the 3 s have passed, so
// that what it checks does not depend on how fast it runs.
func (s *Server) RedeliverUnackedNow(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	var due []*envelope
	var avoid []int
	for _, sent := range s.sent {
		env := s.envelopes[sent.EnvelopeID]
		if env == nil || !env.mayRetryLocked() {
			continue
		}
		env.redelivered = true
		due = append(due, env)
		avoid = append(avoid, env.conn)
	}
	s.mu.Unlock()
	var ids []string
	for i, env := range due {
		next := s.nextDelivery(env, "timeout")
		if err := s.deliver(ctx, next, avoid[i]); err != nil {
			return ids, fmt.Errorf("slacktest: redeliver %s: %w", env.id, err)
		}
		ids = append(ids, next.id)
	}
	return ids, nil
}

// callback is the events_api payload: an Events API event callback.
type callback struct {
	Token               string          `json:"token"`
	TeamID              string          `json:"team_id"`
	ContextTeamID       string          `json:"context_team_id"`
	ContextEnterpriseID *string         `json:"context_enterprise_id"`
	APIAppID            string          `json:"api_app_id"`
	Event               json.RawMessage `json:"event"`
	Type                string          `json:"type"`
	EventID             string          `json:"event_id"`
	EventTime           int64           `json:"event_time"`
	Authorizations      []authorization `json:"authorizations"`
	IsExtSharedChannel  bool            `json:"is_ext_shared_channel"`
	EventContext        string          `json:"event_context"`
}

type authorization struct {
	EnterpriseID        *string `json:"enterprise_id"`
	TeamID              string  `json:"team_id"`
	UserID              string  `json:"user_id"`
	IsBot               bool    `json:"is_bot"`
	IsEnterpriseInstall bool    `json:"is_enterprise_install"`
}

// eventPayloadLocked builds the event callback for ev, records its message in
// the history and returns the inner event (a json.RawMessage or a value to
// encode), the callback around it and the message's ts.
func (s *Server) eventPayloadLocked(ev EventSpec) (any, callback, string, error) {
	var inner any
	var ts string
	if ev.Raw != nil {
		var probe struct {
			Type     string `json:"type"`
			Subtype  string `json:"subtype"`
			Channel  string `json:"channel"`
			User     string `json:"user"`
			Text     string `json:"text"`
			TS       string `json:"ts"`
			ThreadTS string `json:"thread_ts"`
			BotID    string `json:"bot_id"`
			EventTS  string `json:"event_ts"`
		}
		if err := json.Unmarshal(ev.Raw, &probe); err != nil || probe.Type == "" {
			return nil, callback{}, "", errors.New("raw event is not a JSON object with a type")
		}
		var ct struct {
			ChannelType string `json:"channel_type"`
		}
		_ = json.Unmarshal(ev.Raw, &ct) // it parsed just above
		if name := eventName(probe.Type, probe.Channel, ct.ChannelType); !s.cfg.grants.event(name) {
			return nil, callback{}, "", fmt.Errorf("%s: %w", name, ErrNotSubscribed)
		}
		if probe.Type == "app_mention" && probe.Channel != "" {
			s.members[probe.Channel] = true
		}
		s.noteUserLocked(probe.Channel, probe.User)
		inner, ts = ev.Raw, probe.TS
		if ts == "" {
			ts = probe.EventTS
		}
		s.seeTSLocked(ts)
		if (probe.Type == "message" || probe.Type == "app_mention") && probe.Subtype == "" && probe.TS != "" {
			s.storeLocked(&stored{channel: probe.Channel, ts: probe.TS, threadTS: probe.ThreadTS,
				user: probe.User, botID: probe.BotID, text: probe.Text})
		}
	} else {
		if ev.Type == "" || ev.Channel == "" {
			return nil, callback{}, "", errors.New("event needs a type and a channel")
		}
		if name := eventName(ev.Type, ev.Channel, ev.ChannelType); !s.cfg.grants.event(name) {
			return nil, callback{}, "", fmt.Errorf("%s: %w", name, ErrNotSubscribed)
		}
		if ev.Type == "app_mention" {
			s.members[ev.Channel] = true
		}
		s.noteUserLocked(ev.Channel, ev.User)
		if isReaction(ev.Type) {
			if ev.User == "" || ev.Reaction == "" || ev.TS == "" {
				return nil, callback{}, "", errors.New("a reaction event needs a user, a reaction and the ts of the message")
			}
			msg := s.findLocked(ev.Channel, ev.TS)
			if msg == nil {
				return nil, callback{}, "", fmt.Errorf("no message %s in %s to react to", ev.TS, ev.Channel)
			}
			inner, ts = s.reactionEventLocked(ev, msg)
			return inner, s.callbackLocked(ts, ev.EventID), ts, nil
		}
		inner, ts = s.innerEventLocked(ev)
	}
	return inner, s.callbackLocked(ts, ev.EventID), ts, nil
}

// payload returns the JSON of cb around the inner event (a json.RawMessage,
// or a value to encode).
func (cb callback) payload(inner any) (json.RawMessage, error) {
	raw, ok := inner.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(inner); err != nil {
			return nil, err
		}
	}
	cb.Event = raw
	return json.Marshal(cb)
}

// callbackLocked returns the event callback for an event sent at ts, with
// event_id eventID (a fresh one if empty) and no inner event yet (see
// payload).
func (s *Server) callbackLocked(ts, eventID string) callback {
	if eventID == "" {
		eventID = fmt.Sprintf("Ev%09d", s.nextSeqLocked())
	}
	var eventTime int64
	if us, ok := parseTS(ts); ok {
		eventTime = us / 1_000_000
	} else {
		eventTime = s.lastTS / 1_000_000
	}
	return callback{
		Token:          verificationToken,
		TeamID:         teamID,
		ContextTeamID:  teamID,
		APIAppID:       appID,
		Type:           "event_callback",
		EventID:        eventID,
		EventTime:      eventTime,
		Authorizations: []authorization{{TeamID: teamID, UserID: botUserID, IsBot: true}},
		EventContext:   "4-slacktest-" + eventID,
	}
}

func isReaction(typ string) bool { return typ == "reaction_added" || typ == "reaction_removed" }

// reactionEventLocked builds the reaction event ev on message msg, as Slack
// sends it: the reacting user, the reaction, the item reacted to, the
// item's author (item_user, absent for a message no user wrote) and an
// event_ts of its own, which it returns.
func (s *Server) reactionEventLocked(ev EventSpec, msg *stored) (map[string]any, string) {
	evTS := s.newTSLocked()
	m := map[string]any{
		"type": ev.Type, "user": ev.User, "reaction": ev.Reaction,
		"item":     map[string]any{"type": "message", "channel": ev.Channel, "ts": ev.TS},
		"event_ts": evTS,
	}
	if msg.user != "" {
		m["item_user"] = msg.user
	}
	return m, evTS
}

// innerEventLocked builds a structured EventSpec's event, records its
// message and returns the event, to encode as JSON, with its event_ts.
func (s *Server) innerEventLocked(ev EventSpec) (map[string]any, string) {
	ts := ev.TS
	if ts == "" {
		ts = s.newTSLocked()
	} else {
		s.seeTSLocked(ts)
	}
	if ev.Subtype == "message_changed" {
		evTS := s.newTSLocked()
		prev := map[string]any{"type": "message", "user": ev.User, "ts": ts}
		if old := s.findLocked(ev.Channel, ts); old != nil {
			prev["text"] = old.text
			old.text, old.blocks, old.edited = ev.Text, nil, true
		}
		msg := map[string]any{
			"type": "message", "user": ev.User, "text": ev.Text, "ts": ts, "team": teamID,
			"blocks": richText(ev.Text), "edited": map[string]any{"user": ev.User, "ts": evTS},
		}
		if ev.ThreadTS != "" {
			msg["thread_ts"] = ev.ThreadTS
		}
		m := map[string]any{
			"type": "message", "subtype": "message_changed", "hidden": true,
			"message": msg, "previous_message": prev,
			"channel": ev.Channel, "ts": evTS, "event_ts": evTS,
		}
		if ev.ChannelType != "" {
			m["channel_type"] = ev.ChannelType
		}
		return m, evTS
	}
	m := map[string]any{
		"type": ev.Type, "text": ev.Text, "ts": ts, "channel": ev.Channel, "event_ts": ts,
		"blocks": richText(ev.Text),
	}
	if ev.User != "" {
		m["user"] = ev.User
	}
	if ev.BotID == "" {
		m["client_msg_id"] = newUUID()
		m["team"] = teamID
	} else {
		m["bot_id"] = ev.BotID
	}
	if ev.ThreadTS != "" {
		m["thread_ts"] = ev.ThreadTS
		if parent := s.findLocked(ev.Channel, ev.ThreadTS); parent != nil && parent.user != "" {
			m["parent_user_id"] = parent.user
		}
	}
	if ev.ChannelType != "" {
		m["channel_type"] = ev.ChannelType
	}
	if ev.Subtype != "" {
		m["subtype"] = ev.Subtype
	}
	switch ev.Subtype {
	case "file_share": // a person's message with a file: it keeps its user and text
		m["upload"] = false
		m["display_as_bot"] = false
		m["files"] = []any{map[string]any{
			"id": fmt.Sprintf("F%09d", s.nextSeqLocked()), "name": "data.csv", "title": "data.csv",
			"mimetype": "text/csv", "filetype": "csv", "pretty_type": "CSV", "size": 42,
			"user": ev.User, "mode": "hosted", "is_external": false,
		}}
	case "thread_broadcast": // a reply in a thread also sent to the channel
		if parent := s.findLocked(ev.Channel, ev.ThreadTS); parent != nil {
			m["root"] = parent.wire()
		}
	}
	if ev.Subtype == "" || ev.Subtype == "thread_broadcast" || ev.Subtype == "file_share" {
		s.storeLocked(&stored{channel: ev.Channel, ts: ts, threadTS: ev.ThreadTS, user: ev.User,
			botID: ev.BotID, text: ev.Text, subtype: ev.Subtype})
	}
	return m, ts
}

// richText renders text as the rich_text block Slack attaches to a user's
// message, with mentions as user elements.
func richText(text string) []any {
	var elems []any
	plain := func(t string) {
		if t != "" {
			elems = append(elems, map[string]any{"type": "text", "text": t})
		}
	}
	rest := text
	for {
		i := strings.Index(rest, "<@")
		if i < 0 {
			break
		}
		id, tail, ok := strings.Cut(rest[i+2:], ">")
		if !ok || !isUserID(id) {
			plain(rest[:i+2])
			rest = rest[i+2:]
			continue
		}
		plain(rest[:i])
		elems = append(elems, map[string]any{"type": "user", "user_id": id})
		rest = tail
	}
	plain(rest)
	if elems == nil {
		elems = []any{}
	}
	return []any{map[string]any{
		"type":     "rich_text",
		"block_id": newUUID()[:5],
		"elements": []any{map[string]any{"type": "rich_text_section", "elements": elems}},
	}}
}

// A SlashSpec describes one slash command invocation for SendSlash.
type SlashSpec struct {
	Command     string // e.g. "/sqlbot"; required
	Text        string // what the user typed after the command
	UserID      string
	UserName    string // defaults to the lower-cased UserID
	ChannelID   string
	ChannelName string // defaults to "directmessage" for D… channels, else "general"
}

// slash is what the fake remembers about one slash command.
type slash struct {
	channel, user string
	uses          int
	sentAt        time.Time // by the Server's clock
}

// maxResponseURLUses is how many times Slack accepts a post to one
// response_url (within responseURLLife).
const maxResponseURLUses = 5

// responseURLLife is how long after the command its response_url works.
const responseURLLife = 30 * time.Minute

// SendSlash sends cmd to the connected client as a slash_commands envelope,
// waiting for a connection if there is none, and returns the envelope ID.
// Every payload value is a string, is_enterprise_install included, as Slack
// sends them; response_url points at this Server and accepts five posts
// within 30 minutes. A slash command can be used in a channel the bot is not
// a member of; it does not make the bot one. With AppManifest, a command the
// manifest does not declare is refused with ErrNotSubscribed.
func (s *Server) SendSlash(ctx context.Context, cmd SlashSpec) (string, error) {
	if !strings.HasPrefix(cmd.Command, "/") {
		return "", fmt.Errorf("slacktest: send slash command %q: command must start with /", cmd.Command)
	}
	if !s.cfg.grants.command(cmd.Command) {
		return "", fmt.Errorf("slacktest: send slash command %s: %w (features.slash_commands and the commands scope)", cmd.Command, ErrNotSubscribed)
	}
	if cmd.UserName == "" {
		cmd.UserName = strings.ToLower(cmd.UserID)
	}
	if cmd.ChannelName == "" {
		cmd.ChannelName = "general"
		if strings.HasPrefix(cmd.ChannelID, "D") {
			cmd.ChannelName = "directmessage"
		}
	}
	sl := &slash{channel: cmd.ChannelID, user: cmd.UserID, sentAt: s.cfg.now()}
	s.mu.Lock()
	s.noteUserLocked(cmd.ChannelID, cmd.UserID) // a command is typed where one is a member
	n := s.nextSeqLocked()
	id := fmt.Sprintf("%d", n)
	s.slashes[id] = sl
	s.mu.Unlock()
	payload, _ := json.Marshal(map[string]string{
		"token":                 verificationToken,
		"team_id":               teamID,
		"team_domain":           "slacktest",
		"channel_id":            cmd.ChannelID,
		"channel_name":          cmd.ChannelName,
		"user_id":               cmd.UserID,
		"user_name":             cmd.UserName,
		"command":               cmd.Command,
		"text":                  cmd.Text,
		"api_app_id":            appID,
		"is_enterprise_install": "false",
		"response_url":          fmt.Sprintf("%s/commands/%s/%s/%s", s.base, teamID, id, newUUID()[:8]),
		"trigger_id":            fmt.Sprintf("%d.%d.%s", n, n, newUUID()[:8]),
	})
	env := newEnvelope("slash_commands", payload, "", 0, "")
	env.slash = sl
	if err := s.deliver(ctx, env, 0); err != nil {
		return "", fmt.Errorf("slacktest: send slash command %s: %w", cmd.Command, err)
	}
	return env.id, nil
}

// Disconnect sends {"type": "disconnect", "reason": reason} on every live
// connection, sends nothing more on them, and drops each without a close
// frame once the client has closed it (slack-go does so at once) or after
// 10 s, as Slack does. reason is typically "refresh_requested", "warning" or
// "link_disabled". It returns once the connections are gone, or
// ErrNotConnected if there were none. slack-go answers by calling
// apps.connections.open again at once. DisconnectConn does the same to one
// connection.
func (s *Server) Disconnect(ctx context.Context, reason string) error {
	s.mu.Lock()
	conns := append([]*conn(nil), s.live...)
	s.mu.Unlock()
	if len(conns) == 0 {
		return ErrNotConnected
	}
	return s.disconnect(ctx, conns, reason)
}

// DropConnection closes every Socket Mode TCP connection abruptly, with no
// disconnect message and no close frame, and returns once they are gone.
// DropConn does the same to one connection, DropSockets at random.
func (s *Server) DropConnection() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		s.drop(c)
	}
	for _, c := range conns {
		<-c.done // the read loop ends as soon as its connection is closed
	}
}
