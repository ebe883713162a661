package roconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// shopPrivate returns the private values of the shop (testdata/shop.sql)
// to search outputs for: every customer's full name, e-mail address and
// phone number, and every employee's e-mail address and salary.
func shopPrivate(t *testing.T, path string) []string {
	t.Helper()
	pool := openPrivileged(dsnFor(path)).pool
	defer pool.Close()
	out, err := queryText(context.Background(), pool, `SELECT first_name || ' ' || last_name FROM customers
		UNION ALL SELECT email FROM customers UNION ALL SELECT phone FROM customers WHERE phone IS NOT NULL
		UNION ALL SELECT email FROM employees UNION ALL SELECT salary FROM employees`)
	if err != nil {
		t.Fatal(err)
	}
	vals := strings.Split(strings.TrimSpace(out), " \n")
	if len(vals) < 100 {
		t.Fatalf("only %d private values found; the shop should have hundreds", len(vals))
	}
	return vals
}

// hostileReads are the categories of testdata/hostile.sql that read what
// the policy keeps back. (Writes, stacked statements and forbidden
// functions do not depend on the policy; the tests of each layer alone on
// testdata/writes.sql cover them.)
var hostileReads = map[string]bool{"schema": true, "private": true}

// TestHideEachLayerAlone: under a policy that exposes the shop's private
// tables with their private columns hidden (testdata/shop_hide_policy.yaml),
// the authorizer alone, on a connection with nothing in front of it, denies
// every hostile read that compiles, and the check of the compiled program
// alone refuses every one; nothing private comes out and the file is
// unchanged.
func TestHideEachLayerAlone(t *testing.T) {
	ctx := context.Background()
	path, rw := scriptRW(t, "shop.sql")
	private := shopPrivate(t, path)
	acc, check := layersFor(t, path, "shop_hide_policy.yaml")
	before := fileHash(t, path)
	conn, err := rw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pool, st := authorizerOnly(t, path, acc)
	leak := func(out string) string {
		for _, v := range private {
			if strings.Contains(out, v) {
				return v
			}
		}
		return ""
	}
	n := 0
	for _, r := range LoadCorpus(t, "hostile.sql", t.TempDir()) {
		if !hostileReads[r.Category] {
			continue
		}
		prog, err := explain(ctx, conn, r.SQL)
		if err != nil {
			continue // SQLite does not compile it: nothing could run
		}
		n++
		st.begin(r.SQL)
		out, err := queryText(ctx, pool, r.SQL)
		if err == nil || st.denial() == "" {
			t.Errorf("authorizer alone, %s: err %v, denial %q; want a denial", r.Name, err, st.denial())
		}
		if v := leak(out + fmt.Sprint(err)); v != "" {
			t.Errorf("authorizer alone, %s: %q in the output", r.Name, v)
		}
		var ref *Refusal
		err = programOnly(ctx, check, r.SQL, prog)
		if !errors.As(err, &ref) || ref.Layer != LayerReadOnly {
			t.Errorf("program check alone, %s: %v, want a %q refusal", r.Name, err, LayerReadOnly)
		} else if v := leak(ref.Reason); v != "" {
			t.Errorf("program check alone, %s: %q in the reason %q", r.Name, v, ref.Reason)
		}
	}
	conn.Close()
	pool.Close()
	if fileHash(t, path) != before {
		t.Fatal("the file changed")
	}
	t.Logf("%d hostile reads: each denied by the authorizer alone and refused by the program check alone", n)
	if n < 40 {
		t.Errorf("only %d hostile reads compiled; the corpus has more", n)
	}
}
