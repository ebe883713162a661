package evalrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// A Reporter keeps the latest evaluation report for the bot's slash command
// (it has the methods of bot.Reporter). It is safe for concurrent use. One
// evaluation runs at a time: a Run that arrives while another runs waits for
// it (or for its own ctx to end) and then runs its own.
type Reporter struct {
	run  func(ctx context.Context) (*Report, error)
	turn chan struct{} // holds a token while an evaluation runs

	mu     sync.Mutex // guards latest
	latest string     // the newest report's Slack rendering; "" before the first
}

// NewReporter returns a Reporter whose Run calls run, typically a closure
// over Run with the bot's agent and database.
func NewReporter(run func(ctx context.Context) (*Report, error)) *Reporter {
	return &Reporter{run: run, turn: make(chan struct{}, 1)}
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
	if r.run == nil {
		return "", errors.New("evalrun: reporter has no evaluation to run")
	}
	select {
	case r.turn <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("evalrun: wait for the running evaluation: %w", ctx.Err())
	}
	defer func() { <-r.turn }()
	rep, err := r.run(ctx)
	if err != nil {
		return "", err
	}
	return r.Store(rep), nil
}

// Store keeps rep as the latest report, for a report computed elsewhere
// (at start, say), and returns its Slack rendering.
func (r *Reporter) Store(rep *Report) string {
	s := rep.Slack()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest = s
	return s
}
