package bot

import (
	"context"
	"log/slog"
)

// messageKey is the Store's claim key of a message (its channel and ts):
// Slack redelivers an event under a new envelope and event_id, and a
// mention in a DM arrives both as app_mention and as message.im, but it is
// one message either way.
func messageKey(channel, ts string) string { return "message:" + channel + ":" + ts }

// claim reports whether this replica is the first to take key (an event's
// other than a message's, which takeQuestion claims), among every replica
// sharing the Store.
// If the Store fails, it is taken: a question answered twice is better than
// one never answered, and the failure is logged.
func (b *Bot) claim(ctx context.Context, key string, attrs []slog.Attr) bool {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	first, err := b.state.Claim(ctx, key, seenTTL)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: state store failed to record the message; answering it",
			append(attrs, slog.Any("err", err))...)
		return true
	}
	return first
}
