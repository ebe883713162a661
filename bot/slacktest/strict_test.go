package slacktest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/bot/slacktest"
)

// The rules in this file are the ones a bot meets in a real workspace and a
// lenient fake would let pass: each is shown refusing what Slack refuses and
// accepting what it accepts.

// A snippet (an upload with snippet_type) is limited to 1 MiB and to the
// types Slack knows; a plain file of 2 MiB goes through.
func TestSnippetRules(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)
	big := strings.Repeat("a,b\n", (2<<20)/4)
	tests := []struct {
		name    string
		size    int
		snippet string
		want    string
	}{
		{"csv snippet over 1 MiB", 1<<20 + 1, "csv", "snippet_too_large"},
		{"csv snippet of 1 MiB", 1 << 20, "csv", ""},
		{"unknown snippet type", 10, "spreadsheet", "unknown_snippet_type"},
		{"plain file of 2 MiB", len(big), "", ""},
	}
	for _, tt := range tests {
		content := big[:tt.size]
		_, err := api.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content),
			Filename: "rows.csv", SnippetType: tt.snippet, Channel: "C1"})
		if got := slackErr(err); got != tt.want || (tt.want == "" && err != nil) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	files := s.Files()
	if len(files) != 2 || files[0].SnippetType != "csv" || files[1].SnippetType != "" || len(files[1].Content) != len(big) {
		t.Errorf("files: %d, want the 1 MiB snippet and the 2 MiB plain file", len(files))
	}
	// The limit is checked where Slack checks it, before any byte is sent.
	for _, c := range s.Calls() {
		if c.Error == "snippet_too_large" && c.Method != "files.getUploadURLExternal" {
			t.Errorf("snippet_too_large from %s", c.Method)
		}
	}
}

// manifest is an app manifest as `sqlbot manifest` prints one, with the
// scopes, events and commands given.
func manifest(scopes, events, commands []string) []byte {
	var m struct {
		Features struct {
			SlashCommands []map[string]string `json:"slash_commands"`
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
	for _, c := range commands {
		m.Features.SlashCommands = append(m.Features.SlashCommands, map[string]string{"command": c})
	}
	m.OAuthConfig.Scopes.Bot = scopes
	m.Settings.EventSubscriptions.BotEvents = events
	m.Settings.SocketModeEnabled = true
	b, _ := json.Marshal(m)
	return b
}

// With a manifest, a method whose scope it lacks answers missing_scope, and
// what the app is not subscribed to is never delivered.
func TestMissingScope(t *testing.T) {
	s := newServer(t, slacktest.AppManifest(manifest(
		[]string{"app_mentions:read", "chat:write", "commands"},
		[]string{"app_mention"},
		[]string{"/sqlbot"})))
	c := connected(t, s)
	api := c.api
	ctx := testContext(t)

	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "orders?", "1700000001.000100", "")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("42", false)); err != nil {
		t.Errorf("chat.postMessage with chat:write: %v", err)
	}
	err := api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage("C1", "1700000001.000100"))
	if slackErr(err) != "missing_scope" {
		t.Errorf("reactions.add without reactions:write: %v, want missing_scope", err)
	}
	if _, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U1"}}); slackErr(err) != "missing_scope" {
		t.Errorf("conversations.open without im:write: %v, want missing_scope", err)
	}
	content := "a\n1\n"
	if _, err := api.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content), Filename: "a.csv", Channel: "C1"}); slackErr(err) != "missing_scope" {
		t.Errorf("files upload without files:write: %v, want missing_scope", err)
	}
	var needed []string
	for _, call := range s.Calls() {
		if call.Error == "missing_scope" {
			needed = append(needed, call.Method)
		}
	}
	if fmt.Sprint(needed) != "[reactions.add conversations.open files.getUploadURLExternal]" {
		t.Errorf("missing_scope answered to %v", needed)
	}
	// The answer names the scope, as Slack's does.
	resp, err := http.PostForm(s.URL+"reactions.add", map[string][]string{"token": {s.BotToken()}, "name": {"eyes"},
		"channel": {"C1"}, "timestamp": {"1700000001.000100"}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error, Needed, Provided string }
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if body.Error != "missing_scope" || body.Needed != "reactions:write" || body.Provided != "app_mentions:read,chat:write,commands" {
		t.Errorf("missing_scope answer = %+v", body)
	}

	// Not subscribed to message.im: a DM is never delivered; an undeclared
	// command neither.
	if _, err := s.SendEvent(ctx, slacktest.DMEvent("D1", "U1", "hi", "")); !errors.Is(err, slacktest.ErrNotSubscribed) {
		t.Errorf("DM without message.im: %v, want ErrNotSubscribed", err)
	}
	if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/other", Text: "help", UserID: "U1", ChannelID: "C1"}); !errors.Is(err, slacktest.ErrNotSubscribed) {
		t.Errorf("undeclared command: %v, want ErrNotSubscribed", err)
	}
	if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Errorf("declared command: %v", err)
	}
}

