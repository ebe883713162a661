package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"sqlbot/agent"
)

// errAnswerTimeout is the cause of an answer's ctx when AnswerTimeout ran out.
var errAnswerTimeout = errors.New("bot: answer timeout")

// answer works on one question: it shows that it is working (a reaction),
// waits for its turn, asks the Answerer, posts the reply (and the CSV), and
// removes the reaction. One reply is posted, whatever happens: the answer,
// or a fixed sentence saying why there is none (also when Slack refuses the
// answer's message). Only Slack taking no message at all (unreachable, or
// rate limiting past the retries), or Run giving up after its drain, leaves
// a question without a reply, and that is logged.
func (b *Bot) answer(s *session, q question, slot chan struct{}) {
	ref := slack.NewRefToMessage(q.Channel, q.TS)
	b.react(s.base, q, ref, true)
	defer b.react(s.base, q, ref, false)

	attrs := logAttrs(q)
	queuedAt := time.Now()
	select {
	case <-slot:
	case <-s.work.Done():
		b.slots.cancel(slot)
		b.log.LogAttrs(s.base, slog.LevelWarn, "bot: question abandoned in the queue at shutdown", attrs...)
		if _, err := b.post(s.base, q.Channel, q.ThreadTS, renderFailure(failShutdown)); err != nil {
			b.log.LogAttrs(s.base, slog.LevelWarn, "bot: post failed", append(attrs, slog.Any("err", err))...)
		}
		return
	}
	defer b.slots.release()
	b.met.inFlight.Inc()
	defer b.met.inFlight.Dec()

	start := time.Now()
	actx, cancel := context.WithTimeoutCause(s.work, b.cfg.AnswerTimeout, errAnswerTimeout)
	res, err := b.ask(actx, agent.Request{Question: q.Text, History: b.mem.history(q.ConvKey)})
	timedOut := context.Cause(actx) == errAnswerTimeout
	cancel()
	elapsed := time.Since(start)
	r, outcome := b.reply(s, res, err, timedOut, attrs)
	b.met.answerSeconds.Observe(elapsed.Seconds())
	b.met.answers.WithLabelValues(string(outcome)).Inc()
	b.countRefusals(res)

	// Remember the turn before posting, so that a follow-up sent as soon as
	// the reply shows up finds it.
	if res != nil && outcome != agent.Failed {
		b.mem.add(q.ConvKey, agent.Turn{Question: q.Text, Answer: res.Answer, SQL: res.FinalSQL}, q.ConvTTL)
	}
	posted, perr := b.post(s.base, q.Channel, q.ThreadTS, r)
	var refused slack.SlackErrorResponse
	if errors.As(perr, &refused) {
		// Slack refused the message itself (msg_blocks_too_long, …), so it
		// was not posted: say that something went wrong, once.
		b.log.LogAttrs(s.base, slog.LevelError, "bot: Slack refused the reply; posting the failure sentence",
			append(attrs, slog.String("outcome", string(outcome)), slog.Any("err", perr))...)
		r = renderFailure(failInternal)
		posted, perr = b.post(s.base, q.Channel, q.ThreadTS, r)
	}
	if perr == nil && r.CSV != nil {
		if uerr := b.upload(s.base, q.Channel, q.ThreadTS, r); uerr != nil {
			b.log.LogAttrs(s.base, slog.LevelWarn, "bot: CSV upload failed", append(attrs, slog.Any("err", uerr))...)
		}
	}

	attrs = append(attrs,
		slog.String("outcome", string(outcome)),
		slog.Duration("queued", start.Sub(queuedAt)),
		slog.Duration("elapsed", elapsed),
		slog.Bool("csv", r.CSV != nil),
		slog.String("reply_ts", posted),
	)
	if res != nil {
		attrs = append(attrs, slog.Int("steps", res.Steps), slog.Int("rows", len(res.Rows)),
			slog.Int("statements", len(res.Statements)), slog.String("provider", res.Provider),
			slog.Int("prompt_tokens", res.Tokens.Prompt), slog.Int("completion_tokens", res.Tokens.Completion))
	}
	if perr != nil {
		b.log.LogAttrs(s.base, slog.LevelError, "bot: post reply failed", append(attrs, slog.Any("err", perr))...)
		return
	}
	b.log.LogAttrs(s.base, slog.LevelInfo, "bot: question answered", attrs...)
}

