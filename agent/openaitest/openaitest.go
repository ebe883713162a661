// Package openaitest runs a local, scripted, OpenAI-compatible chat-completions
// server for tests, in the manner of net/http/httptest. It is for tests only.
//
// The server speaks the wire protocol that github.com/sashabaranov/go-openai
// v1.43.0 uses: POST {URL}/chat/completions with "Authorization: Bearer KEY"
// and a JSON body, answered with a chat.completion object or with OpenAI's
// error JSON. It is strict where the real API is strict: a request that the
// real API would refuse (a tool call left without its tool message, a tool
// message without a call, an ill-formed tool, a missing content) is answered
// with a 400 and never reaches the script, so a test cannot pass on a request
// that production would fail.
//
// Each reply comes from the test's script: replies queued with Push, or a
// function set with Handle. A request that finds no reply is answered with a
// 500 and fails the test. Every request is recorded, raw and decoded.
//
// Safety contract: the server listens on 127.0.0.1 only, never calls out,
// and every request it holds (Hang, Delay) ends when the client gives up,
// when the server is closed, or after a bounded time, so no goroutine
// outlives the test.
package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultAPIKey is the API key a Server accepts unless WithAPIKey says otherwise.
const DefaultAPIKey = "sk-test"

// DefaultHangLimit bounds how long a Hang or Delay reply holds a request
// when neither the client nor the server ends it first.
const DefaultHangLimit = 10 * time.Second

// maxBody bounds the request body the server reads.
const maxBody = 32 << 20

// A ToolCall is one function call in a scripted reply.
type ToolCall struct {
	// ID is the call's id. When empty the server assigns "call_N",
	// unique for the server's lifetime.
	ID string
	// Name is the function's name. It need not be one the request offered:
	// a hostile or confused model may name any tool (see Exchange.Unoffered).
	Name string
	// Arguments is the raw JSON text the model sends, delivered as-is. It
	// may be invalid JSON on purpose.
	Arguments string
}

// A Reply is what the scripted model answers to one request.
type Reply struct {
	// Content is the assistant's text. With no ToolCalls it is the final
	// answer; alongside ToolCalls it is sent too (real models sometimes do),
	// and when empty the message's content is null.
	Content string
	// ToolCalls, when not empty, make the reply a tool-call turn with
	// finish_reason "tool_calls".
	ToolCalls []ToolCall
	// FinishReason overrides the finish_reason ("length", "content_filter", …).
	FinishReason string

	// Status, when neither 0 nor 200, fails the request with that HTTP status
	// and OpenAI's error JSON for it (429, 500, 502, 503 have the real bodies;
	// others get a generic one).
	Status int
	// RetryAfter is the Retry-After header of a 429 (default "1"); it is
	// sent with other failing statuses only when set.
	RetryAfter string
	// Body, when set with a failing Status, replaces the error JSON verbatim,
	// for example with an HTML gateway page.
	Body string

	// Hang holds the request without answering until the client gives up,
	// the server closes or the hang limit passes; then the connection is
	// dropped. It exercises the client's timeout for real.
	Hang bool
	// Delay holds the request this long before answering (a slow model).
	// If the client gives up first, nothing is sent.
	Delay time.Duration
	// Drop closes the connection without any answer.
	Drop bool

	// PromptTokens and CompletionTokens are the usage reported. When zero,
	// they are estimated as a quarter of the bytes of the request's messages
	// and of the reply's content and tool calls (at least 1 each).
	PromptTokens, CompletionTokens int
}

// An Exchange is one HTTP request the server received and what it answered.
type Exchange struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Request is the body decoded with go-openai's types; Decoded reports
	// whether the body decoded at all.
	Request openai.ChatCompletionRequest
	Decoded bool
	// Status is the HTTP status answered, 0 while the request is in flight
	// or when the connection was dropped without an answer.
	Status int
	// Error is the error message answered, if any.
	Error string
	// Scripted reports whether a reply was taken from the script (a request
	// refused by validation or authentication consumes none).
	Scripted bool
	// Reply is the scripted reply used, when Scripted.
	Reply Reply
	// Unoffered names the scripted tool calls whose tool the request did
	// not offer in its tools.
	Unoffered []string
	// ClientGone reports that the client gave up while the request was held.
	ClientGone bool
}

// An Option configures a Server.
type Option func(*Server)

