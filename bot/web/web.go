// Package web serves sqlbot's web page and JSON API: a page where a person
// asks a question (or picks a recorded one) and sees the answer, the SQL, the
// rows and any refusal, and POST /api/ask, which returns the JSON of
// `sqlbot ask --json` (agent.ResultJSON).
//
// Safety contract: questions go to the same Answerer as Slack's, so the same
// guard, read-only connection, policy and limits apply, and the same
// per-person and global question limits (through the Limiter, per token or
// remote address). Off loopback (the listener's address is not a loopback
// address) every request to the page and the API must carry the configured
// token as "Authorization: Bearer", compared in constant time, and New
// refuses to serve off loopback without one. Nothing from the data, the
// model or the question is ever interpreted as HTML or script: the page is
// rendered by html/template, which escapes every value, and is served with a
// Content-Security-Policy that allows no script at all, and cross-origin
// form posts are refused. Error text never reaches a person: refusals show
// their layer and reason, failures a fixed sentence. The text of questions
// and answers is never logged.
package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sqlbot/agent"
	"sqlbot/agent/present"
	"sqlbot/bot"
	"sqlbot/bot/state"
)

// DefaultAddr is where `sqlbot serve` serves the page when Slack is off and
// no address is configured.
const DefaultAddr = "127.0.0.1:8080"

// maxBodyBytes bounds a request body: a question is a few hundred
// characters, and its JSON or form encoding a few times that.
const maxBodyBytes = 64 << 10

// An Answerer answers one question. *agent.Agent implements it, and so does
// whatever decorates it for Slack (the same interface as bot.Answerer).
type Answerer interface {
	Ask(ctx context.Context, req agent.Request) (*agent.Result, error)
}

// A Limiter counts questions per person and from everyone, and turns away
// those over a limit. state.Store implements it, and so does state.Memory.
type Limiter interface {
	Allow(ctx context.Context, user string, l state.Limits) (state.Verdict, error)
}

// Config holds the web surface's settings. Every number must be positive:
// the caller gives the deployment's values (the bot's defaults for unset
// ones).
type Config struct {
	// Addr is the address the listener is bound to. When its host is not a
	// loopback address (IsLoopback), every request must carry Token.
	Addr string
	// Token is the bearer token required off loopback; on loopback it is
	// not asked for.
	Token string

	Limiter          Limiter
	Limits           state.Limits
	MaxQuestionChars int           // characters per question
	MaxConcurrent    int           // questions worked on at once; the rest wait
	AnswerTimeout    time.Duration // the work on one question

	// Questions are offered on the page to pick from (the recorded ones);
	// may be empty.
	Questions []string
}

// IsLoopback reports whether addr ("host:port") names a loopback host: a
// loopback IP or "localhost". An empty host (every interface), an
// unspecified address such as 0.0.0.0 and any other name are not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// A Server is the web page and the JSON API. It is safe for concurrent use.
type Server struct {
	cfg       Config
	ans       Answerer
	log       *slog.Logger
	tokenHash [sha256.Size]byte // of Token, when it is required
	needToken bool
	slots     chan struct{} // one per question worked on
	page      *pageRenderer
}

// New checks cfg and returns the Server that answers with ans. Logs go to
// lg (nil: discarded). It is an error to serve off loopback without a token.
func New(cfg Config, ans Answerer, lg *slog.Logger) (*Server, error) {
	var errs []error
	if ans == nil {
		errs = append(errs, errors.New("web: answerer is nil"))
	}
	if cfg.Limiter == nil {
		errs = append(errs, errors.New("web: limiter is nil"))
	}
	needToken := !IsLoopback(cfg.Addr)
	if needToken && cfg.Token == "" {
		errs = append(errs, fmt.Errorf("web: %s is not a loopback address, and no API token is set", cfg.Addr))
	}
	for name, v := range map[string]int64{"MaxQuestionChars": int64(cfg.MaxQuestionChars), "MaxConcurrent": int64(cfg.MaxConcurrent),
		"AnswerTimeout": int64(cfg.AnswerTimeout)} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("web: %s must be positive", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	page, err := newPageRenderer()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, ans: ans, log: lg, tokenHash: sha256.Sum256([]byte(cfg.Token)), needToken: needToken,
		slots: make(chan struct{}, cfg.MaxConcurrent), page: page}, nil
}

// Handler serves GET / (the page), POST / (a question from the page's
// form), GET /web.css and POST /api/ask. Off loopback each needs the bearer
// token (401 with a JSON error otherwise); a form posted from another origin
// is refused (403).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("POST /{$}", s.servePage)
	mux.HandleFunc("GET /web.css", serveCSS)
	mux.HandleFunc("POST /api/ask", s.serveAPI)
	return s.headers(s.auth(http.NewCrossOriginProtection().Handler(mux)))
}

