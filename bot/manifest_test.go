package bot_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"sqlbot/agent"
	"sqlbot/bot"
	"sqlbot/bot/slacktest"
)

// manifestDoc is the part of the manifest the tests read.
type manifestDoc struct {
	Features struct {
		AppHome struct {
			MessagesTabEnabled bool `json:"messages_tab_enabled"`
		} `json:"app_home"`
		SlashCommands []struct {
			Command string `json:"command"`
		} `json:"slash_commands"`
	} `json:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `json:"bot"`
		} `json:"scopes"`
	} `json:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			BotEvents []string `json:"bot_events"`
		} `json:"event_subscriptions"`
		SocketModeEnabled bool `json:"socket_mode_enabled"`
	} `json:"settings"`
}

func readManifest(t *testing.T, cmd string) manifestDoc {
	t.Helper()
	raw, err := bot.Manifest(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var m manifestDoc
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest is not JSON: %v", err)
	}
	return m
}

func TestManifest(t *testing.T) {
	m := readManifest(t, "/askdb")
	if !m.Settings.SocketModeEnabled {
		t.Error("socket mode is off")
	}
	if len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/askdb" {
		t.Errorf("slash commands = %+v, want /askdb", m.Features.SlashCommands)
	}
	if got := m.Settings.EventSubscriptions.BotEvents; !slices.Equal(got, []string{"app_mention", "assistant_thread_context_changed", "assistant_thread_started", "message.im", "reaction_added", "reaction_removed"}) {
		t.Errorf("bot events = %v", got)
	}
	if !m.Features.AppHome.MessagesTabEnabled {
		t.Error("the messages tab is off: users could not DM the bot")
	}
	want := []string{"app_mentions:read", "assistant:write", "chat:write", "commands", "files:write", "im:history", "reactions:read", "reactions:write"}
	if got := slices.Sorted(slices.Values(m.OAuthConfig.Scopes.Bot)); !slices.Equal(got, want) {
		t.Errorf("bot scopes = %v, want exactly %v", got, want)
	}
	if d := readManifest(t, ""); d.Features.SlashCommands[0].Command != bot.DefaultSlashCommand {
		t.Errorf("default command = %q", d.Features.SlashCommands[0].Command)
	}
	for _, bad := range []string{"sqlbot", "/SQLBOT", "/sql bot", "/" + string(make([]byte, 40))} {
		if _, err := bot.Manifest(bad); err == nil {
			t.Errorf("Manifest(%q): no error", bad)
		}
	}
}

// scopeOf is the bot scope each Web API method needs, from Slack's method
// documentation (api.slack.com/methods). "" means no bot scope: auth.test
// needs none, and apps.connections.open is called with the app-level token.
var scopeOf = map[string]string{
	"auth.test":                    "",
	"apps.connections.open":        "",
	"chat.postMessage":             "chat:write",
	"chat.postEphemeral":           "chat:write",
	"chat.update":                  "chat:write",
	"reactions.add":                "reactions:write",
	"reactions.remove":             "reactions:write",
	"files.getUploadURLExternal":   "files:write",
	"files.completeUploadExternal": "files:write",
	"conversations.replies":        "channels:history",
	"users.info":                   "users:read",
	// setStatus takes chat:write (and, for now, assistant:write as well).
	"assistant.threads.setStatus":           "chat:write",
	"assistant.threads.setSuggestedPrompts": "assistant:write",
	"assistant.threads.setTitle":            "assistant:write",
}

// scopeOfEvent is the scope each subscribed bot event needs.
var scopeOfEvent = map[string]string{"app_mention": "app_mentions:read", "message.im": "im:history",
	"reaction_added": "reactions:read", "reaction_removed": "reactions:read",
	"assistant_thread_started": "", "assistant_thread_context_changed": ""}

// TestManifestCoversCalls runs the bot through everything it does (answer
// with a CSV and a chart, reactions, a DM, an assistant thread, a slash
// command whose response_url fails) and checks that every Web API
// method it called is covered by a manifest scope, and that every manifest
// scope is needed by a call, an event or the slash command.
func TestManifestCoversCalls(t *testing.T) {
	ans := newFakeAnswerer()
	ans.answer = func(_ context.Context, req agent.Request) (*agent.Result, error) { return echo(req.Question, 30), nil }
	h := start(t, ans, options{cfg: func(c *bot.Config) {
		c.Prompts = func(context.Context) []string { return []string{"How many orders shipped in June 2025?"} }
	}})
	h.send(slacktest.MentionEvent(channel, user, "everything", "1700009000.000100", ""))
	h.send(slacktest.DMEvent("D0ANN", user, "in private", "1700009000.000200"))
	thread, _, err := h.s.StartAssistantThread(h.ctx(), "D0ANN", user)
	if err != nil {
		t.Fatal(err)
	}
	h.send(slacktest.AssistantMessageEvent("D0ANN", user, "in the assistant", thread))
	h.s.FailNext("response_url", "expired_url") // the reply falls back to chat.postEphemeral
	if _, err := h.s.SendSlash(h.ctx(), slacktest.SlashSpec{Command: "/sqlbot", Text: "tables", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	h.waitMessages(3)
	h.waitEphemeral(1)
	if err := h.s.Wait(h.ctx(), func() bool {
		return len(filesNamed(h.s, ".csv")) == 3 && len(filesNamed(h.s, ".png")) == 3 && len(h.s.Reactions()) == 6 && len(h.s.AssistantCalls()) == 4
	}); err != nil {
		t.Fatal(err)
	}
	h.stop()

	m := readManifest(t, "/sqlbot")
	granted := map[string]bool{}
	for _, s := range m.OAuthConfig.Scopes.Bot {
		granted[s] = true
	}
	used := map[string]bool{"commands": len(m.Features.SlashCommands) > 0}
	for _, ev := range m.Settings.EventSubscriptions.BotEvents {
		used[scopeOfEvent[ev]] = true
	}
	called := map[string]bool{}
	for _, c := range h.s.Calls() {
		called[c.Method] = true
		scope, known := scopeOf[c.Method]
		switch {
		case !known:
			t.Errorf("the bot calls %s, which the scope table does not know: add it and its scope", c.Method)
		case scope != "" && !granted[scope]:
			t.Errorf("the bot calls %s, which needs %s, missing from the manifest", c.Method, scope)
		}
		used[scope] = true
	}
	for s := range granted {
		if !used[s] {
			t.Errorf("the manifest asks for %s, which nothing the bot does needs", s)
		}
	}
	for _, want := range []string{"chat.postMessage", "chat.postEphemeral", "reactions.add", "reactions.remove", "files.getUploadURLExternal", "files.completeUploadExternal",
		"assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle"} {
		if !called[want] {
			t.Errorf("the scenario did not exercise %s", want)
		}
	}
}
