package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody bounds every request body the fake reads.
const maxBody = 32 << 20

// maxTextChars is the longest message text Slack accepts.
const maxTextChars = 40000

// apiError is a Slack error answer: {"ok": false, "error": code} with optional
// response_metadata.messages.
type apiError struct {
	code     string
	messages []string
	extra    map[string]any // more fields of the answer, e.g. needed and provided
}

func errorf(code string, messages ...string) *apiError {
	return &apiError{code: code, messages: messages}
}

type apiHandler func(s *Server, form url.Values) (map[string]any, *apiError)

// handler returns the fake's implementation of a Web API method, or nil.
func handler(method string) apiHandler {
	switch method {
	case "auth.test":
		return (*Server).authTest
	case "apps.connections.open":
		return (*Server).connectionsOpen
	case "chat.postMessage":
		return (*Server).chatPostMessage
	case "chat.postEphemeral":
		return (*Server).chatPostEphemeral
	case "chat.update":
		return (*Server).chatUpdate
	case "reactions.add":
		return (*Server).reactionsAdd
	case "reactions.remove":
		return (*Server).reactionsRemove
	case "conversations.replies":
		return (*Server).conversationsReplies
	case "users.info":
		return (*Server).usersInfo
	case "files.getUploadURLExternal":
		return (*Server).filesGetUploadURLExternal
	case "files.completeUploadExternal":
		return (*Server).filesCompleteUploadExternal
	case "conversations.open":
		return (*Server).conversationsOpen
	case "assistant.threads.setStatus":
		return (*Server).assistantSetStatus
	case "assistant.threads.setSuggestedPrompts":
		return (*Server).assistantSetSuggestedPrompts
	case "assistant.threads.setTitle":
		return (*Server).assistantSetTitle
	}
	return nil
}

// handleAPI serves https://slack.com/api/METHOD.
func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	form, ferr := readForm(w, r)
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = form.Get("token")
	}
	status, body, code, retryAfter := s.serve(method, token, form, ferr)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Token: token, Form: form, Error: code})
	s.notifyLocked()
	s.mu.Unlock()
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if body == nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	writeJSON(w, status, body)
}

// serve answers one Web API call: the HTTP status, the JSON body (nil for a
// bare status), the error recorded in Calls, and a Retry-After value.
func (s *Server) serve(method, token string, form url.Values, ferr error) (int, map[string]any, string, string) {
	fail := func(e *apiError) (int, map[string]any, string, string) {
		body := map[string]any{"ok": false, "error": e.code}
		for k, v := range e.extra {
			body[k] = v
		}
		if len(e.messages) > 0 {
			body["response_metadata"] = map[string]any{"messages": e.messages}
		}
		return http.StatusOK, body, e.code, ""
	}
	if ferr != nil {
		return fail(errorf("invalid_form_data"))
	}
	h := handler(method)
	if h == nil {
		return fail(errorf("unknown_method"))
	}
	if code := checkToken(method, token); code != "" {
		return fail(errorf(code))
	}
	s.mu.Lock()
	var hold *Hold
	if q := s.holds[method]; len(q) > 0 {
		hold, s.holds[method] = q[0], q[1:]
	}
	s.mu.Unlock()
	if hold != nil {
		hold.wait(s.ctx)
	}
	if need := neededScope(method, form); need != "" && !s.cfg.grants.scope(need) &&
		!(method == "assistant.threads.setStatus" && s.cfg.grants.scope("assistant:write")) {
		return fail(&apiError{code: "missing_scope", extra: map[string]any{"needed": need, "provided": s.cfg.grants.provided()}})
	}
	s.mu.Lock()
	f, faulty := s.popFaultLocked(method)
	s.mu.Unlock()
	if faulty {
		switch {
		case f.rateLimit:
			secs := int64((f.retryAfter + time.Second - 1) / time.Second)
			return http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"},
				"ratelimited", strconv.FormatInt(secs, 10)
		case f.status != 0:
			return f.status, nil, fmt.Sprintf("http %d", f.status), ""
		default:
			return fail(errorf(f.slackErr))
		}
	}
	res, e := h(s, form)
	if e != nil {
		return fail(e)
	}
	body := map[string]any{"ok": true}
	for k, v := range res {
		body[k] = v
	}
	return http.StatusOK, body, "", ""
}

