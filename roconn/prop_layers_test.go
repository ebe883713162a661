package roconn_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"sqlbot/roconn"
)

// propRehide gives the hidden columns of the property test's exposed tables
// other values (NULLs among them, in another order), and nothing else: no
// exposed view reads them, so no statement the policy allows can tell the
// two databases apart.
const propRehide = `
UPDATE t1 SET h1 = CASE WHEN id % 3 = 0 THEN NULL ELSE 'HIDb' || (20 - id) END, h2 = 7770100 - id * id;
UPDATE t2 SET h3 = CASE WHEN id % 4 = 0 THEN NULL ELSE 'HIDd' || (30 - id) END;
`

// A layerPair is one way of opening roconn, on the property test's
// database and on its rehidden twin.
type layerPair struct {
	name                      string
	noAuthorizer, noReadCheck bool
	a, b                      *roconn.DB
}

// TestGeneratedSelectsEachLayerAlone checks each read layer alone on
// -prop.n generated statements, by non-interference: roconn runs each
// statement on the property test's database and on a twin whose hidden
// columns hold other values. With the authorizer alone, and with the check
// of the compiled program alone, no hidden value appears in any output, and
// every statement gives the same outcome on both (the same rows in the same
// order, or the same refusal or error): an oracle (a count, an order, an
// equality with a guessed value) would differ. With neither layer, the
// same run finds statements that tell the two apart, so the test can fail.
func TestGeneratedSelectsEachLayerAlone(t *testing.T) {
	pathA, pathB := propFiles(t)
	p, err := roconn.ParsePolicy([]byte(propPolicy))
	if err != nil {
		t.Fatal(err)
	}
	lim := roconn.Limits{Rows: 100000, Timeout: 5 * time.Second}
	ctx := context.Background()
	pairs := []*layerPair{
		{name: "authorizer alone", noReadCheck: true},
		{name: "program check alone", noAuthorizer: true},
		{name: "no layer", noAuthorizer: true, noReadCheck: true},
	}
	for _, lp := range pairs {
		for _, side := range []struct {
			path string
			db   **roconn.DB
		}{{pathA, &lp.a}, {pathB, &lp.b}} {
			db, err := roconn.OpenWithout(ctx, side.path, p, lim, lp.noAuthorizer, lp.noReadCheck)
			if err != nil {
				t.Fatalf("%s: %v", lp.name, err)
			}
			t.Cleanup(func() { db.Close() })
			*side.db = db
		}
	}
	n := *propN
	if roconn.RaceDetector {
		n /= 10 // six statements each, several times slower: the property runs in full without it
	}
	differ := map[string]int{}
	ran := map[string]int{}
	start := time.Now()
	for i := range n {
		seed := *propSeed*1_000_003 + uint64(i)
		g := &propGen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
		q := g.statement()
		for _, lp := range pairs {
			// Odd statements are streamed: the rows given before any
			// refusal count as output, on both databases alike.
			outA, givenA, errA := queryOrStream(ctx, lp.a, q, seed%2 == 1)
			outB, givenB, errB := queryOrStream(ctx, lp.b, q, seed%2 == 1)
			if timedOut(errA) || timedOut(errB) {
				continue // a loaded machine can stall a statement; no outcome to compare
			}
			if errA == nil {
				ran[lp.name]++
			}
			leak := propLeak(q, givenA, fmt.Sprint(errA))
			same := outcome(outA, errA)+fmt.Sprint(givenA) == outcome(outB, errB)+fmt.Sprint(givenB)
			if leak == "" && same {
				continue
			}
			differ[lp.name]++
			if lp.noAuthorizer && lp.noReadCheck {
				continue
			}
			switch {
			case leak != "":
				t.Errorf("%s, seed %d: %s\nleaked %q", lp.name, seed, q, leak)
			default:
				t.Errorf("%s, seed %d: %s\nthe hidden values change the outcome:\n %.300s\n %.300s", lp.name, seed, q, outcome(outA, errA), outcome(outB, errB))
			}
		}
		if t.Failed() && !testing.Verbose() {
			break
		}
	}
	t.Logf("%d statements in %v; ran: %v; told the databases apart or leaked: %v", n, time.Since(start).Round(time.Millisecond), ran, differ)
	if differ["no layer"] < n/50 {
		t.Errorf("with no layer only %d of %d statements tell the databases apart; the generator should reach what is hidden", differ["no layer"], n)
	}
	for _, lp := range pairs[:2] {
		if ran[lp.name] < n/4 {
			t.Errorf("%s ran only %d of %d statements", lp.name, ran[lp.name], n)
		}
	}
}

// propFiles writes the property test's database and its rehidden twin.
func propFiles(t *testing.T) (a, b string) {
	t.Helper()
	dir := t.TempDir()
	a, b = filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, f := range []struct{ path, script string }{{a, propSchema}, {b, propSchema + propRehide}} {
		rw, err := sql.Open("sqlite", f.path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rw.Exec(f.script); err != nil {
			t.Fatal(err)
		}
		rw.Close()
	}
	return a, b
}

// queryOrStream runs q through Query, or through Stream when stream is set,
// and returns the Result, every row that came out (Query's rows, or the rows
// Stream gave, refused or not), and the error.
func queryOrStream(ctx context.Context, db *roconn.DB, q string, stream bool) (*roconn.Result, [][]any, error) {
	if stream {
		return streamAll(ctx, db, q)
	}
	res, err := db.Query(ctx, q)
	if res == nil {
		return nil, nil, err
	}
	return res, res.Rows, err
}

func timedOut(err error) bool {
	var ref *roconn.Refusal
	return errors.As(err, &ref) && ref.Layer == roconn.LayerTimeout
}

// outcome is what a statement's result or error shows: its columns and rows
// in order, or the error's text.
func outcome(res *roconn.Result, err error) string {
	if err != nil && !errors.Is(err, roconn.ErrRowLimit) {
		return "error: " + err.Error()
	}
	return fmt.Sprint(res.Columns, res.Rows)
}
