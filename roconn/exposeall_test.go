package roconn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sqlbot/roconn"
)

// TestExposeAll: `expose: all` is the explicit way to expose everything
// (TestNilPolicy shows what it exposes); it parses with rules and limits
// beside it, and Open keeps them.
func TestExposeAll(t *testing.T) {
	p, err := roconn.ParsePolicy([]byte("expose: all\nrules:\n  - Sales means shipped orders.\nlimits: {rows: 7, timeout: 3s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.All || len(p.Expose) != 0 {
		t.Fatalf("parsed %+v, want All and no listed objects", p)
	}
	if len(p.Rules) != 1 || p.Limits != (roconn.PolicyLimits{Rows: 7, Timeout: 3 * time.Second}) {
		t.Errorf("rules %q, limits %+v: want both kept", p.Rules, p.Limits)
	}
	db, err := roconn.Open(context.Background(), newFixture(t), p, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Rules(); len(got) != 1 || got[0] != "Sales means shipped orders." {
		t.Errorf("rules %q, want the file's", got)
	}
	if db.Limits().Rows != 7 || db.Limits().Timeout != 3*time.Second {
		t.Errorf("limits %+v, want the file's", db.Limits())
	}
}

// TestExposeAllErrors: anything else in place of a list is an error that
// says what expose takes.
func TestExposeAllErrors(t *testing.T) {
	for _, tt := range []struct {
		doc      string
		sayWhere bool // the error must say what expose takes
	}{
		{"expose: everything\n", true},
		{"expose: ALL\n", true},
		{"expose: 3\n", true},
		{"expose: all\nextra: 1\n", false},
		{"expose: all\nlimits: {rows: -1}\n", false},
	} {
		p, err := roconn.ParsePolicy([]byte(tt.doc))
		if err == nil {
			t.Errorf("ParsePolicy(%q) = %+v, want an error", tt.doc, p)
			continue
		}
		if tt.sayWhere && !strings.Contains(err.Error(), "all") {
			t.Errorf("ParsePolicy(%q): %v; want it to say that expose takes a list or all", tt.doc, err)
		}
	}
	_, err := roconn.ParsePolicy([]byte("expose:\n"))
	if err == nil || !strings.Contains(err.Error(), "expose: all") {
		t.Errorf("an empty expose: %v; want it to mention expose: all", err)
	}
}
