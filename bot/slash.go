package bot

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"sqlbot/evalrun"
)

// slackHooksHost is where Slack's response_url points; a response_url is
// only followed there or to the configured API host (a local fake in tests).
const slackHooksHost = "hooks.slack.com"

// evalState gathers the people waiting for the evaluation that this
// process runs, or waits for another replica to finish.
type evalState struct {
	mu      sync.Mutex
	running bool
	waiting []slack.SlashCommand
}

// The evaluation lock, shared through the Store.
const (
	evalLockTTL    = 2 * time.Minute  // how long a holder that died keeps others waiting, at most
	evalLockExtend = 30 * time.Second // how often the holder extends it
	evalPoll       = 2 * time.Second  // how often a replica waiting for another's report looks for it
)

// onSlash answers the slash command (already acknowledged): `help`,
// `tables`, `verified`, `eval`; anything else gets the help.
func (b *Bot) onSlash(s *session, cmd slack.SlashCommand) {
	sub, _, _ := strings.Cut(strings.TrimSpace(cmd.Text), " ")
	sub = strings.ToLower(sub)
	b.log.LogAttrs(s.base, slog.LevelInfo, "bot: slash command",
		slog.String("command", cmd.Command), slog.String("subcommand", subLabel(sub)),
		slog.String("channel", cmd.ChannelID), slog.String("user", cmd.UserID))
	switch sub {
	case "tables":
		var tables []Table
		if b.cfg.Tables != nil {
			tables = b.cfg.Tables()
		}
		b.respond(s, cmd, renderNotice(tablesText(tables)), false)
	case "eval":
		b.onEval(s, cmd)
	case "verified":
		b.respond(s, cmd, b.onVerified(s, cmd.ChannelID), false)
	case "", "help":
		b.respond(s, cmd, renderNotice(b.helpText()), false)
	default:
		b.respond(s, cmd, renderNotice("I don't know `"+escape(cell(sub))+"`. "+b.helpText()), false)
	}
}

// Texts of `eval`.
const (
	evalNotSetUp = "Evaluation isn't set up for this database: it needs a question file written for it. " +
		"Whoever runs me can set SQLBOT_QUESTIONS to one (the JSON format that `sqlbot eval --questions` reads) and restart me."
	evalStarted = "There's no evaluation report yet, so I'm running one now. I'll send you the report when it's done " +
		"(as a direct message if it takes a while)."
	evalRunning = "An evaluation is running now; I'll send you its report when it's done."
)

// subLabel keeps unknown subcommands (free text) out of the log.
func subLabel(sub string) string {
	switch sub {
	case "", "help", "tables", "eval", "verified":
		return sub
	}
	return "unknown"
}

// onEval sends the latest evaluation report to whoever asked, or runs one
// (one at a time) and sends its report to everyone who asked while it ran.
// A report goes to each person privately (see respond): it can take longer
// than a response_url lives, and the command may come from a channel the
// bot is not a member of.
func (b *Bot) onEval(s *session, cmd slack.SlashCommand) {
	if b.rep == nil {
		b.respond(s, cmd, renderNotice(evalNotSetUp), false)
		return
	}
	key := b.rep.Key()
	if report, ok := b.latestReport(s.work, key); ok {
		b.respond(s, cmd, renderNotice(reportText(report)), false)
		return
	}
	b.eval.mu.Lock()
	if b.eval.running {
		b.eval.waiting = append(b.eval.waiting, cmd)
		b.eval.mu.Unlock()
		b.respond(s, cmd, renderNotice(evalRunning), false)
		return
	}
	b.eval.running = true
	b.eval.waiting = []slack.SlashCommand{cmd}
	b.eval.mu.Unlock()

	report, err := b.evalReport(s, key, func(here bool) {
		if here {
			b.respond(s, cmd, renderNotice(evalStarted), false)
		} else {
			b.respond(s, cmd, renderNotice(evalRunning), false)
		}
	})

	b.eval.mu.Lock()
	waiting := b.eval.waiting
	b.eval.running, b.eval.waiting = false, nil
	b.eval.mu.Unlock()

	var r reply
	if err == nil && report == nil {
		err = errors.New("bot: the evaluation returned no report")
	}
	if err == nil {
		r = renderNotice(reportText(report))
	} else {
		b.log.ErrorContext(s.base, "bot: evaluation failed", "err", err)
		r = renderFailure(failInternal)
		if s.work.Err() != nil {
			r = renderFailure(failShutdown)
		}
	}
	for _, w := range waiting {
		b.respond(s, w, r, true)
	}
}

// evalReport returns a new report for key. It runs the evaluation if it
// takes the evaluation lock, and otherwise waits for the replica that holds
// it to save its report, taking the lock itself if that replica dies (its
// lock expires). announce is called once, before the wait, with whether the
// evaluation runs here. If the Store fails, the evaluation runs here.
func (b *Bot) evalReport(s *session, key string, announce func(here bool)) (*evalrun.Report, error) {
	announced := false
	tell := func(here bool) {
		if !announced {
			announced = true
			announce(here)
		}
	}
	lock := "eval:" + key
	for {
		ctx, cancel := context.WithTimeout(s.work, stateTimeout)
		token, ok, err := b.state.TryLock(ctx, lock, evalLockTTL)
		cancel()
		if err != nil {
			if s.work.Err() != nil {
				return nil, s.work.Err()
			}
			b.log.ErrorContext(s.base, "bot: state store failed to take the evaluation lock; running it here", "err", err)
			token, ok = "", true
		}
		if ok {
			// The replica that held the lock may have saved its report
			// since this one looked.
			if report, found := b.latestReport(s.work, key); found {
				b.unlockEval(s, lock, token)
				return report, nil
			}
			tell(true)
			return b.runEval(s, key, lock, token)
		}
		tell(false)
		t := time.NewTimer(evalPoll)
		select {
		case <-s.work.Done():
			t.Stop()
			return nil, s.work.Err()
		case <-t.C:
		}
		if report, found := b.latestReport(s.work, key); found {
			return report, nil
		}
	}
}

