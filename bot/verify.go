package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack/slackevents"

	"sqlbot/agent"
	"sqlbot/agent/present"
	"sqlbot/bot/state"
	"sqlbot/roconn"
)

// Verified answers: a ✅ (white_check_mark) that a verifier puts on one of
// the bot's answers stores the question, the SQL that produced the answer
// and the result's checksum (state.VerifiedAnswers); removing it withdraws
// that verifier's mark. The bot knows which message answers which question
// because it records every answer it posts in a channel, under the
// answer's channel and ts, for answerRecordTTL (state.Cache). Answers in a
// DM are not recorded: what is said there stays there, and verified
// answers are listed to others.
const (
	verifyReaction   = "white_check_mark"
	answerRecordTTL  = 30 * 24 * time.Hour // how long after it is posted an answer can be verified
	maxListVerified  = 10                  // answers `verified` shows
	maxScanVerified  = 1000                // verified answers `verified` looks through for the channel's
	maxExamplePool   = 500                 // the most recent verified answers examples are chosen from
	verifiedDateForm = "2006-01-02"
)

// An answerRecord is what the bot remembers of an answer it posted.
type answerRecord struct {
	Question string `json:"q"`
	SQL      string `json:"sql"`
	Checksum string `json:"sum"`
	Source   string `json:"src,omitempty"`
	ThreadTS string `json:"thread,omitempty"` // where the answer is, for notes about it
}

// answerKey is the Store's cache key of the record of the answer (channel, ts).
func answerKey(channel, ts string) string { return "answer:" + channel + ":" + ts }

// verifiable reports whether an answer to q can be verified: an answer
// that ran SQL, posted in a conversation that is not a DM.
func verifiable(q question, res *agent.Result) bool {
	return q.Kind != kindDM && res != nil && res.Outcome == agent.Answered && res.FinalSQL != ""
}

// recordAnswer remembers that the message ts in q's channel answers q with
// res, so that a ✅ on it can be turned into a verified answer. A failure
// is logged: the answer stands, it just cannot be verified.
func (b *Bot) recordAnswer(ctx context.Context, q question, ts string, res *agent.Result, attrs []slog.Attr) {
	sum, err := roconn.ResultChecksum(res.Columns, res.Rows)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: answer not recorded for verification", append(attrs, slog.Any("err", err))...)
		return
	}
	rec := answerRecord{Question: q.Text, SQL: res.FinalSQL, Checksum: sum, Source: b.cfg.Source, ThreadTS: q.ThreadTS}
	data, err := json.Marshal(rec)
	if err != nil {
		return // a struct of strings always marshals
	}
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	if err := b.state.SetCached(sctx, answerKey(q.Channel, ts), data, answerRecordTTL); err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: answer not recorded for verification", append(attrs, slog.Any("err", err))...)
	}
}

// A reaction is a reaction_added or reaction_removed event.
type reaction struct {
	EventID  string
	Added    bool
	User     string // who reacted
	Name     string // the emoji
	ItemType string
	Channel  string
	TS       string // the message reacted to
	ItemUser string // its author
}

func fromReactionAdded(ev *slackevents.ReactionAddedEvent, eventID string) reaction {
	return reaction{EventID: eventID, Added: true, User: ev.User, Name: ev.Reaction, ItemType: ev.Item.Type,
		Channel: ev.Item.Channel, TS: ev.Item.Timestamp, ItemUser: ev.ItemUser}
}

func fromReactionRemoved(ev *slackevents.ReactionRemovedEvent, eventID string) reaction {
	return reaction{EventID: eventID, User: ev.User, Name: ev.Reaction, ItemType: ev.Item.Type,
		Channel: ev.Item.Channel, TS: ev.Item.Timestamp, ItemUser: ev.ItemUser}
}

// goReaction handles a reaction on a tracked goroutine if it is a ✅ by a
// person on one of the bot's messages; every other reaction is ignored.
func (b *Bot) goReaction(s *session, r reaction) {
	if r.Name != verifyReaction || r.ItemType != "message" || r.User == "" || r.User == b.self || r.ItemUser != b.self {
		return
	}
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.onVerify(s, r)
	}()
}

