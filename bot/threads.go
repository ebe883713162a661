package bot

import (
	"context"
	"log/slog"
	"time"

	"sqlbot/agent"
	"sqlbot/bot/state"
)

// Conversation memory: the bot's own earlier answers per thread, kept in the
// Store, so that a follow-up ("and in July?") reaches the answerer with its
// context, whichever replica it lands on.
//
// Kept by the bot rather than read back with conversations.replies: the bot
// only needs its own question/answer pairs (which it has), it saves an API
// call per question, and it needs no channels:history or groups:history
// scope, which would let the app read every message of every channel it is
// in. A conversation the Store has forgotten (expired, or kept by a
// per-process store before a restart) starts afresh, which is safe.
const (
	threadTTL           = 24 * time.Hour // a thread idle this long is forgotten
	directConvTTL       = time.Hour      // a DM's top level is one conversation until idle this long
	directConvKeyPrefix = "dm:"
)

// history returns the earlier turns of conversation conv, oldest first. If
// the Store fails, the question goes without them (logged).
func (b *Bot) history(ctx context.Context, conv string, attrs []slog.Attr) []agent.Turn {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	turns, err := b.state.Turns(ctx, conv)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: state store failed to read the thread; answering without its history",
			append(attrs, slog.Any("err", err))...)
		return nil
	}
	out := make([]agent.Turn, len(turns))
	for i, t := range turns {
		out[i] = agent.Turn{Question: t.Question, Answer: t.Answer, SQL: t.SQL}
	}
	return out
}

// remember appends t to conversation conv, which stays for ttl from now.
// It keeps no more turns than the agent sends.
func (b *Bot) remember(ctx context.Context, conv string, t agent.Turn, ttl time.Duration, attrs []slog.Attr) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	err := b.state.AddTurn(ctx, conv, state.Turn{Question: t.Question, Answer: t.Answer, SQL: t.SQL}, agent.MaxHistoryTurns, ttl)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "bot: state store failed to keep the turn; a follow-up will lack it",
			append(attrs, slog.Any("err", err))...)
	}
}
