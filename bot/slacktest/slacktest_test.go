package slacktest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// The fake pings far more often than the client demands, so that no test
// trips slack-go's ping timeout.
const (
	serverPing = 20 * time.Millisecond
	clientPing = 2 * time.Second
	waitLimit  = raceSlowdown * 5 * time.Second
)

func newServer(t *testing.T, opts ...slacktest.Option) *slacktest.Server {
	t.Helper()
	return slacktest.NewServer(t, append([]slacktest.Option{slacktest.PingInterval(serverPing)}, opts...)...)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

func webClient(s *slacktest.Server) *slack.Client {
	return slack.New(s.BotToken(), slack.OptionAPIURL(s.URL), slack.OptionAppLevelToken(s.AppToken()))
}

// socketClient is a real slack-go Socket Mode client running against a fake.
type socketClient struct {
	api    *slack.Client
	sm     *socketmode.Client
	events chan socketmode.Event
	runErr chan error // what RunContext returned
}

func startSocket(t *testing.T, api *slack.Client) *socketClient {
	t.Helper()
	c := &socketClient{
		api:    api,
		sm:     socketmode.New(api, socketmode.OptionPingInterval(clientPing)),
		events: make(chan socketmode.Event, 512),
		runErr: make(chan error, 1),
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.runErr <- c.sm.RunContext(ctx)
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case e := <-c.sm.Events:
				select {
				case c.events <- e:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c
}

// next returns the next event of type typ, skipping others.
func (c *socketClient) next(t *testing.T, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case e := <-c.events:
			if e.Type == typ {
				return e
			}
		case <-timeout:
			t.Fatalf("no %q event within %v", typ, waitLimit)
		}
	}
}

func connected(t *testing.T, s *slacktest.Server) *socketClient {
	t.Helper()
	c := startSocket(t, webClient(s))
	c.next(t, socketmode.EventTypeHello)
	if err := s.WaitConnected(testContext(t)); err != nil {
		t.Fatal(err)
	}
	return c
}

func callback(t *testing.T, e socketmode.Event) (*slackevents.EventsAPICallbackEvent, any) {
	t.Helper()
	api, ok := e.Data.(slackevents.EventsAPIEvent)
	if !ok {
		t.Fatalf("event data is %T, want slackevents.EventsAPIEvent", e.Data)
	}
	cb, ok := api.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok {
		t.Fatalf("events API data is %T, want *EventsAPICallbackEvent", api.Data)
	}
	return cb, api.InnerEvent.Data
}

func slackErr(err error) string {
	var e slack.SlackErrorResponse
	if errors.As(err, &e) {
		return e.Err
	}
	return ""
}

func TestEventsReachClientAndAcksReachServer(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)

	parent := "1700000001.000100"
	tests := []struct {
		name  string
		spec  slacktest.EventSpec
		check func(t *testing.T, inner any)
	}{
		{"mention", slacktest.MentionEvent("C1", "U1", "how many orders?", parent, ""), func(t *testing.T, inner any) {
			m, ok := inner.(*slackevents.AppMentionEvent)
			if !ok {
				t.Fatalf("inner event is %T", inner)
			}
			if m.Text != "<@UBOT> how many orders?" || m.Channel != "C1" || m.User != "U1" ||
				m.TimeStamp != parent || m.EventTimeStamp != parent || m.ThreadTimeStamp != "" {
				t.Errorf("mention = %+v", m)
			}
		}},
		{"mention in thread", slacktest.MentionEvent("C1", "U2", "<@UBOT> and in May?", "", parent), func(t *testing.T, inner any) {
			m, ok := inner.(*slackevents.AppMentionEvent)
			if !ok {
				t.Fatalf("inner event is %T", inner)
			}
			if m.Text != "<@UBOT> and in May?" || m.ThreadTimeStamp != parent || m.TimeStamp == "" || m.TimeStamp == parent {
				t.Errorf("mention = %+v", m)
			}
		}},
		{"dm", slacktest.DMEvent("D1", "U1", "top customers", ""), func(t *testing.T, inner any) {
			m, ok := inner.(*slackevents.MessageEvent)
			if !ok {
				t.Fatalf("inner event is %T", inner)
			}
			if !m.IsIM() || m.Channel != "D1" || m.User != "U1" || m.Text != "top customers" || m.BotID != "" || m.SubType != "" {
				t.Errorf("dm = %+v", m)
			}
		}},
		{"dm edit", slacktest.DMEditEvent("D1", "U1", "top 5 customers", "1700000002.000100"), func(t *testing.T, inner any) {
			m, ok := inner.(*slackevents.MessageEvent)
			if !ok {
				t.Fatalf("inner event is %T", inner)
			}
			if m.SubType != "message_changed" || m.Message == nil || m.Message.Text != "top 5 customers" {
				t.Errorf("edit = %+v", m)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envID, err := s.SendEvent(ctx, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			e := c.next(t, socketmode.EventTypeEventsAPI)
			if e.Request == nil || e.Request.EnvelopeID != envID || e.Request.RetryAttempt != 0 {
				t.Fatalf("request = %+v, want envelope %s, attempt 0", e.Request, envID)
			}
			cb, inner := callback(t, e)
			if cb.EventID == "" || cb.TeamID != "T1" || cb.APIAppID != "A1" {
				t.Errorf("callback = %+v", cb)
			}
			tt.check(t, inner)
			if err := c.sm.AckCtx(ctx, envID, nil); err != nil {
				t.Fatal(err)
			}
			ack, err := s.WaitAck(ctx, envID)
			if err != nil {
				t.Fatal(err)
			}
			if ack.Payload != nil || ack.Dropped || ack.Latency <= 0 {
				t.Errorf("ack = %+v", ack)
			}
		})
	}
}

// TestWireFormat reads the fake's frames with a bare WebSocket client, so the
// JSON shape is checked independently of slack-go's parsing.
func TestWireFormat(t *testing.T) {
	s := newServer(t)
	ctx := testContext(t)

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"apps.connections.open", nil)
	req.Header.Set("Authorization", "Bearer "+s.AppToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var open struct {
		OK  bool   `json:"ok"`
		URL string `json:"url"`
	}
	err = json.NewDecoder(resp.Body).Decode(&open)
	resp.Body.Close()
	if err != nil || !open.OK || !strings.HasPrefix(open.URL, "ws://127.0.0.1:") {
		t.Fatalf("apps.connections.open = %+v, %v", open, err)
	}

	hdr := http.Header{"Origin": {"https://api.slack.com"}}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, open.URL, hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	pings := make(chan struct{}, 100)
	ws.SetPingHandler(func(string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		return nil
	})
	// A ticket opens one connection only.
	if _, resp, err := websocket.DefaultDialer.DialContext(ctx, open.URL, hdr); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second dial with the same ticket: %v, want 401", err)
	}

	frames := make(chan map[string]any, 10)
	go func() {
		defer close(frames)
		for {
			var m map[string]any
			if err := ws.ReadJSON(&m); err != nil {
				return
			}
			frames <- m
		}
	}()
	hello := <-frames
	if hello["type"] != "hello" || hello["num_connections"] != 1.0 {
		t.Errorf("hello = %v", hello)
	}

	envID, err := s.SendEvent(ctx, slacktest.EventSpec{Type: "app_mention", Channel: "C1", User: "U1",
		Text: "<@UBOT> hi", EventID: "Ev42", RetryAttempt: 2, RetryReason: "timeout"})
	if err != nil {
		t.Fatal(err)
	}
	env := <-frames
	for _, k := range []string{"envelope_id", "type", "payload", "accepts_response_payload", "retry_attempt", "retry_reason"} {
		if _, ok := env[k]; !ok {
			t.Errorf("envelope lacks %q: %v", k, env)
		}
	}
	payload, _ := env["payload"].(map[string]any)
	event, _ := payload["event"].(map[string]any)
	if env["envelope_id"] != envID || env["type"] != "events_api" || env["accepts_response_payload"] != false ||
		env["retry_attempt"] != 2.0 || env["retry_reason"] != "timeout" ||
		payload["type"] != "event_callback" || payload["event_id"] != "Ev42" || payload["team_id"] != "T1" ||
		event["type"] != "app_mention" || event["ts"] != event["event_ts"] {
		t.Errorf("envelope = %v", env)
	}

	if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	slash := <-frames
	sp, _ := slash["payload"].(map[string]any)
	for k, v := range sp {
		if _, ok := v.(string); !ok {
			t.Errorf("slash payload %s = %v (%T), want a string", k, v, v)
		}
	}
	if slash["type"] != "slash_commands" || slash["accepts_response_payload"] != true || sp["is_enterprise_install"] != "false" {
		t.Errorf("slash envelope = %v", slash)
	}

	// An ack of 20 KB or more is dropped, as Slack drops it.
	big := fmt.Sprintf(`{"envelope_id":%q,"payload":{"text":%q}}`, envID, strings.Repeat("x", 20*1024))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(big)); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(ctx, func() bool { return len(s.Acks()) == 1 }); err != nil {
		t.Fatal(err)
	}
	if a := s.Acks()[0]; !a.Dropped || a.Size != len(big) {
		t.Errorf("big ack = %+v, want dropped", a)
	}
	select {
	case <-pings:
	case <-ctx.Done():
		t.Error("no ping from the server")
	}
}