// runEval runs the evaluation while holding lock with token (extending it
// as it runs), saves its report under key and releases the lock. token ""
// holds nothing (the Store failed).
func (b *Bot) runEval(s *session, key, lock, token string) (*evalrun.Report, error) {
	defer b.unlockEval(s, lock, token)
	if token != "" {
		stop := make(chan struct{})
		done := make(chan struct{})
		defer func() { close(stop); <-done }()
		go func() {
			defer close(done)
			t := time.NewTicker(evalLockExtend)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				ctx, cancel := context.WithTimeout(s.base, stateTimeout)
				err := b.state.ExtendLock(ctx, lock, token, evalLockTTL)
				cancel()
				if err != nil {
					b.log.WarnContext(s.base, "bot: could not extend the evaluation lock", "err", err)
				}
			}
		}()
	}
	report, err := b.rep.Run(s.work)
	if err != nil || report == nil {
		return report, err
	}
	data, err := report.JSON()
	if err == nil {
		ctx, cancel := context.WithTimeout(s.base, stateTimeout)
		err = b.state.SaveReport(ctx, key, data)
		cancel()
	}
	if err != nil {
		b.log.ErrorContext(s.base, "bot: could not keep the evaluation report; sending it anyway", "err", err)
	}
	return report, nil
}

// unlockEval releases the evaluation lock; token "" holds nothing.
func (b *Bot) unlockEval(s *session, lock, token string) {
	if token == "" {
		return
	}
	ctx, cancel := context.WithTimeout(s.base, stateTimeout)
	defer cancel()
	if err := b.state.Unlock(ctx, lock, token); err != nil {
		b.log.WarnContext(s.base, "bot: could not release the evaluation lock; it expires by itself", "err", err)
	}
}

// latestReport returns the latest report saved under key, by any replica.
// A report the Store cannot give (or that does not parse) counts as none,
// and is logged.
func (b *Bot) latestReport(ctx context.Context, key string) (*evalrun.Report, bool) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	saved, ok, err := b.state.LatestReport(ctx, key)
	if err != nil {
		b.log.ErrorContext(ctx, "bot: state store failed to give the evaluation report", "err", err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	var report evalrun.Report
	if err := json.Unmarshal(saved.Data, &report); err != nil {
		b.log.ErrorContext(ctx, "bot: the saved evaluation report does not parse; running a new one", "err", err)
		return nil, false
	}
	return &report, true
}

// respond answers a slash command privately, to the person who used it,
// and never in the channel for everyone: a slash command works in channels
// the bot is not a member of. It posts through the command's response_url
// (ephemeral) while that works; Slack takes five posts within 30 minutes. If
// it fails (expired, used up, or Slack is down), it goes on:
//
//   - durable (an evaluation report, sent once the run is over): to a direct
//     message with the person (chat.postMessage with their user ID, which
//     posts in the app's Messages tab and needs no scope beyond chat:write),
//     else chat.postEphemeral in the channel;
//   - otherwise: chat.postEphemeral in the channel (where the bot is a
//     member), else a direct message.
func (b *Bot) respond(s *session, cmd slack.SlashCommand, r reply, durable bool) {
	attrs := []any{"channel", cmd.ChannelID, "user", cmd.UserID, "durable", durable}
	if b.usableResponseURL(cmd.ResponseURL) {
		msg := &slack.WebhookMessage{Text: r.Text, ResponseType: slack.ResponseTypeEphemeral}
		if len(r.Blocks) > 0 {
			msg.Blocks = &slack.Blocks{BlockSet: r.Blocks}
		}
		err := b.call(s.base, func(ctx context.Context) error {
			return slack.PostWebhookCustomHTTPContext(ctx, cmd.ResponseURL, b.hc, msg)
		})
		if err == nil {
			return
		}
		b.log.WarnContext(s.base, "bot: response_url failed; replying another way", append(attrs, "err", err)...)
	}
	dm := func() error {
		_, err := b.post(s.base, cmd.UserID, "", r) // a user ID as the channel: the app's DM with them
		return err
	}
	ephemeral := func() error { return b.postEphemeral(s.base, cmd.ChannelID, "", cmd.UserID, r) }
	ways := []func() error{ephemeral, dm}
	if durable {
		ways = []func() error{dm, ephemeral}
	}
	var errs []error
	for _, way := range ways {
		err := way()
		if err == nil {
			return
		}
		errs = append(errs, err)
	}
	b.log.WarnContext(s.base, "bot: slash command reply failed", append(attrs, "err", errors.Join(errs...))...)
}

// usableResponseURL accepts Slack's hooks host over https, or the API's own
// host (a local fake in tests): the bot does not post to arbitrary URLs.
func (b *Bot) usableResponseURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return false
	}
	return (u.Scheme == "https" && u.Host == slackHooksHost) ||
		((u.Scheme == "https" || u.Scheme == "http") && u.Host == b.apiHost)
}
