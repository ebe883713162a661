package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"sqlbot/agent"
)

// errAnswerTimeout is the cause of an answer's ctx when AnswerTimeout ran out.
var errAnswerTimeout = errors.New("bot: answer timeout")

// answer works on one question: it shows that it is working (a reaction,
// added and removed beside the answer, never in its way), waits for its turn,
// asks the Answerer and delivers exactly one reply (see deliver). Only Slack
// taking no message at all (unreachable, or rate limiting past the retries),
// or Run giving up after its drain, leaves a question without a reply, and
// that is logged.
func (b *Bot) answer(s *session, q question, slot chan struct{}) {
	done := b.goWorking(s, q)
	defer done()
	assisted := b.goAssistant(s, q)
	defer assisted()

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
	b.met.inFlight.Inc()
	start := time.Now()
	actx, cancel := context.WithTimeoutCause(s.work, b.cfg.AnswerTimeout, errAnswerTimeout)
	res, err := b.ask(actx, agent.Request{Question: q.Text, History: b.history(actx, q.ConvKey, attrs),
		Examples: b.examples(actx, q.Text, attrs)})
	timedOut := context.Cause(actx) == errAnswerTimeout
	cancel()
	elapsed := time.Since(start)
	// The slot is for the work on the answer; posting it is Slack's time,
	// which may include waiting out a rate limit, and holds no slot.
	b.slots.release()
	b.met.inFlight.Dec()
	r, outcome := b.reply(s, res, err, timedOut, attrs)
	b.met.answerSeconds.Observe(elapsed.Seconds())
	b.met.answers.WithLabelValues(string(outcome)).Inc()
	b.countRefusals(res)

	// Remember the turn before posting, so that a follow-up sent as soon as
	// the reply shows up finds it.
	if res != nil && outcome != agent.Failed {
		b.remember(s.base, q.ConvKey, agent.Turn{Question: q.Text, Answer: res.Answer, SQL: res.FinalSQL}, q.ConvTTL, attrs)
	}
	// The answer is recorded as soon as it is posted, before its CSV is
	// uploaded, so that a ✅ put on it as it shows up finds it.
	d := b.deliver(s.base, q, res, r, attrs, func(ts string) {
		if verifiable(q, res) {
			b.recordAnswer(s.base, q, ts, res, attrs)
		}
	})
	chartDone := "none"
	if d.err == nil && d.form != formFailure {
		chartDone = b.attachChart(s.base, q, res, d.ts, attrs)
	}

	attrs = append(attrs,
		slog.String("outcome", string(outcome)),
		slog.Duration("queued", start.Sub(queuedAt)),
		slog.Duration("elapsed", elapsed),
		slog.String("reply", string(d.form)),
		slog.String("csv", d.csv),
		slog.String("chart", chartDone),
		slog.String("reply_ts", d.ts),
	)
	if res != nil {
		attrs = append(attrs, slog.Int("steps", res.Steps), slog.Int("rows", len(res.Rows)),
			slog.Int("statements", len(res.Statements)), slog.String("provider", res.Provider),
			slog.Int("prompt_tokens", res.Tokens.Prompt), slog.Int("completion_tokens", res.Tokens.Completion))
	}
	if d.err != nil {
		b.log.LogAttrs(s.base, slog.LevelError, "bot: post reply failed", append(attrs, slog.Any("err", d.err))...)
		return
	}
	b.log.LogAttrs(s.base, slog.LevelInfo, "bot: question answered", attrs...)
}

// A replyForm is the form in which a reply was posted.
type replyForm string

const (
	formFull    replyForm = "full"    // as rendered
	formCompact replyForm = "compact" // the smaller form, after Slack refused the full one
	formFailure replyForm = "failure" // the fixed failure sentence, after Slack refused both
)

// A delivery is what became of one reply.
type delivery struct {
	ts   string // the reply's ts; "" when nothing was posted
	form replyForm
	csv  string // "none", "attached", "cut" (attached, cut at MaxCSVBytes) or "failed"
	err  error  // why nothing was posted
}