func TestPostMessage(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)

	section := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*42* orders", false, false), nil, nil)
	ch, ts, err := api.PostMessageContext(ctx, "C1",
		slack.MsgOptionText("42 orders", false),
		slack.MsgOptionBlocks(section, slack.NewDividerBlock()),
		slack.MsgOptionTS("1700000001.000100"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages()
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v, want 1", msgs)
	}
	m := msgs[0]
	if m.Method != "chat.postMessage" || m.Channel != "C1" || ch != "C1" || m.ThreadTS != "1700000001.000100" ||
		m.Text != "42 orders" || m.TS != ts || ts == "" {
		t.Errorf("message = %+v (channel %s, ts %s)", m, ch, ts)
	}
	var blocks []map[string]any
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil || len(blocks) != 2 || blocks[0]["type"] != "section" {
		t.Errorf("blocks = %s, %v", m.Blocks, err)
	}
	_, ts2, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("again", false))
	if err != nil || ts2 <= ts {
		t.Errorf("second post: ts %s after %s, err %v", ts2, ts, err)
	}

	s.UserJoin("C1", "U1")
	eph, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("only you", false))
	if err != nil || eph == "" {
		t.Fatalf("PostEphemeral = %q, %v", eph, err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("43 orders", false)); err != nil {
		t.Fatal(err)
	}
	msgs = s.Messages()
	if len(msgs) != 3 || msgs[2].Method != "chat.update" || msgs[2].TS != ts || msgs[2].Text != "43 orders" {
		t.Errorf("messages = %+v", msgs)
	}
	// What one person sees is kept apart, with who it was for.
	if e := s.Ephemeral(); len(e) != 1 || e[0].Method != "chat.postEphemeral" || e[0].User != "U1" || e[0].Channel != "C1" ||
		e[0].Text != "only you" || e[0].TS != eph || e[0].Hidden {
		t.Errorf("ephemeral = %+v", e)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1600000000.000001", slack.MsgOptionText("x", false)); slackErr(err) != "message_not_found" {
		t.Errorf("update of a missing message: %v, want message_not_found", err)
	}
}

