package bot

import (
	"encoding/json"
	"fmt"
	"strings"
)

// botScopes are the OAuth scopes the bot token needs, and no more:
//
//	app_mentions:read  the app_mention event
//	im:history         the message.im event (questions in a DM)
//	chat:write         chat.postMessage (answers, notices), chat.postEphemeral (a slash
//	                   command's private reply when its response_url fails)
//	reactions:write    reactions.add / reactions.remove (the working hourglass)
//	reactions:read     the reaction_added / reaction_removed events (a ✅ verifies an answer)
//	files:write        files.getUploadURLExternal / files.completeUploadExternal (the CSV, the chart)
//	assistant:write    assistant.threads.setSuggestedPrompts / setTitle (the assistant view;
//	                   setStatus takes chat:write)
//	commands           the slash command
//
// auth.test needs no scope; apps.connections.open uses the app-level token
// (connections:write, granted when that token is made, not in the manifest);
// a response_url needs no token. Threads are remembered in memory, so no
// *:history scope for reading channels is needed.
func botScopes() []string {
	return []string{"app_mentions:read", "assistant:write", "chat:write", "commands", "files:write", "im:history", "reactions:read", "reactions:write"}
}

// botEvents are the bot events the app subscribes to. The assistant events
// need no scope of their own.
func botEvents() []string {
	return []string{"app_mention", "assistant_thread_context_changed", "assistant_thread_started", "message.im", "reaction_added", "reaction_removed"}
}

type manifest struct {
	DisplayInformation struct {
		Name            string `json:"name"`
		Description     string `json:"description"`
		LongDescription string `json:"long_description"`
		BackgroundColor string `json:"background_color"`
	} `json:"display_information"`
	Features struct {
		AppHome struct {
			HomeTabEnabled             bool `json:"home_tab_enabled"`
			MessagesTabEnabled         bool `json:"messages_tab_enabled"`
			MessagesTabReadOnlyEnabled bool `json:"messages_tab_read_only_enabled"`
		} `json:"app_home"`
		BotUser struct {
			DisplayName  string `json:"display_name"`
			AlwaysOnline bool   `json:"always_online"`
		} `json:"bot_user"`
		SlashCommands []manifestCommand `json:"slash_commands"`
		AssistantView struct {
			AssistantDescription string `json:"assistant_description"`
		} `json:"assistant_view"`
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
		Interactivity struct {
			IsEnabled bool `json:"is_enabled"`
		} `json:"interactivity"`
		OrgDeployEnabled     bool `json:"org_deploy_enabled"`
		SocketModeEnabled    bool `json:"socket_mode_enabled"`
		TokenRotationEnabled bool `json:"token_rotation_enabled"`
	} `json:"settings"`
}

type manifestCommand struct {
	Command      string `json:"command"`
	Description  string `json:"description"`
	UsageHint    string `json:"usage_hint"`
	ShouldEscape bool   `json:"should_escape"`
}

// CheckSlashCommand reports whether cmd is what Slack accepts as a command
// name: "/" then 1 to 31 lowercase letters, digits, - or _. New and
// Manifest apply it; it is the one statement of the rule.
func CheckSlashCommand(cmd string) error {
	name, ok := strings.CutPrefix(cmd, "/")
	valid := ok && len(name) >= 1 && len(name) <= 31
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			valid = false
		}
	}
	if !valid {
		return fmt.Errorf("bot: slash command %q: want / and up to 31 lowercase letters, digits, - or _", cmd)
	}
	return nil
}

// Manifest returns the Slack app manifest (JSON, which Slack accepts as well
// as YAML) for an app with the slash command slashCommand (default
// DefaultSlashCommand): Socket Mode on, the bot events and exactly the
// scopes the bot uses, and the assistant view (Slack's AI-app container).
// Paste it at api.slack.com/apps → Create
// New App → From an app manifest.
func Manifest(slashCommand string) ([]byte, error) {
	if slashCommand == "" {
		slashCommand = DefaultSlashCommand
	}
	if err := CheckSlashCommand(slashCommand); err != nil {
		return nil, err
	}
	var m manifest
	m.DisplayInformation.Name = "sqlbot"
	m.DisplayInformation.Description = "Answers questions about a database, with the SQL that produced every answer."
	m.DisplayInformation.LongDescription = "sqlbot answers questions about a SQLite database in plain words. " +
		"A language model writes the SQL; the bot runs it read-only, behind a statement guard, a database authorizer " +
		"and a read-only connection, so the data is never changed. Every answer shows the SQL that produced it and a " +
		"preview of the rows, with the full result as a CSV file when it is long. Every refusal says what was refused, " +
		"by which check and why. Mention the bot in a channel to get an answer in a thread, or send it a direct message."
	m.DisplayInformation.BackgroundColor = "#1d3557"
	m.Features.AppHome.MessagesTabEnabled = true
	m.Features.BotUser.DisplayName = "sqlbot"
	m.Features.BotUser.AlwaysOnline = true
	m.Features.SlashCommands = []manifestCommand{{
		Command:     slashCommand,
		Description: "Help, the tables I can read, the verified answers, or the latest evaluation report",
		UsageHint:   "help | tables | verified | eval",
	}}
	m.Features.AssistantView.AssistantDescription = "Ask about the data in plain words: I answer with the figure, the SQL I ran and the rows, and I never change the data."
	m.OAuthConfig.Scopes.Bot = botScopes()
	m.Settings.EventSubscriptions.BotEvents = botEvents()
	m.Settings.SocketModeEnabled = true
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bot: encode manifest: %w", err)
	}
	return append(out, '\n'), nil
}
