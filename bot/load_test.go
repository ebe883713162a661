package bot_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/agent/agenttest"
	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state/statetest"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// longLoad makes the load tests ten times bigger: 10,000 mentions from 500
// people (see docs/BENCHMARKS.md).
var longLoad = flag.Bool("load.long", false, "TestLoad*: 10,000 mentions from 500 people instead of 1,000 from 50")

// loadScale is the size of one load run: mentions from users at rate per
// second (half as fast under the race detector, which makes everything
// several times slower, so that the replicas keep up as they do without it).
type loadScale struct {
	mentions, users, channels int
	rate                      float64
}

func scale() loadScale {
	s := loadScale{mentions: 1000, users: 50, channels: 5, rate: 250}
	if *longLoad {
		s = loadScale{mentions: 10_000, users: 500, channels: 20, rate: 500}
	}
	s.rate /= max(1, raceSlowdown/2)
	return s
}

// loadQuestions are what the people of a load run ask: recorded questions
// of one row each (no chart, no CSV), so that the real agent answers them
// offline, through the guard and the read-only connection, in about a
// millisecond.
func loadQuestions() []agent.Recorded {
	return []agent.Recorded{
		{Question: "How many orders are there?", SQL: "SELECT count(*) AS orders FROM orders"},
		{Question: "How many regions are there?", SQL: "SELECT count(*) AS regions FROM regions"},
		{Question: "How many orders were shipped?", SQL: "SELECT count(*) AS shipped FROM orders WHERE status = 'shipped'"},
		{Question: "What is the most expensive product?", SQL: "SELECT name, price FROM products ORDER BY price DESC LIMIT 1"},
		{Question: "How many products are there?", SQL: "SELECT count(*) AS products FROM products"},
	}
}

// loadAgent is the real agent with the recorded model on agenttest's shop,
// shared by the replicas as the model and the database file would be.
func loadAgent(t *testing.T) bot.Answerer {
	t.Helper()
	db := agenttest.Open(t, roconn.Limits{Concurrent: 12})
	m, err := agent.NewRecorded(loadQuestions())
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(m, db.DB, guard.New(roconn.DefaultRows), agent.Options{}, nil)
}

// loadSpec is the run's LoadSpec: the recorded questions in turn.
func loadSpec(sc loadScale) slacktest.LoadSpec {
	qs := loadQuestions()
	return slacktest.LoadSpec{
		Mentions: sc.mentions, Users: sc.users, Channels: sc.channels, Rate: sc.rate,
		Text:    func(i int) string { return qs[i%len(qs)].Question },
		Settle:  raceSlowdown * 500 * time.Millisecond,
		Timeout: slacktest.MaxLoadTimeout,
	}
}

// Slack's waits before its retries are 3 s, about a minute and about five
// minutes; the load tests use shorter ones, in the same order, so that a
// run ends in seconds.
const (
	loadRedeliver      = raceSlowdown * time.Second
	loadRedeliverLater = raceSlowdown * 2 * time.Second
)

// startLoadReplicas starts three replicas of the real bot on srv, with the
// real agent, per-person limits set by perDay, and a fake Slack that
// redelivers what is not acknowledged in time and drops a socket for one
// envelope in a hundred.
func startLoadReplicas(t *testing.T, srv *statetest.Redis, perDay int) *replicas {
	t.Helper()
	r := startReplicas(t, srv, 3, loadAgent(t), nil, func(c *bot.Config) {
		c.RatePerMinute, c.RatePerDay, c.GlobalPerDay = 1_000_000, perDay, 1_000_000
	}, slacktest.RedeliverUnacked(loadRedeliver, loadRedeliverLater), slacktest.Seed(14))
	r.s.DropSockets(0.01, 14)
	return r
}

// A decision is what a replica logged about one mention: "taken" (it will
// be answered), "limited" or "already" (another delivery was taken).
type decision struct {
	replica int
	what    string
}

