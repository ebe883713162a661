package evalrun

import (
	"context"
)

// A Reporter runs the evaluation of one deployment for the bot's slash
// command (it has the methods of bot.Reporter): Key names what it
// evaluates, so that its reports can be kept and shared under that name,
// and Run runs one evaluation. It keeps no report itself (the bot keeps
// them in its state store) and does not queue evaluations: the bot lets
// only one run at a time. Make one with NewReporter.
type Reporter struct {
	key string
	run func(ctx context.Context) (*Report, error)
}

// NewReporter returns a Reporter for the evaluation named key (the identity
// of the database, policy and question set it evaluates), whose Run calls
// run, typically a closure over Run with the bot's agent and database.
func NewReporter(key string, run func(ctx context.Context) (*Report, error)) *Reporter {
	return &Reporter{key: key, run: run}
}

// Key returns the name of what Run evaluates.
func (r *Reporter) Key() string { return r.key }

// Run runs an evaluation and returns its report, or the error that stopped
// it.
func (r *Reporter) Run(ctx context.Context) (*Report, error) {
	return r.run(ctx)
}
