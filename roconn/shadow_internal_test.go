package roconn

import (
	"context"
	"errors"
	"testing"
)

// TestShadowCompileReason: a statement that names what the policy does not
// expose does not compile on the shadow database, and the program check's
// refusal gives SQLite's own words for why, with nothing of the driver's
// wrapping (the result code's name and number).
func TestShadowCompileReason(t *testing.T) {
	ctx := context.Background()
	path, rw := fixtureRW(t)
	_, check := layersFor(t, path, "policy.yaml")
	conn, err := rw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for stmt, want := range map[string]string{
		"SELECT token FROM secrets":             "against what the policy exposes, no such table: secrets",
		"SELECT o.id FROM orders o, secrets s":  "against what the policy exposes, no such table: secrets",
		"SELECT id FROM orders WHERE total > 1": "",
	} {
		prog, err := explain(ctx, conn, stmt)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", stmt, err)
		}
		err = check.check(ctx, stmt, prog)
		var r *Refusal
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want it to pass", stmt, err)
		case want != "" && (!errors.As(err, &r) || r.Reason != want):
			t.Errorf("%s: %v, want the refusal %q", stmt, err, want)
		}
	}
}
