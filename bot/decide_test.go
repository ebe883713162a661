package bot_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
)

// slowStore is a state.Memory whose claims (of Claim and of Take) wait
// until gate is closed, whatever their ctx says: a state file or Redis that
// is slow to answer.
type slowStore struct {
	*state.Memory
	gate chan struct{}
}

func (s slowStore) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	<-s.gate
	return s.Memory.Claim(ctx, key, ttl)
}

func (s slowStore) Take(ctx context.Context, key string, ttl time.Duration, user string, l state.Limits) (bool, state.Verdict, error) {
	<-s.gate
	return s.Memory.Take(ctx, key, ttl, user, l)
}

// An envelope's ack never waits for the Store: while the Store holds the
// first mention's claim, the mentions after it are acknowledged all the
// same (Run's loop used to make the claim and the limit calls of each
// mention before it read the next envelope, so with a state file every ack
// waited for the writes of the mentions before it, issue 12), and once
// the Store answers, all are answered in arrival order.
func TestAcksDoNotWaitForTheStore(t *testing.T) {
	st := slowStore{Memory: state.NewMemory(nil), gate: make(chan struct{})}
	ans := newFakeAnswerer()
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.State, c.MaxConcurrent = st, 1 }})
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(st.gate)
		}
	}
	t.Cleanup(open) // so that Run can end
	var envs []string
	for i := range 5 {
		envs = append(envs, h.send(slacktest.MentionEvent(channel, fmt.Sprintf("U%03d", i), fmt.Sprintf("q%d", i), fmt.Sprintf("1700004000.%06d", i+1), "")))
	}
	for i, env := range envs {
		if _, err := h.s.WaitAck(h.ctx(), env); err != nil {
			t.Fatalf("mention %d not acknowledged while the Store held a claim: %v", i, err)
		}
	}
	if n := len(ans.requests()); n != 0 {
		t.Fatalf("%d questions worked on before the Store answered, want 0", n)
	}
	open()
	for i := range 5 {
		if q := <-ans.started; q != fmt.Sprintf("q%d", i) {
			t.Fatalf("question %d worked on = %q, want q%d (arrival order)", i, q, i)
		}
	}
	if posted := h.postedAfterStop(); len(posted) != 5 {
		t.Errorf("%d replies, want 5", len(posted))
	}
}

// downStore is a state.Memory whose Take fails: a state file or Redis that
// cannot be written.
type downStore struct{ *state.Memory }

func (downStore) Take(context.Context, string, time.Duration, string, state.Limits) (bool, state.Verdict, error) {
	return false, state.Verdict{}, errors.New("state: take: disk I/O error")
}

// A question the Store cannot take is answered all the same, and the
// failure logged: answered twice (if another replica took it too) is
// better than never, and a limit is not worth losing a question for.
func TestQuestionAnsweredWhenTheStoreFails(t *testing.T) {
	ans := newFakeAnswerer()
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.State = downStore{state.NewMemory(nil)} }})
	h.send(slacktest.MentionEvent(channel, "U001", "how many orders?", "1700004000.000001", ""))
	h.waitMessages(1)
	if posted := h.postedAfterStop(); len(posted) != 1 {
		t.Fatalf("%d replies, want 1", len(posted))
	}
	if reqs := ans.requests(); len(reqs) != 1 || reqs[0].Question != "how many orders?" {
		t.Errorf("questions asked: %+v, want the one", reqs)
	}
	if !strings.Contains(h.logs.String(), "failed to take the question; answering it") {
		t.Errorf("the failure is not logged:\n%s", h.logs)
	}
}