// checkToken returns the Slack error for token on method, or "".
// apps.connections.open takes only the app-level token; the rest only the
// bot token.
func checkToken(method, token string) string {
	want := botToken
	if method == "apps.connections.open" {
		want = appToken
	}
	switch token {
	case "":
		return "not_authed"
	case want:
		return ""
	case appToken, botToken:
		return "not_allowed_token_type"
	}
	return "invalid_auth"
}

// readForm reads the arguments of a Web API call from the query and from a
// form-encoded, multipart or JSON body. JSON values that are not strings are
// kept as their JSON text, as Slack reads blocks either way.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		form := r.URL.Query()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return form, err
		}
		if strings.TrimSpace(string(body)) == "" {
			return form, nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return form, err
		}
		for k, v := range obj {
			var str string
			if json.Unmarshal(v, &str) == nil {
				form.Set(k, str)
			} else {
				form.Set(k, string(v))
			}
		}
		return form, nil
	case "multipart/form-data":
		err := r.ParseMultipartForm(maxBody)
		return r.Form, err
	default:
		err := r.ParseForm()
		return r.Form, err
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone; nothing to do
}

func (s *Server) authTest(url.Values) (map[string]any, *apiError) {
	return map[string]any{
		"url": "https://slacktest.slack.com/", "team": "slacktest", "user": "sqlbot",
		"team_id": teamID, "user_id": botUserID, "bot_id": botID, "is_enterprise_install": false,
	}, nil
}

// connectionsOpen issues a single-use Socket Mode URL on this server.
func (s *Server) connectionsOpen(url.Values) (map[string]any, *apiError) {
	ticket := newUUID()
	s.mu.Lock()
	s.tickets[ticket] = true
	s.mu.Unlock()
	ws := "ws" + strings.TrimPrefix(s.base, "http") + "/link/?ticket=" + ticket + "&app_id=" + appID
	return map[string]any{"url": ws}, nil
}

// isChannelID reports whether s looks like a conversation ID: C…, G… or D….
func isChannelID(s string) bool {
	return len(s) > 1 && strings.ContainsRune("CGD", rune(s[0])) && isIDTail(s[1:])
}

// isUserID reports whether s looks like a user ID: U… or W….
func isUserID(s string) bool { return len(s) > 1 && (s[0] == 'U' || s[0] == 'W') && isIDTail(s[1:]) }

func isIDTail(s string) bool {
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// isReactionName reports whether s is an emoji name as reactions.add takes
// it: no colons, optionally with a skin tone ("wave::skin-tone-3").
func isReactionName(s string) bool {
	name, tone, hasTone := strings.Cut(s, "::")
	if hasTone && (len(tone) != len("skin-tone-2") || !strings.HasPrefix(tone, "skin-tone-") || tone[10] < '2' || tone[10] > '6') {
		return false
	}
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("_+'-", r)) {
			return false
		}
	}
	return true
}

// resolveChannel checks a channel argument. A user ID stands for the app's
// DM with that user, as in Slack; a "#name" is taken as it is.
func resolveChannel(ch string) (string, *apiError) {
	switch {
	case isChannelID(ch):
		return ch, nil
	case isUserID(ch):
		return "D" + ch[1:], nil
	case len(ch) > 1 && ch[0] == '#':
		return ch, nil
	}
	return "", errorf("channel_not_found")
}

func isDM(channel string) bool { return strings.HasPrefix(channel, "D") }

// messageContent checks the text and blocks of a chat.* call.
func messageContent(form url.Values) (string, json.RawMessage, *apiError) {
	text := form.Get("text")
	var blocks json.RawMessage
	nblocks := 0
	if raw := form.Get("blocks"); raw != "" {
		n, err := checkBlocks([]byte(raw))
		if err != nil {
			return "", nil, errorf(err.Code, err.Messages...)
		}
		blocks, nblocks = json.RawMessage(raw), n
	}
	var attachments []json.RawMessage
	if raw := form.Get("attachments"); raw != "" {
		if json.Unmarshal([]byte(raw), &attachments) != nil {
			return "", nil, errorf("invalid_attachments")
		}
	}
	if text == "" && nblocks == 0 && len(attachments) == 0 {
		return "", nil, errorf("no_text")
	}
	if utf8.RuneCountInString(text) > maxTextChars {
		return "", nil, errorf("msg_too_long")
	}
	return text, blocks, nil
}