func TestManifestThatDoesNotParse(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { recover() }() // fatalRecorder stops like t.Fatal does
		slacktest.NewServer(ft, slacktest.AppManifest([]byte("{not json")))
	}()
	if !ft.failed {
		t.Error("NewServer accepted a manifest that does not parse")
	}
}

// fatalRecorder records Fatal instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatal(args ...any) { f.failed = true; panic("fatal") }

// chat.postMessage and chat.postEphemeral need the bot in the channel: a
// mention or Join makes it a member, Leave ends that, DMs always work, and
// chat:write.public opens public channels (C…) only.
func TestNotInChannel(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	api := c.api
	ctx := testContext(t)
	post := func(ch string) string {
		_, _, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("hi", false))
		return slackErr(err)
	}
	eph := func(ch string) string {
		_, err := api.PostEphemeralContext(ctx, ch, "U1", slack.MsgOptionText("hi", false))
		return slackErr(err)
	}
	if got := post("C1"); got != "not_in_channel" {
		t.Errorf("post to a channel the bot is not in: %q, want not_in_channel", got)
	}
	if got := eph("C1"); got != "not_in_channel" {
		t.Errorf("ephemeral in a channel the bot is not in: %q, want not_in_channel", got)
	}
	if got := post("D1"); got != "" {
		t.Errorf("post to a DM: %q", got)
	}
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "hi", "", "")); err != nil {
		t.Fatal(err)
	}
	if got := post("C1"); got != "" || !s.IsMember("C1") {
		t.Errorf("post after a mention in the channel: %q (member %v)", got, s.IsMember("C1"))
	}
	s.Leave("C1")
	if got := post("C1"); got != "not_in_channel" {
		t.Errorf("post after Leave: %q, want not_in_channel", got)
	}
	s.Join("G1")
	if got := post("G1"); got != "" {
		t.Errorf("post after Join: %q", got)
	}
	// A slash command in a channel does not make the bot a member.
	if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: "U1", ChannelID: "C9"}); err != nil {
		t.Fatal(err)
	}
	if got := post("C9"); got != "not_in_channel" {
		t.Errorf("post where only a slash command was used: %q, want not_in_channel", got)
	}

	pub := newServer(t, slacktest.AppManifest(manifest([]string{"chat:write", "chat:write.public"}, nil, nil)))
	papi := webClient(pub)
	if _, _, err := papi.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("chat:write.public, public channel: %v", err)
	}
	if _, _, err := papi.PostMessageContext(ctx, "G1", slack.MsgOptionText("hi", false)); slackErr(err) != "not_in_channel" {
		t.Errorf("chat:write.public, private channel: %v, want not_in_channel", err)
	}
}

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A response_url works for 30 minutes by the fake's clock, then answers 404
// expired_url; five posts use it up (404 used_url).
func TestResponseURLExpiry(t *testing.T) {
	clock := &testClock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
	s := newServer(t, slacktest.Clock(clock.Now))
	c := connected(t, s)
	ctx := testContext(t)
	slashURL := func() string {
		if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "eval", UserID: "U1", ChannelID: "C1"}); err != nil {
			t.Fatal(err)
		}
		return c.next(t, socketmode.EventTypeSlashCommand).Data.(slack.SlashCommand).ResponseURL
	}
	post := func(u string) error {
		return slack.PostWebhookContext(ctx, u, &slack.WebhookMessage{Text: "report"})
	}
	status := func(err error) int {
		var sce slack.StatusCodeError
		if errors.As(err, &sce) {
			return sce.Code
		}
		return 0
	}

	u := slashURL()
	clock.Advance(30 * time.Minute)
	if err := post(u); err != nil {
		t.Errorf("post at 30 minutes: %v", err)
	}
	clock.Advance(time.Second)
	if err := post(u); status(err) != http.StatusNotFound {
		t.Errorf("post at 30 min 1 s: %v, want 404", err)
	}

	u = slashURL()
	for i := range 5 {
		if err := post(u); err != nil {
			t.Fatalf("post %d: %v", i+1, err)
		}
	}
	if err := post(u); status(err) != http.StatusNotFound {
		t.Errorf("sixth post: %v, want 404", err)
	}
	if n := len(s.Ephemeral()); n != 6 {
		t.Errorf("%d posts recorded, want 6", n)
	}
}