func TestPostMessageRefusals(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	ctx := testContext(t)
	text := func(n int) string { return strings.Repeat("x", n) }
	section := func(n int) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text(n), false, false), nil, nil)
	}
	var dividers []slack.Block
	for range 51 {
		dividers = append(dividers, slack.NewDividerBlock())
	}
	tests := []struct {
		name    string
		token   string
		channel string
		opts    []slack.MsgOption
		want    string
	}{
		{"no text", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionText("", false)}, "no_text"},
		{"empty blocks and no text", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionBlocks()}, "no_text"},
		{"block without type", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionBlocks(&slack.SectionBlock{})}, "invalid_blocks"},
		{"section text over 3000", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionBlocks(section(3001))}, "invalid_blocks"},
		{"header over 150", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionBlocks(
			slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, text(151), false, false)))}, "invalid_blocks"},
		{"51 blocks", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionBlocks(dividers...)}, "invalid_blocks"},
		{"blocks over 13000", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionBlocks(
			section(2900), section(2900), section(2900), section(2900), section(2000))}, "msg_blocks_too_long"},
		{"not a member", s.BotToken(), "C2", []slack.MsgOption{slack.MsgOptionText("hi", false)}, "not_in_channel"},
		{"text over 40000", s.BotToken(), "C1", []slack.MsgOption{slack.MsgOptionText(text(40001), false)}, "msg_too_long"},
		{"no channel", s.BotToken(), "", []slack.MsgOption{slack.MsgOptionText("hi", false)}, "channel_not_found"},
		{"app token", s.AppToken(), "C1", []slack.MsgOption{slack.MsgOptionText("hi", false)}, "not_allowed_token_type"},
		{"wrong token", "xoxb-wrong", "C1", []slack.MsgOption{slack.MsgOptionText("hi", false)}, "invalid_auth"},
		{"no token", "", "C1", []slack.MsgOption{slack.MsgOptionText("hi", false)}, "not_authed"},
	}
	for _, tt := range tests {
		api := slack.New(tt.token, slack.OptionAPIURL(s.URL))
		_, _, err := api.PostMessageContext(ctx, tt.channel, tt.opts...)
		if got := slackErr(err); got != tt.want {
			t.Errorf("%s: PostMessage error %v, want %s", tt.name, err, tt.want)
		}
	}
	if msgs := s.Messages(); len(msgs) != 0 {
		t.Errorf("refused posts were recorded: %+v", msgs)
	}
	// A block that passes is accepted: the limits are not off by one.
	if _, _, err := webClient(s).PostMessageContext(ctx, "C1", slack.MsgOptionBlocks(section(3000))); err != nil {
		t.Errorf("a 3000-character section: %v", err)
	}
	var be *slacktest.BlockError
	if err := slacktest.CheckBlocks([]byte(`[{"type":"header","text":{"type":"mrkdwn","text":"x"}}]`)); !errors.As(err, &be) || be.Code != "invalid_blocks" {
		t.Errorf("CheckBlocks(mrkdwn header) = %v, want invalid_blocks", err)
	}
	if err := slacktest.CheckBlocks([]byte(`{"type":"divider"}`)); !errors.As(err, &be) || be.Code != "invalid_blocks_format" {
		t.Errorf("CheckBlocks(object) = %v, want invalid_blocks_format", err)
	}
}

