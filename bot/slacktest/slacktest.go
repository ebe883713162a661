// Package slacktest is a local fake of Slack's Web API and Socket Mode, for
// tests only, in the manner of net/http/httptest.
//
// NewServer starts it on 127.0.0.1. A test points the real slack-go client at
// it (slack.OptionAPIURL(s.URL), slack.OptionAppLevelToken(s.AppToken())),
// pushes events and slash commands into the Socket Mode connection, and reads
// back, in order, what the bot acknowledged, posted (in a conversation, or to
// one person only), reacted and uploaded.
//
// The fake follows the wire protocol that slack-go v0.35.0 speaks and is as
// strict as Slack where that matters to a bot: tokens are checked per method,
// and with AppManifest so are the scopes the app was granted; posting needs
// the bot to be a member of the channel, and an ephemeral message needs its
// recipient to be one (user_not_in_channel); messages need text or blocks, and
// Block Kit limits are enforced, the blocks' total size counted with their
// structure; reactions need an existing message; uploads must be completed
// with the bytes they declared, into a thread only when its thread_ts names
// a message in that channel, and a snippet (an upload with a snippet_type)
// is limited to 1 MiB and to the types Slack knows; a response_url takes at
// most five posts within 30 minutes (of a clock the test can control); an
// ephemeral message in a thread is shown only when the thread has replies;
// the socket must be pinged; and `disconnect` is followed by a dropped TCP
// connection without a close frame. Faults (Slack errors, `ratelimited` as
// HTTP 429 with Retry-After or as HTTP 200, other HTTP statuses) can be
// injected per method (and on the POST to an upload URL), and a call can be
// held while a test looks at what happens meanwhile.
//
// Several clients (replicas of a bot) can connect with the same app token,
// up to MaxConnections, as with Slack: each `hello` carries the number of
// live connections, and each envelope goes to one live connection chosen at
// random from a seed (Seed). A test can drop one connection (DropConn), send
// it `disconnect` (DisconnectConn), or have connections dropped at random
// while envelopes flow (DropSockets); with RedeliverUnacked, an envelope not
// acknowledged in time comes back on another connection, as Slack's do.
// Load sends a burst of mentions from many people through all this and
// reports, per mention, the replies the bot posted and how long the first
// took.
//
// A Server is safe for concurrent use. Every goroutine it starts has ended when
// Close returns; NewServer registers Close with t.Cleanup. Never import this
// package from production code.
package slacktest

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Identities of the fake workspace and app.
const (
	appToken  = "xapp-1-test"
	botToken  = "xoxb-test"
	botUserID = "UBOT"
	botID     = "BBOT"
	teamID    = "T1"
	appID     = "A1"

	// verificationToken is the legacy token Slack still puts in payloads.
	verificationToken = "verification-token"
)

// DefaultPingInterval is how often the fake pings a Socket Mode connection
// unless PingInterval says otherwise. slack-go reconnects when it has seen no
// ping for its own interval (30 s by default), so keep the fake's shorter.
const DefaultPingInterval = 10 * time.Second

// MaxRetries is how many times RedeliverUnacked redelivers one event, as Slack
// does, before giving up. A delivery lost with its connection (see
// Envelope.Lost) is not counted: the fake dropped the socket under it, and
// it is sent again.
const MaxRetries = 3

// Streams of the generators seeded by Seed and DropSockets, so that the same
// seed gives the two different sequences.
const (
	spreadStream = 0x5350524541440000
	dropStream   = 0x44524f5053000000
)

// ErrNotConnected is returned by Disconnect when no Socket Mode client is
// connected, and, wrapped, by DropConn and DisconnectConn when the
// connection named is not open.
var ErrNotConnected = errors.New("slacktest: no socket mode connection")

// ErrClosed is returned, wrapped, by calls that wait when the Server is closed
// before they finish.
var ErrClosed = errors.New("slacktest: server closed")

// ErrUnknownEnvelope is returned by Redeliver for an envelope ID the Server
// never sent as an events_api envelope.
var ErrUnknownEnvelope = errors.New("slacktest: unknown envelope")

// An Option configures a Server.
type Option func(*config)

type config struct {
	pingInterval   time.Duration
	echo           bool
	redeliverAfter []time.Duration // wait before retry 1, 2, …; the last repeats
	grants         *grants         // nil: everything granted
	now            func() time.Time
	seed           uint64
}

// PingInterval sets how often the fake sends a WebSocket ping on each Socket
// Mode connection (DefaultPingInterval if d <= 0). Tests that shorten
// slack-go's socketmode.OptionPingInterval must shorten this one further.
func PingInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.pingInterval = d
		}
	}
}

