package bot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"sqlbot/agent/present"
	"sqlbot/bot/state"
)

// limitLength is the label of sqlbot_rate_limited_total for a question
// longer than MaxQuestionChars; the other labels are the state.Rule of the
// limit that turned a question away.
const limitLength = "length"

// takeQuestion claims the message of key, as the first replica to take
// it among every replica sharing the Store, and if it is the first, asks
// whether its question from user is within the limits, counting it if it
// is: both in one call to the Store (one transaction of the state file).
// It is asked on ctx, not the socket's: an envelope acknowledged just
// before shutdown is still decided. If the Store fails, the message is
// taken and its question accepted, and the failure logged: a question
// answered twice is better than one never answered, a limit is a courtesy
// to the model's budget, and a question is not lost to a fault of ours.
func (b *Bot) takeQuestion(ctx context.Context, key, user string, attrs []slog.Attr) (first bool, v state.Verdict) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	first, v, err := b.state.Take(ctx, key, seenTTL, user, b.limits)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: state store failed to take the question; answering it",
			append(attrs, slog.Any("err", err))...)
		return true, state.Verdict{}
	}
	return first, v
}

// LengthText is the polite reply for a question longer than maxChars, on
// every surface that takes questions (Slack, the web page and API).
func LengthText(chars, maxChars int) string {
	return fmt.Sprintf("Your question is %s characters long; I can take up to %s. Could you ask it more briefly?",
		present.Thousands(chars), present.Thousands(maxChars))
}

// LimitText is the polite reply for a question that a rate limit turned
// away, on every surface that takes questions; "" for RuleNone.
func LimitText(v state.Verdict) string {
	switch v.Rule {
	case state.RuleUserMinute:
		return fmt.Sprintf("You've asked %s in the last minute; you can ask again in %s.", present.Plural(v.Count, "question"), waitText(v.Wait))
	case state.RuleUserDay:
		return fmt.Sprintf("You've asked %s in the last 24 hours, which is the daily limit; you can ask again in %s.", present.Plural(v.Count, "question"), waitText(v.Wait))
	case state.RuleGlobalDay:
		return fmt.Sprintf("I've taken %s from everyone in the last 24 hours, which is my daily limit; I can take new ones again in %s.", present.Plural(v.Count, "question"), waitText(v.Wait))
	}
	return ""
}

// waitText is "42 s", "3 min", "2 h 5 min", always rounded up so that a user
// who waits that long is accepted.
func waitText(d time.Duration) string {
	switch {
	case d <= time.Second:
		return "1 s"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int((d+time.Minute-1)/time.Minute))
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}
