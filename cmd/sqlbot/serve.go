package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"sqlbot/bot"
	"sqlbot/evalrun"
)

// serve runs the Slack bot until ctx is cancelled (SIGINT/SIGTERM), then
// drains the answers in flight and returns nil.
func (a *app) serve(ctx context.Context, args []string) error {
	fs, f := a.dbFlagSet("serve", "usage: sqlbot serve [--db PATH] [--policy FILE]")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if err := a.requirePolicy(ctx, "serve", *f); err != nil {
		return err
	}
	if err := a.cfg.RequireSlack(); err != nil {
		return err
	}
	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()
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
	// The question set is read now, so that a bad SQLBOT_QUESTIONS stops
	// the start rather than the first /sqlbot eval.
	set, err := a.questionSet(db, "")
	if err != nil {
		return err
	}
	var rep bot.Reporter // nil: the bot says evaluation is not set up, and how to
	if set != nil {
		if rep, err = a.reporter(ctx, db, set, providers != nil); err != nil {
			return err
		}
		prompts := recordedQuestions(set)
		cfg.Prompts = func(context.Context) []string { return prompts }
	}
	b, err := bot.New(cfg, answerer, rep, a.log)
	if err != nil {
		return err
	}
	stopHTTP, err := a.serveHTTP(ctx, b.Handler())
	if err != nil {
		return err
	}
	a.log.InfoContext(ctx, "serving Slack", "db", db.path, "slash_command", a.cfg.SlashCommand, "http", a.cfg.HTTPAddr)
	runErr := b.Run(ctx)
	return errors.Join(runErr, stopHTTP())
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

// serveHTTP serves /healthz and /metrics on SQLBOT_HTTP_ADDR, if set. The
// returned function shuts the server down and reports its first error.
func (a *app) serveHTTP(ctx context.Context, h http.Handler) (stop func() error, err error) {
	if a.cfg.HTTPAddr == "" {
		return func() error { return nil }, nil
	}
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("SQLBOT_HTTP_ADDR: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	a.log.InfoContext(ctx, "serving /healthz and /metrics", "addr", ln.Addr().String())
	return func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	}, nil
}

// tables lists what can be asked about, for `/sqlbot tables`; the bot
// renders and escapes it.
func tables(db *database) []bot.Table {
	objs := db.Objects()
	out := make([]bot.Table, len(objs))
	for i, o := range objs {
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