func TestThreadHistoryAndReactions(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)
	api := c.api

	parent := "1700000001.000100"
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "orders?", parent, "")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("42", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U2", "and returns?", "", parent)); err != nil {
		t.Fatal(err)
	}
	msgs, more, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || more || msgs[0].Timestamp != parent || msgs[0].User != "U1" || msgs[0].ReplyCount != 2 ||
		msgs[1].BotID != "BBOT" || msgs[1].User != "UBOT" || msgs[1].Text != "42" ||
		msgs[2].User != "U2" || msgs[2].Text != "<@UBOT> and returns?" {
		t.Errorf("replies = %+v", msgs)
	}
	page, more, cursor, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Limit: 2})
	if err != nil || len(page) != 2 || !more || cursor == "" {
		t.Fatalf("first page: %d messages, more %v, cursor %q, %v", len(page), more, cursor, err)
	}
	page, more, _, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Limit: 2, Cursor: cursor})
	if err != nil || len(page) != 1 || more || page[0].User != "U2" {
		t.Errorf("second page: %+v, more %v, %v", page, more, err)
	}
	if _, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: "1600000000.000001"}); slackErr(err) != "thread_not_found" {
		t.Errorf("replies of a missing thread: %v, want thread_not_found", err)
	}

	ref := slack.NewRefToMessage("C1", parent)
	steps := []struct {
		remove bool
		name   string
		ref    slack.ItemRef
		want   string
	}{
		{false, "eyes", ref, ""},
		{false, "eyes", ref, "already_reacted"},
		{false, ":eyes:", ref, "invalid_name"},
		{false, "eyes", slack.NewRefToMessage("C1", "1600000000.000001"), "message_not_found"},
		{true, "eyes", ref, ""},
		{true, "eyes", ref, "no_reaction"},
	}
	for i, st := range steps {
		var err error
		if st.remove {
			err = api.RemoveReactionContext(ctx, st.name, st.ref)
		} else {
			err = api.AddReactionContext(ctx, st.name, st.ref)
		}
		if got := slackErr(err); got != st.want || (st.want == "" && err != nil) {
			t.Errorf("step %d (remove %v, %s): %v, want %q", i, st.remove, st.name, err, st.want)
		}
	}
	want := []slacktest.Reaction{
		{Method: "reactions.add", Channel: "C1", Timestamp: parent, Name: "eyes"},
		{Method: "reactions.remove", Channel: "C1", Timestamp: parent, Name: "eyes"},
	}
	if got := s.Reactions(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reactions = %+v, want %+v", got, want)
	}
}