// isVerifier reports whether user's ✅ verifies an answer.
func (b *Bot) isVerifier(user string) bool {
	return len(b.cfg.Verifiers) == 0 || slices.Contains(b.cfg.Verifiers, user)
}

// Notes about verifying, seen by the person who reacted only.
const (
	verifyNotVerifier = "Your :white_check_mark: doesn't mark this answer as verified: only the people chosen to verify answers can."
	verifyNotAnswer   = "Only my answers can be marked as verified, up to 30 days after I posted them: this message is not one (a refusal or a notice), or it is older."
	verifyDM          = "Answers in a direct message stay private, so they can't be marked as verified: ask in a channel to have an answer verified."
)

// onVerify turns a ✅ into a verifier's mark, or its removal into the
// mark's withdrawal, and tells the person who reacted what it did. A
// redelivered event is handled once.
func (b *Bot) onVerify(s *session, r reaction) {
	ctx := s.base
	attrs := []slog.Attr{slog.String("event_id", r.EventID), slog.String("channel", r.Channel),
		slog.String("user", r.User), slog.String("ts", r.TS), slog.Bool("added", r.Added)}
	if r.EventID != "" && !b.claim(ctx, "reaction:"+r.EventID, attrs) {
		return
	}
	note := func(thread string, msg reply) {
		if err := b.postEphemeral(ctx, r.Channel, thread, r.User, msg); err != nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "bot: post note failed", append(attrs, slog.Any("err", err))...)
		}
	}
	if !b.isVerifier(r.User) {
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: a ✅ by someone who is not a verifier", attrs...)
		if r.Added {
			note("", renderNotice(verifyNotVerifier))
		}
		return
	}
	rec, ok, err := b.awaitAnswerRecord(ctx, r)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: state store failed to read the answer; ✅ not handled", append(attrs, slog.Any("err", err))...)
		if r.Added {
			note("", renderFailure(failInternal))
		}
		return
	}
	if !ok {
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: a ✅ on a message that is not a recorded answer", attrs...)
		switch {
		case !r.Added:
		case strings.HasPrefix(r.Channel, "D"):
			note("", renderNotice(verifyDM))
		default:
			note("", renderNotice(verifyNotAnswer))
		}
		return
	}
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	if r.Added {
		err = b.state.Verify(sctx, state.Verification{
			Channel: r.Channel, TS: r.TS, Question: rec.Question, SQL: rec.SQL, Checksum: rec.Checksum,
			Source: rec.Source, User: r.User, At: time.Now(),
		})
	} else {
		var still bool
		still, err = b.state.Unverify(sctx, r.Channel, r.TS, r.User)
		attrs = append(attrs, slog.Bool("still_verified", still))
		if err == nil {
			b.met.verifications.WithLabelValues("withdrawn").Inc()
			b.log.LogAttrs(ctx, slog.LevelInfo, "bot: verification withdrawn", attrs...)
			text := "Your mark is withdrawn: this answer is no longer verified."
			if still {
				text = "Your mark is withdrawn; others still verify this answer."
			}
			note(rec.ThreadTS, renderNotice(text))
			return
		}
	}
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: state store failed to keep the verification", append(attrs, slog.Any("err", err))...)
		note(rec.ThreadTS, renderFailure(failInternal))
		return
	}
	b.met.verifications.WithLabelValues("added").Inc()
	b.log.LogAttrs(ctx, slog.LevelInfo, "bot: answer verified", attrs...)
	note(rec.ThreadTS, renderNotice("Marked as verified: the question, the SQL that answered it and a checksum of its rows are kept, "+
		"to check later answers against and to guide new ones. `"+b.cfg.SlashCommand+" verified` lists them; "+
		"remove your :white_check_mark: to withdraw it."))
}

