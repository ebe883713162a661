package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"sqlbot/agent"
	"sqlbot/agent/present"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// The evaluation's seams, checked where they are wired.
var (
	_ evalrun.Asker   = (*agent.Agent)(nil)
	_ evalrun.Querier = agent.Checked{}
)

const evalScoreUsage = "usage: sqlbot eval score [--db PATH] [--policy FILE] [--ordered] [--json] REFERENCE_SQL CANDIDATE_SQL"

// The --model values.
const (
	modelReference = "reference"
	modelLive      = "live"
)

// noProviderHelp says how to configure a model for --model live.
const noProviderHelp = "--model live needs a language model, and none is configured: " +
	"set OPENAI_API_KEY and OPENAI_MODEL (e.g. gpt-4o-mini) for a hosted model, or " +
	"OPENAI_BASE_URL (e.g. http://localhost:11434/v1) and OPENAI_MODEL for a local OpenAI-compatible server; " +
	"or run --model reference, which needs none"

// eval runs an evaluation and prints its report; `eval score` scores one
// candidate statement against a reference.
func (a *app) eval(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "score" {
		return a.evalScore(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "export-verified" {
		return a.exportVerified(ctx, args[1:])
	}
	fs, f := a.dbFlagSet("eval",
		"usage: sqlbot eval [--db PATH] [--policy FILE] [--questions FILE] [--only answerable|safety|unanswerable] [--model reference|live] [--variants N] [--json] [--out FILE]",
		"       "+strings.TrimPrefix(evalScoreUsage, "usage: "),
		"       sqlbot eval export-verified [--out FILE]")
	questions := fs.String("questions", "", "question file: a JSON list of {id, question, reference_sql, ordered, kind}, "+
		"or verified: the answers verified in Slack, from the state (default: SQLBOT_QUESTIONS, else the demo's questions on the demo database)")
	only := fs.String("only", "", "run only one kind of question: answerable, safety or unanswerable")
	model := fs.String("model", "", "reference (each question's reference SQL through the guarded path, no model) or live (the configured providers) (default: live when a provider is configured, else reference)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object instead of a table")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	concurrency := fs.Int("concurrency", 1, "questions asked at once; unsafe questions always run alone")
	variants := fs.Int("variants", 0, "also check every right answer on `N` other versions of the demo database (same schema, other rows): a query right by chance fails")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitErr{code: exitUsage, err: fmt.Errorf("eval takes no arguments, got %q", fs.Arg(0))}
	}
	kind, ok := map[string]evalrun.Kind{"": "", "answerable": evalrun.Answerable, "safety": evalrun.Unsafe,
		"unsafe": evalrun.Unsafe, "unanswerable": evalrun.Unanswerable}[*only]
	if !ok {
		return &exitErr{code: exitUsage, err: fmt.Errorf("--only %q: want answerable, safety or unanswerable", *only)}
	}
	if *concurrency < 1 {
		return &exitErr{code: exitUsage, err: fmt.Errorf("--concurrency %d: want 1 or more", *concurrency)}
	}
	if *variants < 0 || *variants > maxVariants {
		return &exitErr{code: exitUsage, err: fmt.Errorf("--variants %d: want 0 to %d", *variants, maxVariants)}
	}
	ps, err := a.cfg.Providers()
	if err != nil {
		return err
	}
	mode := *model
	switch {
	case mode == "" && len(ps) > 0:
		mode = modelLive
	case mode == "":
		mode = modelReference
	case mode != modelReference && mode != modelLive:
		return &exitErr{code: exitUsage, err: fmt.Errorf("--model %q: want reference or live", mode)}
	}

	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()
	var set *evalrun.Set
	if *questions == questionsVerified {
		set, err = a.verifiedSet(ctx, db)
	} else {
		set, err = a.questionSet(db, *questions)
	}
	if err != nil {
		return err
	}
	if set == nil {
		return fmt.Errorf("--questions FILE (or SQLBOT_QUESTIONS) is required: %s is not the demo database, and the demo's questions fit only the demo", db.path)
	}

	if *variants > 0 && !db.demo {
		return &exitErr{code: exitUsage, err: fmt.Errorf("--variants needs the demo database: versions of %s with other rows cannot be made", db.path)}
	}
	opt := evalrun.Options{Only: kind, Progress: a.stderr, Concurrency: *concurrency}
	closeAll, err := a.scoring(ctx, db, *variants, &opt)
	defer closeAll()
	if err != nil {
		return err
	}
	rep, err := a.runEval(ctx, db, set, mode, opt)
	if err != nil {
		return err
	}
	js, err := rep.JSON()
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.WriteFile(*out, js, 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if *asJSON {
		_, err := a.stdout.Write(js)
		return err
	}
	return writeReport(a.stdout, rep)
}

// maxVariants bounds --variants: each is a database file of about 1 MB in
// the cache directory and two statements per right answer.
const maxVariants = 20

// scoring opens what opt's scoring reads: db's file again with the scoring
// bound (SQLBOT_SCORE_ROWS, else evalrun.DefaultScoreRows, never below the
// row cap) as its row cap, and the first n versions of the demo database
// (written to the cache directory the first time), each under db's policy
// and limits. closeAll closes what was opened, even after an error.
func (a *app) scoring(ctx context.Context, db *database, n int, opt *evalrun.Options) (closeAll func(), err error) {
	var opened []*roconn.DB
	closeAll = func() {
		for _, d := range opened {
			d.Close()
		}
	}
	rows := max(cmp.Or(a.cfg.ScoreRows, evalrun.DefaultScoreRows), db.Limits().Rows)
	lim := a.limits()
	lim.Rows = rows
	open := func(path string) (evalrun.Querier, error) {
		d, err := roconn.Open(ctx, path, db.policy, lim)
		if err != nil {
			return nil, err
		}
		opened = append(opened, d)
		return agent.Checked{Guard: guard.New(rows), DB: d}, nil
	}
	if opt.Score, err = open(db.path); err != nil {
		return closeAll, err
	}
	opt.ScoreRows = rows
	if n == 0 {
		return closeAll, nil
	}
	dir, err := a.cfg.CacheDir()
	if err != nil {
		return closeAll, err
	}
	for seed := 1; seed <= n; seed++ {
		path, err := demo.EnsureVariant(ctx, dir, uint64(seed))
		if err != nil {
			return closeAll, err
		}
		q, err := open(path)
		if err != nil {
			return closeAll, fmt.Errorf("variant %d: %w", seed, err)
		}
		opt.Variants = append(opt.Variants, q)
	}
	return closeAll, nil
}

// questionSet reads the question set for db: the file named by --questions
// (flagFile), else by SQLBOT_QUESTIONS, else the demo's questions on the demo
// database. It returns nil, nil when there is none; an error names where the
// file came from.
func (a *app) questionSet(db *database, flagFile string) (*evalrun.Set, error) {
	var data []byte
	switch {
	case flagFile != "" || a.cfg.Questions != "":
		file, from := flagFile, "--questions"
		if file == "" {
			file, from = a.cfg.Questions, "SQLBOT_QUESTIONS"
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: read the question file: %w", from, err)
		}
		set, err := evalrun.ParseSet(b)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", from, file, err)
		}
		return set, nil
	case db.demo:
		data = demo.Questions()
	default:
		return nil, nil
	}
	return evalrun.ParseSet(data)
}

// runEval runs set on db, answering with the reference SQL (mode
// reference) or the configured providers (mode live), through the same guard
// and read-only connection as every question.
func (a *app) runEval(ctx context.Context, db *database, set *evalrun.Set, mode string, opt evalrun.Options) (*evalrun.Report, error) {
	var m agent.Model
	if mode == modelReference {
		ref, err := evalrun.NewReference(set.Questions)
		if err != nil {
			return nil, err
		}
		m = ref
		opt.Model, opt.Provider = modelReference, agent.RecordedProvider
	} else {
		providers, err := a.providers()
		if err != nil {
			return nil, err
		}
		if providers == nil {
			return nil, errors.New(noProviderHelp)
		}
		var models []string
		for _, name := range providers.Names() {
			if model := name[:strings.LastIndex(name, "@")]; !slices.Contains(models, model) {
				models = append(models, model)
			}
		}
		m = providers
		opt.Model, opt.Provider = strings.Join(models, ", "), strings.Join(providers.Names(), ", ")
	}
	g := guard.New(db.Limits().Rows)
	ag := agent.New(m, db.DB, g, agent.Options{MaxSteps: a.cfg.MaxSteps, PromptChars: a.cfg.PromptChars}, a.quietLogger(ctx))
	return evalrun.Run(ctx, ag, agent.Checked{Guard: g, DB: db}, db.path, set, opt)
}

// quietLogger is the agent's logger for the terminal commands (ask, eval),
// whose own output already says what each question did: the agent's
// per-question info lines are left out unless debug logging was asked for.
func (a *app) quietLogger(ctx context.Context) *slog.Logger {
	if a.log.Enabled(ctx, slog.LevelDebug) || !a.log.Enabled(ctx, slog.LevelInfo) {
		return a.log
	}
	cfg := a.cfg
	cfg.LogLevel = slog.LevelWarn
	return newLogger(cfg, a.stderr)
}

// evalScore runs a reference and a candidate statement through the guard
// and the read-only connection, with the scoring bound as the row cap, and
// scores the candidate with the
// evaluation's rule.
func (a *app) evalScore(ctx context.Context, args []string) error {
	fs, f := a.dbFlagSet("eval score", evalScoreUsage)
	ordered := fs.Bool("ordered", false, "row order matters (the question asks for an order)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return &exitErr{code: exitUsage, err: fmt.Errorf("eval score takes 2 statements, got %d", fs.NArg())}
	}
	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()
	var opt evalrun.Options
	closeAll, err := a.scoring(ctx, db, 0, &opt)
	defer closeAll()
	if err != nil {
		return err
	}
	fail := func(err error) error {
		if *asJSON {
			return a.printJSONCode(exitError, map[string]any{"error": err.Error()})
		}
		return err
	}
	ref, err := a.scoreRun(ctx, opt.Score, "reference", fs.Arg(0))
	if err != nil {
		return fail(err)
	}
	if ref.Truncated {
		return fail(fmt.Errorf("the reference returns more rows than the scoring bound (%d): it cannot be scored; raise SQLBOT_SCORE_ROWS or narrow it", len(ref.Rows)))
	}
	cand, err := a.scoreRun(ctx, opt.Score, "candidate", fs.Arg(1))
	if err != nil {
		return fail(err)
	}
	v := evalrun.Score(evalrun.ResultSet{Columns: ref.Columns, Rows: ref.Rows, Truncated: ref.Truncated},
		evalrun.ResultSet{Columns: cand.Columns, Rows: cand.Rows, Truncated: cand.Truncated}, *ordered)
	code := exitOK
	if !v.Correct {
		code = exitWrong
	}
	if *asJSON {
		return a.printJSONCode(code, map[string]any{
			"correct": v.Correct, "reason": v.Reason, "mapping": v.Mapping, "ordered": *ordered,
			"reference": sqlJSON(ref), "candidate": sqlJSON(cand),
		})
	}
	for _, part := range []struct {
		name string
		res  *roconn.Result
	}{{"Reference", ref}, {"Candidate", cand}} {
		fmt.Fprintf(a.stdout, "%s:\n%s\n\n", part.name, indent(part.res.SQL))
		writeTable(a.stdout, part.res.Columns, part.res.Rows)
		fmt.Fprintf(a.stdout, "(%s)\n\n", rowsNote(len(part.res.Rows), part.res.Truncated))
	}
	fmt.Fprintln(a.stdout, v.Reason)
	if code != exitOK {
		return &exitErr{code: code}
	}
	return nil
}

// scoreRun runs one statement of `eval score` through the guarded path; a
// refusal is an error naming which statement and which layer.
func (a *app) scoreRun(ctx context.Context, q evalrun.Querier, which, query string) (*roconn.Result, error) {
	res, err := q.Query(ctx, query)
	if layer, reason, ok := agent.RefusalOf(err); ok {
		return nil, fmt.Errorf("the %s was refused by %s (%s): %s", which, layer.Name(), layer, present.Line(reason))
	}
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		return nil, a.statementError(ctx, "the "+which, err)
	}
	return res, nil
}