func (s *Server) chatPostMessage(form url.Values) (map[string]any, *apiError) {
	channel, e := resolveChannel(form.Get("channel"))
	if e != nil {
		return nil, e
	}
	if !s.canPost(channel) {
		return nil, errorf("not_in_channel")
	}
	text, blocks, e := messageContent(form)
	if e != nil {
		return nil, e
	}
	thread := form.Get("thread_ts")
	s.mu.Lock()
	ts := s.newTSLocked()
	st := &stored{channel: channel, ts: ts, threadTS: thread, user: botUserID, botID: botID, text: text, blocks: blocks}
	s.storeLocked(st)
	delete(s.statuses, msgKey{channel, thread}) // a reply clears the thread's status, as in Slack
	s.addMessageLocked(Message{Method: "chat.postMessage", Channel: channel, ThreadTS: thread,
		Text: text, Blocks: blocks, TS: ts})
	s.notifyLocked()
	msg := st.wire()
	s.mu.Unlock()
	if s.cfg.echo && isDM(channel) {
		ev := st.wire()
		ev["channel"], ev["event_ts"], ev["channel_type"] = channel, ts, "im"
		s.echo(ev, ts)
	}
	return map[string]any{"channel": channel, "ts": ts, "message": msg}, nil
}

func (s *Server) chatPostEphemeral(form url.Values) (map[string]any, *apiError) {
	channel, e := resolveChannel(form.Get("channel"))
	if e != nil {
		return nil, e
	}
	user := form.Get("user")
	if !isUserID(user) {
		return nil, errorf("user_not_found")
	}
	if !s.canPost(channel) {
		return nil, errorf("not_in_channel")
	}
	text, blocks, e := messageContent(form)
	if e != nil {
		return nil, e
	}
	thread := form.Get("thread_ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userInLocked(channel, user) {
		return nil, errorf("user_not_in_channel") // Slack shows an ephemeral message only to a member
	}
	ts := s.newTSLocked()
	s.addEphemeralLocked(Message{Method: "chat.postEphemeral", Channel: channel,
		ThreadTS: thread, Text: text, Blocks: blocks, User: user, TS: ts,
		Hidden: thread != "" && !s.hasRepliesLocked(channel, thread)})
	s.notifyLocked()
	return map[string]any{"message_ts": ts}, nil
}

// canPost reports whether the bot may post into channel (see Join).
func (s *Server) canPost(channel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canPostLocked(channel)
}

// hasRepliesLocked reports whether the thread of thread in channel has a
// reply: Slack shows an ephemeral message in a thread only then.
func (s *Server) hasRepliesLocked(channel, thread string) bool {
	return s.replies[msgKey{channel, thread}] > 0
}

// conversationsOpen opens (or finds) the app's DM with one user: its ID is
// the user's with "D" for "U" or "W".
func (s *Server) conversationsOpen(form url.Values) (map[string]any, *apiError) {
	users := form.Get("users")
	if users == "" {
		if ch := form.Get("channel"); isChannelID(ch) {
			return map[string]any{"channel": map[string]any{"id": ch}, "no_op": true, "already_open": true}, nil
		}
		return nil, errorf("users_list_not_supplied")
	}
	if strings.Contains(users, ",") {
		return nil, errorf("not_supported") // group DMs are not modelled
	}
	if !isUserID(users) {
		return nil, errorf("user_not_found")
	}
	id := "D" + users[1:]
	return map[string]any{"channel": map[string]any{"id": id, "is_im": true, "user": users}}, nil
}

func (s *Server) chatUpdate(form url.Values) (map[string]any, *apiError) {
	channel, e := resolveChannel(form.Get("channel"))
	if e != nil {
		return nil, e
	}
	ts := form.Get("ts")
	if !s.canPost(channel) {
		return nil, errorf("not_in_channel")
	}
	text, blocks, e := messageContent(form)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	st := s.findLocked(channel, ts)
	if st == nil {
		s.mu.Unlock()
		return nil, errorf("message_not_found")
	}
	if st.botID != botID {
		s.mu.Unlock()
		return nil, errorf("cant_update_message")
	}
	prev := st.wire()
	st.text, st.edited = text, true
	if blocks != nil { // absent blocks are kept, as in Slack
		st.blocks = blocks
	}
	s.addMessageLocked(Message{Method: "chat.update", Channel: channel, ThreadTS: st.threadTS,
		Text: text, Blocks: blocks, TS: ts})
	evTS := s.newTSLocked()
	msg := st.wire()
	s.notifyLocked()
	s.mu.Unlock()
	if s.cfg.echo && isDM(channel) {
		s.echo(map[string]any{
			"type": "message", "subtype": "message_changed", "hidden": true,
			"message": msg, "previous_message": prev,
			"channel": channel, "channel_type": "im", "ts": evTS, "event_ts": evTS,
		}, evTS)
	}
	return map[string]any{"channel": channel, "ts": ts, "text": text, "message": msg}, nil
}