// deliver posts r, the reply to q, and its CSV, and makes sure that exactly
// one reply is delivered and that what it promises is true:
//
//   - A reply Slack refuses for its content or size (invalid_blocks,
//     msg_too_long, msg_blocks_too_long, …) is sent once more in a smaller
//     form: the answer, the SQL and "the rows are in the attached file", as
//     plain text, with the CSV attached. If Slack refuses that too, or
//     refuses the reply for another reason, the fixed failure sentence is
//     posted instead.
//   - Rate limits (HTTP 429, or ok:false "ratelimited") are waited out and
//     retried (see call).
//   - When the CSV the reply promises cannot be uploaded, the reply is
//     edited to say so; if even that fails, a line in the thread says it.
//
// posted is called with the reply's ts once it is posted (in full or in the
// smaller form, not the failure sentence), before its CSV is uploaded.
func (b *Bot) deliver(ctx context.Context, q question, res *agent.Result, r reply, attrs []slog.Attr, posted func(ts string)) delivery {
	d := delivery{form: formFull, csv: "none"}
	d.ts, d.err = b.post(ctx, q.Channel, q.ThreadTS, r)
	if isContentRefusal(d.err) && res != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: Slack refused the reply's content; sending the smaller form",
			append(attrs, slog.Any("err", d.err))...)
		r, d.form = renderCompact(res, b.cfg.MaxCSVBytes), formCompact
		d.ts, d.err = b.post(ctx, q.Channel, q.ThreadTS, r)
	}
	var refused slack.SlackErrorResponse
	if errors.As(d.err, &refused) {
		// Slack refused the message itself, so it was not posted: say that
		// something went wrong, once.
		b.log.LogAttrs(ctx, slog.LevelError, "bot: Slack refused the reply; posting the failure sentence",
			append(attrs, slog.String("form", string(d.form)), slog.Any("err", d.err))...)
		r, d.form = renderFailure(failInternal), formFailure
		d.ts, d.err = b.post(ctx, q.Channel, q.ThreadTS, r)
	}
	if d.err != nil {
		return d
	}
	if d.form != formFailure {
		posted(d.ts)
	}
	if r.CSV == nil {
		return d
	}
	d.csv = "attached"
	if r.CSVCut {
		d.csv = "cut"
	}
	uerr := b.upload(ctx, q.Channel, q.ThreadTS, r)
	if uerr == nil {
		return d
	}
	d.csv = "failed"
	b.log.LogAttrs(ctx, slog.LevelWarn, "bot: CSV upload failed; correcting the reply", append(attrs, slog.Any("err", uerr))...)
	err := errors.New("bot: no form of the reply without the CSV")
	if r.NoCSV != nil {
		err = b.update(ctx, q.Channel, d.ts, *r.NoCSV)
	}
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: editing the reply failed; saying it in the thread", append(attrs, slog.Any("err", err))...)
		thread := q.ThreadTS
		if thread == "" {
			thread = d.ts // a DM's reply at the top level: say it under the reply
		}
		if _, err := b.post(ctx, q.Channel, thread, renderNotice(csvFailedText)); err != nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "bot: post failed", append(attrs, slog.Any("err", err))...)
		}
	}
	return d
}

// isContentRefusal reports whether Slack refused a message for what it
// holds or its size, which a smaller message can fix.
func isContentRefusal(err error) bool {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return false
	}
	switch se.Err {
	case "invalid_blocks", "invalid_blocks_format", "msg_too_long", "msg_blocks_too_long", "too_many_attachments", "invalid_attachments":
		return true
	}
	return false
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
		if res.Provider != "" && res.Provider != agent.RecordedProvider {
			b.clearConfigFault() // a provider answered: whatever refused before has been fixed
		}
		return renderResult(res, b.cfg.MaxCSVBytes), res.Outcome
	}
	if errors.Is(err, agent.ErrNoModel) {
		// Not a fault: the deployment has no model, and the user is told how to add one.
		b.log.LogAttrs(s.base, slog.LevelInfo, "bot: no model configured for this question", attrs...)
		return noModelReply(res), agent.Failed
	}
	var pe *agent.ProviderError
	if errors.As(err, &pe) && pe.Misconfigured() {
		// Not a passing failure: the provider refused the key, the model or
		// the URL, and asking again will not help until someone fixes it.
		b.noteConfigFault(pe.Provider, pe.Status)
		b.log.LogAttrs(s.base, slog.LevelError, "bot: the model provider refused the configuration",
			append(attrs, slog.String("provider", pe.Provider), slog.Int("status", pe.Status), slog.Any("err", err))...)
		return renderFailure(failMisconfigured), agent.Failed
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
		b.met.refusals.WithLabelValues(string(agent.LayerModel)).Inc()
	}
}

