// Package bot is sqlbot's Slack app: it takes questions from mentions, direct
// messages and a slash command over Socket Mode, asks an Answerer, and posts
// the answer with the SQL that produced it; a result that is a time series or
// a breakdown by category also gets a PNG chart in the thread, drawn in Go by
// package bot/chart from the values alone (no code the model wrote is run). A
// verifier's ✅ on an answer marks it verified (see verify.go): verified
// answers are listed by the slash command and given to the Answerer as
// examples for questions like them.
//
// Safety contract: the bot only reads and posts. A reply goes only to the
// conversation the question came from (a DM's answer never leaves the DM).
// Untrusted text (answers, SQL, data, refusal reasons) is escaped before it
// is posted, so that data cannot mention @channel or make links. Error text
// never reaches Slack: this package is the one place where errors become
// user text, and it shows refusals, fixed sentences and nothing else. The
// text of questions and answers is never logged; logs carry ids, lengths,
// outcomes and timings. Every envelope is acknowledged at once; the work
// happens on goroutines that Run tracks and waits for.
package bot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"sqlbot/agent"
	"sqlbot/bot/state"
	"sqlbot/evalrun"
	"sqlbot/roconn"
)

// Defaults for the zero values of Config.
const (
	DefaultAPIURL           = slack.APIURL // Slack's Web API
	DefaultSlashCommand     = "/sqlbot"
	DefaultRatePerMinute    = 6
	DefaultRatePerDay       = 40
	DefaultGlobalPerDay     = 600
	DefaultMaxQuestionChars = 500
	DefaultMaxConcurrent    = 4
	DefaultDrainTimeout     = 30 * time.Second
	DefaultAnswerTimeout    = 3 * time.Minute
	DefaultMaxCSVBytes      = roconn.DefaultResultBytes // a CSV holds no more than the result it comes from
)

// Tunables that are not settings.
const (
	workingReaction  = "hourglass_flowing_sand" // on a question while it is worked on
	reactionTimeout  = 5 * time.Second          // adding or removing it; never retried
	slackCallTimeout = 20 * time.Second         // one HTTP request to Slack (the HTTP client's timeout)
	rateLimitRetries = 2                        // retries of a rate-limited Web API call
	maxRetryAfter    = 30 * time.Second         // longest Retry-After honoured
	healthTimeout    = 3 * time.Second          // the Health func
	afterDrainGrace  = 5 * time.Second          // at most, time for the last messages once a drain timed out
	seenTTL          = time.Hour                // Slack retries within minutes
	stateTimeout     = 2 * time.Second          // one call to the state store
	ackTimeout       = time.Second              // one envelope's ack (Slack wants it within 3 s)
)

// An Answerer answers one question. *agent.Agent implements it: Ask returns
// a non-nil Result whenever it can, and an error when the Outcome is Failed.
type Answerer interface {
	Ask(ctx context.Context, req agent.Request) (*agent.Result, error)
}

// A Reporter runs the evaluation for the slash command's `eval`. Key names
// what it evaluates (the database, policy and question set): the bot keeps
// the latest report under it in its Store, and lets one evaluation of a key
// run at a time across every replica sharing the Store. Run runs an
// evaluation and returns its report. *evalrun.Reporter implements it; the
// bot renders the report.
type Reporter interface {
	Key() string
	Run(ctx context.Context) (*evalrun.Report, error)
}

// A Store keeps what the bot must remember beyond one question, and shares
// it between replicas when its backend is shared: which messages were
// taken (so that a redelivered event is answered once), the question
// limits, thread memory, evaluation reports and the evaluation lock, the
// answers it posted (in its Cache) and those people verified. Every
// bot/state Store implements it.
type Store interface {
	state.Claimer
	state.Limiter
	state.Taker
	state.Threads
	state.Reports
	state.Locker
	state.Cache
	state.VerifiedAnswers
}

