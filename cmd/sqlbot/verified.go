package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"sqlbot/bot/state"
	"sqlbot/evalrun"
)

// questionsVerified is the --questions value that evaluates the verified
// answers in the state instead of a file (a file of that name is given as
// ./verified).
const questionsVerified = "verified"

// maxVerified bounds how many verified answers an evaluation or an export
// reads from the state.
const maxVerified = 100_000

// noVerifiedHelp says how answers get verified.
const noVerifiedHelp = "no verified answers yet in the state (%s): in Slack, a ✅ (:white_check_mark:) " +
	"on one of the bot's answers, by one of SQLBOT_VERIFIERS (anyone when it is not set), verifies it"

// verifiedAnswers reads the verified answers in the state (SQLBOT_REDIS_URL,
// else the state file, which must exist), the oldest first. answered is
// the database answered from, which may not be the state file ("" for none).
func (a *app) verifiedAnswers(ctx context.Context, answered string) ([]evalrun.VerifiedAnswer, string, error) {
	where := "Redis"
	if a.cfg.RedisURL == "" {
		path, err := a.statePath()
		if err != nil {
			return nil, "", err
		}
		// Reading must not create a state file where there was none.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, path, nil
		}
		where = path
	}
	st, _, err := a.openState(ctx, answered, a.log)
	if err != nil {
		return nil, where, err
	}
	defer st.Close()
	list, err := st.ListVerified(ctx, maxVerified)
	if err != nil {
		return nil, where, fmt.Errorf("read the verified answers: %w", err)
	}
	slices.Reverse(list)
	out := make([]evalrun.VerifiedAnswer, len(list))
	for i, v := range list {
		out[i] = verifiedAnswer(v)
	}
	return out, where, nil
}

func verifiedAnswer(v state.Verified) evalrun.VerifiedAnswer {
	a := evalrun.VerifiedAnswer{Channel: v.Channel, TS: v.TS, Question: v.Question, SQL: v.SQL,
		Checksum: v.Checksum, Source: v.Source, Since: v.Since}
	for _, vote := range v.Votes {
		a.Verifiers = append(a.Verifiers, vote.User)
	}
	return a
}

// verifiedSet is the question set of the verified answers, for an
// evaluation on db. Those verified on other data or under another policy
// are evaluated all the same (their expected rows are computed again, here),
// and counted on stderr.
func (a *app) verifiedSet(ctx context.Context, db *database) (*evalrun.Set, error) {
	vs, where, err := a.verifiedAnswers(ctx, db.path)
	if err != nil {
		return nil, fmt.Errorf("--questions verified: %w", err)
	}
	set, err := evalrun.VerifiedSet(vs)
	if errors.Is(err, evalrun.ErrNoVerified) {
		return nil, fmt.Errorf("--questions verified: "+noVerifiedHelp, where)
	}
	if err != nil {
		return nil, err
	}
	if src, err := db.source.Get(ctx); err == nil {
		other := 0
		for _, v := range vs {
			if v.Source != "" && v.Source != src {
				other++
			}
		}
		if other > 0 {
			fmt.Fprintf(a.stderr, "sqlbot: %d of %d verified answers were verified on other data or under another policy; their expected rows are computed on this database\n",
				other, len(vs))
		}
	}
	return set, nil
}

const exportVerifiedUsage = `usage: sqlbot eval export-verified [--out FILE] [--force]

Writes the verified answers in the state (SQLBOT_STATE, or SQLBOT_REDIS_URL) as a
question file: each an answerable question whose reference SQL is the SQL that was
verified. Edit it (mark questions whose order matters "ordered": true), then
evaluate with sqlbot eval --questions FILE, or set SQLBOT_QUESTIONS to it.
`

// exportVerified runs `sqlbot eval export-verified`.
func (a *app) exportVerified(ctx context.Context, args []string) error {
	fset := newFlagSet("eval export-verified", a.stderr)
	out := fset.String("out", "", "file to write the questions to (default: standard output)")
	force := fset.Bool("force", false, "replace --out if it exists")
	fset.Usage = func() {
		fmt.Fprint(a.stderr, exportVerifiedUsage)
		fset.PrintDefaults()
	}
	if err := a.parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		fset.Usage()
		return &exitErr{code: exitUsage}
	}
	if *out != "" && !*force {
		if _, err := os.Lstat(*out); err == nil {
			return fmt.Errorf("export-verified: %s exists; pass --force to replace it", *out)
		}
	}
	vs, where, err := a.verifiedAnswers(ctx, "")
	if err != nil {
		return fmt.Errorf("export-verified: %w", err)
	}
	data, err := evalrun.VerifiedFile(vs)
	if errors.Is(err, evalrun.ErrNoVerified) {
		return fmt.Errorf("export-verified: "+noVerifiedHelp, where)
	}
	if err != nil {
		return err
	}
	if *out == "" {
		_, err := a.stdout.Write(data)
		return err
	}
	if err := writeNew(*out, *force, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return fmt.Errorf("export-verified: %w", err)
	}
	fmt.Fprintf(a.stderr, "wrote %s: %d verified answers as questions. Evaluate with sqlbot eval --questions %s\n", *out, len(vs), shellWord(*out))
	return nil
}
