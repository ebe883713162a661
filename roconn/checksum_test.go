package roconn_test

import (
	"context"
	"testing"

	"sqlbot/roconn"
)

func TestChecksum(t *testing.T) {
	ctx := context.Background()
	path := newFixture(t)
	sum := func() string {
		t.Helper()
		s, err := roconn.Checksum(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 64 {
			t.Fatalf("Checksum = %q, want 64 hex digits", s)
		}
		return s
	}
	first := sum()

	// Reads, through roconn and through Checksum itself, change nothing.
	db, err := roconn.Open(ctx, path, testPolicy(t), roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT * FROM orders", "SELECT * FROM customer_regions", "DELETE FROM orders"} {
		db.Query(ctx, q)
	}
	db.Close()
	if again := sum(); again != first {
		t.Fatalf("Checksum changed after reads: %s, then %s", first, again)
	}

	// Any change made through a separate read-write connection shows,
	// including one to a private table, a type-only one and a schema-only one.
	prev := first
	for _, tt := range []struct {
		change string
		same   bool // the change leaves every stored value as it was
	}{
		{"UPDATE secrets SET token = 'other' WHERE id = 2", false},
		{"UPDATE orders SET customer_id = '1' WHERE id = 1", true}, // the column has INTEGER affinity: no change
		{"UPDATE orders SET receipt = 1 WHERE id = 1", false},      // BLOB affinity keeps the type given
		{"UPDATE orders SET receipt = '1' WHERE id = 1", false},    // same digits, now TEXT
		{"CREATE INDEX orders_status ON orders(status)", false},
		{"DELETE FROM customers WHERE id = 3", false},
	} {
		execScript(t, path, tt.change)
		next := sum()
		if (next == prev) != tt.same {
			t.Errorf("after %q: checksum changed = %v, want %v", tt.change, next != prev, !tt.same)
		}
		prev = next
	}

	if _, err := roconn.Checksum(ctx, path+".missing"); err == nil {
		t.Error("Checksum of a missing file succeeded")
	}
}

// TestResultChecksum: a result's checksum depends on its columns, its values
// with their storage classes, and their order, and on nothing else.
func TestResultChecksum(t *testing.T) {
	sum := func(cols []string, rows [][]any) string {
		t.Helper()
		s, err := roconn.ResultChecksum(cols, rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 64 {
			t.Fatalf("ResultChecksum = %q, want 64 hex digits", s)
		}
		return s
	}
	base := sum([]string{"region", "n"}, [][]any{{"west", int64(3)}, {"south", int64(2)}})
	if again := sum([]string{"region", "n"}, [][]any{{"west", int64(3)}, {"south", int64(2)}}); again != base {
		t.Error("the same result has two checksums")
	}
	for name, other := range map[string]string{
		"a column renamed": sum([]string{"region", "count"}, [][]any{{"west", int64(3)}, {"south", int64(2)}}),
		"rows reordered":   sum([]string{"region", "n"}, [][]any{{"south", int64(2)}, {"west", int64(3)}}),
		"a number as text": sum([]string{"region", "n"}, [][]any{{"west", "3"}, {"south", int64(2)}}),
		"a real":           sum([]string{"region", "n"}, [][]any{{"west", 3.0}, {"south", int64(2)}}),
		"a null":           sum([]string{"region", "n"}, [][]any{{"west", nil}, {"south", int64(2)}}),
		"a row less":       sum([]string{"region", "n"}, [][]any{{"west", int64(3)}}),
		"values shifted":   sum([]string{"region", "n"}, [][]any{{"wes", int64(3)}, {"tsouth", int64(2)}}),
	} {
		if other == base {
			t.Errorf("%s: same checksum", name)
		}
	}
	if _, err := roconn.ResultChecksum([]string{"x"}, [][]any{{struct{}{}}}); err == nil {
		t.Error("a value of no storage class was hashed")
	}
}