func TestUploadFile(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)
	content := "region,orders\nwest,42\n"
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("the result", false))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		params slack.UploadFileParameters
	}{
		{"content", slack.UploadFileParameters{Content: content}},
		{"reader", slack.UploadFileParameters{Reader: strings.NewReader(content)}},
	}
	for i, tt := range tests {
		p := tt.params
		p.Filename, p.FileSize, p.Title = "rows.csv", len(content), "All rows"
		p.Channel, p.ThreadTimestamp, p.InitialComment = "C1", parent, "the full result"
		sum, err := api.UploadFileContext(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		files := s.Files()
		if len(files) != i+1 {
			t.Fatalf("%s: %d files recorded, want %d", tt.name, len(files), i+1)
		}
		f := files[i]
		if f.ID != sum.ID || sum.Title != "All rows" || f.Name != "rows.csv" || f.Title != "All rows" ||
			string(f.Content) != content || f.Channel != "C1" || f.ThreadTS != parent ||
			f.InitialComment != "the full result" || f.SnippetType != "" {
			t.Errorf("%s: file %+v, summary %+v", tt.name, f, sum)
		}
	}

	// Announcing the wrong size fails at the upload, and nothing is shared.
	_, err = api.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content) + 1,
		Filename: "rows.csv", Channel: "C1"})
	var sce slack.StatusCodeError
	if !errors.As(err, &sce) || sce.Code != http.StatusBadRequest {
		t.Errorf("upload with a wrong size: %v, want a 400 StatusCodeError", err)
	}
	// Completing a file whose bytes never arrived fails.
	u, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "x.csv", FileSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := url.Parse(u.UploadURL); got == nil || !strings.HasPrefix(s.URL, got.Scheme+"://"+got.Host+"/") {
		t.Errorf("upload URL %s is not on the API's host %s", u.UploadURL, s.URL)
	}
	_, err = api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C1"})
	if slackErr(err) != "file_not_found" {
		t.Errorf("completing a file never uploaded: %v, want file_not_found", err)
	}
	if n := len(s.Files()); n != 2 {
		t.Errorf("%d files recorded after the failures, want 2", n)
	}
}

func TestReconnect(t *testing.T) {
	tests := []struct {
		name string
		cut  func(context.Context, *slacktest.Server) error
	}{
		{"disconnect refresh_requested", func(ctx context.Context, s *slacktest.Server) error {
			return s.Disconnect(ctx, "refresh_requested")
		}},
		{"dropped connection", func(_ context.Context, s *slacktest.Server) error {
			s.DropConnection()
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			c := connected(t, s)
			ctx := testContext(t)
			if err := tt.cut(ctx, s); err != nil {
				t.Fatal(err)
			}
			c.next(t, socketmode.EventTypeHello) // the second connection's
			if err := s.Wait(ctx, func() bool { return s.Connections() == 2 }); err != nil {
				t.Fatalf("connections = %d: %v", s.Connections(), err)
			}
			envID, err := s.SendEvent(ctx, slacktest.DMEvent("D1", "U1", "still there?", ""))
			if err != nil {
				t.Fatal(err)
			}
			if e := c.next(t, socketmode.EventTypeEventsAPI); e.Request.EnvelopeID != envID {
				t.Errorf("got envelope %s, want %s", e.Request.EnvelopeID, envID)
			}
			opens := 0
			for _, call := range s.Calls() {
				if call.Method == "apps.connections.open" {
					opens++
				}
			}
			if opens != 2 {
				t.Errorf("apps.connections.open called %d times, want 2", opens)
			}
		})
	}
}

func TestRedelivery(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)

	first, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "orders?", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	cb1, _ := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	second, err := s.Redeliver(ctx, first, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	e := c.next(t, socketmode.EventTypeEventsAPI)
	cb2, _ := callback(t, e)
	if second == first || e.Request.EnvelopeID != second || e.Request.RetryAttempt != 1 ||
		e.Request.RetryReason != "timeout" || cb2.EventID != cb1.EventID {
		t.Errorf("redelivery: envelope %s (first %s), attempt %d, reason %q, event %s (first %s)",
			e.Request.EnvelopeID, first, e.Request.RetryAttempt, e.Request.RetryReason, cb2.EventID, cb1.EventID)
	}
	if _, err := s.Redeliver(ctx, "no-such-envelope", "timeout"); !errors.Is(err, slacktest.ErrUnknownEnvelope) {
		t.Errorf("Redeliver(unknown) = %v, want ErrUnknownEnvelope", err)
	}
}