// Rate limits on demand, per method: HTTP 429 with Retry-After (slack-go's
// *RateLimitedError) and HTTP 200 {"ok": false, "error": "ratelimited"}
// (a SlackErrorResponse), each only for the method named.
func TestRateLimitsPerMethod(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	s.RateLimitNext("reactions.add", 10*time.Second)
	s.FailNext("chat.postMessage", "ratelimited")

	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("again", false)); slackErr(err) != "ratelimited" {
		t.Errorf("post after FailNext ratelimited: %v, want a SlackErrorResponse ratelimited", err)
	} else {
		var rl *slack.RateLimitedError
		if errors.As(err, &rl) {
			t.Error("an HTTP 200 ratelimited came back as an HTTP 429")
		}
	}
	err = api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage("C1", ts))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 10*time.Second {
		t.Errorf("reactions.add after RateLimitNext: %v, want a RateLimitedError after 10 s", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("third", false)); err != nil {
		t.Errorf("third post: %v", err)
	}
	if err := api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage("C1", ts)); err != nil {
		t.Errorf("second reactions.add: %v", err)
	}
}

// The blocks' size is counted with their structure: the same text that fits
// in a few sections does not fit in many, and characters (not bytes) count.
func TestBlocksSizeCountsStructure(t *testing.T) {
	sections := func(n, chars int, r string) []byte {
		var bl []slack.Block
		for range n {
			bl = append(bl, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat(r, chars), false, false), nil, nil))
		}
		b, err := json.Marshal(bl)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var be *slacktest.BlockError
	few := sections(4, 2835, "x") // 11,340 characters of text
	if err := slacktest.CheckBlocks(few); err != nil {
		t.Errorf("11,340 characters in 4 sections: %v (size %d)", err, slacktest.BlocksSize(few))
	}
	many := sections(45, 252, "x") // the same text in 45 sections
	if err := slacktest.CheckBlocks(many); !errors.As(err, &be) || be.Code != "msg_blocks_too_long" {
		t.Errorf("11,340 characters in 45 sections: %v (size %d), want msg_blocks_too_long", err, slacktest.BlocksSize(many))
	}
	// For plain ASCII the size is the compact JSON's length.
	if got := slacktest.BlocksSize(few); got != len(few) {
		t.Errorf("BlocksSize = %d, want the JSON's length %d", got, len(few))
	}
	// A section of 3000 two-byte characters is 3000 characters.
	if err := slacktest.CheckBlocks(sections(1, 3000, "é")); err != nil {
		t.Errorf("3000 characters of é: %v", err)
	}
	// JSON escapes do not count: a newline is one character.
	if got, want := slacktest.BlocksSize(sections(1, 100, "\n")), slacktest.BlocksSize(sections(1, 100, "x")); got != want {
		t.Errorf("100 newlines count %d, 100 letters %d", got, want)
	}
}

