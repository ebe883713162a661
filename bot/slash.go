package bot

import (
	"context"
	"errors"
	"fmt"
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

// subLabel keeps unknown subcommands (free text) out of the log.
func subLabel(sub string) string {
	switch sub {
	case "", "help", "tables", "eval":
		return sub
	}
	return "unknown"
}

// onEval posts the latest evaluation report, or runs one (one at a time)
// and posts its report to everyone who asked while it ran.
func (b *Bot) onEval(s *session, cmd slack.SlashCommand) {
	if b.rep == nil {
		b.respond(s, cmd, renderNotice("Evaluation isn't set up in this deployment: it needs a question set for this database. From a terminal, `sqlbot eval --questions FILE` runs one."), false)
		return
	}
	if report, ok := b.rep.Latest(s.work); ok {
		b.respond(s, cmd, renderNotice(report), true)
		return
	}
	b.eval.mu.Lock()
	if b.eval.running {
		b.eval.waiting = append(b.eval.waiting, cmd)
		b.eval.mu.Unlock()
		b.respond(s, cmd, renderNotice("An evaluation is running now; I'll post its report here when it's done."), false)
		return
	}
	b.eval.running = true
	b.eval.waiting = []slack.SlashCommand{cmd}
	b.eval.mu.Unlock()

	b.respond(s, cmd, renderNotice("There's no evaluation report yet, so I'm running one now; I'll post it here when it's done."), false)
	report, err := b.rep.Run(s.work)

	b.eval.mu.Lock()
	waiting := b.eval.waiting
	b.eval.running, b.eval.waiting = false, nil
	b.eval.mu.Unlock()

	ok := err == nil && strings.TrimSpace(report) != ""
	r := renderNotice(report)
	if !ok {
		if err == nil {
			err = errors.New("bot: the evaluation returned an empty report")
		}
		b.log.ErrorContext(s.base, "bot: evaluation failed", "err", err)
		r = renderFailure(failInternal)
		if s.work.Err() != nil {
			r = renderFailure(failShutdown)
		}
	}
	for _, w := range waiting {
		b.respond(s, w, r, ok) // a report for the channel; a failure only for who asked
	}
}

// respond answers a slash command through its response_url (ephemeral
// unless inChannel), or, without a usable one or if it fails, with
// chat.postMessage in the channel when inChannel and else with
// chat.postEphemeral to the user: a private reply never becomes public.
func (b *Bot) respond(s *session, cmd slack.SlashCommand, r reply, inChannel bool) {
	attrs := []any{"channel", cmd.ChannelID, "user", cmd.UserID, "in_channel", inChannel}
	if b.usableResponseURL(cmd.ResponseURL) {
		kind := slack.ResponseTypeEphemeral
		if inChannel {
			kind = slack.ResponseTypeInChannel
		}
		msg := &slack.WebhookMessage{Text: r.Text, Blocks: &slack.Blocks{BlockSet: r.Blocks}, ResponseType: kind}
		err := b.call(s.base, func(ctx context.Context) error {
			return slack.PostWebhookCustomHTTPContext(ctx, cmd.ResponseURL, b.hc, msg)
		})
		if err == nil {
			return
		}
		b.log.WarnContext(s.base, "bot: response_url failed; posting instead", append(attrs, "err", err)...)
	}
	var err error
	if inChannel {
		_, err = b.post(s.base, cmd.ChannelID, "", r)
	} else {
		err = b.postEphemeral(s.base, cmd.ChannelID, cmd.UserID, r)
	}
	if err != nil {
		b.log.WarnContext(s.base, "bot: slash command reply failed", append(attrs, "err", err)...)
	}
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

// hostOf is the host (with port) of a URL.
func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", fmt.Errorf("no host in %q", raw)
	}
	return u.Host, nil
}
