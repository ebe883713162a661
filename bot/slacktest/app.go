package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrNotSubscribed is returned, wrapped, by SendEvent and SendSlash when the
// app's manifest (see AppManifest) does not subscribe to the event, or does
// not declare the slash command or the commands scope: Slack would never
// deliver it, so a test that relies on it would pass here and fail there.
var ErrNotSubscribed = errors.New("slacktest: the app's manifest does not subscribe to this")

// AppManifest makes the fake grant the app exactly what manifest (the JSON
// app manifest, as `sqlbot manifest` prints it) asks for: the bot scopes in
// oauth_config.scopes.bot, the events in
// settings.event_subscriptions.bot_events and the commands in
// features.slash_commands. A Web API method whose scope is not granted then
// answers {"ok": false, "error": "missing_scope", "needed": …, "provided": …},
// as Slack does, and SendEvent and SendSlash refuse what Slack would not
// deliver (ErrNotSubscribed): an event the manifest does not subscribe to,
// or whose scope it lacks (reactions:read for reaction_added, …). A manifest that does not parse is recorded as
// granting nothing, and NewServer fails the test.
//
// Without this option every scope, event and command is granted.
func AppManifest(manifest []byte) Option {
	return func(c *config) {
		var m struct {
			Features struct {
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
			} `json:"settings"`
		}
		g := &grants{scopes: map[string]bool{}, events: map[string]bool{}, commands: map[string]bool{}}
		if err := json.Unmarshal(manifest, &m); err != nil {
			g.err = fmt.Errorf("slacktest: parse app manifest: %w", err)
		}
		for _, s := range m.OAuthConfig.Scopes.Bot {
			g.scopes[s] = true
		}
		for _, e := range m.Settings.EventSubscriptions.BotEvents {
			g.events[e] = true
		}
		for _, sc := range m.Features.SlashCommands {
			g.commands[sc.Command] = true
		}
		c.grants = g
	}
}

// Clock sets the fake's clock, which decides when a slash command's
// response_url expires (30 minutes after the command was sent). A test that
// wants to see a response_url expire passes a clock it can move forward.
// Without this option the fake uses time.Now.
func Clock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// grants is what the app's manifest grants; nil grants everything.
type grants struct {
	err      error
	scopes   map[string]bool
	events   map[string]bool
	commands map[string]bool
}

func (g *grants) scope(s string) bool { return g == nil || g.scopes[s] }
func (g *grants) event(e string) bool {
	return g == nil || (g.events[e] && (eventScope(e) == "" || g.scopes[eventScope(e)]))
}
func (g *grants) command(c string) bool { return g == nil || (g.commands[c] && g.scopes["commands"]) }

// provided lists the granted scopes, as missing_scope reports them.
func (g *grants) provided() string {
	var l []string
	for s := range g.scopes {
		l = append(l, s)
	}
	slices.Sort(l)
	return strings.Join(l, ",")
}

// eventScope is the bot scope Slack requires for subscribing to bot event
// e, or "" if the fake knows none: without it, the event is never
// delivered.
func eventScope(e string) string {
	switch e {
	case "app_mention":
		return "app_mentions:read"
	case "message.im":
		return "im:history"
	case "message.channels":
		return "channels:history"
	case "message.groups":
		return "groups:history"
	case "message.mpim":
		return "mpim:history"
	case "reaction_added", "reaction_removed":
		return "reactions:read"
	}
	return ""
}

