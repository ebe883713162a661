package bot_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
)

// In Slack's assistant view: a new thread is offered suggested prompts (at
// most four); a question in it titles the thread, shows the status while it
// is worked on and clears it once answered; a follow-up does not retitle it;
// a DM outside a thread gets none of this.
func TestAssistantThread(t *testing.T) {
	recorded := []string{"How many orders shipped in June 2025?", "What was revenue in June 2025?",
		"Which store sold the most in March 2025?", "Show monthly revenue for 2025.", "Who manages the most people?", ""}
	ans := newFakeAnswerer()
	ans.gate = make(chan struct{})
	h := start(t, ans, options{cfg: func(c *bot.Config) {
		c.Prompts = func(context.Context) []string { return recorded }
	}})
	const dm = "D0ANN"
	thread, _, err := h.s.StartAssistantThread(h.ctx(), dm, user)
	if err != nil {
		t.Fatal(err)
	}
	calls := func(method string) []slacktest.AssistantCall {
		var out []slacktest.AssistantCall
		for _, c := range h.s.AssistantCalls() {
			if c.Method == "assistant.threads."+method {
				out = append(out, c)
			}
		}
		return out
	}
	if err := h.s.Wait(h.ctx(), func() bool { return len(calls("setSuggestedPrompts")) == 1 }); err != nil {
		t.Fatal("no suggested prompts:", err)
	}
	p := calls("setSuggestedPrompts")[0]
	if p.Channel != dm || p.ThreadTS != thread || len(p.Prompts) != 4 {
		t.Fatalf("prompts %+v; want 4 in %s thread %s", p, dm, thread)
	}
	for i, pr := range p.Prompts {
		if pr.Message != recorded[i] {
			t.Errorf("prompt %d sends %q, want %q", i, pr.Message, recorded[i])
		}
	}

	const q1 = "How many orders shipped in June 2025?"
	h.send(slacktest.AssistantMessageEvent(dm, user, q1, thread))
	<-ans.started
	if err := h.s.Wait(h.ctx(), func() bool { return h.s.Status(dm, thread) != "" }); err != nil {
		t.Fatal("no status while working:", err)
	}
	if titles := calls("setTitle"); len(titles) != 1 || titles[0].Title != q1 || titles[0].ThreadTS != thread {
		t.Errorf("titles %+v, want the question on the thread", titles)
	}
	if n := len(h.s.Messages()); n != 0 {
		t.Fatalf("%d messages while the answer is held", n)
	}
	close(ans.gate)
	reply := h.waitMessages(1)[0]
	if reply.Channel != dm || reply.ThreadTS != thread {
		t.Errorf("reply in %s thread %q, want the assistant thread", reply.Channel, reply.ThreadTS)
	}
	if err := h.s.Wait(h.ctx(), func() bool {
		st := calls("setStatus")
		return len(st) == 2 && st[1].Status == ""
	}); err != nil {
		t.Fatalf("status calls %+v: want it set, then cleared: %v", calls("setStatus"), err)
	}
	if st := calls("setStatus")[0]; st.Status == "" || st.ThreadTS != thread {
		t.Errorf("first status call %+v", st)
	}
	if got := h.s.Status(dm, thread); got != "" {
		t.Errorf("status %q after the answer", got)
	}

	// A follow-up: status again, no new title.
	h.send(slacktest.AssistantMessageEvent(dm, user, "and in July?", thread))
	h.waitMessages(2)
	if err := h.s.Wait(h.ctx(), func() bool { return len(calls("setStatus")) == 4 }); err != nil {
		t.Fatalf("status calls for the follow-up: %+v", calls("setStatus"))
	}
	if n := len(calls("setTitle")); n != 1 {
		t.Errorf("%d titles after a follow-up, want 1", n)
	}

	// A DM at the top level is not in an assistant thread.
	h.send(slacktest.DMEvent(dm, user, "plain question", ""))
	h.waitMessages(3)
	posted := h.postedAfterStop()
	if len(posted) != 3 {
		t.Errorf("%d replies, want 3", len(posted))
	}
	if n := len(h.s.AssistantCalls()); n != 1+1+4 {
		t.Errorf("%d assistant calls, want 6 (prompts, title, two statuses set and cleared): %+v", n, h.s.AssistantCalls())
	}
	for _, c := range h.s.Calls() {
		if slices.Contains([]string{"assistant.threads.setStatus", "assistant.threads.setTitle"}, c.Method) && c.Error != "" {
			t.Errorf("%s refused: %s", c.Method, c.Error)
		}
	}
}

