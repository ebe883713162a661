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
	fs := newFlagSet("serve", a.stderr)
	var f dbFlags
	f.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := a.cfg.RequireSlack(); err != nil {
		return err
	}
	db, err := a.openDB(ctx, f)
	if err != nil {
		return err
	}
	defer db.Close()
	ag, providers, g, err := a.newAgent(db, a.log)
	if err != nil {
		return err
	}
	cfg := bot.Config{
		AppToken: a.cfg.SlackAppToken, BotToken: a.cfg.SlackBotToken, APIURL: a.cfg.SlackAPIURL,
		SlashCommand:  a.cfg.SlashCommand,
		RatePerMinute: a.cfg.RatePerMinute, RatePerDay: a.cfg.RatePerDay, GlobalPerDay: a.cfg.GlobalPerDay,
		MaxQuestionChars: a.cfg.MaxQuestionChars, MaxConcurrent: a.cfg.MaxConcurrent,
		Tables:        func() []bot.Table { return tables(db) },
		GuardRefusals: g.Refusals,
		Health:        db.Ping, // a connection of its own: never behind questions
	}
	if providers != nil {
		cfg.Failovers = providers.Failovers
	}
	var rep bot.Reporter // nil: the bot says evaluation is not set up
	if db.demo {         // the demo's question set fits only the demo
		rep = a.reporter(db, providers != nil)
	}
	b, err := bot.New(cfg, ag, rep, a.log)
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

// reporter gives the slash command's `eval` its report on the demo database:
// the demo's question set, answered by the configured providers (else by the
// reference SQL).
func (a *app) reporter(db *database, live bool) *evalrun.Reporter {
	mode := modelReference
	if live {
		mode = modelLive
	}
	return evalrun.NewReporter(func(ctx context.Context) (*evalrun.Report, error) {
		set, err := evalrun.ParseSet(evalrun.DemoQuestions())
		if err != nil {
			return nil, err
		}
		return a.runEval(ctx, db, set, mode, evalrun.Options{})
	})
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

// manifest prints the Slack app manifest.
func (a *app) manifest(_ context.Context, args []string) error {
	fs := newFlagSet("manifest", a.stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := bot.Manifest(a.cfg.SlashCommand)
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(m)
	return err
}
