package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"sqlbot/bot"
	"sqlbot/bot/state"
	"sqlbot/bot/web"
	"sqlbot/config"
	"sqlbot/evalrun"
)

// serve runs the Slack bot when its tokens are set, and the web page and
// JSON API on SQLBOT_HTTP_ADDR (DefaultAddr when Slack is off), until ctx
// is cancelled (SIGINT/SIGTERM); then it stops taking questions, drains the
// answers in flight and returns nil. Every surface asks the same answerer
// (with its answer cache) and counts questions in the same state.
func (a *app) serve(ctx context.Context, args []string) error {
	fs, f := a.dbFlagSet("serve", "usage: sqlbot serve [--db PATH] [--policy FILE]")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if err := a.requirePolicy(ctx, "serve", *f); err != nil {
		return err
	}
	slackOn := a.cfg.SlackWanted()
	if slackOn {
		if err := a.cfg.RequireSlack(); err != nil { // one token without the other is a mistake, not "Slack off"
			return err
		}
	}
	addr := a.cfg.HTTPAddr
	if addr == "" && !slackOn {
		addr = web.DefaultAddr
	}
	if err := a.requireAPIToken(addr); err != nil {
		return err
	}
	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()
	// Open read no data of a large database: row counts and samples are
	// read in the background, one object at a time (one connection), and
	// by describe_table for an object not reached yet.
	warmCtx, stopWarm := context.WithCancel(ctx)
	warmed := make(chan struct{})
	go func() { defer close(warmed); db.Warm(warmCtx) }()
	defer func() { stopWarm(); <-warmed }()
	ag, providers, g, err := a.newAgent(db, a.log)
	if err != nil {
		return err
	}
	st, stateHealth, err := a.openState(ctx, db.path, a.log)
	if err != nil {
		return err
	}
	defer st.Close()
	answerer := a.cached(ag, st, db, a.log) // every surface asks through it, so a repeat is answered once
	// The question set is read now, so that a bad SQLBOT_QUESTIONS stops
	// the start rather than the first /sqlbot eval.
	set, err := a.questionSet(db, "")
	if err != nil {
		return err
	}
	var prompts []string
	if set != nil {
		prompts = recordedQuestions(set)
	}
	var page *web.Server
	if addr != "" {
		if page, err = a.newWeb(addr, answerer, st, db, prompts); err != nil {
			return err
		}
	}
	if !slackOn {
		return a.serveWebOnly(ctx, addr, page)
	}

	cfg := bot.Config{
		AppToken: a.cfg.SlackAppToken, BotToken: a.cfg.SlackBotToken, APIURL: a.cfg.SlackAPIURL,
		SlashCommand:  a.cfg.SlashCommand,
		RatePerMinute: a.cfg.RatePerMinute, RatePerDay: a.cfg.RatePerDay, GlobalPerDay: a.cfg.GlobalPerDay,
		MaxQuestionChars: a.cfg.MaxQuestionChars,
		MaxConcurrent:    db.Limits().Concurrent,  // one connection per question worked on
		MaxCSVBytes:      db.Limits().ResultBytes, // a CSV holds no more than the result it comes from
		Tables:           func() []bot.Table { return tables(db) },
		GuardRefusals:    g.Refusals,
		Health:           db.Ping, // a connection of its own: never behind questions
		State:            st,
		StateHealth:      stateHealth,
		Verifiers:        a.cfg.VerifierIDs(),
	}
	// Verified answers keep what they were computed on: the database's
	// contents and policy as the bot starts (computed once, not per answer,
	// since a database in use changes all the time).
	if src, err := db.source.Get(ctx); err == nil {
		cfg.Source = src
	} else {
		a.log.WarnContext(ctx, "the database's checksum could not be read; verified answers are kept without their source", "err", err)
	}
	if providers != nil {
		cfg.Failovers = providers.Failovers
	}
	var rep bot.Reporter // nil: the bot says evaluation is not set up, and how to
	if set != nil {
		if rep, err = a.reporter(ctx, db, set, providers != nil); err != nil {
			return err
		}
		cfg.Prompts = func(context.Context) []string { return prompts }
	}
	b, err := bot.New(cfg, answerer, rep, a.log)
	if err != nil {
		return err
	}
	h := b.Handler()
	what := "/healthz and /metrics"
	if page != nil {
		h = beside(h, page.Handler())
		what = "/healthz, /metrics, the web page and /api/ask"
	}
	// The HTTP server stops taking questions when ctx ends, like Slack, and
	// drains beside it; and it stops if the bot stops for another reason.
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	stopped, err := a.serveHTTP(hctx, addr, h, what)
	if err != nil {
		return err
	}
	a.log.InfoContext(ctx, "serving Slack", "db", db.path, "slash_command", a.cfg.SlashCommand, "http", addr)
	runErr := b.Run(ctx)
	stop()
	return errors.Join(runErr, <-stopped)
}