// decisions reads the replicas' logs: for each mention (channel and ts),
// the decisions made about it, in order.
func decisions(t *testing.T, logs string) map[[2]string][]decision {
	t.Helper()
	out := map[[2]string][]decision{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg     string `json:"msg"`
			Channel string `json:"channel"`
			TS      string `json:"ts"`
			Replica int    `json:"replica"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		what := map[string]string{"bot: question taken": "taken", "bot: question limited": "limited", "bot: message already taken": "already"}[l.Msg]
		if what != "" {
			k := [2]string{l.Channel, l.TS}
			out[k] = append(out[k], decision{l.Replica, what})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// count returns how many of ds are what.
func count(ds []decision, what string) int {
	n := 0
	for _, d := range ds {
		if d.what == what {
			n++
		}
	}
	return n
}

// TestLoadReplicas is three replicas of sqlbot on one Redis under a burst:
// 1,000 mentions from 50 people spread by the fake Slack over the
// replicas' connections, sockets dropped at random and what was not
// acknowledged redelivered, possibly to another replica. Every mention is
// decided once (answered, or turned away by the limit) whichever replicas
// its deliveries reached; an answered mention gets exactly one reply in its
// thread; a person's daily limit, below their share, holds across replicas,
// and each person over it is told once. It logs the latency from a
// mention's first envelope to its reply.
func TestLoadReplicas(t *testing.T) {
	sc := scale()
	share := sc.mentions / sc.users
	limit := share * 3 / 5 // 12 of 20: some of each person's mentions are over it
	srv := statetest.StartRedis(t)
	r := startLoadReplicas(t, srv, limit)
	rep, err := r.s.Load(context.Background(), loadSpec(sc))
	if err != nil {
		t.Fatalf("%v\n%v", err, rep)
	}
	r.stop()
	t.Logf("%d mentions from %d people, daily limit %d, over 3 replicas:\n%v", sc.mentions, sc.users, limit, rep)

	ds := decisions(t, r.logs.String())
	perReplica := map[int]int{}
	for _, m := range rep.Mentions {
		d := ds[[2]string{m.Channel, m.TS}]
		taken, limited := count(d, "taken"), count(d, "limited")
		if taken+limited != 1 {
			t.Errorf("mention %s from %s (%d envelopes): decisions %v, want one taken or limited", m.TS, m.User, m.Envelopes, d)
			continue
		}
		if m.Replies != taken {
			t.Errorf("mention %s from %s: %d replies, want %d", m.TS, m.User, m.Replies, taken)
		}
		for _, x := range d {
			if x.what == "taken" {
				perReplica[x.replica]++
			}
		}
	}
	if rep.ByReplies[2] != 0 || rep.ByReplies[1] != sc.users*limit {
		t.Errorf("mentions by replies %v, want %d answered once and none twice", rep.ByReplies, sc.users*limit)
	}
	for id, u := range rep.Users {
		if u.Mentions != share || u.Answered != limit || u.Replies != limit || u.Notices != 1 {
			t.Errorf("%s: %+v; want %d mentions, %d answered, one reply each, told once", id, u, share, limit)
		}
	}
	if rep.HiddenNotices != 0 {
		t.Errorf("%d limit notices hidden in threads without replies", rep.HiddenNotices)
	}
	if len(perReplica) != 3 || rep.Lost == 0 || rep.Redeliveries == 0 {
		t.Errorf("answers per replica %v, %d envelopes lost with their socket, %d redelivered: want all three answering, and drops",
			perReplica, rep.Lost, rep.Redeliveries)
	}
	t.Logf("answers per replica: %v; connections opened: %d", perReplica, len(r.s.Conns()))
}

// healthWatch polls /healthz of each replica and records the state it
// shows ("shared" or "degraded"), each change once, until stopped, and
// whether it answered 200 with status ok while degraded. (A replica whose
// socket was just dropped answers 503 until it has reconnected: that is
// the socket, not the state.)
type healthWatch struct {
	mu         sync.Mutex
	states     [][]string // per replica
	last       []string
	okDegraded []bool
	stop       chan struct{}
	done       chan struct{}
	once       sync.Once
}

func watchHealth(t *testing.T, bots []*bot.Bot) *healthWatch {
	w := &healthWatch{states: make([][]string, len(bots)), last: make([]string, len(bots)), okDegraded: make([]bool, len(bots)),
		stop: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { w.end() }) // a test that fails early stops polling too
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			for i, b := range bots {
				rec := httptest.NewRecorder()
				b.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
				body, _ := io.ReadAll(rec.Body)
				var h struct {
					Status, State string
				}
				if err := json.Unmarshal(body, &h); err != nil {
					t.Errorf("replica %d: /healthz %d: %s", i, rec.Code, body)
				}
				w.mu.Lock()
				if h.State != w.last[i] {
					w.states[i] = append(w.states[i], h.State)
					w.last[i] = h.State
				}
				if h.State == "degraded" && rec.Code == http.StatusOK && h.Status == "ok" {
					w.okDegraded[i] = true
				}
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// all reports whether every replica shows state now.
func (w *healthWatch) all(state string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.last {
		if s != state {
			return false
		}
	}
	return true
}

// wait blocks until every replica shows state, and returns when.
func (w *healthWatch) wait(t *testing.T, state string) time.Time {
	t.Helper()
	deadline := time.Now().Add(raceSlowdown * 20 * time.Second)
	for !w.all(state) {
		if time.Now().After(deadline) {
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("not every replica shows %s: %v", state, w.last)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Now()
}

// end stops w and returns the states each replica showed, and whether it
// answered ok while degraded.
func (w *healthWatch) end() ([][]string, []bool) {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.states, w.okDegraded
}

// TestLoadRedisRestart is TestLoadReplicas with Redis killed in the middle
// of the run and started again, empty (a crash, without persistence), while
// the fake Slack keeps dropping sockets and redelivering. No mention goes
// unanswered. While a replica is degraded its claims are its own, so a
// mention can be answered twice, and only thus: when it was delivered more
// than once (a redelivery) and one delivery was decided while some replica
// was degraded, or before the crash whose claims the restarted Redis lost.
// The test counts those and bounds them by the mentions that were
// redelivered around the outage. Each replica's /healthz shows ok
// throughout (the bot answers), with state shared, then degraded, then
// shared again, and the log says each transition once per replica.
// Limits are out of the way here (TestLoadReplicas checks them): while
// degraded they hold per replica.
func TestLoadRedisRestart(t *testing.T) {
	sc := scale()
	sc.rate /= 2 // the run lasts long enough for the outage to be in its middle
	srv := statetest.StartRedis(t)
	r := startLoadReplicas(t, srv, 1_000_000)
	w := watchHealth(t, r.bots)
	w.wait(t, "shared")

	type result struct {
		rep *slacktest.LoadReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := r.s.Load(context.Background(), loadSpec(sc))
		done <- result{rep, err}
	}()
	sending := time.Duration(float64(sc.mentions) / sc.rate * float64(time.Second))
	time.Sleep(sending / 4)
	// More drops during the outage, so that more deliveries are redelivered
	// while replicas decide on their own.
	r.s.DropSockets(0.05, 15)
	stopped := time.Now()
	srv.Stop()
	degraded := w.wait(t, "degraded")
	time.Sleep(sending / 4)
	restarted := time.Now()
	srv.Start()
	shared := w.wait(t, "shared")
	r.s.DropSockets(0.01, 16)
	res := <-done
	rep := res.rep
	if res.err != nil {
		t.Fatalf("%v\n%v", res.err, rep)
	}
	states, okDegraded := w.end()
	r.stop()
	t.Logf("%d mentions from %d people over 3 replicas; redis killed at +%v, every replica degraded %v later, started again at +%v, every replica shared %v later:\n%v",
		sc.mentions, sc.users, stopped.Sub(rep.Mentions[0].FirstSent).Round(time.Millisecond), degraded.Sub(stopped).Round(time.Millisecond),
		restarted.Sub(rep.Mentions[0].FirstSent).Round(time.Millisecond), shared.Sub(restarted).Round(time.Millisecond), rep)

	// The window in which a decision may have been made by a store that
	// another replica's decision could not see: from the crash (less the
	// redelivery wait, for deliveries sent just before it and decided after
	// it) until every replica was back on Redis.
	from, until := stopped.Add(-loadRedeliver), shared
	sent := map[string][]time.Time{} // event_id → when each delivery was sent
	for _, e := range r.s.Sent() {
		sent[e.EventID] = append(sent[e.EventID], e.SentAt)
	}
	doubled, around := 0, 0
	for _, m := range rep.Mentions {
		ts := sent[m.EventID]
		first, last := ts[0], ts[len(ts)-1]
		near := len(ts) > 1 && first.Before(until) && last.After(from)
		if near {
			around++
		}
		switch {
		case m.Replies == 0:
			t.Errorf("mention %s from %s (%d envelopes) not answered", m.TS, m.User, m.Envelopes)
		case m.Replies > 1:
			doubled++
			if m.Replies > len(ts) || !near {
				t.Errorf("mention %s: %d replies from %d deliveries sent at %v; a second reply needs a redelivery around the outage (%v to %v)",
					m.TS, m.Replies, len(ts), ts, from, until)
			}
		}
	}
	t.Logf("answered more than once: %d mentions, of %d redelivered around the outage", doubled, around)

	for i, s := range states {
		if want := []string{"shared", "degraded", "shared"}; strings.Join(s, ",") != strings.Join(want, ",") {
			t.Errorf("replica %d: /healthz showed state %q, want %q", i, s, want)
		}
		if !okDegraded[i] {
			t.Errorf("replica %d: /healthz never answered 200, status ok, while degraded", i)
		}
	}
	logs := r.logs.String()
	for _, msg := range []string{"redis unavailable", "redis is back"} {
		if got := strings.Count(logs, msg); got != 3 {
			t.Errorf("%q logged %d times, want once per replica", msg, got)
		}
	}
}
