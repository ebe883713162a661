package bot

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack/slackevents"

	"sqlbot/agent/present"
)

// A questionKind says where a question was asked: in a channel, mentioning
// the bot, or in a direct message (whose answers stay private).
type questionKind string

const (
	kindMention questionKind = "mention"
	kindDM      questionKind = "dm"
)

// A question is one message for the bot, taken from an event.
type question struct {
	EventID  string
	Kind     questionKind
	User     string
	Channel  string
	TS       string // the question message, for the reaction
	ThreadTS string // where the reply goes; "" is the top level of a DM
	InThread bool   // the message is a reply in a thread (which Slack shows ephemeral messages in)
	HasFile  bool   // the message came with a file (which the bot does not read)
	// Assistant marks a DM in a thread: with the assistant view, Slack's
	// AI-app conversations are threads in the DM (see assistant.go).
	Assistant bool
	ConvKey   string // the conversation it belongs to
	ConvTTL   time.Duration
	Text      string // cleaned: mentions of the bot removed, entities decoded
	Chars     int    // length of Text in characters
}

// fromMention makes a question of an app_mention. ok is false for events the
// bot must not answer: from a bot (itself included), edited or empty of a user.
func fromMention(ev *slackevents.AppMentionEvent, eventID, self string) (question, bool) {
	if ev.BotID != "" || ev.User == "" || ev.User == self || ev.Edited != nil {
		return question{}, false
	}
	thread := ev.ThreadTimeStamp
	if thread == "" {
		thread = ev.TimeStamp
	}
	q := question{
		EventID:  eventID,
		Kind:     kindMention,
		User:     ev.User,
		Channel:  ev.Channel,
		TS:       ev.TimeStamp,
		ThreadTS: thread,
		InThread: ev.ThreadTimeStamp != "" && ev.ThreadTimeStamp != ev.TimeStamp,
		HasFile:  len(ev.Files) > 0,
		ConvKey:  ev.Channel + ":" + thread,
		ConvTTL:  threadTTL,
		Text:     cleanText(ev.Text, self),
	}
	q.Chars = utf8.RuneCountInString(q.Text)
	return q, true
}

// fromDM makes a question of a message a person wrote in a DM with the bot:
// a plain message, one with a file (file_share, which keeps its user and
// text) or a thread reply also sent to the conversation (thread_broadcast).
// ok is false for anything else: other channel types, other subtypes (edits,
// deletions, bot messages, joins), bots, and the bot's own messages echoed
// back.
func fromDM(ev *slackevents.MessageEvent, eventID, self string) (question, bool) {
	switch ev.SubType {
	case "", "file_share", "thread_broadcast":
	default:
		return question{}, false
	}
	if ev.ChannelType != "im" || ev.BotID != "" || ev.User == "" || ev.User == self {
		return question{}, false
	}
	q := question{
		EventID:  eventID,
		Kind:     kindDM,
		User:     ev.User,
		Channel:  ev.Channel,
		TS:       ev.TimeStamp,
		ThreadTS: ev.ThreadTimeStamp, // a DM is answered where it was asked
		InThread: ev.ThreadTimeStamp != "" && ev.ThreadTimeStamp != ev.TimeStamp,
		HasFile:  ev.SubType == "file_share" || (ev.Message != nil && len(ev.Message.Files) > 0),
		ConvKey:  directConvKeyPrefix + ev.Channel,
		ConvTTL:  directConvTTL,
		Text:     cleanText(ev.Text, self),
	}
	if ev.ThreadTimeStamp != "" {
		q.ConvKey, q.ConvTTL = ev.Channel+":"+ev.ThreadTimeStamp, threadTTL
		q.Assistant = true
	}
	q.Chars = utf8.RuneCountInString(q.Text)
	return q, true
}

// cleanText turns a message's text into the question as a person wrote it:
// the bot's own mention is removed, other mentions and links become their
// visible text, and Slack's entities (&amp; &lt; &gt;) are decoded.
func cleanText(s, self string) string {
	var sb strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			sb.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			sb.WriteString(s)
			break
		}
		sb.WriteString(s[:i])
		sb.WriteString(controlText(s[i+1:i+j], self))
		s = s[i+j+1:]
	}
	out := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(sb.String())
	return present.OneLine(out)
}

// controlText is what a <…> sequence shows: <@U1|ann> → @ann, <#C1|sales> →
// #sales, <!here> → @here, <https://x|label> → label, <https://x> → https://x.
func controlText(inner, self string) string {
	target, label, hasLabel := strings.Cut(inner, "|")
	switch {
	case strings.HasPrefix(target, "@"):
		if target[1:] == self {
			return ""
		}
		if hasLabel {
			return "@" + label
		}
		return target
	case strings.HasPrefix(target, "#"):
		if hasLabel {
			return "#" + label
		}
		return target
	case strings.HasPrefix(target, "!"):
		if hasLabel {
			return label
		}
		name, _, _ := strings.Cut(target[1:], "^")
		return "@" + name
	}
	if hasLabel {
		return label
	}
	return strings.TrimPrefix(target, "mailto:")
}