// headers sets what every response carries: no script may run, no other
// origin may frame the page, nothing is sniffed, cached or sent as referrer.
func (s *Server) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// auth lets a request through on loopback, and off loopback only with the
// token.
func (s *Server) auth(next http.Handler) http.Handler {
	if !s.needToken {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got))) // equal lengths: the compare takes the same time whatever was sent
		if !ok || subtle.ConstantTimeCompare(sum[:], s.tokenHash[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sqlbot"`)
			writeJSON(w, http.StatusUnauthorized, apiError{Error: "this server is not on loopback: send its API token (SQLBOT_API_TOKEN) as Authorization: Bearer <token>"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// person is whom the per-person limits count a request against: the token
// when one is required, else the remote address.
func (s *Server) person(r *http.Request) string {
	if s.needToken {
		return "web-token:" + hex.EncodeToString(s.tokenHash[:6])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "web-addr:" + host
}

// A problem is why a question was not asked: its HTTP status and the
// sentence for the person.
type problem struct {
	status int
	text   string
	limit  state.Rule    // for a limit
	wait   time.Duration // for a limit: until a question would be taken
}

// ask checks question against the length and the limits and, if it passes,
// asks it. A nil problem means the Answerer was asked (res and err are what
// it returned).
func (s *Server) ask(ctx context.Context, who, question string) (*agent.Result, error, *problem) {
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, nil, &problem{status: http.StatusBadRequest, text: "The question is empty: ask something about the data."}
	}
	if n := utf8.RuneCountInString(question); n > s.cfg.MaxQuestionChars {
		return nil, nil, &problem{status: http.StatusBadRequest, text: bot.LengthText(n, s.cfg.MaxQuestionChars)}
	}
	v, err := s.cfg.Limiter.Allow(ctx, who, s.cfg.Limits)
	if err != nil {
		s.log.ErrorContext(ctx, "web: question limits could not be checked", "err", err)
		return nil, nil, &problem{status: http.StatusServiceUnavailable, text: "I can't check the question limits just now; please try again in a minute."}
	}
	if v.Rule != state.RuleNone {
		s.log.InfoContext(ctx, "web: question turned away by a limit", "limit", string(v.Rule))
		return nil, nil, &problem{status: http.StatusTooManyRequests, text: bot.LimitText(v), limit: v.Rule, wait: v.Wait}
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, &problem{status: http.StatusServiceUnavailable, text: "The request ended before the question could be worked on."}
	}
	defer func() { <-s.slots }()
	actx, cancel := context.WithTimeout(ctx, s.cfg.AnswerTimeout)
	defer cancel()
	res, err := s.ans.Ask(actx, agent.Request{Question: question})
	if res == nil {
		res = &agent.Result{Question: question, Outcome: agent.Failed}
	}
	s.log.InfoContext(ctx, "web: question answered", "outcome", string(res.Outcome), "steps", res.Steps,
		"elapsed", res.Elapsed, "failed", err != nil)
	if err != nil {
		s.log.DebugContext(ctx, "web: answer failed", "err", err)
	}
	return res, err, nil
}

// An apiError is the body of every API answer that is not a result.
type apiError struct {
	Error        string     `json:"error"`
	Limit        state.Rule `json:"limit,omitempty"`
	RetryAfterMS int64      `json:"retry_after_ms,omitempty"`
}

// serveAPI answers POST /api/ask {"question": "..."} with the JSON of
// `sqlbot ask --json`: 200 for every outcome the agent reached, 503 (same
// body, with "error" a fixed sentence) when it failed; 400, 413, 429 and 503
// with {"error": "..."} when the question was not asked.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Question *string `json:"question"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&in); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, apiError{Error: fmt.Sprintf("the body is longer than %s bytes", present.Thousands(maxBodyBytes))})
			return
		}
		writeJSON(w, http.StatusBadRequest, apiError{Error: `the body must be a JSON object: {"question": "..."}`})
		return
	}
	if in.Question == nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: `the body has no "question": send {"question": "..."}`})
		return
	}
	res, err, p := s.ask(r.Context(), s.person(r), *in.Question)
	if p != nil {
		if p.limit != state.RuleNone {
			w.Header().Set("Retry-After", strconv.Itoa(int(p.wait/time.Second)+1))
		}
		writeJSON(w, p.status, apiError{Error: p.text, Limit: p.limit, RetryAfterMS: p.wait.Milliseconds()})
		return
	}
	js := res.JSON()
	status := http.StatusOK
	if err != nil {
		js.Error = agent.FailureText(err)
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, js)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone; nothing to do
}