// post sends r to channel (in thread threadTS unless empty) and returns its ts.
func (b *Bot) post(ctx context.Context, channel, threadTS string, r reply) (string, error) {
	opts := []slack.MsgOption{
		slack.MsgOptionText(r.Text, false),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	}
	if len(r.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(r.Blocks...))
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

// update replaces the message ts in channel with r.
func (b *Bot) update(ctx context.Context, channel, ts string, r reply) error {
	opts := []slack.MsgOption{slack.MsgOptionText(r.Text, false)}
	if len(r.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(r.Blocks...))
	}
	return b.call(ctx, func(ctx context.Context) error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
}

// postEphemeral shows r to user only, in channel (in thread threadTS unless
// empty; Slack shows it there only if the thread has replies already).
func (b *Bot) postEphemeral(ctx context.Context, channel, threadTS, user string, r reply) error {
	opts := []slack.MsgOption{slack.MsgOptionText(r.Text, false)}
	if len(r.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(r.Blocks...))
	}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	return b.call(ctx, func(ctx context.Context) error {
		_, err := b.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// upload shares r's CSV in channel (and thread) with files upload v2, as a
// plain file: Slack shows a .csv as a spreadsheet-like file, while a snippet
// (snippet_type) is limited to 1 MB.
func (b *Bot) upload(ctx context.Context, channel, threadTS string, r reply) error {
	return b.call(ctx, func(ctx context.Context) error {
		_, err := b.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader:          bytes.NewReader(r.CSV),
			FileSize:        len(r.CSV),
			Filename:        csvFileName,
			Title:           r.CSVTitle,
			Channel:         channel,
			ThreadTimestamp: threadTS,
		})
		return err
	})
}

// goWorking shows that q is being worked on: on a goroutine of its own
// (tracked), it adds the working reaction to the question, and once the
// returned function is called (the reply is delivered), removes it. Each
// call is made once, without retries, and bounded by reactionTimeout: a
// missing hourglass is not worth delaying anything, so the answer never
// waits for it. The returned function may be called more than once.
func (b *Bot) goWorking(s *session, q question) (done func()) {
	finished := make(chan struct{})
	ref := slack.NewRefToMessage(q.Channel, q.TS)
	b.inflight.Add(1) // the caller is a tracked goroutine, so the count is above 0
	go func() {
		defer b.inflight.Done()
		added := b.react(s.base, q, ref, true)
		select {
		case <-finished:
		case <-s.base.Done():
			return
		}
		if added {
			b.react(s.base, q, ref, false)
		}
	}()
	return sync.OnceFunc(func() { close(finished) })
}

// react adds (or removes) the working reaction, once, within reactionTimeout,
// and reports whether the reaction is there (for add) or gone (for remove).
// Failures only matter to the log.
func (b *Bot) react(ctx context.Context, q question, ref slack.ItemRef, add bool) bool {
	ctx, cancel := context.WithTimeout(ctx, reactionTimeout)
	defer cancel()
	var err error
	if add {
		err = b.api.AddReactionContext(ctx, workingReaction, ref)
	} else {
		err = b.api.RemoveReactionContext(ctx, workingReaction, ref)
	}
	var se slack.SlackErrorResponse
	if err == nil || (errors.As(err, &se) && (se.Err == "already_reacted" || se.Err == "no_reaction")) {
		return true
	}
	b.log.LogAttrs(ctx, slog.LevelWarn, "bot: reaction failed", append(logAttrs(q), slog.Bool("add", add), slog.Any("err", err))...)
	return false
}

// call runs one Web API call (each HTTP request is bounded by the HTTP
// client's timeout) and retries it when Slack rate limits it: after the
// Retry-After of an HTTP 429, or after a second for an HTTP 200 {"ok":
// false, "error": "ratelimited"}, which carries none. It retries at most
// rateLimitRetries times, each wait at most maxRetryAfter.
func (b *Bot) call(ctx context.Context, f func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		wait, limited := rateLimitWait(err)
		if !limited || attempt == rateLimitRetries {
			return err
		}
		t := time.NewTimer(min(max(wait, time.Second), maxRetryAfter))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// rateLimitWait reports whether err is Slack rate limiting a call, in
// either of its forms, and how long it asked to wait (0: it did not say).
func rateLimitWait(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && se.Err == "ratelimited" {
		return 0, true
	}
	return 0, false
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
	sb.WriteString("A :white_check_mark: on one of my answers marks it verified (if you are one of the people chosen to verify).\n")
	sb.WriteString("*Commands:* `" + cmd + " tables` lists what I can read · `" + cmd + " verified` lists the verified answers · `" +
		cmd + " eval` shows the latest evaluation report · `" + cmd + " help` shows this.")
	return sb.String()
}
