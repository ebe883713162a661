package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Slack's AI-app surface: assistant threads (a user opens the app's
// container; Slack creates a thread in the DM and sends
// assistant_thread_started), and the three calls an app makes in one:
// assistant.threads.setStatus, setSuggestedPrompts and setTitle. The fake
// checks them as Slack documents them: every required argument (a missing
// one is invalid_arguments), channel_id naming a conversation the app can
// post in (channel_not_found), thread_ts naming a thread in it
// (invalid_thread_ts), 1 to MaxSuggestedPrompts prompts each with a title
// and a message, at most MaxLoadingMessages loading messages, and the scope
// (setStatus takes chat:write or assistant:write, the others
// assistant:write). Slack documents no length for a status; the fake refuses
// one longer than MaxStatusChars, so that an app that passes here keeps its
// statuses short.

// Bounds of the assistant calls.
const (
	MaxSuggestedPrompts = 4   // "up to four suggested prompts"
	MaxLoadingMessages  = 10  // "Maximum of 10 messages"
	MaxStatusChars      = 100 // not documented by Slack: the fake's own bound
	MaxTitleChars       = 255 // not documented by Slack: the fake's own bound
)

// A Prompt is one suggested prompt: its title, shown on the button, and
// the message sent when it is clicked.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// An AssistantCall is one successful assistant.threads.* call.
type AssistantCall struct {
	Method   string // "assistant.threads.setStatus", "…setSuggestedPrompts" or "…setTitle"
	Channel  string
	ThreadTS string
	// Status and LoadingMessages are setStatus's; an empty Status clears it.
	Status          string
	LoadingMessages []string
	// Title is setTitle's title, or setSuggestedPrompts' title for its list.
	Title   string
	Prompts []Prompt
}

// AssistantCalls returns every successful assistant.threads.* call, in order.
func (s *Server) AssistantCalls() []AssistantCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.assistantCalls)
}

// Status returns the status the app shows in the thread threadTS of
// channel: the last one set, until it is cleared (an empty status) or the
// app posts in the thread, as in Slack; "" when none shows.
func (s *Server) Status(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses[msgKey{channel, threadTS}]
}

// StartAssistantThread does what Slack does when user opens the app's
// container from its DM channel (an ID starting with "D"): it starts a
// thread there (a root message of subtype assistant_app_thread by the user)
// and sends assistant_thread_started with the user, the channel and the
// thread's ts. It returns the thread's ts and the envelope ID; with
// AppManifest, an app that does not subscribe to the event gets
// ErrNotSubscribed.
func (s *Server) StartAssistantThread(ctx context.Context, channel, user string) (threadTS, envelopeID string, err error) {
	if !isDM(channel) || !isChannelID(channel) {
		return "", "", fmt.Errorf("slacktest: start assistant thread: %q is not a DM channel", channel)
	}
	s.mu.Lock()
	ts := s.newTSLocked()
	s.storeLocked(&stored{channel: channel, ts: ts, user: user, subtype: "assistant_app_thread", text: "New chat"})
	s.mu.Unlock()
	raw, err := json.Marshal(map[string]any{
		"type": "assistant_thread_started",
		"assistant_thread": map[string]any{
			"user_id":    user,
			"context":    map[string]any{"team_id": teamID, "enterprise_id": nil},
			"channel_id": channel,
			"thread_ts":  ts,
		},
		"event_ts": ts,
	})
	if err != nil {
		return "", "", err
	}
	id, err := s.SendEvent(ctx, EventSpec{Raw: raw})
	return ts, id, err
}

// AssistantMessageEvent returns a message user writes in the assistant
// thread threadTS of DM channel channel (see StartAssistantThread).
func AssistantMessageEvent(channel, user, text, threadTS string) EventSpec {
	return EventSpec{Type: "message", ChannelType: "im", Channel: channel, User: user, Text: text, ThreadTS: threadTS}
}

