package bot_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sqlbot/agent"
	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
	"sqlbot/roconn"
)

const verifier = "U0VERA"

// verifiedState opens a state file in dir, closed when the test ends.
func verifiedState(t *testing.T, path string) *state.SQLite {
	t.Helper()
	st, err := state.OpenSQLite(t.Context(), path, state.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func verifyingBot(t *testing.T, st bot.Store, ans *fakeAnswerer) *harness {
	return start(t, ans, options{cfg: func(c *bot.Config) {
		c.State = st
		c.Verifiers = []string{verifier}
		c.Source = "src:test"
	}})
}

// listed returns what the state file holds as verified.
func listed(t *testing.T, st state.VerifiedAnswers) []state.Verified {
	t.Helper()
	l, err := st.ListVerified(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestVerifiedAnswer: a verifier's ✅ on an answer stores its question, SQL,
// the result's checksum and the source; a non-verifier's stores nothing
// and tells them why; `/sqlbot verified` lists it; removing the ✅
// withdraws it; and a new Bot on the same state file still has it.
func TestVerifiedAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st := verifiedState(t, path)
	h := verifyingBot(t, st, newFakeAnswerer())
	const q = "how many orders shipped?"
	h.send(slacktest.MentionEvent(channel, user, q, "1700020000.000100", ""))
	answer := h.waitMessages(1)[0]

	// A ✅ by someone who is not a verifier: nothing is stored, and they
	// are told, privately.
	h.send(slacktest.ReactionAddedEvent(channel, user, "white_check_mark", answer.TS))
	note := h.waitEphemeral(1)[0]
	if note.User != user || !strings.Contains(text(t, note), "verif") {
		t.Errorf("the non-verifier got %q (to %s), want a private note that only verifiers can verify", text(t, note), note.User)
	}
	if l := listed(t, st); len(l) != 0 {
		t.Fatalf("a non-verifier's ✅ stored %+v", l)
	}
	// Another reaction, even by a verifier, stores nothing.
	h.send(slacktest.ReactionAddedEvent(channel, verifier, "thumbsup", answer.TS))

	h.send(slacktest.ReactionAddedEvent(channel, verifier, "white_check_mark", answer.TS))
	h.waitEphemeral(2) // the verifier's confirmation
	l := listed(t, st)
	wantSum, err := roconn.ResultChecksum(echo(q, 1).Columns, echo(q, 1).Rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 1 || l[0].Question != q || l[0].SQL != echo(q, 1).FinalSQL || l[0].Checksum != wantSum ||
		l[0].Source != "src:test" || l[0].Channel != channel || l[0].TS != answer.TS ||
		len(l[0].Votes) != 1 || l[0].Votes[0].User != verifier {
		t.Fatalf("verified = %+v, want the question, its SQL, the result's checksum and the source, with the verifier's mark", l)
	}

	// A question like it gets it as an example; an unrelated one does not.
	h.send(slacktest.MentionEvent(channel, user, "how many orders shipped last week?", "1700020000.000200", ""))
	h.send(slacktest.MentionEvent(channel, user, "which products are out of stock?", "1700020000.000300", ""))
	h.waitMessages(3)
	for _, req := range h.ans.requests()[1:] {
		want := 0
		if strings.Contains(req.Question, "shipped") {
			want = 1
		}
		if len(req.Examples) != want || want == 1 && (req.Examples[0].Question != q || req.Examples[0].SQL != echo(q, 1).FinalSQL) {
			t.Errorf("%q was asked with examples %+v, want %d (the verified answer)", req.Question, req.Examples, want)
		}
	}

	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "verified", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	list := h.waitEphemeral(3)[2]
	if got := decoded(text(t, list)); !strings.Contains(got, q) || !strings.Contains(got, echo(q, 1).FinalSQL) || !strings.Contains(got, "<@"+verifier+">") {
		t.Errorf("/sqlbot verified = %s, want the question, its SQL and who verified it", got)
	}
	if list.Method == "chat.postMessage" {
		t.Error("/sqlbot verified was posted in the channel")
	}

	h.send(slacktest.ReactionRemovedEvent(channel, verifier, "white_check_mark", answer.TS))
	if err := h.s.Wait(h.ctx(), func() bool { return len(listed(t, st)) == 0 }); err != nil {
		t.Fatalf("the removal did not withdraw it: %+v", listed(t, st))
	}
	h.send(slacktest.ReactionAddedEvent(channel, verifier, "white_check_mark", answer.TS))
	if err := h.s.Wait(h.ctx(), func() bool { return len(listed(t, st)) == 1 }); err != nil {
		t.Fatal("verified again: not stored")
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// A restart: a new Bot (and a new connection to Slack) on the same file.
	st2 := verifiedState(t, path)
	h2 := verifyingBot(t, st2, newFakeAnswerer())
	if _, err := h2.s.SendSlash(h2.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "verified", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	if got := decoded(text(t, h2.waitEphemeral(1)[0])); !strings.Contains(got, q) {
		t.Errorf("after a restart, /sqlbot verified = %s, want the answer", got)
	}
}

// TestVerifyOnlyAnswers: a ✅ on a refusal, on a message the bot did not
// post, or on an answer in a DM (which stays private) stores nothing.
func TestVerifyOnlyAnswers(t *testing.T) {
	st := state.NewMemory(nil)
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) {
		if strings.Contains(req.Question, "delete") {
			return &agent.Result{Question: req.Question, Answer: "I can't change data.", Outcome: agent.Refused}, nil
		}
		return echo(req.Question, 1), nil
	}
	h := start(t, ans, options{cfg: func(c *bot.Config) { c.State = st }}) // no verifiers: anyone
	h.send(slacktest.MentionEvent(channel, user, "delete the orders", "1700020100.000100", ""))
	refusal := h.waitMessages(1)[0]
	h.send(slacktest.ReactionAddedEvent(channel, user, "white_check_mark", refusal.TS))
	// The question itself is a person's message.
	h.send(slacktest.ReactionAddedEvent(channel, user, "white_check_mark", "1700020100.000100"))
	h.send(slacktest.DMEvent("D0ANN", user, "how many orders?", "1700020100.000200"))
	dmAnswer := h.waitMessages(2)[1]
	h.send(slacktest.ReactionAddedEvent("D0ANN", user, "white_check_mark", dmAnswer.TS))
	notes := h.waitEphemeral(2) // on the refusal, and on the DM answer
	if !slices.ContainsFunc(notes, func(m slacktest.Message) bool { return m.Channel == "D0ANN" && strings.Contains(text(t, m), "private") }) {
		t.Errorf("notes %+v: want one in the DM saying that DM answers stay private", notes)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if l := listed(t, st); len(l) != 0 {
		t.Errorf("stored %+v, want nothing", l)
	}
	if n := len(h.s.Ephemeral()); n != 2 {
		t.Errorf("%d notes, want 2: a ✅ on a person's message gets none", n)
	}
	for _, m := range h.s.Ephemeral() {
		if m.User != user {
			t.Errorf("a note went to %s", m.User)
		}
	}
	if slices.ContainsFunc(h.s.Messages(), func(m slacktest.Message) bool { return strings.Contains(text(t, m), "verif") }) {
		t.Error("something about verifying was posted for everyone")
	}
}