// TestRedeliverUnacked checks, without depending on timing, which envelopes
// are redelivered: RedeliverUnackedNow stands for the 3 s passing.
func TestRedeliverUnacked(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)

	// Acked: never redelivered.
	acked, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "one", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.sm.AckCtx(ctx, c.next(t, socketmode.EventTypeEventsAPI).Request.EnvelopeID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitAck(ctx, acked); err != nil {
		t.Fatal(err)
	}
	// Not acked: redelivered with the same event_id, then acked.
	unacked, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "two", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	cb1, _ := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	ids, err := s.RedeliverUnackedNow(ctx)
	if err != nil || len(ids) != 1 || ids[0] == unacked {
		t.Fatalf("RedeliverUnackedNow = %v, %v; want one new envelope", ids, err)
	}
	e := c.next(t, socketmode.EventTypeEventsAPI)
	cb2, _ := callback(t, e)
	if e.Request.EnvelopeID != ids[0] || e.Request.RetryAttempt != 1 || e.Request.RetryReason != "timeout" || cb2.EventID != cb1.EventID {
		t.Fatalf("redelivery: envelope %s, attempt %d, reason %q, event %s; want %s, 1, timeout, %s",
			e.Request.EnvelopeID, e.Request.RetryAttempt, e.Request.RetryReason, cb2.EventID, ids[0], cb1.EventID)
	}
	if err := c.sm.AckCtx(ctx, e.Request.EnvelopeID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitAck(ctx, e.Request.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.RedeliverUnackedNow(ctx); err != nil || len(ids) != 0 {
		t.Errorf("RedeliverUnackedNow after every envelope was acked = %v, %v; want none", ids, err)
	}
	if n := len(s.Sent()); n != 3 {
		t.Errorf("%d envelopes sent, want 3 (one acked, one redelivered once)", n)
	}

	// Never acked: redelivered MaxRetries times, then given up.
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "three", "", "")); err != nil {
		t.Fatal(err)
	}
	for i := range slacktest.MaxRetries + 1 {
		ids, err := s.RedeliverUnackedNow(ctx)
		if want := min(1, slacktest.MaxRetries-i); err != nil || len(ids) != want {
			t.Errorf("round %d: RedeliverUnackedNow = %v, %v; want %d envelopes", i, ids, err, want)
		}
	}
}

// With RedeliverUnacked, the fake redelivers by itself once the delay has
// passed (this waits for it; it asserts nothing about time).
func TestRedeliverUnackedTimer(t *testing.T) {
	s := newServer(t, slacktest.RedeliverUnacked(50*time.Millisecond))
	c := connected(t, s)
	ctx := testContext(t)
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "two", "", "")); err != nil {
		t.Fatal(err)
	}
	cb1, _ := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	e := c.next(t, socketmode.EventTypeEventsAPI)
	if cb2, _ := callback(t, e); e.Request.RetryAttempt != 1 || e.Request.RetryReason != "timeout" || cb2.EventID != cb1.EventID {
		t.Errorf("redelivery: attempt %d, reason %q, event %s; want 1, timeout, %s",
			e.Request.RetryAttempt, e.Request.RetryReason, cb2.EventID, cb1.EventID)
	}
}

func TestFaults(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)

	s.RateLimitNext("chat.postMessage", 1500*time.Millisecond)
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Errorf("rate limited post: %v, want RateLimitedError after 2s", err)
	}
	s.FailNext("chat.postMessage", "channel_not_found")
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false)); slackErr(err) != "channel_not_found" {
		t.Errorf("failed post: %v, want channel_not_found", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("third post: %v", err)
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Error != "ratelimited" || calls[1].Error != "channel_not_found" || calls[2].Error != "" ||
		calls[2].Token != s.BotToken() || calls[2].Form.Get("text") != "hi" {
		t.Errorf("calls = %+v", calls)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("%d messages recorded, want 1", n)
	}
}

func TestConnectionRefusals(t *testing.T) {
	tests := []struct {
		name   string
		token  string
		status int
		want   func(error) bool
	}{
		{"wrong app token", "xapp-wrong", 0, func(err error) bool { return slackErr(err) == "invalid_auth" }},
		{"404", "", http.StatusNotFound, func(err error) bool {
			var sce slack.StatusCodeError
			return errors.As(err, &sce) && sce.Code == http.StatusNotFound
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			token := s.AppToken()
			if tt.token != "" {
				token = tt.token
			}
			if tt.status != 0 {
				s.StatusNext("apps.connections.open", tt.status)
			}
			api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL), slack.OptionAppLevelToken(token))
			c := startSocket(t, api)
			select {
			case err := <-c.runErr:
				if !tt.want(err) {
					t.Errorf("RunContext = %v", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("RunContext kept retrying")
			}
			if n := s.Connections(); n != 0 {
				t.Errorf("%d connections, want 0", n)
			}
		})
	}

	// slack-go does not count not_allowed_token_type (a bot token where the
	// app token belongs) as fatal: it retries with backoff, forever.
	s := newServer(t)
	api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL), slack.OptionAppLevelToken(s.BotToken()))
	c := startSocket(t, api)
	ctx := testContext(t)
	err := s.Wait(ctx, func() bool { return len(s.Calls()) >= 3 })
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range s.Calls() {
		if call.Error != "not_allowed_token_type" {
			t.Errorf("call = %+v, want not_allowed_token_type", call)
		}
	}
	select {
	case err := <-c.runErr:
		t.Errorf("RunContext returned %v, want it to keep retrying", err)
	default:
	}

	// Other statuses are retried with backoff, and the client connects.
	s = newServer(t)
	s.StatusNext("apps.connections.open", http.StatusServiceUnavailable)
	connected(t, s)
	if n := len(s.Calls()); n != 2 {
		t.Errorf("%d calls, want 2 apps.connections.open", n)
	}
}

