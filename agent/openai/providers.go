// Package openai is the agent's Model for OpenAI-compatible chat-completions
// APIs (OpenAI, and the local servers that speak its protocol: Ollama,
// llama.cpp, vLLM), through github.com/sashabaranov/go-openai. It is the only
// package of sqlbot that imports go-openai.
//
// Providers tries a list of endpoints in order and fails over on what
// another endpoint may fix (HTTP 429 and 5xx, timeouts, lost connections);
// an endpoint that failed waits at the back of the order for a cooldown. A
// 4xx answer that no other endpoint would fix (a bad key, an unknown model)
// stops the call with an *agent.ProviderError. Requests carry the
// conversation and the tool definitions as given; no key, and nothing of the
// request, is logged.
package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"sqlbot/agent"
	"sqlbot/agent/present"
)

// A Provider is one OpenAI-compatible endpoint. An empty BaseURL means
// DefaultBaseURL; an empty APIKey sends no Authorization header (fine for a
// local server); an empty Model means DefaultModel.
type Provider struct{ BaseURL, APIKey, Model string }

// DefaultModel is the model asked for when a Provider names none.
const DefaultModel = "gpt-4o-mini"

// DefaultBaseURL is OpenAI's own API, used when a Provider names no URL.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultCallTimeout bounds one call of one provider when NewProviders is
// given no timeout; past it the next provider is tried.
const DefaultCallTimeout = 60 * time.Second

// DefaultCooldown is how long a provider that failed over stays at the back
// of the order when it gave no Retry-After.
const DefaultCooldown = 30 * time.Second

// maxCooldown bounds a provider's Retry-After.
const maxCooldown = 5 * time.Minute

// Providers is a Model that tries its providers in order, each call bounded
// by its own timeout, and moves on after HTTP 429, 5xx, a timeout or a
// connection failure. A provider that failed is tried after the healthy ones
// for its Retry-After (or DefaultCooldown), so a hanging endpoint costs one
// timeout, not one per step; it is still tried when all before it fail.
// Providers is safe for concurrent use.
type Providers struct {
	ps        []*endpoint
	timeout   time.Duration
	failovers atomic.Int64

	// Log receives a warning per fail-over (provider name and status, never
	// the request). Nil: silent. Set it before the first Complete.
	Log *slog.Logger
}

var _ agent.Model = (*Providers)(nil)

type endpoint struct {
	name      string // "model@host": the provider's name in results and logs, never the key
	model     string
	client    *openai.Client
	downUntil atomic.Int64 // unix nanoseconds; 0: healthy
}

// NewProviders returns a Model over ps, tried in order. callTimeout bounds
// each attempt (zero: DefaultCallTimeout). hc is the HTTP client (nil: a new
// one); its own Timeout, if any, also applies.
func NewProviders(ps []Provider, callTimeout time.Duration, hc *http.Client) *Providers {
	if hc == nil {
		hc = &http.Client{}
	}
	p := &Providers{timeout: cmp.Or(callTimeout, DefaultCallTimeout)}
	for _, pr := range ps {
		cfg := openai.DefaultConfig(pr.APIKey)
		cfg.BaseURL = strings.TrimRight(cmp.Or(pr.BaseURL, DefaultBaseURL), "/")
		cfg.HTTPClient = retryAfterDoer{hc}
		model := cmp.Or(pr.Model, DefaultModel)
		p.ps = append(p.ps, &endpoint{
			name:   model + "@" + hostOf(cfg.BaseURL),
			model:  model,
			client: openai.NewClientWithConfig(cfg),
		})
	}
	return p
}

// hostOf returns base's host (and port), without scheme, user or path.
func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return "unknown-host"
}

// Names returns each provider's name ("model@host"), in the order they are
// tried.
func (p *Providers) Names() []string {
	names := make([]string, len(p.ps))
	for i, e := range p.ps {
		names[i] = e.name
	}
	return names
}

// Failovers returns how many times a call moved on from a failing provider.
func (p *Providers) Failovers() int64 { return p.failovers.Load() }

