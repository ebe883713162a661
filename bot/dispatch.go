package bot

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/state"
)

// A session is one Run: its Socket Mode client and its contexts.
type session struct {
	sm *socketmode.Client

	smCtx      context.Context // the socket; cancelled first on shutdown
	stopSocket context.CancelFunc

	// base keeps Run's ctx values but not its cancellation, so that Slack
	// calls made while draining (posting the last answers) still run. It is
	// cancelled when the grace after a timed-out drain ends (or Run returns).
	base     context.Context
	stopBase context.CancelFunc

	// work is for answers and evaluations, within base; it is cancelled when
	// the drain times out (or Run returns).
	work     context.Context
	stopWork context.CancelFunc

	// decisions are what Run's loop hands to the decider (see decide):
	// the work on an event that needs the Store, in arrival order. Only
	// Run's goroutine sends, and it closes decisions when its loop ends.
	decisions chan func()
}

// decisionQueue is how many events may wait for the decider before Run's
// loop waits for it (and acks with it): far more than a burst of mentions.
const decisionQueue = 1024

func newSession(ctx context.Context, b *Bot) *session {
	s := &session{}
	s.base, s.stopBase = context.WithCancel(context.WithoutCancel(ctx))
	s.smCtx, s.stopSocket = context.WithCancel(ctx)
	s.work, s.stopWork = context.WithCancel(s.base)
	s.sm = socketmode.New(b.api, socketmode.OptionLog(discardLogger{}))
	s.decisions = make(chan func(), decisionQueue)
	return s
}

// decide runs s's decisions in the order Run's loop made them until the
// loop closes the channel; Run starts it on a goroutine it counts. The
// Store is asked here rather than on the loop, so that an envelope's ack
// never waits for the Store's calls about the envelopes before it (a state
// file's writes, or Redis's round trips, one after another), while the
// claims, the limits and the places in the queue keep the arrival order.
func (b *Bot) decide(s *session) {
	for f := range s.decisions {
		f()
	}
}

// discardLogger silences slack-go's own logger (it logs payloads in debug mode).
type discardLogger struct{}

func (discardLogger) Output(int, string) error { return nil }

// dispatch handles one Socket Mode event on Run's goroutine: it acknowledges
// the envelope at once and filters it; the decider (see decide) then
// de-duplicates, applies the limits and starts the work on a tracked
// goroutine. It never blocks on Slack's Web API, the Answerer or the Store.
func (b *Bot) dispatch(s *session, evt socketmode.Event) {
	ctx := s.smCtx
	if r := evt.Request; r != nil && r.EnvelopeID != "" {
		b.ack(s, r.EnvelopeID)
	}
	switch evt.Type {
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		if !b.connected.Swap(true) {
			b.log.InfoContext(ctx, "bot: connected to Slack")
		}
		if r := evt.Request; evt.Type == socketmode.EventTypeHello && r != nil && r.NumConnections > 1 && b.cfg.StateHealth == nil {
			// Slack spreads the app's events over all its connections. Without
			// a shared store, state is shared only by processes on one
			// state file.
			b.log.WarnContext(ctx, "bot: Slack reports more than one Socket Mode connection for this app; "+
				"unless every process uses the same state file, rate limits, de-duplication of redelivered events "+
				"and thread memory are per process: share them between replicas with SQLBOT_REDIS_URL",
				"num_connections", r.NumConnections)
		}
	case socketmode.EventTypeConnecting, socketmode.EventTypeDisconnect:
		b.connected.Store(false)
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		b.connected.Store(false)
		if e, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
			b.log.WarnContext(ctx, "bot: connection failed; retrying", "attempt", e.Attempt, "backoff", e.Backoff, "err", e.ErrorObj)
		}
	case socketmode.EventTypeErrorBadMessage:
		b.ackUnparsed(s, evt)
	case socketmode.EventTypeEventsAPI:
		b.onEventsAPI(s, evt)
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok {
			return
		}
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			b.onSlash(s, cmd)
		}()
	}
}

// ackUnparsed acknowledges an envelope that slack-go could not parse (an
// event type it does not know), so that Slack does not redeliver it forever.
func (b *Bot) ackUnparsed(s *session, evt socketmode.Event) {
	bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
	if !ok {
		return
	}
	var env struct {
		EnvelopeID string `json:"envelope_id"`
		Type       string `json:"type"`
	}
	if json.Unmarshal(bad.Message, &env) != nil || env.EnvelopeID == "" {
		return
	}
	b.log.WarnContext(s.smCtx, "bot: unparsable envelope acknowledged", "envelope_id", env.EnvelopeID, "type", env.Type, "err", bad.Cause)
	b.ack(s, env.EnvelopeID)
}