// WithAPIKey sets the only API key the server accepts.
func WithAPIKey(key string) Option {
	return func(s *Server) { s.key = key }
}

// WithModels restricts the models the server serves; a request for another
// answers 404 with code "model_not_found", as the real API does. By default
// any non-empty model name is served.
func WithModels(names ...string) Option {
	return func(s *Server) {
		s.models = make(map[string]bool, len(names))
		for _, n := range names {
			s.models[n] = true
		}
	}
}

// WithHangLimit bounds how long a Hang or Delay reply may hold a request.
func WithHangLimit(d time.Duration) Option {
	return func(s *Server) { s.hangLimit = d }
}

// A Server is a scripted chat-completions server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL to give the client (openai.ClientConfig.BaseURL):
	// http://127.0.0.1:PORT/v1, without a trailing slash.
	URL string

	t         testing.TB
	ts        *httptest.Server
	key       string
	models    map[string]bool
	hangLimit time.Duration
	closing   chan struct{}
	closeOnce sync.Once
	inflight  atomic.Int64
	handlers  sync.WaitGroup // every running handler; waited for by Close

	mu        sync.Mutex
	queue     []Reply
	handler   func(openai.ChatCompletionRequest) Reply
	exchanges []Exchange
	nextResp  int
	nextCall  int
}

// NewServer starts a Server on 127.0.0.1 and closes it when t's test ends.
// The script starts empty: queue replies with Push or set Handle before the
// client calls.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:         t,
		key:       DefaultAPIKey,
		hangLimit: DefaultHangLimit,
		closing:   make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.ts.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close stops the server: held requests are dropped at once, then Close
// waits for every handler to return. It is safe to call more than once.
// After Close the client's requests fail to connect.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.ts.Close()
		// ts.Close stops waiting for a connection once it is hijacked (a
		// dropped one), so wait for those handlers here. No handler can
		// start any more: the listener and every connection are closed.
		s.handlers.Wait()
	})
}

// Push appends replies to the script. Queued replies are used first, in
// order, one per request that passes validation.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Handle sets a function that decides the reply to each valid request once
// the queue is empty. It is called without the server's lock held, from the
// request's goroutine, so it may call the Server's methods; it must be safe
// for concurrent use if the client calls concurrently.
func (s *Server) Handle(f func(req openai.ChatCompletionRequest) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Pending returns the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request whose body decoded, in the order received,
// including those answered with an error.
func (s *Server) Requests() []openai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []openai.ChatCompletionRequest
	for _, e := range s.exchanges {
		if e.Decoded {
			out = append(out, e.Request)
		}
	}
	return out
}

// Exchanges returns a copy of every exchange so far, in the order received.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// Count returns the number of HTTP requests received, whatever the answer.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.exchanges)
}

// InFlight returns the number of requests being handled right now.
func (s *Server) InFlight() int {
	return int(s.inflight.Load())
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.handlers.Add(1)
	defer s.handlers.Done()
	s.inflight.Add(1)
	defer s.inflight.Add(-1)

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	ex := Exchange{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err == nil && len(bytes.TrimSpace(body)) > 0 {
		ex.Decoded = json.Unmarshal(body, &ex.Request) == nil
	}
	s.mu.Lock()
	idx := len(s.exchanges)
	s.exchanges = append(s.exchanges, ex)
	s.mu.Unlock()

	if err != nil {
		s.fail(w, idx, &apiError{status: http.StatusRequestEntityTooLarge, Message: "openaitest: request body too large", Type: "invalid_request_error"}, nil)
		return
	}
	if e := s.authenticate(r); e != nil {
		s.fail(w, idx, e, nil)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		s.fail(w, idx, &apiError{status: http.StatusNotFound, Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), Type: "invalid_request_error"}, nil)
		return
	}
	if r.Method != http.MethodPost {
		s.fail(w, idx, &apiError{status: http.StatusMethodNotAllowed, Message: fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path), Type: "invalid_request_error"}, nil)
		return
	}
	offered, e := validate(body)
	if e != nil {
		s.fail(w, idx, e, nil)
		return
	}
	req := ex.Request
	if s.models != nil && !s.models[req.Model] {
		s.fail(w, idx, &apiError{
			status:  http.StatusNotFound,
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model),
			Type:    "invalid_request_error",
			Code:    "model_not_found",
		}, nil)
		return
	}

	reply, ok := s.next(req)
	if !ok {
		msg := fmt.Sprintf("openaitest: the script ran out: request %d (%d messages) found no reply", idx+1, len(req.Messages))
		s.t.Errorf("%s", msg)
		s.fail(w, idx, &apiError{status: http.StatusInternalServerError, Message: msg, Type: "server_error"}, nil)
		return
	}
	s.update(idx, func(e *Exchange) {
		e.Scripted, e.Reply = true, reply
		for _, c := range reply.ToolCalls {
			if !offered[c.Name] {
				e.Unoffered = append(e.Unoffered, c.Name)
			}
		}
	})
	s.respond(w, r, idx, req, body, reply)
}

