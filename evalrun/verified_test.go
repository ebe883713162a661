package evalrun_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"sqlbot/evalrun"
)

func TestVerifiedSet(t *testing.T) {
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	vs := []evalrun.VerifiedAnswer{
		{Channel: "C1", TS: "1700000000.000100", Question: "How many orders?", SQL: "SELECT count(*) FROM orders",
			Checksum: "abc", Source: "src:1", Verifiers: []string{"U1"}, Since: since},
		{Channel: "C2", TS: "1700000000.000200", Question: "How many orders?", SQL: "SELECT count(id) FROM orders;\n",
			Verifiers: []string{"U1", "U2"}, Since: since},
	}
	set, err := evalrun.VerifiedSet(vs)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Questions) != 2 || !strings.HasPrefix(set.Checksum, "sha256:") {
		t.Fatalf("set %+v", set)
	}
	for i, q := range set.Questions {
		if q.Kind != evalrun.Answerable || q.ReferenceSQL == nil || *q.ReferenceSQL != strings.TrimSpace(vs[i].SQL) ||
			q.Question != vs[i].Question || q.Ordered {
			t.Errorf("question %d = %+v, want the verified answer as an unordered answerable question", i, q)
		}
	}
	if set.Questions[0].ID == set.Questions[1].ID {
		t.Error("two verified answers of the same question share an id")
	}
	data, _ := evalrun.VerifiedFile(vs)
	for _, want := range []string{`"verified_by"`, `"U2"`, `"rows_checksum": "abc"`, `"source": "src:1"`, `"slack": "C1/1700000000.000100"`, `"verified_since": "2026-12-01T10:00:00Z"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the file lacks %s:\n%s", want, data)
		}
	}
	if _, err := evalrun.VerifiedSet(nil); !errors.Is(err, evalrun.ErrNoVerified) {
		t.Errorf("no verified answers: %v, want ErrNoVerified", err)
	}
}