// echo delivers a copy of the bot's own activity back to it, as Slack does in
// DMs.
func (s *Server) echo(ev map[string]any, ts string) {
	if !s.cfg.grants.event("message.im") {
		return // echoes are message events in DMs
	}
	s.mu.Lock()
	cb := s.callbackLocked(ts, "")
	s.mu.Unlock()
	payload, err := cb.payload(ev)
	if err != nil {
		return
	}
	s.sendAsync(newEnvelope("events_api", payload, cb.EventID, 0, ""))
}

func (s *Server) reactionsAdd(form url.Values) (map[string]any, *apiError) {
	return s.react("reactions.add", form)
}

func (s *Server) reactionsRemove(form url.Values) (map[string]any, *apiError) {
	return s.react("reactions.remove", form)
}

// react adds or removes the bot's reaction on a message that exists.
func (s *Server) react(method string, form url.Values) (map[string]any, *apiError) {
	name, channel, ts := form.Get("name"), form.Get("channel"), form.Get("timestamp")
	if channel == "" || ts == "" {
		return nil, errorf("no_item_specified")
	}
	if !isReactionName(name) {
		return nil, errorf("invalid_name")
	}
	if _, ok := parseTS(ts); !ok {
		return nil, errorf("bad_timestamp")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.findLocked(channel, ts) == nil {
		return nil, errorf("message_not_found")
	}
	k := reactionKey{channel, ts, name}
	if method == "reactions.add" {
		if s.reacted[k] {
			return nil, errorf("already_reacted")
		}
		s.reacted[k] = true
	} else {
		if !s.reacted[k] {
			return nil, errorf("no_reaction")
		}
		delete(s.reacted, k)
	}
	s.reactions = append(s.reactions, Reaction{Method: method, Channel: channel, Timestamp: ts, Name: name})
	s.notifyLocked()
	return nil, nil
}

// stored is a message in a channel's history: a user's, from an event sent,
// or one the bot posted.
type stored struct {
	channel, ts, threadTS, user, botID, text, subtype string
	blocks                                            json.RawMessage
	files                                             []map[string]any
	edited                                            bool
}

// wire returns m as Slack returns a message.
func (m *stored) wire() map[string]any {
	w := map[string]any{"type": "message", "text": m.text, "ts": m.ts}
	if m.user != "" {
		w["user"] = m.user
	}
	if m.botID != "" {
		w["bot_id"], w["app_id"] = m.botID, appID
	} else {
		w["team"] = teamID
	}
	if m.threadTS != "" {
		w["thread_ts"] = m.threadTS
	}
	if m.blocks != nil {
		w["blocks"] = m.blocks
	}
	if m.subtype != "" {
		w["subtype"] = m.subtype
	}
	if m.files != nil {
		w["files"], w["upload"] = m.files, true
	}
	if m.edited {
		w["edited"] = map[string]any{"user": m.user, "ts": m.ts}
	}
	return w
}

// storeLocked adds m to its channel's history unless it is there already.
func (s *Server) storeLocked(m *stored) {
	k := msgKey{m.channel, m.ts}
	if m.channel == "" || m.ts == "" || s.stored[k] != nil {
		return
	}
	s.history[m.channel] = append(s.history[m.channel], m)
	s.stored[k] = m
	if m.threadTS != "" && m.threadTS != m.ts {
		s.replies[msgKey{m.channel, m.threadTS}]++
	}
}

func (s *Server) findLocked(channel, ts string) *stored {
	return s.stored[msgKey{channel, ts}]
}

// defaultRepliesLimit is how many messages conversations.replies returns when
// no limit is given.
const defaultRepliesLimit = 1000

// conversationsReplies returns a thread: its parent first, then the replies
// in timestamp order, paginated by limit and cursor.
func (s *Server) conversationsReplies(form url.Values) (map[string]any, *apiError) {
	channel, ts := form.Get("channel"), form.Get("ts")
	if !isChannelID(channel) {
		return nil, errorf("channel_not_found")
	}
	limit := defaultRepliesLimit
	if l := form.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return nil, errorf("invalid_limit")
		}
		limit = min(n, defaultRepliesLimit)
	}
	start := 0
	if c := form.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "next:"))
		if !strings.HasPrefix(c, "next:") || err != nil || n < 0 {
			return nil, errorf("invalid_cursor")
		}
		start = n
	}
	inclusive := form.Get("inclusive") == "1" || form.Get("inclusive") == "true"
	oldest, latest := form.Get("oldest"), form.Get("latest")

	s.mu.Lock()
	defer s.mu.Unlock()
	parent := s.findLocked(channel, ts)
	if parent == nil {
		return nil, errorf("thread_not_found")
	}
	if parent.threadTS != "" && parent.threadTS != parent.ts {
		if p := s.findLocked(channel, parent.threadTS); p != nil {
			parent = p
		}
	}
	var replies []*stored
	for _, m := range s.history[channel] {
		if m != parent && m.threadTS == parent.ts {
			replies = append(replies, m)
		}
	}
	slices.SortStableFunc(replies, func(a, b *stored) int {
		switch {
		case tsLess(a.ts, b.ts):
			return -1
		case tsLess(b.ts, a.ts):
			return 1
		}
		return 0
	})
	var all []map[string]any
	p := parent.wire()
	if len(replies) > 0 {
		var users []string
		for _, r := range replies {
			if r.user != "" && !slices.Contains(users, r.user) {
				users = append(users, r.user)
			}
		}
		p["thread_ts"], p["reply_count"], p["reply_users"] = parent.ts, len(replies), users
		p["reply_users_count"], p["latest_reply"] = len(users), replies[len(replies)-1].ts
	}
	inRange := func(ts string) bool {
		if oldest != "" && (tsLess(ts, oldest) || (!inclusive && ts == oldest)) {
			return false
		}
		if latest != "" && (tsLess(latest, ts) || (!inclusive && ts == latest)) {
			return false
		}
		return true
	}
	if inRange(parent.ts) {
		all = append(all, p)
	}
	for _, r := range replies {
		if inRange(r.ts) {
			w := r.wire()
			w["parent_user_id"] = parent.user
			all = append(all, w)
		}
	}
	if start > len(all) {
		return nil, errorf("invalid_cursor")
	}
	end := min(start+limit, len(all))
	next := ""
	if end < len(all) {
		next = fmt.Sprintf("next:%d", end)
	}
	page := all[start:end]
	if page == nil {
		page = []map[string]any{}
	}
	return map[string]any{
		"messages": page, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next},
	}, nil
}