// An ephemeral message in a thread is shown only once the thread has
// replies; Slack accepts it either way.
func TestEphemeralInThread(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)
	const parent = "1700000001.000100"
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "orders?", parent, "")); err != nil {
		t.Fatal(err)
	}
	eph := func() {
		if _, err := c.api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("only you", false), slack.MsgOptionTS(parent)); err != nil {
			t.Fatal(err)
		}
	}
	eph()
	if _, _, err := c.api.PostMessageContext(ctx, "C1", slack.MsgOptionText("42", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	eph()
	e := s.Ephemeral()
	if len(e) != 2 || !e[0].Hidden || e[1].Hidden || e[0].ThreadTS != parent {
		t.Errorf("ephemeral = %+v, want the first hidden (no replies yet), the second shown", e)
	}
}

// A held call waits until released; meanwhile other calls are answered.
func TestHoldNext(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	hold := s.HoldNext("reactions.add")
	done := make(chan error, 1)
	go func() { done <- api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage("C1", ts)) }()
	select {
	case <-hold.Arrived():
	case <-ctx.Done():
		t.Fatal("the held call never arrived")
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("meanwhile", false)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the held call returned (%v) before it was released", err)
	default:
	}
	if r := s.Reactions(); len(r) != 0 {
		t.Errorf("reactions while held: %+v", r)
	}
	hold.Release()
	hold.Release() // idempotent
	if err := <-done; err != nil {
		t.Errorf("the released call: %v", err)
	}
	calls := s.Calls()
	if last := calls[len(calls)-1]; last.Method != "reactions.add" || last.Error != "" {
		t.Errorf("last call = %+v, want the released reactions.add", last)
	}
}

// A person's DM with a file arrives as a message with subtype file_share that
// keeps its user and text.
func TestDMFileEvent(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)
	if _, err := s.SendEvent(ctx, slacktest.DMFileEvent("D1", "U1", "what is in this?", "")); err != nil {
		t.Fatal(err)
	}
	_, inner := callback(t, c.next(t, socketmode.EventTypeEventsAPI))
	m, ok := inner.(*slackevents.MessageEvent)
	if !ok || m.SubType != "file_share" || m.User != "U1" || m.Text != "what is in this?" || !m.IsIM() || m.Message == nil || len(m.Message.Files) != 1 || m.BotID != "" {
		t.Errorf("file share = %+v", inner)
	}
}

func TestConversationsOpen(t *testing.T) {
	s := newServer(t)
	api := webClient(s)
	ctx := testContext(t)
	ch, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U1"}})
	if err != nil || ch == nil || ch.ID != "D1" {
		t.Fatalf("conversations.open = %+v, %v; want D1", ch, err)
	}
	if _, _, err := api.PostMessageContext(ctx, ch.ID, slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("post to the opened DM: %v", err)
	}
	if _, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"nobody"}}); slackErr(err) != "user_not_found" {
		t.Errorf("conversations.open(nobody) = %v, want user_not_found", err)
	}
}