func (s *Server) update(idx int, f func(*Exchange)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.exchanges[idx])
}

// next takes the reply for req from the queue, else from the handler.
func (s *Server) next(req openai.ChatCompletionRequest) (Reply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	h := s.handler
	s.mu.Unlock()
	if h == nil {
		return Reply{}, false
	}
	return h(req), true
}

func (s *Server) authenticate(r *http.Request) *apiError {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return &apiError{
			status:  http.StatusUnauthorized,
			Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
			Type:    "invalid_request_error",
		}
	}
	key, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || key != s.key {
		return &apiError{
			status:  http.StatusUnauthorized,
			Message: fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", mask(key)),
			Type:    "invalid_request_error",
			Code:    "invalid_api_key",
		}
	}
	return nil
}

// mask hides all but the ends of a key, as the real API does.
func mask(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("*", len(key))
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}

// hold waits d (or, when d <= 0, up to the hang limit) and reports how the
// wait ended: "" when the time passed, "client" when the client gave up,
// "closed" when the server is closing.
func (s *Server) hold(r *http.Request, d time.Duration) string {
	if d <= 0 || d > s.hangLimit {
		d = s.hangLimit
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-r.Context().Done():
		return "client"
	case <-s.closing:
		return "closed"
	case <-timer.C:
		return ""
	}
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request, idx int, req openai.ChatCompletionRequest, body []byte, reply Reply) {
	switch {
	case reply.Hang:
		if s.hold(r, 0) == "client" {
			s.update(idx, func(e *Exchange) { e.ClientGone = true })
			return
		}
		s.drop(w, idx)
		return
	case reply.Drop:
		s.drop(w, idx)
		return
	case reply.Delay > 0:
		switch s.hold(r, reply.Delay) {
		case "client":
			s.update(idx, func(e *Exchange) { e.ClientGone = true })
			return
		case "closed":
			s.drop(w, idx)
			return
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		s.fail(w, idx, statusError(reply.Status, req.Model), &reply)
		return
	}
	s.succeed(w, idx, req, body, reply)
}

// drop closes the client's connection without an answer.
func (s *Server) drop(w http.ResponseWriter, idx int) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil { // httptest serves HTTP/1.1, whose connections can always be hijacked
		s.fail(w, idx, &apiError{status: http.StatusInternalServerError, Message: "openaitest: drop connection: " + err.Error(), Type: "server_error"}, nil)
		return
	}
	conn.Close()
}

// statusError is the real API's error for a scripted failing status.
func statusError(status int, model string) *apiError {
	e := &apiError{status: status}
	switch {
	case status == http.StatusTooManyRequests:
		e.Message = fmt.Sprintf("Rate limit reached for %s in organization org-openaitest on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.", model)
		e.Type, e.Code = "requests", "rate_limit_exceeded"
	case status == http.StatusInternalServerError:
		e.Message, e.Type = "The server had an error while processing your request. Sorry about that!", "server_error"
	case status == http.StatusBadGateway:
		// The real 502 comes from Cloudflare with a numeric code.
		e.Message, e.Type, e.Code = "Bad gateway.", "cf_bad_gateway", 502
	case status == http.StatusServiceUnavailable:
		e.Message, e.Type = "The server is overloaded or not ready yet.", "server_error"
	case status >= 500:
		e.Message, e.Type = http.StatusText(status), "server_error"
	default:
		e.Message, e.Type = http.StatusText(status), "invalid_request_error"
	}
	return e
}

// apiError is OpenAI's error object; status is the HTTP status it goes with.
type apiError struct {
	status  int
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}

func param(p string) *string { return &p }