// neededScope is the bot scope that method needs with these arguments, or ""
// for a method that needs none (auth.test; apps.connections.open is checked
// by its app-level token).
func neededScope(method string, args map[string][]string) string {
	get := func(k string) string {
		if v := args[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	switch method {
	case "chat.postMessage", "chat.postEphemeral", "chat.update":
		return "chat:write"
	case "reactions.add", "reactions.remove":
		return "reactions:write"
	case "files.getUploadURLExternal", "files.completeUploadExternal":
		return "files:write"
	case "users.info":
		return "users:read"
	case "assistant.threads.setStatus":
		return "chat:write" // or assistant:write, which Slack still accepts (see serve)
	case "assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle":
		return "assistant:write"
	case "conversations.open":
		if strings.Contains(get("users"), ",") {
			return "mpim:write"
		}
		return "im:write"
	case "conversations.replies":
		switch ch := get("channel"); {
		case strings.HasPrefix(ch, "D"):
			return "im:history"
		case strings.HasPrefix(ch, "G"):
			return "groups:history"
		}
		return "channels:history"
	}
	return ""
}

// eventName is the bot event an inner event is delivered under, as the
// manifest's bot_events name it ("app_mention", "message.im", …).
func eventName(typ, channel, channelType string) string {
	if typ != "message" {
		return typ
	}
	switch {
	case channelType == "im" || strings.HasPrefix(channel, "D"):
		return "message.im"
	case channelType == "group" || strings.HasPrefix(channel, "G"):
		return "message.groups"
	case channelType == "mpim":
		return "message.mpim"
	}
	return "message.channels"
}

// Join makes the bot a member of channel, as /invite does. The bot is always
// a member of its DMs (IDs starting with "D"), and an app_mention event sent
// into a channel makes it a member there, since Slack delivers mentions only
// from conversations the app is in. chat.postMessage, chat.postEphemeral,
// chat.update and sharing a file answer not_in_channel elsewhere, unless the
// app has chat:write.public and the channel is public (an ID starting with
// "C").
func (s *Server) Join(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[channel] = true
}

// Leave removes the bot from channel, as /kick or /remove does.
func (s *Server) Leave(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.members, channel)
}

// UserJoin makes the person user a member of channel. Whoever sends an
// event into a channel (a message, a mention, a reaction) or uses a slash
// command there is a member of it already, since Slack takes those only from
// members; a DM's member is the user whose ID it is named after (D0ANN:
// U0ANN). chat.postEphemeral to someone who is not a member answers
// user_not_in_channel, as in Slack.
func (s *Server) UserJoin(channel, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.people[msgKey{channel, user}] = true
}

// UserLeave removes the person user from channel, as leaving it does; in a
// DM it does nothing.
func (s *Server) UserLeave(channel, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.people, msgKey{channel, user})
}

// userInLocked reports whether the person user is a member of channel.
func (s *Server) userInLocked(channel, user string) bool {
	if isDM(channel) && len(user) > 1 && channel[1:] == user[1:] {
		return true
	}
	return s.people[msgKey{channel, user}]
}

// noteUserLocked records that user, who did something in channel, is a
// member there.
func (s *Server) noteUserLocked(channel, user string) {
	if channel != "" && user != "" && !isDM(channel) {
		s.people[msgKey{channel, user}] = true
	}
}

// IsMember reports whether the bot is a member of channel.
func (s *Server) IsMember(channel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isMemberLocked(channel)
}

func (s *Server) isMemberLocked(channel string) bool {
	return isDM(channel) || s.members[channel]
}

// canPostLocked reports whether the bot may post into channel: it is a member
// there, or it has chat:write.public and the channel is public.
func (s *Server) canPostLocked(channel string) bool {
	return s.isMemberLocked(channel) ||
		(strings.HasPrefix(channel, "C") && s.cfg.grants != nil && s.cfg.grants.scope("chat:write.public"))
}

// A Hold keeps one Web API call waiting (see HoldNext).
type Hold struct {
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

// Arrived is closed when the held call has reached the fake.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held call go on to be answered. It is idempotent.
func (h *Hold) Release() {
	h.once.Do(func() { close(h.release) })
}

// HoldNext makes the next call to method (one that passes the token check)
// wait, before it is answered, until the returned Hold is released or the
// Server is closed; Calls records it once it is answered. A test uses it to
// show that something happens while a call is still under way. Holds queue
// like faults, and a held call then meets the next queued fault.
func (s *Server) HoldNext(method string) *Hold {
	h := &Hold{arrived: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds[method] = append(s.holds[method], h)
	return h
}

// wait blocks a call held by h until it is released or ctx is done.
func (h *Hold) wait(ctx context.Context) {
	close(h.arrived)
	select {
	case <-h.release:
	case <-ctx.Done():
	}
}