// Config holds the bot's settings. A zero number or duration means its
// Default; a negative one is an error.
type Config struct {
	AppToken string // xapp-…, for the Socket Mode connection
	BotToken string // xoxb-…, for the Web API
	APIURL   string // the Web API base URL (DefaultAPIURL if ""). A missing trailing "/" is added.

	SlashCommand string // the slash command's name, "/sqlbot" by default

	RatePerMinute    int // questions per user in any minute
	RatePerDay       int // questions per user in any 24 hours
	GlobalPerDay     int // questions from everyone in any 24 hours
	MaxQuestionChars int // characters per question
	MaxConcurrent    int // questions worked on at once; the rest wait in arrival order

	// MaxCSVBytes caps the CSV file of a result (DefaultMaxCSVBytes if 0);
	// give it the result byte cap. A CSV that would be longer holds the
	// first rows that fit, and the reply says so.
	MaxCSVBytes int

	// AnswerTimeout bounds the work on one question, from the moment it
	// leaves the queue; past it the answer is cancelled and the user is told
	// it took too long.
	AnswerTimeout time.Duration

	// DrainTimeout bounds how long Run waits for answers in progress once
	// its ctx is cancelled; those still running then are cancelled, and the
	// messages saying so get a grace of at most 5 s (never more than
	// DrainTimeout itself) before every Slack call still waiting is
	// cancelled too.
	DrainTimeout time.Duration

	// Tables returns what `/sqlbot tables` lists: what can be asked about.
	// It is called once per request and should be cheap. Nil (or an empty
	// list): the command says the list is not available.
	Tables func() []Table

	// Health reports whether the bot can answer (for example, that the
	// database is readable); /healthz calls it. Nil counts as healthy.
	Health func(context.Context) error

	// Failovers reports how many model calls moved on from a failing
	// provider to the next since start, for sqlbot_provider_failovers_total.
	// Nil: 0.
	Failovers func() int64

	// GuardRefusals reports the guard's refusals since start by rule name
	// (guard.Guard.Refusals), for sqlbot_guard_refusals_total{rule}. Nil: none.
	GuardRefusals func() map[string]int64

	// State is where the bot keeps what it remembers (see Store). Nil: a
	// state.Memory of its own, which one process alone uses and a restart
	// forgets.
	State Store

	// Verifiers are the Slack user ids whose ✅ (white_check_mark) on an
	// answer marks it verified; none means anyone who can see the answer.
	Verifiers []string

	// Source identifies the database and policy answers are computed on,
	// kept with each verified answer ("": none).
	Source string

	// StateHealth reports whether State is shared with the other replicas
	// now (a state.Failover's Health), for /healthz and the
	// sqlbot_state_shared gauge. Nil: State is not a replicated store.
	StateHealth func() state.Health

	// Prompts returns questions to offer as suggested prompts when someone
	// opens a new assistant thread: questions the bot answers from what it
	// has recorded, best first. The bot puts the answers verified on
	// Source before them when Verifiers names who may verify; the first
	// four are offered. Nil (or none) and no verified answers: no prompts.
	Prompts func(context.Context) []string
}

// A Table is one table or view that questions can be about, as listed by
// `/sqlbot tables`. The bot escapes Name and About for Slack.
type Table struct {
	Name  string
	About string // what it holds, in words; may be empty
	Rows  int64  // how many rows it has; < 0 when not known
}

// A Bot is the Slack app. Create it with New and start it with Run; Handler
// serves its health and metrics.
type Bot struct {
	cfg Config
	ans Answerer
	rep Reporter
	log *slog.Logger
	api *slack.Client
	hc  *http.Client
	// apiHost is the host that response_url may point to besides Slack's.
	apiHost string

	state  Store
	limits state.Limits
	slots  *fifo
	met    *metrics
	eval   evalState

	running   atomic.Bool
	connected atomic.Bool
	// inflight counts every goroutine Run starts. Add is called on Run's
	// goroutine, or on a goroutine it counts (so never from 0 while Wait
	// may run).
	inflight sync.WaitGroup

	// fault is the model provider's refusal of the configuration (HTTP 401,
	// 403 or 404) seen last, until an answer succeeds; nil when none.
	fault atomic.Pointer[configFault]

	self string // the bot's user id, from auth.test at the start of Run
}

