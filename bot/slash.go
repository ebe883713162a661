package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/slack-go/slack"
)

// slackHooksHost is where Slack's response_url points; a response_url is
// only followed there or to the configured API host (a local fake in tests).
const slackHooksHost = "hooks.slack.com"

// evalState lets one evaluation run at a time; requests made while it runs
// wait for its report.
type evalState struct {
	mu      sync.Mutex
	running bool
	waiting []slack.SlashCommand
}

// onSlash answers the slash command (already acknowledged): `help`,
// `tables`, `eval`; anything else gets the help.
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
	case "", "help", "tables", "eval":
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
	if report, ok := b.rep.Latest(s.work); ok {
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

	b.respond(s, cmd, renderNotice(evalStarted), false)
	report, err := b.rep.Run(s.work)

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
