package evalrun

import (
	"context"
	"sync"
)

// A Reporter keeps the latest evaluation report for the bot's slash command
// (it has the methods of bot.Reporter). It is safe for concurrent use, but
// it does not queue evaluations: each Run runs its own, and the bot lets only
// one run at a time. Make one with NewReporter.
type Reporter struct {
	run func(ctx context.Context) (*Report, error)

	mu     sync.Mutex // guards latest
	latest string     // the newest report's Slack rendering; "" before the first
}

// NewReporter returns a Reporter whose Run calls run, typically a closure
// over Run with the bot's agent and database.
func NewReporter(run func(ctx context.Context) (*Report, error)) *Reporter {
	return &Reporter{run: run}
}

// Latest returns the Slack rendering (Report.Slack) of the newest report,
// and false when no evaluation has finished yet.
func (r *Reporter) Latest(ctx context.Context) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latest, r.latest != ""
}

// Run runs an evaluation, keeps its report as the latest, and returns its
// Slack rendering. A failed evaluation returns its error and leaves the
// latest report as it was.
func (r *Reporter) Run(ctx context.Context) (string, error) {
	rep, err := r.run(ctx)
	if err != nil {
		return "", err
	}
	s := rep.Slack()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest = s
	return s, nil
}