// EchoBotMessages makes the fake behave like Slack in direct messages: what
// the bot posts into a DM channel (ID starting with "D") comes back to it as a
// `message` event carrying bot_id and the bot's user ID, an update comes back
// as a `message_changed` event, and a file shared into a DM as a
// `file_share` message. Echoes are delivered asynchronously, after the Web API
// call has answered, and counted in Sent.
func EchoBotMessages(on bool) Option {
	return func(c *config) { c.echo = on }
}

// RedeliverUnacked makes the fake redeliver an events_api envelope that has
// not been acknowledged within after, as Slack does: the same payload and
// event_id under a new envelope_id, with retry_attempt incremented and
// retry_reason "timeout", on another live connection than the one it went
// on when there is one, at most MaxRetries times (deliveries lost with
// their connection not counted: see Envelope.Lost). An ack counts whichever
// connection it arrives on. Slack's own deadline is 3 s, and it waits longer
// before its later retries (for the Events API, about a minute before the
// second and five before the third); later, if given, are the fake's waits
// before the second and third retries (the last one given repeats), and
// without it the fake waits after each time. Off by default, so that tests
// are deterministic; a test that must not depend on timing calls
// Server.RedeliverUnackedNow instead.
func RedeliverUnacked(after time.Duration, later ...time.Duration) Option {
	return func(c *config) {
		c.redeliverAfter = nil
		if after > 0 {
			c.redeliverAfter = append([]time.Duration{after}, later...)
		}
	}
}

// Seed sets the seed (1 by default) of the generator that chooses, for each
// envelope, which live Socket Mode connection carries it: one at random, as
// Slack does, so that envelopes spread over all of an app's connections
// (see MaxConnections). For the same seed, the same sequence of sends over
// the same live connections takes the same connections.
func Seed(seed uint64) Option {
	return func(c *config) { c.seed = seed }
}

// An Ack is one frame the client sent over Socket Mode: normally an
// acknowledgement {"envelope_id": …, "payload": …}.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil when the ack carried none
	At         time.Time
	// Size is the frame's length in bytes. Slack silently drops responses of
	// 20 KB or more; such an ack has Dropped set and never satisfies WaitAck.
	Size    int
	Dropped bool
	// Latency is the time since the envelope was (last) sent; zero when the
	// envelope ID is unknown. Slack redelivers after 3 s without an ack.
	Latency time.Duration
	// Conn is the ID of the connection the ack arrived on (see Conns), which
	// need not be the one the envelope went on.
	Conn int
}

// An Envelope is one Socket Mode message the fake sent after `hello`:
// an events_api or slash_commands envelope.
type Envelope struct {
	EnvelopeID   string
	Type         string // "events_api" or "slash_commands"
	EventID      string // events_api only
	RetryAttempt int
	RetryReason  string
	JSON         json.RawMessage // the whole frame as sent; do not modify
	SentAt       time.Time
	// Conn is the ID of the connection it was sent on (see Conns).
	Conn int
	// Lost is set when the fake dropped the connection (DropSockets,
	// DropConn, DropConnection, a missed ping) instead of writing the
	// envelope, or after writing it but before its ack came: a socket closed
	// abruptly loses what was in flight on it, and the client may have read
	// an envelope whose ack never made it back. Its ack may still arrive on
	// another connection (slack-go queues acks per client, not per socket).
	// A lost delivery, unless acknowledged after all, is redelivered without
	// counting against MaxRetries.
	Lost bool
}

// A Message is something the bot posted, in the order the fake received it.
type Message struct {
	// Method is "chat.postMessage", "chat.postEphemeral", "chat.update",
	// "response_url" (a post to a slash command's response_url) or "ack" (the
	// text or blocks in a slash command's ack payload, shown to its user).
	// Messages holds what everyone in a conversation sees; Ephemeral what one
	// person sees (chat.postEphemeral, and ephemeral slash responses).
	Method   string
	Channel  string
	ThreadTS string
	Text     string
	Blocks   json.RawMessage // nil when none were sent
	User     string          // the recipient of an ephemeral message or a slash response
	TS       string          // assigned by the fake; for chat.update, the updated message's
	// ResponseType, ReplaceOriginal and DeleteOriginal are set by response_url posts.
	ResponseType    string
	ReplaceOriginal bool
	DeleteOriginal  bool
	// Hidden is set on an ephemeral message posted into a thread that had no
	// replies yet: Slack accepts it but shows it to nobody.
	Hidden bool
	// At is when the fake received it.
	At time.Time
}

