package slacktest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Bounds of one Load run.
const (
	MaxLoadMentions    = 100_000
	MaxLoadTimeout     = 10 * time.Minute
	DefaultLoadTimeout = 2 * time.Minute
	DefaultLoadSettle  = 500 * time.Millisecond
)

// A LoadSpec describes a burst of mentions for Load.
type LoadSpec struct {
	// Mentions is how many mentions to send, 1 to MaxLoadMentions.
	Mentions int
	// Users is how many people send them (at least 1): mention i comes from
	// user i mod Users, IDs ULOAD00001, ULOAD00002, …
	Users int
	// Channels is how many channels they are posted in (1 if zero), IDs
	// CLOAD0001, …: each round of Users mentions moves on to the next
	// channel, so that every person posts in every channel. A mention makes
	// the bot a member of its channel.
	Channels int
	// Rate is how many mentions to send per second, on a fixed schedule
	// from the start; zero sends each as soon as the previous one is written.
	Rate float64
	// Text returns the question of mention i (the bot's mention is prefixed);
	// nil gives "how many orders? (i)".
	Text func(i int) string
	// Settle is how long nothing may happen (no envelope, ack, Web API call
	// or message) once every mention was sent and no redelivery is pending,
	// for the run to be over. DefaultLoadSettle if zero. It must be longer
	// than the bot ever works on a question without a Web API call.
	Settle time.Duration
	// Timeout bounds the whole run, DefaultLoadTimeout if zero, at most
	// MaxLoadTimeout.
	Timeout time.Duration
}

// A LoadReport is what a Load run saw, from the fake's side: when each
// mention's envelope was first sent and when each reply came in.
type LoadReport struct {
	// Mentions holds one result per mention, in the order they were sent.
	Mentions []MentionResult
	// Users holds one result per user ID.
	Users map[string]UserResult
	// ByReplies counts mentions by their replies: [0] none, [1] exactly one,
	// [2] two or more.
	ByReplies [3]int
	// Notices counts the ephemeral messages posted to the run's users in the
	// run's channels; HiddenNotices those of them Slack would show nobody
	// (see Message.Hidden).
	Notices, HiddenNotices int
	// Envelopes counts the envelopes sent for the run's mentions,
	// Redeliveries those with retry_attempt >= 1, Lost those lost with a
	// dropped connection (see Envelope.Lost), and Unacked the mentions none
	// of whose envelopes was acked.
	Envelopes, Redeliveries, Lost, Unacked int
	// P50, P99 and Max are taken over the mentions that got a reply, of the
	// time from the first envelope of the mention to the first reply in its
	// thread (nearest rank).
	P50, P99, Max time.Duration
	// Sending is the time from the first send to the last; Elapsed the time
	// from the first send to the end of the run.
	Sending, Elapsed time.Duration
	// Complete is false when the run ended by its Timeout or its context
	// before it settled.
	Complete bool
}

// A MentionResult is what happened to one mention of a Load run.
type MentionResult struct {
	User, Channel, TS, EventID string
	// FirstSent is when its first envelope was sent; Envelopes counts its
	// envelopes, redeliveries included, and Acked tells whether any was
	// acknowledged.
	FirstSent time.Time
	Envelopes int
	Acked     bool
	// Replies counts the chat.postMessage calls into its thread (channel
	// and thread_ts equal to the mention's); FirstReply is when the first
	// came in and Latency is FirstReply - FirstSent (zero without a reply).
	Replies    int
	FirstReply time.Time
	Latency    time.Duration
	// Notices counts the ephemeral messages to its author in its thread.
	Notices int
}

// A UserResult sums up one user's mentions in a Load run.
type UserResult struct {
	Mentions int
	Answered int // mentions with at least one reply
	Replies  int
	Notices  int // ephemeral messages to this user in the run's channels
}