// New checks cfg, fills in its defaults and returns a Bot that answers with
// ans and reports evaluations with rep (nil: `eval` says it is not set up).
// Logs go to lg (nil: discarded). New makes no network calls.
func New(cfg Config, ans Answerer, rep Reporter, lg *slog.Logger) (*Bot, error) {
	var errs []error
	if cfg.AppToken == "" {
		errs = append(errs, errors.New("bot: app token is empty"))
	}
	if cfg.BotToken == "" {
		errs = append(errs, errors.New("bot: bot token is empty"))
	}
	if ans == nil {
		errs = append(errs, errors.New("bot: answerer is nil"))
	}
	if cfg.SlashCommand == "" {
		cfg.SlashCommand = DefaultSlashCommand
	}
	if err := CheckSlashCommand(cfg.SlashCommand); err != nil {
		errs = append(errs, err)
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	var apiHost string
	switch u, err := url.Parse(cfg.APIURL); {
	case err != nil:
		errs = append(errs, fmt.Errorf("bot: parse API URL: %w", err))
	case u.Host == "":
		errs = append(errs, fmt.Errorf("bot: parse API URL: no host in %q", cfg.APIURL))
	default:
		apiHost = u.Host
	}
	for name, v := range map[string]int64{
		"RatePerMinute": int64(cfg.RatePerMinute), "RatePerDay": int64(cfg.RatePerDay), "GlobalPerDay": int64(cfg.GlobalPerDay),
		"MaxQuestionChars": int64(cfg.MaxQuestionChars), "MaxConcurrent": int64(cfg.MaxConcurrent), "MaxCSVBytes": int64(cfg.MaxCSVBytes),
		"AnswerTimeout": int64(cfg.AnswerTimeout), "DrainTimeout": int64(cfg.DrainTimeout),
	} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("bot: %s is negative", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.RatePerMinute = cmp.Or(cfg.RatePerMinute, DefaultRatePerMinute)
	cfg.RatePerDay = cmp.Or(cfg.RatePerDay, DefaultRatePerDay)
	cfg.GlobalPerDay = cmp.Or(cfg.GlobalPerDay, DefaultGlobalPerDay)
	cfg.MaxQuestionChars = cmp.Or(cfg.MaxQuestionChars, DefaultMaxQuestionChars)
	cfg.MaxConcurrent = cmp.Or(cfg.MaxConcurrent, DefaultMaxConcurrent)
	cfg.DrainTimeout = cmp.Or(cfg.DrainTimeout, DefaultDrainTimeout)
	cfg.AnswerTimeout = cmp.Or(cfg.AnswerTimeout, DefaultAnswerTimeout)
	cfg.MaxCSVBytes = cmp.Or(cfg.MaxCSVBytes, DefaultMaxCSVBytes)
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	hc := &http.Client{Timeout: slackCallTimeout}
	if cfg.State == nil {
		cfg.State = state.NewMemory(time.Now)
	}
	b := &Bot{
		cfg:     cfg,
		ans:     ans,
		rep:     rep,
		log:     lg,
		hc:      hc,
		apiHost: apiHost,
		state:   cfg.State,
		limits:  state.Limits{PerMinute: cfg.RatePerMinute, PerDay: cfg.RatePerDay, GlobalPerDay: cfg.GlobalPerDay},
		slots:   newFIFO(cfg.MaxConcurrent),
		api: slack.New(cfg.BotToken,
			slack.OptionAppLevelToken(cfg.AppToken),
			slack.OptionAPIURL(cfg.APIURL),
			slack.OptionHTTPClient(hc),
		),
	}
	b.met = newMetrics(b)
	return b, nil
}

// Run connects to Slack over Socket Mode and answers until ctx is cancelled.
// Then it stops taking questions (the socket is closed, so that Slack
// redelivers anything not yet acknowledged to the next instance), waits up
// to DrainTimeout for the questions already taken, which are answered and
// posted, and returns nil. Past DrainTimeout it cancels the answers still
// running, and after a short grace for the messages saying so, every Slack
// call still waiting; it returns once every goroutine it started has ended.
// It returns an error if the bot token does not work (auth.test) or the
// connection fails for good (for example, a revoked app token). Run may be
// called once.
func (b *Bot) Run(ctx context.Context) error {
	if !b.running.CompareAndSwap(false, true) {
		return errors.New("bot: Run called twice")
	}
	auth, err := b.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("bot: auth.test: %w", err)
	}
	b.self = auth.UserID
	b.log.InfoContext(ctx, "bot: starting", "bot_user", b.self, "team", auth.TeamID,
		"slash_command", b.cfg.SlashCommand, "max_concurrent", b.cfg.MaxConcurrent)

	s := newSession(ctx, b)
	defer s.stopBase() // also stops work
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.decide(s)
	}()
	smErr := make(chan error, 1)
	go func() { smErr <- s.sm.RunContext(s.smCtx) }()

	var runErr error
	smDone := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-smErr:
			runErr, smDone = err, true
			break loop
		case evt := <-s.sm.Events:
			b.dispatch(s, evt)
		}
	}

	close(s.decisions) // the decider decides what was acknowledged, then ends
	// Stop taking questions: close the socket first.
	s.stopSocket()
	if !smDone {
		if err := <-smErr; !errors.Is(err, context.Canceled) {
			runErr = err
		}
	}
	b.connected.Store(false)
	b.drain(ctx, s)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("bot: socket mode: %w", runErr)
	}
	b.log.InfoContext(ctx, "bot: stopped")
	return nil
}