// requireAPIToken returns an error when the web surface would be served on
// addr, off loopback, without SQLBOT_API_TOKEN. It refuses to start rather
// than serve 401s to everyone: a server that cannot answer anybody looks
// healthy and helps no one, and the fix is one setting.
func (a *app) requireAPIToken(addr string) error {
	if addr == "" || web.IsLoopback(addr) || a.cfg.APIToken != "" {
		return nil
	}
	return fmt.Errorf("serve: SQLBOT_HTTP_ADDR %s is not a loopback address, so the web page and JSON API served there "+
		"need a bearer token: set SQLBOT_API_TOKEN (at least %d characters, for example from `openssl rand -hex 32`) "+
		"and send it as Authorization: Bearer <token>, or bind SQLBOT_HTTP_ADDR to 127.0.0.1:PORT",
		addr, config.MinAPITokenChars)
}

// newWeb returns the web page and JSON API over ans, counting questions in
// st with the same limits as Slack's (per token, or per address on
// loopback), and offering prompts (the recorded questions) to pick.
func (a *app) newWeb(addr string, ans web.Answerer, st web.Limiter, db *database, prompts []string) (*web.Server, error) {
	return web.New(web.Config{
		Addr: addr, Token: a.cfg.APIToken,
		Limiter: st,
		Limits: state.Limits{
			PerMinute:    cmp.Or(a.cfg.RatePerMinute, bot.DefaultRatePerMinute),
			PerDay:       cmp.Or(a.cfg.RatePerDay, bot.DefaultRatePerDay),
			GlobalPerDay: cmp.Or(a.cfg.GlobalPerDay, bot.DefaultGlobalPerDay),
		},
		MaxQuestionChars: cmp.Or(a.cfg.MaxQuestionChars, bot.DefaultMaxQuestionChars),
		MaxConcurrent:    db.Limits().Concurrent, // one connection per question worked on
		AnswerTimeout:    bot.DefaultAnswerTimeout,
		Questions:        prompts,
	}, ans, a.log)
}

// serveWebOnly serves page on addr until ctx ends, saying that Slack is
// off and how to turn it on.
func (a *app) serveWebOnly(ctx context.Context, addr string, page *web.Server) error {
	stopped, err := a.serveHTTP(ctx, addr, page.Handler(), "the web page and /api/ask")
	if err != nil {
		return err
	}
	a.log.InfoContext(ctx, "Slack is off: set SLACK_APP_TOKEN (xapp-…) and SLACK_BOT_TOKEN (xoxb-…) to turn it on; "+
		"`sqlbot manifest` prints the Slack app to create")
	return <-stopped
}

// beside serves /healthz and /metrics with health, and everything else
// with page: the probes need no token, the page and the API do (off
// loopback).
func beside(health, page http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", health)
	mux.Handle("/metrics", health)
	mux.Handle("/", page)
	return mux
}