func TestSlashCommandAndResponseURL(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)

	envID, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "tables", UserID: "U1", ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	e := c.next(t, socketmode.EventTypeSlashCommand)
	cmd, ok := e.Data.(slack.SlashCommand)
	if !ok {
		t.Fatalf("slash data is %T", e.Data)
	}
	if cmd.Command != "/sqlbot" || cmd.Text != "tables" || cmd.UserID != "U1" || cmd.ChannelID != "C1" ||
		cmd.ResponseURL == "" || cmd.TriggerID == "" || !e.Request.AcceptsResponsePayload || e.Request.EnvelopeID != envID {
		t.Errorf("slash command = %+v, request %+v", cmd, e.Request)
	}
	if err := c.sm.AckCtx(ctx, envID, map[string]any{"text": "Working on it"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitAck(ctx, envID); err != nil {
		t.Fatal(err)
	}
	post := func(opts ...slack.MsgOption) error {
		_, _, err := c.api.PostMessageContext(ctx, "", opts...)
		return err
	}
	if err := post(slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel), slack.MsgOptionText("3 tables", false)); err != nil {
		t.Fatal(err)
	}
	if e := s.Ephemeral(); len(e) != 1 || e[0].Method != "ack" || e[0].Text != "Working on it" || e[0].User != "U1" {
		t.Errorf("ephemeral = %+v, want the ack's payload, for U1", e)
	}
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].Method != "response_url" || msgs[0].Channel != "C1" || msgs[0].User != "U1" ||
		msgs[0].Text != "3 tables" || msgs[0].ResponseType != "in_channel" {
		t.Errorf("messages = %+v", msgs)
	}

	var sce slack.StatusCodeError
	if err := post(slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral)); !errors.As(err, &sce) || sce.Code != http.StatusBadRequest {
		t.Errorf("empty response: %v, want a 400 StatusCodeError", err)
	}
	for i := 2; i <= 5; i++ {
		if err := post(slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("more", false)); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
	}
	if err := post(slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("sixth", false)); !errors.As(err, &sce) || sce.Code != http.StatusNotFound {
		t.Errorf("sixth response: %v, want a 404 StatusCodeError", err)
	}
}

func TestResponseURLFaults(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)
	if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	cmd := c.next(t, socketmode.EventTypeSlashCommand).Data.(slack.SlashCommand)
	post := func() error {
		_, _, err := c.api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("hi", false))
		return err
	}
	s.FailNext("response_url", "expired_url")
	s.StatusNext("response_url", http.StatusInternalServerError)
	var sce slack.StatusCodeError
	if err := post(); !errors.As(err, &sce) || sce.Code != http.StatusNotFound {
		t.Errorf("post after FailNext: %v, want a 404 StatusCodeError", err)
	}
	if err := post(); !errors.As(err, &sce) || sce.Code != http.StatusInternalServerError {
		t.Errorf("post after StatusNext: %v, want a 500 StatusCodeError", err)
	}
	if n := len(s.Ephemeral()); n != 0 {
		t.Errorf("%d messages recorded from failed posts", n)
	}
	if err := post(); err != nil {
		t.Errorf("post once the faults are used up: %v", err)
	}
	if msgs := s.Ephemeral(); len(msgs) != 1 || msgs[0].Method != "response_url" || msgs[0].Text != "hi" || msgs[0].User != "U1" {
		t.Errorf("ephemeral = %+v, want the one post that succeeded", msgs)
	}
}