// Load sends spec.Mentions app_mention events from spec.Users people into
// spec.Channels channels over the Socket Mode connections (spread, dropped
// and redelivered as the Server is configured to), waits until the run
// settles (see LoadSpec.Settle) and reports, from the fake's records, how
// many replies each mention got and how long the first took. It talks only
// to this Server, in process. It returns the report together with an error
// when a send failed or the run did not settle in time; the report then
// covers what happened so far.
func (s *Server) Load(ctx context.Context, spec LoadSpec) (*LoadReport, error) {
	if spec.Mentions < 1 || spec.Mentions > MaxLoadMentions {
		return nil, fmt.Errorf("slacktest: load: %d mentions: want 1 to %d", spec.Mentions, MaxLoadMentions)
	}
	if spec.Users < 1 {
		return nil, fmt.Errorf("slacktest: load: %d users: want at least 1", spec.Users)
	}
	if spec.Channels == 0 {
		spec.Channels = 1
	}
	if spec.Channels < 1 || spec.Rate < 0 || spec.Settle < 0 || spec.Timeout < 0 || spec.Timeout > MaxLoadTimeout {
		return nil, fmt.Errorf("slacktest: load: bad spec %+v (channels >= 1, rate and settle >= 0, timeout at most %v)", spec, MaxLoadTimeout)
	}
	if spec.Settle == 0 {
		spec.Settle = DefaultLoadSettle
	}
	if spec.Timeout == 0 {
		spec.Timeout = DefaultLoadTimeout
	}
	if spec.Text == nil {
		spec.Text = func(i int) string { return fmt.Sprintf("how many orders? (%d)", i) }
	}
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()

	run := &loadRun{byThread: make(map[msgKey]int), events: make(map[string]int)}
	start := time.Now()
	sendErr := s.loadSend(ctx, spec, run, start)
	sending := time.Since(start)
	var waitErr error
	if sendErr == nil {
		waitErr = s.loadSettle(ctx, spec.Settle, run)
	}
	r := s.loadReport(run)
	r.Sending, r.Elapsed = sending, time.Since(start)
	r.Complete = sendErr == nil && waitErr == nil
	return r, errors.Join(sendErr, waitErr)
}

// loadRun is what Load sent.
type loadRun struct {
	mentions []MentionResult
	byThread map[msgKey]int // → index in mentions
	events   map[string]int // event_id → index in mentions
	channels map[string]bool
	users    map[string]bool
}

// loadSend sends the run's mentions on schedule.
func (s *Server) loadSend(ctx context.Context, spec LoadSpec, run *loadRun, start time.Time) error {
	run.channels = make(map[string]bool, spec.Channels)
	run.users = make(map[string]bool, spec.Users)
	for i := range spec.Mentions {
		if spec.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / spec.Rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return fmt.Errorf("slacktest: load: mention %d: %w", i, ctx.Err())
				}
			}
		}
		user := fmt.Sprintf("ULOAD%05d", i%spec.Users+1)
		channel := fmt.Sprintf("CLOAD%04d", (i/spec.Users)%spec.Channels+1)
		env, ts, err := s.sendEvent(ctx, MentionEvent(channel, user, spec.Text(i), "", ""))
		if err != nil {
			return fmt.Errorf("slacktest: load: mention %d: %w", i, err)
		}
		run.channels[channel], run.users[user] = true, true
		run.byThread[msgKey{channel, ts}] = len(run.mentions)
		run.events[env.eventID] = len(run.mentions)
		run.mentions = append(run.mentions, MentionResult{User: user, Channel: channel, TS: ts, EventID: env.eventID})
	}
	return nil
}

// loadSettle waits until nothing has changed on the Server for settle and no
// envelope of the run awaits a redelivery.
func (s *Server) loadSettle(ctx context.Context, settle time.Duration, run *loadRun) error {
	tick := time.NewTicker(max(settle/5, time.Millisecond))
	defer tick.Stop()
	var last uint64
	quietSince := time.Now()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("slacktest: load: wait for the run to settle: %w", ctx.Err())
		case now := <-tick.C:
			s.mu.Lock()
			changes, closed := s.changes, s.closed
			quiet := changes == last && now.Sub(quietSince) >= settle
			waiting := quiet && s.awaitingRedeliveryLocked(run)
			s.mu.Unlock()
			switch {
			case closed:
				return fmt.Errorf("slacktest: load: wait for the run to settle: %w", ErrClosed)
			case changes != last:
				last, quietSince = changes, now
			case quiet && !waiting:
				return nil
			}
		}
	}
}