// A Reaction is one successful reactions.add or reactions.remove call.
type Reaction struct {
	Method    string // "reactions.add" or "reactions.remove"
	Channel   string
	Timestamp string
	Name      string
}

// A File is an upload completed by files.completeUploadExternal.
type File struct {
	ID             string
	Name           string // the filename given to files.getUploadURLExternal
	Title          string // defaults to Name, as in Slack
	Content        []byte
	Channel        string // empty when the file was not shared
	ThreadTS       string
	InitialComment string
	// SnippetType is the snippet_type given to files.getUploadURLExternal;
	// empty for a plain file.
	SnippetType string
	// AltTxt is the alt_txt given to files.getUploadURLExternal: an image's
	// description for screen readers.
	AltTxt string
}

// A Call is one request to a Web API method (a path under URL), whatever its
// outcome.
type Call struct {
	Method string
	Token  string // from the Authorization header, else the token field
	Form   url.Values
	// Error is the Slack error code the fake answered with, "ratelimited" for
	// a 429, "http NNN" for an injected status, or empty on success.
	Error string
}

// Server is a fake Slack. Its exported field is read-only.
type Server struct {
	// URL is the Web API base URL, ending in "/" as slack-go requires,
	// e.g. "http://127.0.0.1:PORT/api/".
	URL string

	cfg    config
	hs     *httptest.Server
	base   string // "http://127.0.0.1:PORT"
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu            sync.Mutex
	changed       chan struct{} // closed and replaced on every change
	changes       uint64        // how many times changed was closed
	closed        bool
	conns         map[*conn]bool // every upgraded connection still open
	live          []*conn        // connections envelopes may go on, oldest first
	connSeq       int
	connLog       []*ConnInfo // every connection, in the order opened
	spread        *rand.Rand  // chooses each envelope's connection
	dropRate      float64     // see DropSockets
	dropRNG       *rand.Rand
	ackq          ackHeap       // envelopes awaiting their ack, soonest due first
	ackWake       chan struct{} // tells redeliverLoop that ackq grew
	redelivering  int           // redeliveries of redeliverLoop under way
	tickets       map[string]bool
	connections   int
	seq           int
	lastTS        int64 // microseconds since the epoch
	envelopes     map[string]*envelope
	sent          []Envelope
	acks          []Ack
	messages      []Message // seen by everyone in the conversation
	ephemeral     []Message // seen by one person
	reactions     []Reaction
	reacted       map[reactionKey]bool
	uploads       map[string]*upload // by file ID
	uploadTickets map[string]*upload // upload ticket → upload
	files         []File
	calls         []Call
	faults        map[string][]fault
	history       map[string][]*stored // channel → messages, in arrival order
	stored        map[msgKey]*stored   // the same, by channel and ts
	replies       map[msgKey]int       // channel and thread ts → replies in the history
	slashes       map[string]*slash    // response_url ID → its command
	members       map[string]bool      // channels the bot is a member of (besides DMs)
	people        map[msgKey]bool      // channel and user ID → the user is a member there (see UserJoin)
	holds         map[string][]*Hold   // by method

	assistantCalls []AssistantCall
	statuses       map[msgKey]string // an assistant thread's status, until cleared
}

type reactionKey struct{ channel, ts, name string }

// msgKey names a message: its channel and ts.
type msgKey struct{ channel, ts string }

type fault struct {
	slackErr   string
	retryAfter time.Duration
	rateLimit  bool
	status     int
}

// NewServer starts a fake Slack on 127.0.0.1 and registers its Close with
// t.Cleanup. The tokens it accepts are AppToken and BotToken; the bot's user
// ID is BotUserID, its bot ID "BBOT", the team "T1" and the app "A1".
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{pingInterval: DefaultPingInterval, now: time.Now, seed: 1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.grants != nil && cfg.grants.err != nil {
		t.Fatal(cfg.grants.err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	s := &Server{
		cfg:           cfg,
		ctx:           ctx,
		cancel:        cancel,
		changed:       make(chan struct{}),
		conns:         make(map[*conn]bool),
		tickets:       make(map[string]bool),
		lastTS:        1700000000_000000,
		envelopes:     make(map[string]*envelope),
		reacted:       make(map[reactionKey]bool),
		uploads:       make(map[string]*upload),
		uploadTickets: make(map[string]*upload),
		faults:        make(map[string][]fault),
		history:       make(map[string][]*stored),
		stored:        make(map[msgKey]*stored),
		replies:       make(map[msgKey]int),
		statuses:      make(map[msgKey]string),
		slashes:       make(map[string]*slash),
		members:       make(map[string]bool),
		people:        make(map[msgKey]bool),
		holds:         make(map[string][]*Hold),
		spread:        rand.New(rand.NewPCG(cfg.seed, spreadStream)),
		ackWake:       make(chan struct{}, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.handleAPI)
	mux.HandleFunc("/link/", s.handleSocket)
	mux.HandleFunc("/upload/v1/", s.handleUpload)
	mux.HandleFunc("/commands/", s.handleResponseURL)
	s.hs = httptest.NewServer(mux)
	s.base = s.hs.URL
	s.URL = s.hs.URL + "/api/"
	t.Cleanup(s.Close)
	if len(cfg.redeliverAfter) > 0 {
		s.spawn(s.redeliverLoop)
	}
	return s
}

// Close drops every Socket Mode connection, stops the HTTP server and waits
// for every goroutine the Server started. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.notifyLocked()
		s.mu.Unlock()
		s.cancel()
		for _, c := range conns {
			c.close()
		}
		s.hs.Close()
		s.wg.Wait()
	})
}