// reporter gives the slash command's `eval` its report: set (the
// deployment's questions, or the demo's) answered by the configured
// providers (else by the reference SQL). Its reports are kept under the
// database's contents and policy, the question set and the mode. The report
// shown in Slack holds no error text, so each question that could not be
// run is logged with why.
func (a *app) reporter(ctx context.Context, db *database, set *evalrun.Set, live bool) (*evalrun.Reporter, error) {
	mode := modelReference
	if live {
		mode = modelLive
	}
	src, err := db.source.Get(ctx)
	if err != nil {
		return nil, err
	}
	key := src + ":" + set.Checksum + ":" + mode
	return evalrun.NewReporter(key, func(ctx context.Context) (*evalrun.Report, error) {
		rep, err := a.runEval(ctx, db, set, mode, evalrun.Options{})
		if err != nil {
			return nil, err
		}
		for _, q := range rep.PerQuestion {
			if q.Outcome == evalrun.Error {
				a.log.WarnContext(ctx, "eval: a question could not be run", "id", q.ID, "reason", q.Reason)
			}
		}
		a.log.InfoContext(ctx, "eval: done", "questions", rep.Questions, "passed", rep.Passed, "failed", rep.Failed, "errors", rep.Errors)
		return rep, nil
	}), nil
}

// serveHTTP serves h (what names it, for the log) on addr until ctx ends,
// then stops taking requests and waits for those in flight, up to
// bot.DefaultDrainTimeout, before it cancels them. The returned channel
// receives the server's first error (nil for a clean stop) once it is
// done. A listener that cannot be opened is an error at once.
func (a *app) serveHTTP(ctx context.Context, addr string, h http.Handler, what string) (<-chan error, error) {
	done := make(chan error, 1)
	if addr == "" {
		go func() { <-ctx.Done(); done <- nil }()
		return done, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("SQLBOT_HTTP_ADDR: %w", err)
	}
	// Requests get a context of their own, which outlives ctx by the drain.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return base }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	a.log.InfoContext(ctx, "serving "+what, "url", "http://"+ln.Addr().String()+"/")
	go func() {
		defer cancelBase()
		var err error
		select {
		case err = <-served: // it failed on its own
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(base, bot.DefaultDrainTimeout)
			err = srv.Shutdown(sctx)
			cancel()
			if err != nil {
				a.log.WarnContext(ctx, "http: requests still running after the drain were cancelled", "err", err)
				cancelBase()
				err = srv.Close()
			}
			if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
				err = errors.Join(err, serr)
			}
		}
		done <- err
	}()
	return done, nil
}

// tables lists what can be asked about, for `/sqlbot tables`, with the row
// counts read so far (it reads nothing); the bot renders and escapes it.
func tables(db *database) []bot.Table {
	objs := db.Objects()
	out := make([]bot.Table, len(objs))
	for i, o := range objs {
		if k, ok := db.Known(o.Name); ok {
			o = k
		}
		out[i] = bot.Table{Name: o.Name, About: o.About, Rows: o.RowCount}
	}
	return out
}

// manifest prints the Slack app manifest. Of the settings it reads only
// SQLBOT_SLASH_COMMAND, so it works whatever else the environment holds.
func (a *app) manifest(_ context.Context, args []string) error {
	fs := newFlagSet("manifest", a.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := bot.Manifest(a.cfg.SlashCommand)
	if err != nil {
		return fmt.Errorf("SQLBOT_SLASH_COMMAND: %w", err)
	}
	_, err = a.stdout.Write(m)
	return err
}

// recordedQuestions are the answerable questions of set, in its order: the
// questions the bot answers from their recorded SQL even with no model, which
// it offers as suggested prompts in Slack's assistant view.
func recordedQuestions(set *evalrun.Set) []string {
	var out []string
	for _, q := range set.Questions {
		if q.Kind == evalrun.Answerable {
			out = append(out, q.Question)
		}
	}
	return out
}