// usersInfo returns a minimal user for any well-formed user ID.
func (s *Server) usersInfo(form url.Values) (map[string]any, *apiError) {
	id := form.Get("user")
	if !isUserID(id) {
		return nil, errorf("user_not_found")
	}
	name, real := strings.ToLower(id), "User "+id
	if id == botUserID {
		name, real = "sqlbot", "sqlbot"
	}
	return map[string]any{"user": map[string]any{
		"id": id, "team_id": teamID, "name": name, "real_name": real, "deleted": false,
		"is_bot": id == botUserID, "is_admin": false, "tz": "UTC", "tz_label": "Coordinated Universal Time",
		"tz_offset": 0, "profile": map[string]any{"real_name": real, "display_name": name, "team": teamID},
	}}, nil
}

// upload is a file between files.getUploadURLExternal and
// files.completeUploadExternal.
type upload struct {
	id, name  string
	snippet   string
	altTxt    string
	length    int
	content   []byte
	uploaded  bool
	completed bool
}

// maxSnippetBytes is the largest snippet Slack makes (snippet_too_large
// above it; "limited to 1MB").
const maxSnippetBytes = 1 << 20

// snippetTypes are the snippet_type values (Slack's file type IDs) the fake
// accepts; Slack answers unknown_snippet_type for others.
func snippetTypes() []string {
	return []string{"auto", "text", "c", "cpp", "csharp", "css", "csv", "diff", "dockerfile", "go", "html",
		"java", "javascript", "json", "kotlin", "markdown", "perl", "php", "python", "ruby", "rust", "shell",
		"sql", "swift", "typescript", "xml", "yaml"}
}