// AppToken returns the app-level token apps.connections.open accepts.
func (s *Server) AppToken() string { return appToken }

// BotToken returns the bot token every other Web API method accepts.
func (s *Server) BotToken() string { return botToken }

// BotUserID returns the bot's user ID, as mentioned in "<@UBOT> …".
func (s *Server) BotUserID() string { return botUserID }

// notifyLocked wakes every waiter. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
	s.changes++
}

// addMessageLocked records m as seen by everyone in its conversation.
func (s *Server) addMessageLocked(m Message) {
	m.At = time.Now()
	s.messages = append(s.messages, m)
}

// addEphemeralLocked records m as seen by m.User only.
func (s *Server) addEphemeralLocked(m Message) {
	m.At = time.Now()
	s.ephemeral = append(s.ephemeral, m)
}

// Wait blocks until cond returns true, ctx is done or the Server is closed.
// cond is evaluated after every change to the Server's records and may call
// the Server's accessors (Messages, Acks, …).
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitConnected blocks until a Socket Mode client is connected and has been
// sent `hello`.
func (s *Server) WaitConnected(ctx context.Context) error {
	err := s.Wait(ctx, func() bool { return len(s.Live()) > 0 })
	if err != nil {
		return fmt.Errorf("slacktest: wait for connection: %w", err)
	}
	return nil
}

// Connections returns how many Socket Mode connections were opened and sent
// `hello` so far (apps.connections.open followed by a successful dial).
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// Counts are the sizes of the Server's records: Sent, Acks, Messages,
// Ephemeral and Calls.
type Counts struct {
	Sent, Acks, Messages, Ephemeral, Calls int
}

// Counts returns how many envelopes were sent, frames received, messages and
// ephemeral messages posted and Web API calls answered so far. Unlike the
// accessors that copy the records, it is cheap to poll during a long run.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counts{Sent: len(s.sent), Acks: len(s.acks), Messages: len(s.messages), Ephemeral: len(s.ephemeral), Calls: len(s.calls)}
}

// Acks returns every frame the client sent over Socket Mode, in order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.acks...)
}

// WaitAck blocks until envelopeID has been acknowledged (by an ack Slack
// would not drop) and returns the first such ack.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (Ack, error) {
	var got Ack
	err := s.Wait(ctx, func() bool {
		for _, a := range s.Acks() {
			if a.EnvelopeID == envelopeID && !a.Dropped {
				got = a
				return true
			}
		}
		return false
	})
	if err != nil {
		return Ack{}, fmt.Errorf("slacktest: wait for ack of %s: %w", envelopeID, err)
	}
	return got, nil
}

// Sent returns every events_api and slash_commands envelope sent, in order,
// including echoes and redeliveries. An envelope sent on a connection that
// then failed and sent again on another appears once, with the second.
func (s *Server) Sent() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Envelope(nil), s.sent...)
}

// Messages returns what the bot posted for everyone in a conversation to see
// (chat.postMessage, chat.update, and slash responses of type in_channel), in
// the order the fake received it.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Ephemeral returns what the bot posted for one person only (User), in the
// order the fake received it: chat.postEphemeral, and the slash responses
// (response_url posts and ack payloads) that were not of type in_channel.
func (s *Server) Ephemeral() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.ephemeral...)
}