// recordWait is how long a ✅ on one of the bot's messages waits for the
// message's answer record: the record is written just after the reply is
// posted, so a ✅ put on a reply as soon as it shows up can come first.
const recordWait = time.Second

// awaitAnswerRecord is answerRecord for the message r is on, looked up again
// every 100 ms for up to recordWait while there is none and r adds a ✅.
func (b *Bot) awaitAnswerRecord(ctx context.Context, r reaction) (answerRecord, bool, error) {
	deadline := time.Now().Add(recordWait)
	for {
		rec, ok, err := b.answerRecord(ctx, r.Channel, r.TS)
		if ok || err != nil || !r.Added || time.Now().After(deadline) {
			return rec, ok, err
		}
		select {
		case <-ctx.Done():
			return rec, false, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// answerRecord returns the record of the answer (channel, ts), if there is one.
func (b *Bot) answerRecord(ctx context.Context, channel, ts string) (answerRecord, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	data, ok, err := b.state.Cached(ctx, answerKey(channel, ts))
	if err != nil || !ok {
		return answerRecord{}, false, err
	}
	var rec answerRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return answerRecord{}, false, fmt.Errorf("bot: read answer record: %w", err)
	}
	return rec, true, nil
}

// examples returns the verified answers nearest question, as examples for
// the model (agent.NearestExamples), chosen among the most recent
// maxExamplePool. A verified answer is shared knowledge: those of every
// channel are candidates. If the Store fails, there are none, and it is
// logged.
func (b *Bot) examples(ctx context.Context, question string, attrs []slog.Attr) []agent.Example {
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	list, err := b.state.ListVerified(sctx, maxExamplePool)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: state store failed to list verified answers; asking without examples", append(attrs, slog.Any("err", err))...)
		return nil
	}
	pool := make([]agent.Example, len(list))
	for i, v := range list {
		pool[i] = agent.Example{Question: v.Question, SQL: v.SQL}
	}
	return agent.NearestExamples(question, pool, agent.MaxExamples)
}

// onVerified answers `verified`: the answers verified in the channel the
// command was used in, the most recent first, each with its SQL and who
// verified it; those of other channels are only counted, since a question
// asked in one channel is not for every other.
func (b *Bot) onVerified(s *session, channel string) reply {
	ctx, cancel := context.WithTimeout(s.base, stateTimeout)
	defer cancel()
	all, err := b.state.ListVerified(ctx, maxScanVerified)
	if err != nil {
		b.log.ErrorContext(s.base, "bot: state store failed to list verified answers", "err", err)
		return renderFailure(failInternal)
	}
	var here []state.Verified
	for _, v := range all {
		if v.Channel == channel {
			here = append(here, v)
		}
	}
	return renderVerified(here, len(all)-len(here))
}

// renderVerified lists verified answers: a section each with the
// question, its SQL, who verified it and since when.
func renderVerified(here []state.Verified, elsewhere int) reply {
	var bl blockList
	head := "*No answer in this channel is verified yet.* Put a :white_check_mark: on one of my answers to verify it."
	if len(here) > 0 {
		head = "*Verified answers in this channel* (" + present.Plural(len(here), "answer") + ", the most recent first):"
	}
	if elsewhere > 0 {
		head += " " + present.Plural(elsewhere, "more answer") + " verified in other conversations."
	}
	bl.section(head)
	for i, v := range here {
		if i == maxListVerified {
			bl.context(present.Plural(len(here)-maxListVerified, "older one") + " not shown.")
			break
		}
		var by []string
		for _, vote := range v.Votes {
			by = append(by, "<@"+escape(present.Line(vote.User))+">")
		}
		bl.section("*" + escape(present.Ellipsize(present.Line(v.Question), 300)) + "*\n" + codeBlock(v.SQL) +
			"\n:white_check_mark: " + strings.Join(by, ", ") + " · since " + v.Since.UTC().Format(verifiedDateForm))
	}
	return reply{Text: fallback(plainFallback(head)), Blocks: bl.blocks()}
}