// chat.postEphemeral shows a message to a member of the conversation only:
// to anyone else it answers user_not_in_channel. Sending an event or a
// slash command into a channel, or UserJoin, makes one a member; a DM's
// member is the user it is named after.
func TestEphemeralNeedsMember(t *testing.T) {
	s := newServer(t)
	c := connected(t, s)
	ctx := testContext(t)
	s.Join("C1")
	eph := func(ch, user string) string {
		_, err := c.api.PostEphemeralContext(ctx, ch, user, slack.MsgOptionText("only you", false))
		if err != nil && slackErr(err) == "" {
			t.Fatalf("ephemeral to %s in %s: %v", user, ch, err)
		}
		return slackErr(err)
	}
	if got := eph("C1", "U1"); got != "user_not_in_channel" {
		t.Errorf("to someone not in the channel: %q, want user_not_in_channel", got)
	}
	if _, err := s.SendEvent(ctx, slacktest.MentionEvent("C1", "U1", "orders?", "1700000001.000100", "")); err != nil {
		t.Fatal(err)
	}
	if got := eph("C1", "U1"); got != "" {
		t.Errorf("to someone who mentioned the bot there: %q", got)
	}
	s.UserLeave("C1", "U1")
	if got := eph("C1", "U1"); got != "user_not_in_channel" {
		t.Errorf("after UserLeave: %q, want user_not_in_channel", got)
	}
	s.UserJoin("C1", "U2")
	if got := eph("C1", "U2"); got != "" {
		t.Errorf("after UserJoin: %q", got)
	}
	if _, err := s.SendSlash(ctx, slacktest.SlashSpec{Command: "/sqlbot", Text: "help", UserID: "U3", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if got := eph("C1", "U3"); got != "" {
		t.Errorf("to someone who used a slash command there: %q", got)
	}
	if _, err := s.SendEvent(ctx, slacktest.ReactionAddedEvent("C1", "U4", "eyes", "1700000001.000100")); err != nil {
		t.Fatal(err)
	}
	if got := eph("C1", "U4"); got != "" {
		t.Errorf("to someone who reacted there: %q", got)
	}
	if got := eph("D1", "U1"); got != "" {
		t.Errorf("to the user of a DM: %q", got)
	}
	if got := eph("D1", "U2"); got != "user_not_in_channel" {
		t.Errorf("to someone else in a DM: %q, want user_not_in_channel", got)
	}
	if n := len(s.Ephemeral()); n != 5 {
		t.Errorf("%d ephemeral messages recorded, want the 5 accepted", n)
	}
}

// A file shared as a reply (files.completeUploadExternal with thread_ts)
// needs thread_ts to name a message in that channel; otherwise the upload is
// refused (invalid_arguments) and nothing is shared.
func TestFileThreadMustExist(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	s.Join("C2")
	api := webClient(s)
	ctx := testContext(t)
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("the result", false))
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("elsewhere", false))
	if err != nil {
		t.Fatal(err)
	}
	up := func(thread string) string {
		content := "a,b\n1,2\n"
		_, err := api.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content),
			Filename: "rows.csv", Channel: "C1", ThreadTimestamp: thread})
		if err != nil && slackErr(err) == "" {
			t.Fatalf("upload into thread %q: %v", thread, err)
		}
		return slackErr(err)
	}
	for _, tt := range []struct{ name, thread, want string }{
		{"the channel's message", parent, ""},
		{"no thread", "", ""},
		{"a ts no message has", "1600000000.000001", "invalid_arguments"},
		{"another channel's message", other, "invalid_arguments"},
		{"not a ts", "yesterday", "invalid_arguments"},
	} {
		if got := up(tt.thread); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	files := s.Files()
	if len(files) != 2 || files[0].ThreadTS != parent || files[1].ThreadTS != "" {
		t.Errorf("files = %+v, want the two accepted", files)
	}
}

// "upload_url" faults make the next POST of a file's bytes fail with an HTTP
// error, which slack-go reports as a slack.StatusCodeError; the file is then
// not shared, and the next upload goes through.
func TestUploadURLFaults(t *testing.T) {
	s := newServer(t)
	s.Join("C1")
	api := webClient(s)
	ctx := testContext(t)
	s.StatusNext("upload_url", http.StatusInternalServerError)
	s.FailNext("upload_url", "upload_failed")
	content := "a,b\n1,2\n"
	up := func() error {
		_, err := api.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content),
			Filename: "rows.csv", Channel: "C1"})
		return err
	}
	for _, want := range []int{http.StatusInternalServerError, http.StatusBadRequest} {
		var sce slack.StatusCodeError
		if err := up(); !errors.As(err, &sce) || sce.Code != want {
			t.Errorf("upload: %v, want a %d StatusCodeError", err, want)
		}
	}
	if n := len(s.Files()); n != 0 {
		t.Errorf("%d files shared after failed uploads", n)
	}
	if err := up(); err != nil {
		t.Errorf("upload after the faults: %v", err)
	}
	for _, c := range s.Calls() {
		if c.Method == "files.completeUploadExternal" && c.Error != "" {
			t.Errorf("a failed upload went on to files.completeUploadExternal (%s)", c.Error)
		}
	}
}