// ask calls the Answerer, turning a panic into an error, so that one bad
// question neither kills the bot nor goes without a reply.
func (b *Bot) ask(ctx context.Context, req agent.Request) (res *agent.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("bot: answerer panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return b.ans.Ask(ctx, req)
}

// reply turns the Answerer's result into the message to post, and is the one
// place where an error becomes user text: the error is logged here in full,
// and the user sees a fixed sentence. timedOut says that AnswerTimeout ran
// out (a provider's own per-call timeout is a provider failure).
func (b *Bot) reply(s *session, res *agent.Result, err error, timedOut bool, attrs []slog.Attr) (reply, agent.Outcome) {
	if err == nil && res != nil && res.Outcome != agent.Failed {
		return renderResult(res), res.Outcome
	}
	if errors.Is(err, agent.ErrNoModel) {
		// Not a fault: the deployment has no model, and the user is told how to add one.
		b.log.LogAttrs(s.base, slog.LevelInfo, "bot: no model configured for this question", attrs...)
		return noModelReply(res), agent.Failed
	}
	f := failProvider
	switch {
	case s.work.Err() != nil:
		f = failShutdown
	case timedOut:
		f = failTimeout
	case res == nil:
		f = failInternal
	}
	b.log.LogAttrs(s.base, slog.LevelError, "bot: answer failed", append(attrs, slog.Any("err", err))...)
	return renderFailure(f), agent.Failed
}

// countRefusals counts every refused statement by layer, and a refusal in
// words (no statement) as the model's.
func (b *Bot) countRefusals(res *agent.Result) {
	if res == nil {
		return
	}
	n := 0
	for _, st := range res.Statements {
		if st.Status == agent.StatusRefused {
			b.met.refusals.WithLabelValues(layerLabel(st.Layer)).Inc()
			n++
		}
	}
	if n == 0 && res.Outcome == agent.Refused {
		b.met.refusals.WithLabelValues(refusedByModel).Inc()
	}
}

// post sends r to channel (in thread threadTS unless empty) and returns its ts.
func (b *Bot) post(ctx context.Context, channel, threadTS string, r reply) (string, error) {
	opts := []slack.MsgOption{
		slack.MsgOptionText(r.Text, false),
		slack.MsgOptionBlocks(r.Blocks...),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	var ts string
	err := b.call(ctx, func(ctx context.Context) error {
		var err error
		_, ts, err = b.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// postEphemeral shows r to user only, in channel.
func (b *Bot) postEphemeral(ctx context.Context, channel, user string, r reply) error {
	return b.call(ctx, func(ctx context.Context) error {
		_, err := b.api.PostEphemeralContext(ctx, channel, user,
			slack.MsgOptionText(r.Text, false), slack.MsgOptionBlocks(r.Blocks...))
		return err
	})
}

// upload shares r's CSV in channel (and thread) with files upload v2.
func (b *Bot) upload(ctx context.Context, channel, threadTS string, r reply) error {
	return b.call(ctx, func(ctx context.Context) error {
		_, err := b.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader:          bytes.NewReader(r.CSV),
			FileSize:        len(r.CSV),
			Filename:        csvFileName,
			Title:           r.CSVTitle,
			Channel:         channel,
			ThreadTimestamp: threadTS,
			SnippetType:     "csv",
		})
		return err
	})
}

// react adds (or removes) the working reaction. Failures only matter to the
// log: a missing hourglass is not worth a message.
func (b *Bot) react(ctx context.Context, q question, ref slack.ItemRef, add bool) {
	err := b.call(ctx, func(ctx context.Context) error {
		if add {
			return b.api.AddReactionContext(ctx, workingReaction, ref)
		}
		return b.api.RemoveReactionContext(ctx, workingReaction, ref)
	})
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && (se.Err == "already_reacted" || se.Err == "no_reaction") {
		return
	}
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: reaction failed", append(logAttrs(q), slog.Bool("add", add), slog.Any("err", err))...)
	}
}

// call runs one Web API call (each HTTP request is bounded by the HTTP
// client's timeout) and retries it after the Retry-After that a 429 carries
// (at most rateLimitRetries times, each wait at most maxRetryAfter).
func (b *Bot) call(ctx context.Context, f func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt == rateLimitRetries {
			return err
		}
		t := time.NewTimer(min(max(rl.RetryAfter, time.Second), maxRetryAfter))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// helpText is the answer to `help`, an unknown subcommand and an empty mention.
func (b *Bot) helpText() string {
	me := "me"
	if b.self != "" {
		me = "<@" + b.self + ">"
	}
	cmd := b.cfg.SlashCommand
	var sb strings.Builder
	sb.WriteString("*Ask me about the data in plain words.* ")
	sb.WriteString("Mention " + me + " in a channel with your question and I'll answer in a thread, or send me a direct message. ")
	sb.WriteString("Follow-up questions in the same thread keep the context.\n")
	sb.WriteString("Every answer shows the SQL I ran. I only read data; I never change it.\n")
	sb.WriteString("*Commands:* `" + cmd + " tables` lists what I can read · `" + cmd + " eval` shows the latest evaluation report · `" + cmd + " help` shows this.")
	return sb.String()
}
