package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"sqlbot/agent/present"
)

// Slack's AI-app surface. With the assistant view in the manifest, a person
// opens sqlbot in Slack's assistant container: Slack starts a thread in the
// DM and sends assistant_thread_started, and the bot offers suggested
// prompts there (Config.Prompts: questions it answers from what it has
// recorded or verified). A question in such a thread (a DM message in a
// thread) shows Slack's own status while it is worked on, cleared once the
// reply is delivered, and the first one titles the thread. These calls are
// courtesies: each is made once, bounded by reactionTimeout, and a failure
// is only logged; the answer never waits for them.

// The texts of the assistant surface. Slack shows a status as "sqlbot <status>".
const (
	assistantStatus  = "is looking into the data..."
	promptsTitle     = "Try asking"
	maxPrompts       = 4  // Slack shows at most four suggested prompts
	maxPromptTitle   = 40 // characters of a prompt's button
	maxThreadTitle   = 80 // characters of a thread's title
	maxPromptMessage = DefaultMaxQuestionChars
)

// onAssistantStarted offers suggested prompts in a new assistant thread, on
// a tracked goroutine, once per thread (a redelivered event is skipped).
func (b *Bot) onAssistantStarted(s *session, at slackevents.AssistantThread) {
	if at.ChannelID == "" || at.ThreadTimeStamp == "" {
		return
	}
	attrs := []slog.Attr{slog.String("channel", at.ChannelID), slog.String("thread_ts", at.ThreadTimeStamp)}
	if !b.claim(s.base, "assistant:"+at.ChannelID+":"+at.ThreadTimeStamp, attrs) {
		return
	}
	if b.cfg.Prompts == nil && len(b.cfg.Verifiers) == 0 {
		return
	}
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		ctx, cancel := context.WithTimeout(s.base, reactionTimeout)
		defer cancel()
		params := slack.AssistantThreadsSetSuggestedPromptsParameters{
			ChannelID: at.ChannelID, ThreadTS: at.ThreadTimeStamp, Title: promptsTitle,
		}
		seen := map[string]bool{}
		for _, q := range b.suggestions(ctx, attrs) {
			q = present.OneLine(q)
			if q == "" || seen[strings.ToLower(q)] || len(params.Prompts) == maxPrompts {
				continue
			}
			seen[strings.ToLower(q)] = true
			params.AddPrompt(present.Clip(q, maxPromptTitle), present.Clip(q, maxPromptMessage))
		}
		if len(params.Prompts) == 0 {
			return
		}
		if err := b.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params); err != nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "bot: suggested prompts failed",
				slog.String("channel", at.ChannelID), slog.String("thread_ts", at.ThreadTimeStamp), slog.Any("err", err))
		}
	}()
}

// suggestions returns the questions to offer in a new assistant thread,
// best first: the most recently verified ones, then Config.Prompts. A
// verified question is offered only when Config.Verifiers names who may
// verify: their ✅ is a deliberate choice to share it, whereas with anyone
// verifying, a question asked in one channel would be shown to everybody.
// Answers verified on other data or under another policy are left out. If
// the Store fails, only Config.Prompts are offered, and it is logged.
func (b *Bot) suggestions(ctx context.Context, attrs []slog.Attr) []string {
	var out []string
	if len(b.cfg.Verifiers) > 0 {
		list, err := b.state.ListVerified(ctx, maxPrompts*4)
		if err != nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "bot: state store failed to list verified answers; suggesting only the recorded questions", append(attrs, slog.Any("err", err))...)
		}
		for _, v := range list {
			if v.Source == b.cfg.Source {
				out = append(out, v.Question)
			}
		}
	}
	if b.cfg.Prompts != nil {
		out = append(out, b.cfg.Prompts(ctx)...)
	}
	return out
}

// goAssistant shows, for a question in an assistant thread, that it is being
// worked on: on a goroutine of its own (tracked), it titles the thread with
// the question when it is the thread's first, and sets the status; once the
// returned function is called (the reply is delivered), it clears the
// status. For any other question it does nothing. The returned function may
// be called more than once.
func (b *Bot) goAssistant(s *session, q question) (done func()) {
	if !q.Assistant {
		return func() {}
	}
	first := len(b.history(s.base, q.ConvKey, logAttrs(q))) == 0
	finished := make(chan struct{})
	b.inflight.Add(1) // the caller is a tracked goroutine, so the count is above 0
	go func() {
		defer b.inflight.Done()
		if first {
			b.assistantCall(s.base, q, "title", func(ctx context.Context) error {
				return b.api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{
					ChannelID: q.Channel, ThreadTS: q.ThreadTS, Title: present.Clip(q.Text, maxThreadTitle)})
			})
		}
		set := b.assistantCall(s.base, q, "status", func(ctx context.Context) error {
			return b.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
				ChannelID: q.Channel, ThreadTS: q.ThreadTS, Status: assistantStatus})
		})
		select {
		case <-finished:
		case <-s.base.Done():
			return
		}
		if set {
			// Slack clears the status when the reply is posted; clearing it
			// here too covers a reply that went elsewhere or not at all.
			b.assistantCall(s.base, q, "clear status", func(ctx context.Context) error {
				return b.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
					ChannelID: q.Channel, ThreadTS: q.ThreadTS})
			})
		}
	}()
	return sync.OnceFunc(func() { close(finished) })
}

// assistantCall makes one assistant.threads call for q, once, within
// reactionTimeout, and reports whether it succeeded; a failure is logged.
func (b *Bot) assistantCall(ctx context.Context, q question, what string, f func(context.Context) error) bool {
	ctx, cancel := context.WithTimeout(ctx, reactionTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "bot: assistant "+what+" failed", append(logAttrs(q), slog.Any("err", err))...)
		return false
	}
	return true
}