// fail answers e (or reply.Body) with its status and records it.
func (s *Server) fail(w http.ResponseWriter, idx int, e *apiError, reply *Reply) {
	h := w.Header()
	var body []byte
	if reply != nil && reply.Body != "" {
		body = []byte(reply.Body)
		if json.Valid(body) {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/html; charset=UTF-8")
		}
	} else {
		body, _ = json.Marshal(map[string]*apiError{"error": e})
		body = append(body, '\n')
		h.Set("Content-Type", "application/json")
	}
	if reply != nil {
		switch {
		case reply.RetryAfter != "":
			h.Set("Retry-After", reply.RetryAfter)
		case e.status == http.StatusTooManyRequests:
			h.Set("Retry-After", "1")
		}
	}
	h.Set("X-Request-Id", fmt.Sprintf("req_openaitest_%d", idx+1))
	w.WriteHeader(e.status)
	w.Write(body)
	s.update(idx, func(x *Exchange) { x.Status, x.Error = e.status, e.Message })
}

// Wire shapes of a chat.completion, as the real API sends them (content and
// refusal are null rather than absent).
type (
	wireCompletion struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		Choices           []wireChoice `json:"choices"`
		Usage             wireUsage    `json:"usage"`
		ServiceTier       string       `json:"service_tier"`
		SystemFingerprint string       `json:"system_fingerprint"`
	}
	wireChoice struct {
		Index        int         `json:"index"`
		Message      wireMessage `json:"message"`
		Logprobs     any         `json:"logprobs"`
		FinishReason string      `json:"finish_reason"`
	}
	wireMessage struct {
		Role        string         `json:"role"`
		Content     *string        `json:"content"`
		Refusal     *string        `json:"refusal"`
		ToolCalls   []wireToolCall `json:"tool_calls,omitempty"`
		Annotations []any          `json:"annotations"`
	}
	wireToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	wireUsage struct {
		PromptTokens            int            `json:"prompt_tokens"`
		CompletionTokens        int            `json:"completion_tokens"`
		TotalTokens             int            `json:"total_tokens"`
		PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
		CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
	}
)

func (s *Server) succeed(w http.ResponseWriter, idx int, req openai.ChatCompletionRequest, reqBody []byte, reply Reply) {
	s.mu.Lock()
	s.nextResp++
	id := fmt.Sprintf("chatcmpl-%d", s.nextResp)
	msg := wireMessage{Role: "assistant", Annotations: []any{}}
	completion := len(reply.Content)
	for _, c := range reply.ToolCalls {
		cid := c.ID
		if cid == "" {
			s.nextCall++
			cid = fmt.Sprintf("call_%d", s.nextCall)
		}
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: cid, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
		completion += len(c.Name) + len(c.Arguments)
	}
	s.mu.Unlock()

	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if reply.FinishReason != "" {
		finish = reply.FinishReason
	}
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		c := reply.Content
		msg.Content = &c
	}

	u := wireUsage{
		PromptTokens:            reply.PromptTokens,
		CompletionTokens:        reply.CompletionTokens,
		PromptTokensDetails:     map[string]int{"cached_tokens": 0, "audio_tokens": 0},
		CompletionTokensDetails: map[string]int{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
	if u.PromptTokens == 0 {
		u.PromptTokens = max(1, promptBytes(reqBody)/4)
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = max(1, completion/4)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens

	body, err := json.Marshal(wireCompletion{
		ID:                id,
		Object:            "chat.completion",
		Created:           time.Now().Unix(),
		Model:             req.Model,
		Choices:           []wireChoice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:             u,
		ServiceTier:       "default",
		SystemFingerprint: "fp_openaitest",
	})
	if err != nil { // cannot happen: every field marshals
		s.fail(w, idx, &apiError{status: http.StatusInternalServerError, Message: "openaitest: encode reply: " + err.Error(), Type: "server_error"}, nil)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Request-Id", fmt.Sprintf("req_openaitest_%d", idx+1))
	h.Set("Openai-Processing-Ms", "1")
	w.WriteHeader(http.StatusOK)
	w.Write(append(body, '\n'))
	s.update(idx, func(e *Exchange) { e.Status = http.StatusOK })
}

// promptBytes is the size of the request's messages array, for the usage
// estimate.
func promptBytes(body []byte) int {
	var top struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		return len(body)
	}
	return len(top.Messages)
}