func (s *Server) filesGetUploadURLExternal(form url.Values) (map[string]any, *apiError) {
	name := form.Get("filename")
	if name == "" {
		return nil, errorf("invalid_arguments")
	}
	l := form.Get("length")
	n, err := strconv.Atoi(l)
	switch {
	case l == "" || (err == nil && n == 0):
		return nil, errorf("missing_argument")
	case err != nil || n < 0:
		return nil, errorf("invalid_arguments")
	}
	snippet := form.Get("snippet_type")
	if snippet != "" {
		if !slices.Contains(snippetTypes(), snippet) {
			return nil, errorf("unknown_snippet_type")
		}
		if n > maxSnippetBytes {
			return nil, errorf("snippet_too_large")
		}
	}
	ticket := newUUID()
	s.mu.Lock()
	u := &upload{id: fmt.Sprintf("F%09d", s.nextSeqLocked()), name: name, snippet: snippet, length: n, altTxt: form.Get("alt_txt")}
	s.uploads[u.id] = u
	s.uploadTickets[ticket] = u
	s.mu.Unlock()
	return map[string]any{"upload_url": s.base + "/upload/v1/" + ticket, "file_id": u.id}, nil
}

// uploadURLMethod is the name under which faults for the POST of a file's
// bytes to its upload URL are queued (see FailNext).
const uploadURLMethod = "upload_url"

// handleUpload receives a file's bytes at its upload URL, raw or as the
// multipart form slack-go sends (field "file"). The byte count must equal the
// length given to files.getUploadURLExternal. Each URL takes one upload.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	ticket := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	u := s.uploadTickets[ticket]
	var f fault
	faulty := false
	if u != nil {
		f, faulty = s.popFaultLocked(uploadURLMethod)
	}
	s.mu.Unlock()
	if u == nil {
		http.Error(w, "unknown or used upload URL", http.StatusNotFound)
		return
	}
	if faulty {
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBody))
		f.writePlain(w, http.StatusBadRequest)
		return
	}
	content, err := readUpload(w, r)
	if err != nil {
		http.Error(w, "bad upload: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(content) != u.length {
		http.Error(w, fmt.Sprintf("uploaded %d bytes, announced %d", len(content), u.length), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	if s.uploadTickets[ticket] != u {
		s.mu.Unlock()
		http.Error(w, "unknown or used upload URL", http.StatusNotFound)
		return
	}
	delete(s.uploadTickets, ticket)
	u.content, u.uploaded = content, true
	s.notifyLocked()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(content))
}

func readUpload(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return io.ReadAll(r.Body)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("no file part: %w", err)
		}
		if p.FormName() == "file" || p.FileName() != "" {
			return io.ReadAll(p)
		}
	}
}

func (s *Server) filesCompleteUploadExternal(form url.Values) (map[string]any, *apiError) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if json.Unmarshal([]byte(form.Get("files")), &files) != nil || len(files) == 0 {
		return nil, errorf("invalid_arguments")
	}
	channel := form.Get("channel_id")
	if channel == "" && form.Get("channels") != "" {
		channel, _, _ = strings.Cut(form.Get("channels"), ",")
	}
	thread := form.Get("thread_ts")
	if thread != "" && channel == "" {
		return nil, errorf("invalid_arguments")
	}
	if channel != "" && !isChannelID(channel) {
		return nil, errorf("invalid_channel")
	}
	if channel != "" && !s.canPost(channel) {
		return nil, errorf("not_in_channel")
	}
	comment := form.Get("initial_comment")

	s.mu.Lock()
	if thread != "" && s.findLocked(channel, thread) == nil {
		// A file shared as a reply needs a message to reply to in that channel.
		s.mu.Unlock()
		return nil, errorf("invalid_arguments", "[ERROR] thread_ts names no message in the channel")
	}
	for _, f := range files {
		u := s.uploads[f.ID]
		if u == nil || !u.uploaded || u.completed {
			s.mu.Unlock()
			return nil, errorf("file_not_found")
		}
	}
	var out, shared []map[string]any
	for _, f := range files {
		u := s.uploads[f.ID]
		u.completed = true
		title := f.Title
		if title == "" {
			title = u.name
		}
		s.files = append(s.files, File{ID: u.id, Name: u.name, Title: title, Content: u.content,
			Channel: channel, ThreadTS: thread, InitialComment: comment, SnippetType: u.snippet, AltTxt: u.altTxt})
		out = append(out, map[string]any{"id": u.id, "title": title})
		shared = append(shared, map[string]any{"id": u.id, "name": u.name, "title": title, "size": len(u.content)})
	}
	var ev map[string]any
	var ts string
	if channel != "" {
		ts = s.newTSLocked()
		st := &stored{channel: channel, ts: ts, threadTS: thread, user: botUserID, botID: botID,
			text: comment, files: shared, subtype: "file_share"}
		s.storeLocked(st)
		ev = st.wire()
		ev["channel"], ev["event_ts"], ev["channel_type"] = channel, ts, "im"
	}
	s.notifyLocked()
	s.mu.Unlock()
	if ev != nil && s.cfg.echo && isDM(channel) {
		s.echo(ev, ts)
	}
	return map[string]any{"files": out}, nil
}