// ack acknowledges an envelope, waiting at most ackTimeout. slack-go hands
// the ack to the goroutine that writes to the socket; while that one is
// stuck (a connection that takes no writes, or one being replaced) an
// unbounded ack would stop this goroutine from reading events, which stops
// slack-go's reader, which stops the socket: a deadlock until the
// connection dies. An envelope left unacknowledged is redelivered by Slack,
// and the redelivery is answered once (see claim).
func (b *Bot) ack(s *session, envelopeID string) {
	ctx, cancel := context.WithTimeout(s.smCtx, ackTimeout)
	defer cancel()
	if err := s.sm.AckCtx(ctx, envelopeID, nil); err != nil {
		b.log.WarnContext(s.smCtx, "bot: ack failed", "envelope_id", envelopeID, "err", err)
	}
}

func (b *Bot) onEventsAPI(s *session, evt socketmode.Event) {
	api, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || api.Type != slackevents.CallbackEvent {
		return
	}
	var eventID string
	if cb, ok := api.Data.(*slackevents.EventsAPICallbackEvent); ok {
		eventID = cb.EventID
	}
	var q question
	switch ev := api.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		q, ok = fromMention(ev, eventID, b.self)
	case *slackevents.MessageEvent:
		q, ok = fromDM(ev, eventID, b.self)
	case *slackevents.ReactionAddedEvent:
		b.goReaction(s, fromReactionAdded(ev, eventID))
		return
	case *slackevents.ReactionRemovedEvent:
		b.goReaction(s, fromReactionRemoved(ev, eventID))
		return
	case *slackevents.AssistantThreadStartedEvent:
		s.decisions <- func() { b.onAssistantStarted(s, ev.AssistantThread) }
		return
	default: // assistant_thread_context_changed among them: the bot reads no channel
		ok = false
	}
	if !ok {
		return
	}
	retry := 0
	if evt.Request != nil {
		retry = evt.Request.RetryAttempt
	}
	attrs := append(logAttrs(q), slog.Int("retry_attempt", retry))
	s.decisions <- func() { b.take(s, q, attrs) }
}

// take decides, on the decider, what becomes of question q: answered
// (queued for a slot, in arrival order), told of a limit or of what to ask,
// or nothing when another delivery of it was taken.
func (b *Bot) take(s *session, q question, attrs []slog.Attr) {
	ctx := s.smCtx
	// One reply per message, across replicas (see messageKey), and every
	// message the bot would reply to counts against the limits, an empty or
	// too long one too; a user over a limit is told once per window, so a
	// user sending many messages gets a bounded number of posts.
	first, v := b.takeQuestion(s.base, messageKey(q.Channel, q.TS), q.User, attrs)
	if !first {
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: message already taken", attrs...)
		return
	}
	b.met.questions.Inc()
	if v.Rule != state.RuleNone {
		b.met.rateLimited.WithLabelValues(string(v.Rule)).Inc()
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: question limited", append(attrs,
			slog.String("limit", string(v.Rule)), slog.Duration("wait", v.Wait), slog.Bool("told", v.Tell))...)
		if v.Tell {
			b.goNotice(s, q, LimitText(v))
		}
		return
	}
	if q.Text == "" && q.HasFile {
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: a file without a question; saying why not", attrs...)
		b.goNotice(s, q, fileOnlyText)
		return
	}
	if q.Text == "" {
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: empty question; sending help", attrs...)
		b.goNotice(s, q, b.helpText())
		return
	}
	if max := b.cfg.MaxQuestionChars; q.Chars > max {
		b.met.rateLimited.WithLabelValues(limitLength).Inc()
		b.log.LogAttrs(ctx, slog.LevelInfo, "bot: question too long", attrs...)
		b.goNotice(s, q, LengthText(q.Chars, max))
		return
	}
	b.log.LogAttrs(ctx, slog.LevelInfo, "bot: question taken", append(attrs, slog.Int("queued", b.slots.queued()))...)
	slot := b.slots.reserve() // in arrival order, on the decider
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.answer(s, q, slot)
	}()
}

// fileOnlyText is the notice for a message that is only a file.
const fileOnlyText = "I read only the words of a message, not the files attached to it: ask me your question in words."

// goNotice shows a short notice (a limit, the help, …) to q's author only,
// with chat.postEphemeral, on a tracked goroutine. It goes into q's thread
// when q is a reply in one; for a message at the top level it goes beside
// it, since Slack shows an ephemeral message in a thread only once the
// thread has replies. If Slack refuses it, it is logged: a notice meant for
// one person is never posted for everyone instead.
func (b *Bot) goNotice(s *session, q question, mrkdwn string) {
	thread := ""
	if q.InThread {
		thread = q.ThreadTS
	}
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		if err := b.postEphemeral(s.base, q.Channel, thread, q.User, renderNotice(mrkdwn)); err != nil {
			b.log.LogAttrs(s.base, slog.LevelWarn, "bot: post notice failed", append(logAttrs(q), slog.Any("err", err))...)
		}
	}()
}

// logAttrs are the fields logged about a question: ids and sizes, never text.
func logAttrs(q question) []slog.Attr {
	return []slog.Attr{
		slog.String("event_id", q.EventID), slog.String("kind", string(q.Kind)), slog.String("channel", q.Channel),
		slog.String("user", q.User), slog.String("ts", q.TS), slog.Int("chars", q.Chars),
	}
}
