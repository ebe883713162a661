package slacktest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// An assistant thread starts with assistant_thread_started, as slack-go
// parses it, and its status, prompts and title are checked as Slack
// documents them: required arguments, a channel and thread that exist, at
// most four prompts with a title and a message, a short status, the scope.
func TestAssistantThreads(t *testing.T) {
	s := newServer(t, slacktest.AppManifest(manifest(
		[]string{"chat:write", "im:history", "assistant:write"},
		[]string{"message.im", "assistant_thread_started"}, nil)))
	c := connected(t, s)
	api := c.api
	ctx := testContext(t)

	thread, _, err := s.StartAssistantThread(ctx, "D1", "U1")
	if err != nil {
		t.Fatal(err)
	}
	_, inner := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	started, ok := inner.(*slackevents.AssistantThreadStartedEvent)
	if !ok || started.AssistantThread.ChannelID != "D1" || started.AssistantThread.UserID != "U1" || started.AssistantThread.ThreadTimeStamp != thread {
		t.Fatalf("event %T %+v; want assistant_thread_started for D1, U1, %s", inner, inner, thread)
	}

	status := func(p slack.AssistantThreadsSetStatusParameters) string {
		return slackErr(api.SetAssistantThreadsStatusContext(ctx, p))
	}
	for _, tt := range []struct {
		name string
		p    slack.AssistantThreadsSetStatusParameters
		want string
	}{
		{"no channel", slack.AssistantThreadsSetStatusParameters{ThreadTS: thread, Status: "is thinking..."}, "invalid_arguments"},
		{"no thread", slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", Status: "is thinking..."}, "invalid_arguments"},
		{"unknown channel", slack.AssistantThreadsSetStatusParameters{ChannelID: "C9", ThreadTS: thread, Status: "is thinking..."}, "channel_not_found"},
		{"malformed thread", slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: "yesterday", Status: "is thinking..."}, "invalid_thread_ts"},
		{"unknown thread", slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: "1600000000.000100", Status: "is thinking..."}, "invalid_thread_ts"},
		{"long status", slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: thread, Status: strings.Repeat("x", slacktest.MaxStatusChars+1)}, "invalid_arguments"},
		{"11 loading messages", slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: thread, Status: "x", LoadingMessages: strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")}, "invalid_arguments"},
		{"status", slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: thread, Status: "is thinking..."}, ""},
	} {
		if got := status(tt.p); got != tt.want {
			t.Errorf("setStatus, %s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := s.Status("D1", thread); got != "is thinking..." {
		t.Errorf("status %q after setStatus", got)
	}
	if got := status(slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: thread}); got != "" || s.Status("D1", thread) != "" {
		t.Errorf("an empty status: %q, status now %q; want it cleared", got, s.Status("D1", thread))
	}
	status(slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: thread, Status: "is thinking..."})
	if _, _, err := api.PostMessageContext(ctx, "D1", slack.MsgOptionText("42", false), slack.MsgOptionTS(thread)); err != nil {
		t.Fatal(err)
	}
	if got := s.Status("D1", thread); got != "" {
		t.Errorf("status %q after a reply in the thread, want it cleared as Slack does", got)
	}

	prompts := func(ps ...slack.AssistantThreadsPrompt) string {
		return slackErr(api.SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
			ChannelID: "D1", ThreadTS: thread, Title: "Try asking", Prompts: ps}))
	}
	p := slack.AssistantThreadsPrompt{Title: "Sales", Message: "How many sales in June?"}
	if got := prompts(); got != "invalid_arguments" {
		t.Errorf("no prompts: %q, want invalid_arguments", got)
	}
	if got := prompts(p, p, p, p, p); got != "invalid_arguments" {
		t.Errorf("5 prompts: %q, want invalid_arguments", got)
	}
	if got := prompts(p, slack.AssistantThreadsPrompt{Title: "no message"}); got != "invalid_arguments" {
		t.Errorf("a prompt without a message: %q, want invalid_arguments", got)
	}
	if got := prompts(p, p, p, p); got != "" {
		t.Errorf("4 prompts: %q", got)
	}

	title := func(ch, ts, title string) string {
		return slackErr(api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: ch, ThreadTS: ts, Title: title}))
	}
	if got := title("D1", thread, ""); got != "invalid_arguments" {
		t.Errorf("empty title: %q", got)
	}
	if got := title("D1", "", "June"); got != "invalid_arguments" {
		t.Errorf("title without a thread: %q", got)
	}
	if got := title("D1", thread, "June sales"); got != "" {
		t.Errorf("title: %q", got)
	}

	calls := s.AssistantCalls()
	var methods []string
	for _, c := range calls {
		methods = append(methods, strings.TrimPrefix(c.Method, "assistant.threads."))
	}
	if strings.Join(methods, " ") != "setStatus setStatus setStatus setSuggestedPrompts setTitle" {
		t.Errorf("successful calls %v", methods)
	}
	if last := calls[len(calls)-1]; last.Title != "June sales" || last.Channel != "D1" || last.ThreadTS != thread {
		t.Errorf("setTitle recorded as %+v", last)
	}
	if pc := calls[3]; len(pc.Prompts) != 4 || pc.Prompts[0] != (slacktest.Prompt{Title: "Sales", Message: "How many sales in June?"}) || pc.Title != "Try asking" {
		t.Errorf("prompts recorded as %+v", pc)
	}
}

// Without assistant:write, prompts and titles are refused; a status still
// goes through with chat:write, which Slack accepts for it. An app that does
// not subscribe to assistant_thread_started never gets it.
func TestAssistantScopes(t *testing.T) {
	s := newServer(t, slacktest.AppManifest(manifest([]string{"chat:write", "im:history"}, []string{"message.im"}, nil)))
	api := webClient(s)
	ctx := testContext(t)
	if _, _, err := s.StartAssistantThread(ctx, "D1", "U1"); !errors.Is(err, slacktest.ErrNotSubscribed) {
		t.Fatalf("StartAssistantThread without the event: %v, want ErrNotSubscribed", err)
	}
	// A thread of the app's own in the DM takes a status.
	if _, _, err := api.PostMessageContext(ctx, "D1", slack.MsgOptionText("root", false)); err != nil {
		t.Fatal(err)
	}
	thread := s.Messages()[0].TS
	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: thread, Status: "is thinking..."}); err != nil {
		t.Errorf("setStatus with chat:write: %v", err)
	}
	err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: "D1", ThreadTS: thread, Title: "x"})
	if slackErr(err) != "missing_scope" {
		t.Errorf("setTitle without assistant:write: %v, want missing_scope", err)
	}
	err = api.SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: "D1", ThreadTS: thread,
		Prompts: []slack.AssistantThreadsPrompt{{Title: "a", Message: "b"}}})
	if slackErr(err) != "missing_scope" {
		t.Errorf("setSuggestedPrompts without assistant:write: %v, want missing_scope", err)
	}
}
