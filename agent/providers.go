package agent

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
)

// A Provider is one OpenAI-compatible endpoint. An empty BaseURL means
// OpenAI's own (https://api.openai.com/v1); an empty APIKey sends no
// Authorization header (fine for a local server); an empty Model means
// DefaultModel.
type Provider struct{ BaseURL, APIKey, Model string }

// DefaultModel is the model asked for when a Provider names none.
const DefaultModel = "gpt-4o-mini"

// ErrNoProvider is wrapped by the error that Providers.Complete (and so
// Agent.Ask) returns when every provider failed with a fail-over error (HTTP
// 429 or 5xx, a timeout, a connection failure), or none is configured.
var ErrNoProvider = errors.New("agent: no provider could answer")

// A ProviderError is returned by Providers.Complete when a provider answered
// with an HTTP status that another provider would not fix (a 4xx other than
// 408 and 429: a bad key, an unknown model, a malformed request). Fail-over
// stops there, so a misconfiguration is loud rather than hidden.
type ProviderError struct {
	Provider string // the provider's name, as in Result.Provider
	Status   int    // the HTTP status code
	Message  string // the provider's message, clipped
	Err      error  // go-openai's error
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("agent: provider %s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

func (e *ProviderError) Unwrap() error { return e.Err }

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

var _ Model = (*Providers)(nil)

type endpoint struct {
	name      string // "model@host": the provider's name in results and logs, never the key
	model     string
	client    *openai.Client
	downUntil atomic.Int64 // unix nanoseconds; 0: healthy
}

// NewProviders returns a Model over ps, tried in order. callTimeout bounds
// each attempt (zero: no bound but ctx's). hc is the HTTP client (nil: a new
// one); its own Timeout, if any, also applies.
func NewProviders(ps []Provider, callTimeout time.Duration, hc *http.Client) *Providers {
	if hc == nil {
		hc = &http.Client{}
	}
	p := &Providers{timeout: callTimeout}
	for _, pr := range ps {
		cfg := openai.DefaultConfig(pr.APIKey)
		if pr.BaseURL != "" {
			cfg.BaseURL = strings.TrimRight(pr.BaseURL, "/")
		}
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

// Complete sends req to the first provider that answers. It returns the
// response and that provider's name ("model@host", e.g.
// "gpt-4o-mini@api.openai.com"); a *ProviderError for a 4xx answer that
// fail-over would not fix; an error wrapping ErrNoProvider (and each
// provider's failure) when all failed; or ctx's error when ctx ended.
func (p *Providers) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, string, error) {
	var errs []error
	for i, e := range p.order() {
		if err := ctx.Err(); err != nil {
			return openai.ChatCompletionResponse{}, "", fmt.Errorf("agent: call model: %w", err)
		}
		r := req
		r.Model = e.model
		name := e.name
		resp, retryAfter, err := p.call(ctx, e, r)
		if err == nil {
			e.downUntil.Store(0)
			return resp, name, nil
		}
		if cerr := ctx.Err(); cerr != nil { // the caller gave up, not the provider
			return openai.ChatCompletionResponse{}, "", fmt.Errorf("agent: call %s: %w", name, cerr)
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
			return openai.ChatCompletionResponse{}, name, &ProviderError{
				Provider: name, Status: status, Message: clip(oneLine(msg), 300), Err: err,
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
			err = fmt.Errorf("%s: HTTP %d: %s", name, status, clip(oneLine(msg), 200))
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
			p.Log.LogAttrs(ctx, slog.LevelWarn, "agent: provider failed", slog.String("provider", name),
				slog.String("why", why), slog.Bool("failover", i < len(p.ps)-1))
		}
	}
	if len(errs) == 0 {
		return openai.ChatCompletionResponse{}, "", fmt.Errorf("%w: none configured", ErrNoProvider)
	}
	return openai.ChatCompletionResponse{}, "", fmt.Errorf("%w: %w", ErrNoProvider, joined(errs))
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
