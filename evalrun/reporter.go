package evalrun

import (
	"context"
	"sync"
)

// A Reporter keeps the latest evaluation report, for the bot's slash
// command (it has the methods of bot.Reporter). It is safe for concurrent
// use, but it does not queue evaluations: each Run runs its own, and the bot
// lets only one run at a time. Make one with NewReporter.
type Reporter struct {
	run func(ctx context.Context) (*Report, error)

	mu     sync.Mutex // guards latest
	latest *Report    // nil before the first
}

// NewReporter returns a Reporter whose Run calls run, typically a closure
// over Run with the bot's agent and database.
func NewReporter(run func(ctx context.Context) (*Report, error)) *Reporter {
	return &Reporter{run: run}
}

// Latest returns the newest report, and false when no evaluation has
// finished yet. The report must not be modified.
func (r *Reporter) Latest(ctx context.Context) (*Report, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latest, r.latest != nil
}

// Run runs an evaluation, keeps its report as the latest, and returns it. A
// failed evaluation returns its error and leaves the latest report as it
// was.
func (r *Reporter) Run(ctx context.Context) (*Report, error) {
	rep, err := r.run(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest = rep
	return rep, nil
}
