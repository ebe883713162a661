package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"sqlbot/agent"
	"sqlbot/agent/cache"
	"sqlbot/agent/openai"
	"sqlbot/agent/present"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
	"sqlbot/guard"
)

// ask answers one question through the same agent as Slack.
func (a *app) ask(ctx context.Context, args []string) error {
	fs, f := a.dbFlagSet("ask", "usage: sqlbot ask [--db PATH] [--policy FILE] [--json] QUESTION")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	question := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if question == "" {
		fs.Usage()
		return &exitErr{code: exitUsage}
	}
	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()
	lg := a.quietLogger(ctx)
	ag, _, _, err := a.newAgent(db, lg)
	if err != nil {
		return err
	}
	var ans cache.Answerer = ag
	if !a.cacheOff() {
		st, _, err := a.openState(ctx, db.path, lg)
		if err != nil {
			return fmt.Errorf("%w (SQLBOT_CACHE_TTL=0 answers without the state)", err)
		}
		defer st.Close()
		ans = a.cached(ag, st, db, lg)
	}
	res, askErr := ans.Ask(ctx, agent.Request{Question: question})
	code := askExit(res.Outcome)
	if *asJSON {
		js := res.JSON()
		if askErr != nil {
			js.Error = askErr.Error() // for the operator at the terminal
		}
		return a.printJSONCode(code, js)
	}
	printAnswer(a.stdout, res)
	if askErr != nil {
		a.log.DebugContext(ctx, "ask failed", "err", askErr)
	}
	if askErr != nil && res.Answer == "" {
		return &exitErr{code: code, err: errors.New(agent.FailureText(askErr))}
	}
	if code != exitOK {
		return &exitErr{code: code}
	}
	return nil
}

// newAgent wires the guard, the model (on the demo, its recorded questions
// answered from their stored SQL and every other by the configured
// providers; elsewhere the providers; with none, the recorded questions
// alone) and the agent over db, logging to lg. providers is nil when no
// provider is configured; g is the agent's guard, for its refusal counts.
func (a *app) newAgent(db *database, lg *slog.Logger) (ag *agent.Agent, providers *openai.Providers, g *guard.Guard, err error) {
	providers, err = a.providers()
	if err != nil {
		return nil, nil, nil, err
	}
	// The recorded questions are answered from their stored SQL even with a
	// model configured: they never cost a model call.
	model, err := a.offlineModel(db)
	if err != nil {
		return nil, nil, nil, err
	}
	if providers != nil && db.demo {
		if model, err = agent.PreferRecorded(model, providers); err != nil {
			return nil, nil, nil, err
		}
	} else if providers != nil {
		model = providers
	}
	g = guard.New(db.Limits().Rows)
	return agent.New(model, db.DB, g, agent.Options{MaxSteps: a.cfg.MaxSteps, PromptChars: a.cfg.PromptChars}, lg), providers, g, nil
}

// providers returns the configured model providers with fail-over, or nil
// when none is configured.
func (a *app) providers() (*openai.Providers, error) {
	ps, err := a.cfg.Providers()
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	list := make([]openai.Provider, len(ps))
	for i, p := range ps {
		list[i] = openai.Provider{BaseURL: p.BaseURL, APIKey: p.APIKey, Model: p.Model}
	}
	providers := openai.NewProviders(list, a.cfg.ModelTimeout, nil)
	providers.Log = a.log
	return providers, nil
}

// offlineModel is the model when none is configured: on the demo database,
// the demo's question set answered from its stored SQL (or its stored
// refusal) through the same guards; elsewhere, none, so every question is
// told how to configure a model.
func (a *app) offlineModel(db *database) (agent.Model, error) {
	if !db.demo { // the demo's SQL fits no other schema
		return agent.NewRecorded(nil)
	}
	qs, err := evalrun.ParseQuestions(demo.Questions())
	if err != nil {
		return nil, err
	}
	return evalrun.NewReference(qs)
}

// askExit maps an outcome to the exit code: 0 answered (or declined as not
// in the data), 3 refused, 4 stopped by the step budget, 1 failed.
func askExit(o agent.Outcome) int {
	switch o {
	case agent.Answered, agent.Unanswerable:
		return exitOK
	case agent.Refused:
		return exitRefused
	case agent.Budget:
		return exitBudget
	}
	return exitError
}

// printAnswer prints each step, the answer, the SQL, a result table and a
// footer, for a person at a terminal.
func printAnswer(w io.Writer, res *agent.Result) {
	// Everything here but the counts was chosen by the model or read from
	// the data: it is made safe before it reaches the terminal.
	for _, s := range res.Trace {
		fmt.Fprintf(w, "[%s %s] %s\n", present.Line(present.Ellipsize(present.OneLine(s.Tool), 64)), s.Status, present.Line(present.Ellipsize(present.OneLine(s.Args), 160)))
	}
	if len(res.Trace) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, present.Block(res.Answer))
	if res.Refusal != nil {
		fmt.Fprintf(w, "\nRefused by %s (%s): %s\n%s\n", res.Refusal.Layer.Name(), res.Refusal.Layer, present.Line(res.Refusal.Reason), indent(present.Block(res.Refusal.SQL)))
	}
	if res.FinalSQL != "" {
		fmt.Fprintf(w, "\nSQL:\n%s\n\n", indent(present.Block(res.FinalSQL)))
		writeTable(w, res.Columns, res.Rows)
		fmt.Fprintf(w, "(%s)\n", rowsNote(len(res.Rows), res.Truncated))
	}
	cached := ""
	if res.Cached {
		cached = ", from the cache"
	}
	fmt.Fprintf(w, "\n(%s, %d steps, %.1f s, %d+%d tokens%s)\n", present.Line(cmp.Or(res.Provider, "no provider")), res.Steps,
		res.Elapsed.Seconds(), res.Tokens.Prompt, res.Tokens.Completion, cached)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ")
}