// Next sends the conversation to the first provider that answers, and
// returns its reply, named "model@host" (e.g. "gpt-4o-mini@api.openai.com").
// It returns a *agent.ProviderError for a 4xx answer that fail-over would
// not fix; an error wrapping agent.ErrNoProvider (and each provider's
// failure) when all failed; or ctx's error when ctx ended.
func (p *Providers) Next(ctx context.Context, msgs []agent.Message, tools []agent.ToolDef) (agent.Reply, error) {
	req := openai.ChatCompletionRequest{Messages: wireMessages(msgs), Tools: wireTools(tools)}
	var errs []error
	for i, e := range p.order() {
		if err := ctx.Err(); err != nil {
			return agent.Reply{}, fmt.Errorf("openai: call model: %w", err)
		}
		r := req
		r.Model = e.model
		name := e.name
		resp, retryAfter, err := p.call(ctx, e, r)
		if err == nil {
			e.downUntil.Store(0)
			return reply(resp, name)
		}
		if cerr := ctx.Err(); cerr != nil { // the caller gave up, not the provider
			return agent.Reply{}, fmt.Errorf("openai: call %s: %w", name, cerr)
		}
		var status int
		var msg string
		var apiErr *openai.APIError
		var reqErr *openai.RequestError
		switch {
		case errors.As(err, &apiErr):
			status, msg = apiErr.HTTPStatusCode, apiErr.Message
		case errors.As(err, &reqErr):
			status, msg = reqErr.HTTPStatusCode, string(reqErr.Body)
		}
		if status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout {
			return agent.Reply{Provider: name}, &agent.ProviderError{
				Provider: name, Status: status, Message: present.Clip(present.OneLine(msg), 300), Err: err,
			}
		}
		cool := DefaultCooldown
		if retryAfter > 0 {
			cool = min(retryAfter, maxCooldown)
		}
		e.downUntil.Store(time.Now().Add(cool).UnixNano())
		var why string
		switch {
		case status != 0:
			why = "HTTP " + strconv.Itoa(status)
			err = fmt.Errorf("%s: HTTP %d: %s", name, status, present.Clip(present.OneLine(msg), 200))
		case errors.Is(err, context.DeadlineExceeded):
			why = "timeout"
			err = fmt.Errorf("%s: no answer within %v: %w", name, p.timeout, err)
		default:
			why = "failed"
			err = fmt.Errorf("%s: %w", name, err)
		}
		errs = append(errs, err)
		if i < len(p.ps)-1 {
			p.failovers.Add(1)
		}
		if p.Log != nil {
			p.Log.LogAttrs(ctx, slog.LevelWarn, "openai: provider failed", slog.String("provider", name),
				slog.String("why", why), slog.Bool("failover", i < len(p.ps)-1))
		}
	}
	if len(errs) == 0 {
		return agent.Reply{}, fmt.Errorf("%w: none configured", agent.ErrNoProvider)
	}
	return agent.Reply{}, fmt.Errorf("%w: %w", agent.ErrNoProvider, joined(errs))
}

// joined is errors.Join on one line: the errors separated by "; ".
type joined []error

func (j joined) Error() string {
	var b strings.Builder
	for i, e := range j {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

func (j joined) Unwrap() []error { return j }

// order returns the endpoints to try: the healthy ones in configured order,
// then those cooling down, in configured order.
func (p *Providers) order() []*endpoint {
	now := time.Now().UnixNano()
	healthy := true
	for _, e := range p.ps {
		if e.downUntil.Load() > now {
			healthy = false
			break
		}
	}
	if healthy {
		return p.ps
	}
	out := make([]*endpoint, 0, len(p.ps))
	for _, e := range p.ps {
		if e.downUntil.Load() <= now {
			out = append(out, e)
		}
	}
	for _, e := range p.ps {
		if e.downUntil.Load() > now {
			out = append(out, e)
		}
	}
	return out
}

// call makes one attempt on e, bounded by the call timeout, and returns the
// server's Retry-After, if it sent one.
func (p *Providers) call(ctx context.Context, e *endpoint, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, time.Duration, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	var ra retryAfter
	ctx = context.WithValue(ctx, retryAfterKey{}, &ra)
	resp, err := e.client.CreateChatCompletion(ctx, req)
	return resp, ra.d, err
}

type retryAfterKey struct{}

type retryAfter struct{ d time.Duration }

// retryAfterDoer reads the Retry-After header of every response into the
// *retryAfter in the request's context: go-openai's errors do not carry the
// headers. Do runs on the caller's goroutine, so no locking is needed.
type retryAfterDoer struct{ hc *http.Client }

func (d retryAfterDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.hc.Do(req)
	if resp != nil {
		if ra, ok := req.Context().Value(retryAfterKey{}).(*retryAfter); ok {
			ra.d = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	return resp, err
}

// parseRetryAfter reads delay-seconds or an HTTP date; zero if neither.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