// assistantThread checks channel_id and thread_ts (required unless
// optional) for an assistant.threads.* call.
func (s *Server) assistantThread(form url.Values, optionalThread bool) (channel, thread string, e *apiError) {
	channel, thread = form.Get("channel_id"), form.Get("thread_ts")
	if channel == "" || !form.Has("thread_ts") && !optionalThread {
		return "", "", errorf("invalid_arguments")
	}
	if !isChannelID(channel) || !s.canPost(channel) {
		return "", "", errorf("channel_not_found")
	}
	if thread == "" && optionalThread {
		return channel, "", nil
	}
	if _, ok := parseTS(thread); !ok {
		return "", "", errorf("invalid_thread_ts")
	}
	s.mu.Lock()
	root := s.findLocked(channel, thread)
	s.mu.Unlock()
	if root == nil || root.threadTS != "" && root.threadTS != root.ts {
		return "", "", errorf("invalid_thread_ts")
	}
	return channel, thread, nil
}

func (s *Server) assistantSetStatus(form url.Values) (map[string]any, *apiError) {
	channel, thread, e := s.assistantThread(form, false)
	if e != nil {
		return nil, e
	}
	if !form.Has("status") {
		return nil, errorf("invalid_arguments")
	}
	status := form.Get("status")
	if utf8.RuneCountInString(status) > MaxStatusChars {
		return nil, errorf("invalid_arguments", fmt.Sprintf("[ERROR] status is longer than %d characters", MaxStatusChars))
	}
	var loading []string
	if raw := form.Get("loading_messages"); raw != "" {
		// slack-go sends them comma-separated; Slack's JSON form is an array.
		if json.Unmarshal([]byte(raw), &loading) != nil {
			loading = strings.Split(raw, ",")
		}
		if len(loading) > MaxLoadingMessages {
			return nil, errorf("invalid_arguments", fmt.Sprintf("[ERROR] more than %d loading_messages", MaxLoadingMessages))
		}
	}
	s.mu.Lock()
	k := msgKey{channel, thread}
	if status == "" {
		delete(s.statuses, k)
	} else {
		s.statuses[k] = status
	}
	s.assistantCalls = append(s.assistantCalls, AssistantCall{Method: "assistant.threads.setStatus", Channel: channel,
		ThreadTS: thread, Status: status, LoadingMessages: loading})
	s.notifyLocked()
	s.mu.Unlock()
	return nil, nil
}

func (s *Server) assistantSetSuggestedPrompts(form url.Values) (map[string]any, *apiError) {
	channel, thread, e := s.assistantThread(form, true)
	if e != nil {
		return nil, e
	}
	raw := form.Get("prompts")
	if raw == "" {
		return nil, errorf("invalid_arguments")
	}
	var prompts []Prompt
	if err := json.Unmarshal([]byte(raw), &prompts); err != nil {
		return nil, errorf("invalid_arguments", "[ERROR] prompts must be a JSON array of {title, message}")
	}
	if len(prompts) == 0 || len(prompts) > MaxSuggestedPrompts {
		return nil, errorf("invalid_arguments", fmt.Sprintf("[ERROR] 1 to %d prompts, got %d", MaxSuggestedPrompts, len(prompts)))
	}
	for _, p := range prompts {
		if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
			return nil, errorf("invalid_arguments", "[ERROR] every prompt needs a title and a message")
		}
	}
	s.mu.Lock()
	s.assistantCalls = append(s.assistantCalls, AssistantCall{Method: "assistant.threads.setSuggestedPrompts",
		Channel: channel, ThreadTS: thread, Title: form.Get("title"), Prompts: prompts})
	s.notifyLocked()
	s.mu.Unlock()
	return nil, nil
}

func (s *Server) assistantSetTitle(form url.Values) (map[string]any, *apiError) {
	channel, thread, e := s.assistantThread(form, false)
	if e != nil {
		return nil, e
	}
	title := form.Get("title")
	if strings.TrimSpace(title) == "" {
		return nil, errorf("invalid_arguments")
	}
	if utf8.RuneCountInString(title) > MaxTitleChars {
		return nil, errorf("invalid_arguments", fmt.Sprintf("[ERROR] title is longer than %d characters", MaxTitleChars))
	}
	s.mu.Lock()
	s.assistantCalls = append(s.assistantCalls, AssistantCall{Method: "assistant.threads.setTitle",
		Channel: channel, ThreadTS: thread, Title: title})
	s.notifyLocked()
	s.mu.Unlock()
	return nil, nil
}
