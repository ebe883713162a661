package slacktest_test

import (
	"errors"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// TestReactionEvents: a person's reaction on one of the bot's messages
// reaches a slack-go client as Slack sends it: reaction_added and
// reaction_removed, with the reacting user, the reaction's name, the item
// (type message, channel, ts), the item's author (item_user) and an
// event_ts of its own.
func TestReactionEvents(t *testing.T) {
	s, c, ts := botMessage(t, manifest(
		[]string{"app_mentions:read", "chat:write", "reactions:read"},
		[]string{"app_mention", "reaction_added", "reaction_removed"}, nil))
	ctx := testContext(t)

	if _, err := s.SendEvent(ctx, slacktest.ReactionAddedEvent("C1", "U2", "white_check_mark", ts)); err != nil {
		t.Fatal(err)
	}
	_, inner := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	added, ok := inner.(*slackevents.ReactionAddedEvent)
	if !ok {
		t.Fatalf("inner event is %T, want *slackevents.ReactionAddedEvent", inner)
	}
	if added.Type != "reaction_added" || added.User != "U2" || added.Reaction != "white_check_mark" ||
		added.ItemUser != s.BotUserID() || added.Item.Type != "message" || added.Item.Channel != "C1" ||
		added.Item.Timestamp != ts || added.EventTimestamp == "" || added.EventTimestamp == ts {
		t.Errorf("reaction_added = %+v, want U2's white_check_mark on the bot's message %s in C1, with an event_ts of its own", added, ts)
	}

	if _, err := s.SendEvent(ctx, slacktest.ReactionRemovedEvent("C1", "U2", "white_check_mark", ts)); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	removed, ok := inner.(*slackevents.ReactionRemovedEvent)
	if !ok {
		t.Fatalf("inner event is %T, want *slackevents.ReactionRemovedEvent", inner)
	}
	if removed.Type != "reaction_removed" || removed.User != "U2" || removed.Reaction != "white_check_mark" ||
		removed.ItemUser != s.BotUserID() || removed.Item.Channel != "C1" || removed.Item.Timestamp != ts {
		t.Errorf("reaction_removed = %+v", removed)
	}

	// Slack sends reactions only on messages that exist.
	if _, err := s.SendEvent(ctx, slacktest.ReactionAddedEvent("C1", "U2", "white_check_mark", "1600000000.000001")); err == nil {
		t.Error("a reaction on a message that does not exist was sent")
	}
}

// botMessage starts a fake Slack granting manifest, connects a client, and
// posts a message as the bot in C1, whose ts it returns.
func botMessage(t *testing.T, manifest []byte) (*slacktest.Server, *socketClient, string) {
	t.Helper()
	s := newServer(t, slacktest.AppManifest(manifest))
	c := connected(t, s)
	s.Join("C1")
	_, ts, err := c.api.PostMessageContext(testContext(t), "C1", slack.MsgOptionText("42 orders", false))
	if err != nil {
		t.Fatal(err)
	}
	return s, c, ts
}

// TestReactionEventsNeedTheManifest: without the event, or without the
// reactions:read scope the event needs, Slack delivers no reaction.
func TestReactionEventsNeedTheManifest(t *testing.T) {
	for _, m := range [][]byte{
		manifest([]string{"chat:write", "reactions:read"}, []string{"reaction_removed"}, nil),
		manifest([]string{"chat:write"}, []string{"reaction_added", "reaction_removed"}, nil),
	} {
		s, _, ts := botMessage(t, m)
		if _, err := s.SendEvent(testContext(t), slacktest.ReactionAddedEvent("C1", "U2", "white_check_mark", ts)); !errors.Is(err, slacktest.ErrNotSubscribed) {
			t.Errorf("manifest %s: %v, want ErrNotSubscribed", m, err)
		}
	}
}