// responseURLMethod is the name under which faults for response_url posts
// are queued (see FailNext).
const responseURLMethod = "response_url"

// handleResponseURL receives posts to a slash command's response_url: JSON
// {text, blocks, response_type, replace_original, delete_original}. Like
// Slack's, it answers failures with an HTTP error status, which slack-go
// reports as a slack.StatusCodeError: 404 expired_url 30 minutes after the
// command (by the fake's Clock), 404 used_url after five posts.
func (s *Server) handleResponseURL(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/commands/"), "/")
	var sl *slash
	if len(parts) == 3 {
		s.mu.Lock()
		sl = s.slashes[parts[1]]
		s.mu.Unlock()
	}
	if sl == nil {
		http.Error(w, "invalid_url", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	f, faulty := s.popFaultLocked(responseURLMethod)
	s.mu.Unlock()
	if faulty {
		f.writePlain(w, http.StatusNotFound)
		return
	}
	var msg struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
		ThreadTS        string          `json:"thread_ts"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil || json.Unmarshal(body, &msg) != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	if string(msg.Blocks) == "null" { // slack-go always sends "blocks", null when there are none
		msg.Blocks = nil
	}
	nblocks := 0
	if msg.Blocks != nil {
		n, berr := checkBlocks(msg.Blocks)
		if berr != nil {
			http.Error(w, berr.Code, http.StatusBadRequest)
			return
		}
		nblocks = n
	}
	if msg.Text == "" && nblocks == 0 && !msg.DeleteOriginal {
		http.Error(w, "no_text", http.StatusBadRequest)
		return
	}
	if utf8.RuneCountInString(msg.Text) > maxTextChars {
		http.Error(w, "msg_too_long", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	if s.cfg.now().Sub(sl.sentAt) > responseURLLife {
		s.mu.Unlock()
		http.Error(w, "expired_url", http.StatusNotFound)
		return
	}
	if sl.uses >= maxResponseURLUses {
		s.mu.Unlock()
		http.Error(w, "used_url", http.StatusNotFound)
		return
	}
	sl.uses++
	ts := s.newTSLocked()
	m := Message{Method: "response_url", Channel: sl.channel, ThreadTS: msg.ThreadTS,
		Text: msg.Text, Blocks: msg.Blocks, User: sl.user, TS: ts, ResponseType: msg.ResponseType,
		ReplaceOriginal: msg.ReplaceOriginal, DeleteOriginal: msg.DeleteOriginal}
	if msg.ResponseType == "in_channel" {
		s.storeLocked(&stored{channel: sl.channel, ts: ts, threadTS: msg.ThreadTS, user: botUserID,
			botID: botID, text: msg.Text, blocks: msg.Blocks})
		s.addMessageLocked(m)
	} else {
		s.addEphemeralLocked(m)
	}
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// writePlain answers with f as an endpoint outside the Web API does (an
// upload URL, a response_url): a 429 with Retry-After, f's HTTP status, or
// f's error text with status otherwise.
func (f fault) writePlain(w http.ResponseWriter, otherwise int) {
	switch {
	case f.rateLimit:
		w.Header().Set("Retry-After", strconv.FormatInt(int64((f.retryAfter+time.Second-1)/time.Second), 10))
		http.Error(w, "ratelimited", http.StatusTooManyRequests)
	case f.status != 0:
		http.Error(w, http.StatusText(f.status), f.status)
	default:
		http.Error(w, f.slackErr, otherwise)
	}
}