// drain waits for the goroutines Run started: up to DrainTimeout, then it
// cancels the work still running and gives the last messages a short grace,
// then it cancels every Slack call still waiting and waits for the
// goroutines to end, which they do promptly since every call honours its ctx.
func (b *Bot) drain(ctx context.Context, s *session) {
	done := make(chan struct{})
	go func() { b.inflight.Wait(); close(done) }()
	waiting := b.slots.queued()
	b.log.InfoContext(ctx, "bot: draining", "queued", waiting, "timeout", b.cfg.DrainTimeout)
	timer := time.NewTimer(b.cfg.DrainTimeout)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	b.log.WarnContext(ctx, "bot: drain timed out; cancelling answers in progress")
	s.stopWork()
	grace := time.NewTimer(min(afterDrainGrace, b.cfg.DrainTimeout))
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	b.log.ErrorContext(ctx, "bot: messages still being sent after the grace; cancelling them")
	s.stopBase()
	<-done
}

// Handler serves GET /healthz and GET /metrics (Prometheus text format,
// from a registry of this Bot's own).
//
// /healthz answers JSON: {"status": "ok"} with 200 when the socket is
// connected, Config.Health passes and no model provider refuses the
// configuration; otherwise 503 with {"status": "down" or "degraded",
// "reasons": [...]}. "down": not connected to Slack, or Config.Health
// failed. "degraded": connected, but the model provider answered the last
// question that reached it with HTTP 401, 403 or 404, so no question can be
// answered until its key, model or URL is fixed (and the bot restarted, or
// the provider fixed); the next answer that succeeds clears it. Both are 503
// so that a probe that reads only the status code sees that the bot cannot
// answer; the body says which.
//
// With Config.StateHealth, the body also says "state": "shared" (with the
// other replicas) or "degraded" (each replica keeps its own limits,
// de-duplication and threads until the shared store is back), with
// "state_since" and, when degraded, "state_reason". A degraded state does
// not change the status: the bot still answers, and restarting it would not
// bring the shared store back.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", b.serveHealth)
	mux.Handle("GET /metrics", b.met.handler())
	return mux
}

// A health is the body of /healthz.
type health struct {
	Status  healthStatus `json:"status"`
	Reasons []string     `json:"reasons,omitempty"`
	// State says, when Config.StateHealth is set, whether the state is
	// shared with the other replicas, and if not since when and why.
	State       stateStatus `json:"state,omitempty"`
	StateSince  string      `json:"state_since,omitempty"`
	StateReason string      `json:"state_reason,omitempty"`
}

// A stateStatus is whether the state is shared between replicas.
type stateStatus string

const (
	stateShared   stateStatus = "shared"   // Redis answers: limits, de-duplication and threads hold across replicas
	stateDegraded stateStatus = "degraded" // Redis is away: each replica keeps its own until it is back
)

// A healthStatus is the status /healthz reports.
type healthStatus string

const (
	healthOK       healthStatus = "ok"       // connected, healthy, and the provider takes the settings
	healthDegraded healthStatus = "degraded" // connected, but the provider refuses the settings
	healthDown     healthStatus = "down"     // not connected, or Config.Health failed
)

func (b *Bot) serveHealth(w http.ResponseWriter, r *http.Request) {
	h := health{Status: healthOK}
	if !b.connected.Load() {
		h.Status, h.Reasons = healthDown, append(h.Reasons, "not connected to Slack")
	}
	if b.cfg.Health != nil {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		err := b.cfg.Health(ctx)
		cancel()
		if err != nil {
			b.log.WarnContext(r.Context(), "bot: health check failed", "err", err)
			h.Status, h.Reasons = healthDown, append(h.Reasons, "health check failed: "+err.Error())
		}
	}
	if b.cfg.StateHealth != nil {
		sh := b.cfg.StateHealth()
		h.State, h.StateSince = stateShared, sh.Since.UTC().Format(time.RFC3339)
		if !sh.OK {
			h.State, h.StateReason = stateDegraded, sh.Reason
		}
	}
	if f := b.fault.Load(); f != nil {
		if h.Status == healthOK {
			h.Status = healthDegraded
		}
		h.Reasons = append(h.Reasons, fmt.Sprintf("the model provider %s answered HTTP %d at %s: its key, model or URL is misconfigured, and no question can be answered",
			f.provider, f.status, f.at.UTC().Format(time.RFC3339)))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if h.Status != healthOK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h) // the client may have gone; nothing to do
}

// A configFault is a model provider's refusal of the configuration.
type configFault struct {
	provider string // "model@host"
	status   int
	at       time.Time
}

func (b *Bot) noteConfigFault(provider string, status int) {
	b.fault.Store(&configFault{provider: provider, status: status, at: time.Now()})
}

func (b *Bot) clearConfigFault() { b.fault.Store(nil) }