// WaitEphemeral blocks until at least n ephemeral messages were posted and
// returns all of them.
func (s *Server) WaitEphemeral(ctx context.Context, n int) ([]Message, error) {
	var got []Message
	err := s.Wait(ctx, func() bool {
		got = s.Ephemeral()
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("slacktest: wait for %d ephemeral messages (have %d): %w", n, len(got), err)
	}
	return got, nil
}

// WaitMessages blocks until at least n messages were posted and returns all
// of them.
func (s *Server) WaitMessages(ctx context.Context, n int) ([]Message, error) {
	var got []Message
	err := s.Wait(ctx, func() bool {
		got = s.Messages()
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("slacktest: wait for %d messages (have %d): %w", n, len(got), err)
	}
	return got, nil
}

// Reactions returns every successful reactions.add and reactions.remove, in
// order.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Reaction(nil), s.reactions...)
}

// WaitReactions blocks until at least n reaction changes were recorded and
// returns all of them.
func (s *Server) WaitReactions(ctx context.Context, n int) ([]Reaction, error) {
	var got []Reaction
	err := s.Wait(ctx, func() bool {
		got = s.Reactions()
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("slacktest: wait for %d reactions (have %d): %w", n, len(got), err)
	}
	return got, nil
}

// Files returns every completed upload, in order of completion.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]File, len(s.files))
	for i, f := range s.files {
		f.Content = append([]byte(nil), f.Content...)
		out[i] = f
	}
	return out
}

// Calls returns every Web API call, in the order they were answered.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Form = cloneValues(c.Form)
		out[i] = c
	}
	return out
}

// FailNext makes the next call to method (e.g. "chat.postMessage") that
// passes the token check answer {"ok": false, "error": slackError}. Calls
// queue: two FailNext fail the next two calls. FailNext(method, "ratelimited")
// is the rate limit some methods answer with HTTP 200 and no Retry-After;
// slack-go reports it as a slack.SlackErrorResponse, not a
// *slack.RateLimitedError. The method "response_url"
// stands for the next post to any slash command's response_url, which then
// answers HTTP 404 with slackError as its body, as Slack does for
// expired_url; RateLimitNext and StatusNext take "response_url" too. The
// method "upload_url" likewise stands for the next POST of a file's bytes to
// an upload URL (from files.getUploadURLExternal), which then answers HTTP
// 400 with slackError as its body; StatusNext("upload_url", 500) makes it
// answer a bare 500. The bytes are then not stored, and the file cannot be
// completed.
func (s *Server) FailNext(method, slackError string) {
	s.addFault(method, fault{slackErr: slackError})
}

// RateLimitNext makes the next authenticated call to method answer HTTP 429
// with Retry-After in whole seconds (rounded up) and {"ok": false, "error":
// "ratelimited"}, as Slack does. slack-go reports it as *slack.RateLimitedError.
func (s *Server) RateLimitNext(method string, retryAfter time.Duration) {
	s.addFault(method, fault{rateLimit: true, retryAfter: retryAfter})
}

// StatusNext makes the next authenticated call to method answer with the bare
// HTTP status code. StatusNext("apps.connections.open", 404) makes slack-go's
// socketmode.Client.RunContext give up with a slack.StatusCodeError; other
// statuses make it retry with backoff.
func (s *Server) StatusNext(method string, code int) {
	s.addFault(method, fault{status: code})
}

func (s *Server) addFault(method string, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f)
}

func (s *Server) popFaultLocked(method string) (fault, bool) {
	q := s.faults[method]
	if len(q) == 0 {
		return fault{}, false
	}
	s.faults[method] = q[1:]
	return q[0], true
}

// spawn runs f on a goroutine that Close waits for, unless the Server is
// closed already. f must return once s.ctx is done.
func (s *Server) spawn(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// newTSLocked returns a fresh message timestamp, later than any seen.
func (s *Server) newTSLocked() string {
	s.lastTS += 100
	return formatTS(s.lastTS)
}

// seeTSLocked makes later timestamps come after ts.
func (s *Server) seeTSLocked(ts string) {
	if us, ok := parseTS(ts); ok && us > s.lastTS {
		s.lastTS = us
	}
}

func (s *Server) nextSeqLocked() int {
	s.seq++
	return s.seq
}

func formatTS(us int64) string {
	return fmt.Sprintf("%d.%06d", us/1_000_000, us%1_000_000)
}

// parseTS reads a Slack timestamp "SECONDS.MICROS" as microseconds.
func parseTS(ts string) (int64, bool) {
	sec, frac, ok := strings.Cut(ts, ".")
	if !ok || len(frac) != 6 {
		return 0, false
	}
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return 0, false
	}
	return a*1_000_000 + b, true
}

// tsLess orders Slack timestamps, falling back to string order.
func tsLess(a, b string) bool {
	x, ok1 := parseTS(a)
	y, ok2 := parseTS(b)
	if ok1 && ok2 {
		return x < y
	}
	return a < b
}

// newUUID returns a random RFC 4122 version 4 UUID, the shape of Slack's
// envelope IDs.
func newUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
