package main

import (
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
		"usage: sqlbot eval [--db PATH] [--policy FILE] [--questions FILE] [--only answerable|safety|unanswerable] [--model reference|live] [--json] [--out FILE]",
		"       "+strings.TrimPrefix(evalScoreUsage, "usage: "),
		"       sqlbot eval export-verified [--out FILE]")
	questions := fs.String("questions", "", "question file: a JSON list of {id, question, reference_sql, ordered, kind}, "+
		"or verified: the answers verified in Slack, from the state (default: SQLBOT_QUESTIONS, else the demo's questions on the demo database)")
	only := fs.String("only", "", "run only one kind of question: answerable, safety or unanswerable")
	model := fs.String("model", "", "reference (each question's reference SQL through the guarded path, no model) or live (the configured providers) (default: live when a provider is configured, else reference)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object instead of a table")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	concurrency := fs.Int("concurrency", 1, "questions asked at once; unsafe questions always run alone")
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

	rep, err := a.runEval(ctx, db, set, mode, evalrun.Options{Only: kind, Progress: a.stderr, Concurrency: *concurrency})
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
	ag := agent.New(m, db.DB, g, agent.Options{MaxSteps: a.cfg.MaxSteps}, a.quietLogger(ctx))
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
// and the read-only connection and scores the candidate with the
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
	g := guard.New(db.Limits().Rows)
	fail := func(err error) error {
		if *asJSON {
			return a.printJSONCode(exitError, map[string]any{"error": err.Error()})
		}
		return err
	}
	ref, err := a.scoreRun(ctx, g, db.DB, "reference", fs.Arg(0))
	if err != nil {
		return fail(err)
	}
	if ref.Truncated {
		return fail(fmt.Errorf("the reference returns more rows than the row cap (%d): it cannot be scored; raise SQLBOT_ROW_CAP or narrow it", len(ref.Rows)))
	}
	cand, err := a.scoreRun(ctx, g, db.DB, "candidate", fs.Arg(1))
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
func (a *app) scoreRun(ctx context.Context, g *guard.Guard, db *roconn.DB, which, query string) (*roconn.Result, error) {
	res, err := agent.Checked{Guard: g, DB: db}.Query(ctx, query)
	if layer, reason, ok := agent.RefusalOf(err); ok {
		return nil, fmt.Errorf("the %s was refused by %s (%s): %s", which, layer.Name(), layer, present.Line(reason))
	}
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		return nil, a.statementError(ctx, "the "+which, err)
	}
	return res, nil
}
