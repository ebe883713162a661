package agent

import (
	"context"
	"errors"

	"sqlbot/guard"
	"sqlbot/roconn"
)

// Checked is the one path a statement takes to the database, the model's
// run_sql and `sqlbot sql` alike: the guard's check (which appends the row
// cap plus one as a LIMIT on its own line), then the read-only connection. A refusal
// comes back as a *guard.Refusal or a *roconn.Refusal; a result cut at the
// row cap comes back with an error wrapping roconn.ErrRowLimit.
type Checked struct {
	Guard *guard.Guard
	DB    interface {
		Query(ctx context.Context, query string) (*roconn.Result, error)
	}
}

// Query checks query and, if the guard lets it through, runs it.
func (c Checked) Query(ctx context.Context, query string) (*roconn.Result, error) {
	stmt, err := c.Guard.Check(query)
	if err != nil {
		return nil, err
	}
	return c.DB.Query(ctx, stmt)
}

// RefusalOf reports the layer and reason when err is a refusal by the guard
// (LayerGuard) or by roconn (its Layer), and ok false otherwise.
func RefusalOf(err error) (layer Layer, reason string, ok bool) {
	var gr *guard.Refusal
	var rr *roconn.Refusal
	switch {
	case errors.As(err, &gr):
		return LayerGuard, gr.Reason, true
	case errors.As(err, &rr):
		return Layer(rr.Layer), rr.Reason, true
	}
	return "", "", false
}