// A redelivered assistant_thread_started is offered prompts once; with no
// prompts to offer, none are set.
func TestAssistantPromptsOnce(t *testing.T) {
	ans := newFakeAnswerer()
	calls := 0
	h := start(t, ans, options{cfg: func(c *bot.Config) {
		c.Prompts = func(context.Context) []string {
			calls++
			return []string{fmt.Sprintf("question %d", calls)}
		}
	}})
	_, env, err := h.s.StartAssistantThread(h.ctx(), "D0ANN", user)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Redeliver(h.ctx(), env, "timeout"); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.AssistantCalls()) == 1 }); err != nil {
		t.Fatal(err)
	}
	h.stop()
	if n := len(h.s.AssistantCalls()); n != 1 {
		t.Errorf("%d prompt calls for one thread, want 1", n)
	}

	none := start(t, newFakeAnswerer(), options{cfg: func(c *bot.Config) {
		c.Prompts = func(context.Context) []string { return nil }
	}})
	if _, _, err := none.s.StartAssistantThread(none.ctx(), "D0ANN", user); err != nil {
		t.Fatal(err)
	}
	none.send(slacktest.DMEvent("D0ANN", user, "hello", ""))
	none.waitMessages(1)
	none.stop()
	if n := len(none.s.AssistantCalls()); n != 0 {
		t.Errorf("%d assistant calls with no prompts, want 0", n)
	}
}

// TestAssistantPromptsVerified: with named verifiers, a new assistant
// thread is offered the questions they verified on this data first, then
// the recorded ones, without repeats; an answer verified on other data is
// not offered, and with anyone verifying no verified question is (it was
// asked in a channel, not for everybody).
func TestAssistantPromptsVerified(t *testing.T) {
	recorded := []string{"What was revenue in June 2025?", "How many orders shipped in June 2025?", "Show monthly revenue for 2025."}
	verify := func(t *testing.T, st *state.Memory) {
		t.Helper()
		ctx := context.Background()
		for i, v := range []state.Verification{
			{Channel: channel, TS: "1700030000.000100", Question: "Which region has the most customers?", Source: "demo", User: "U0VER", At: time.Unix(1700030000, 0)},
			{Channel: channel, TS: "1700030000.000200", Question: "How many stores are there?", Source: "other data", User: "U0VER", At: time.Unix(1700030001, 0)},
			{Channel: channel, TS: "1700030000.000300", Question: "what was revenue in june 2025?", Source: "demo", User: "U0VER", At: time.Unix(1700030002, 0)},
		} {
			if err := st.Verify(ctx, v); err != nil {
				t.Fatalf("verify %d: %v", i, err)
			}
		}
	}
	offered := func(t *testing.T, verifiers []string) []string {
		t.Helper()
		st := state.NewMemory(nil)
		verify(t, st)
		h := start(t, newFakeAnswerer(), options{cfg: func(c *bot.Config) {
			c.State, c.Source, c.Verifiers = st, "demo", verifiers
			c.Prompts = func(context.Context) []string { return recorded }
		}})
		if _, _, err := h.s.StartAssistantThread(h.ctx(), "D0ANN", user); err != nil {
			t.Fatal(err)
		}
		if err := h.s.Wait(h.ctx(), func() bool { return len(h.s.AssistantCalls()) == 1 }); err != nil {
			t.Fatal("no suggested prompts:", err)
		}
		h.stop()
		var msgs []string
		for _, p := range h.s.AssistantCalls()[0].Prompts {
			msgs = append(msgs, p.Message)
		}
		return msgs
	}
	got := offered(t, []string{"U0VER"})
	want := []string{"what was revenue in june 2025?", "Which region has the most customers?", "How many orders shipped in June 2025?", "Show monthly revenue for 2025."}
	if !slices.Equal(got, want) {
		t.Errorf("with named verifiers, prompts %q; want %q", got, want)
	}
	if got := offered(t, nil); !slices.Equal(got, recorded) {
		t.Errorf("with anyone verifying, prompts %q; want only the recorded %q", got, recorded)
	}
}