// awaitingRedeliveryLocked reports whether an envelope of run is neither
// acknowledged nor redelivered yet and may still be, or a redelivery is
// under way (waiting for a live connection, say).
func (s *Server) awaitingRedeliveryLocked(run *loadRun) bool {
	if len(s.cfg.redeliverAfter) == 0 {
		return false
	}
	if s.redelivering > 0 {
		return true
	}
	for _, e := range s.envelopes {
		if _, ours := run.events[e.eventID]; ours && e.mayRetryLocked() {
			return true
		}
	}
	return false
}

// loadReport reads the Server's records of run.
func (s *Server) loadReport(run *loadRun) *LoadReport {
	r := &LoadReport{Mentions: run.mentions, Users: make(map[string]UserResult, len(run.users))}
	s.mu.Lock()
	for _, e := range s.sent {
		i, ours := run.events[e.EventID]
		if !ours || e.Type != "events_api" {
			continue
		}
		m := &r.Mentions[i]
		if m.Envelopes == 0 || e.SentAt.Before(m.FirstSent) {
			m.FirstSent = e.SentAt
		}
		m.Envelopes++
		r.Envelopes++
		if e.RetryAttempt > 0 {
			r.Redeliveries++
		}
		if e.Lost {
			r.Lost++
		}
		if env := s.envelopes[e.EnvelopeID]; env != nil && env.acked {
			m.Acked = true
		}
	}
	for _, msg := range s.messages {
		if msg.Method != "chat.postMessage" {
			continue
		}
		i, ok := run.byThread[msgKey{msg.Channel, msg.ThreadTS}]
		if !ok {
			continue
		}
		m := &r.Mentions[i]
		if m.Replies == 0 || msg.At.Before(m.FirstReply) {
			m.FirstReply = msg.At
		}
		m.Replies++
	}
	for _, msg := range s.ephemeral {
		if msg.Method != "chat.postEphemeral" || !run.channels[msg.Channel] || !run.users[msg.User] {
			continue
		}
		u := r.Users[msg.User]
		u.Notices++
		r.Users[msg.User] = u
		r.Notices++
		if msg.Hidden {
			r.HiddenNotices++
		}
		if i, ok := run.byThread[msgKey{msg.Channel, msg.ThreadTS}]; ok && r.Mentions[i].User == msg.User {
			r.Mentions[i].Notices++
		}
	}
	s.mu.Unlock()

	var lat []time.Duration
	for i := range r.Mentions {
		m := &r.Mentions[i]
		u := r.Users[m.User]
		u.Mentions++
		u.Replies += m.Replies
		if m.Replies > 0 {
			u.Answered++
			m.Latency = m.FirstReply.Sub(m.FirstSent)
			lat = append(lat, m.Latency)
		}
		r.Users[m.User] = u
		r.ByReplies[min(m.Replies, 2)]++
		if !m.Acked {
			r.Unacked++
		}
	}
	slices.Sort(lat)
	r.P50, r.P99 = Percentile(lat, 50), Percentile(lat, 99)
	if len(lat) > 0 {
		r.Max = lat[len(lat)-1]
	}
	return r
}

// Percentile returns the nearest-rank p-th percentile of sorted, or 0.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// String sums the report up in a few lines, for a test's log.
func (r *LoadReport) String() string {
	var b strings.Builder
	state := "settled"
	if !r.Complete {
		state = "did NOT settle"
	}
	fmt.Fprintf(&b, "%d mentions from %d users, sent in %v; %s after %v\n",
		len(r.Mentions), len(r.Users), r.Sending.Round(time.Millisecond), state, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "envelopes: %d (%d redelivered, %d lost with their socket); mentions never acked: %d\n",
		r.Envelopes, r.Redeliveries, r.Lost, r.Unacked)
	fmt.Fprintf(&b, "replies per mention: none %d, one %d, two or more %d; ephemeral notices: %d (%d hidden)\n",
		r.ByReplies[0], r.ByReplies[1], r.ByReplies[2], r.Notices, r.HiddenNotices)
	fmt.Fprintf(&b, "first envelope to first reply: p50 %v, p99 %v, max %v",
		r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), r.Max.Round(10*time.Microsecond))
	return b.String()
}