func TestEchoBotMessages(t *testing.T) {
	s := newServer(t, slacktest.EchoBotMessages(true))
	s.Join("C1")
	c := connected(t, s)
	ctx := testContext(t)

	if _, _, err := c.api.PostMessageContext(ctx, "C1", slack.MsgOptionText("in a channel", false)); err != nil {
		t.Fatal(err)
	}
	_, ts, err := c.api.PostMessageContext(ctx, "D1", slack.MsgOptionText("in a DM", false))
	if err != nil {
		t.Fatal(err)
	}
	_, inner := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	m, ok := inner.(*slackevents.MessageEvent)
	if !ok || m.BotID != "BBOT" || m.User != "UBOT" || !m.IsIM() || m.Channel != "D1" || m.Text != "in a DM" || m.TimeStamp != ts {
		t.Fatalf("echo = %+v", inner)
	}
	if _, _, _, err := c.api.UpdateMessageContext(ctx, "D1", ts, slack.MsgOptionText("edited", false)); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	if m, ok := inner.(*slackevents.MessageEvent); !ok || m.SubType != "message_changed" || m.Message == nil || m.Message.Text != "edited" {
		t.Fatalf("update echo = %+v", inner)
	}
	content := "a,b\n1,2\n"
	if _, err := c.api.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content),
		Filename: "rows.csv", Channel: "D1", ThreadTimestamp: ts}); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	if m, ok := inner.(*slackevents.MessageEvent); !ok || m.SubType != "file_share" || m.BotID != "BBOT" || m.ThreadTimeStamp != ts {
		t.Fatalf("file share echo = %+v", inner)
	}
	time.Sleep(100 * time.Millisecond) // room for a wrong echo of the channel post
	if n := len(s.Sent()); n != 3 {
		t.Errorf("%d envelopes sent, want 3 (no echo for the channel post)", n)
	}
}

func TestConcurrentMentions(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)
	const n = 20

	acked := make(chan error, 1)
	go func() { // acks as a bot would; t.Fatal is not allowed off the test goroutine
		for got := 0; got < n; {
			select {
			case e := <-c.events:
				if e.Type != socketmode.EventTypeEventsAPI {
					continue
				}
				got++
				if err := c.sm.AckCtx(ctx, e.Request.EnvelopeID, nil); err != nil {
					acked <- err
					return
				}
			case <-ctx.Done():
				acked <- ctx.Err()
				return
			}
		}
		acked <- nil
	}()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ids[i], errs[i] = s.SendEvent(ctx, slacktest.MentionEvent("C1", fmt.Sprintf("U%d", i), "orders?", "", ""))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("envelope ID %s sent twice", id)
		}
		seen[id] = true
		if _, err := s.WaitAck(ctx, id); err != nil {
			t.Error(err)
		}
	}
	events := map[string]bool{}
	for _, e := range s.Sent() {
		events[e.EventID] = true
	}
	if len(events) != n {
		t.Errorf("%d distinct event IDs, want %d", len(events), n)
	}
}

func TestMiscMethods(t *testing.T) {
	s := newServer(t)
	api := webClient(s)
	ctx := testContext(t)

	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.UserID != s.BotUserID() || auth.BotID != "BBOT" || auth.TeamID != "T1" {
		t.Errorf("auth.test = %+v, %v", auth, err)
	}
	u, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil || u.ID != "U1" || u.IsBot {
		t.Errorf("users.info = %+v, %v", u, err)
	}
	if _, err := api.GetUserInfoContext(ctx, "nobody"); slackErr(err) != "user_not_found" {
		t.Errorf("users.info(nobody) = %v, want user_not_found", err)
	}
	resp, err := http.Post(s.URL+"chat.nothing", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"token": {s.BotToken()}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(`"error":"unknown_method"`)) {
		t.Errorf("unknown method answered %s", body)
	}
}

// TestCloseEndsEverything checks that Close leaves no goroutine behind, with
// a client connected and a redelivery pending.
func TestCloseEndsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newServer(t, slacktest.RedeliverUnacked(time.Hour))
	ctx := testContext(t)
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL), slack.OptionAppLevelToken(s.AppToken()), slack.OptionHTTPClient(hc))
	_, wsURL, err := api.StartSocketModeContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendEvent(ctx, slacktest.DMEvent("D1", "U1", "hi", "")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		s.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("Close did not return")
	}
	ws.Close()
	tr.CloseIdleConnections()
	if _, err := s.SendEvent(ctx, slacktest.DMEvent("D1", "U1", "hi", "")); !errors.Is(err, slacktest.ErrClosed) {
		t.Errorf("SendEvent after Close = %v, want ErrClosed", err)
	}
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
