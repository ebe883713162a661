package roconn_test

import (
	"context"
	"testing"

	"sqlbot/roconn"
)

// fileSumOf returns FileChecksum of path, failing the test on an error.
func fileSumOf(t *testing.T, path string) string {
	t.Helper()
	s, err := roconn.FileChecksum(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 64 {
		t.Fatalf("FileChecksum = %q, want 64 hex digits", s)
	}
	return s
}

// TestFileChecksum: reading the database through roconn (refused writes
// included), opening and closing it, and Checksum itself leave FileChecksum
// as it was; each write through a separate read-write connection changes it.
// (A statement that leaves every byte as it was, such as an UPDATE to the
// same values, which SQLite does not write out, leaves it too.)
func TestFileChecksum(t *testing.T) {
	ctx := context.Background()
	path := newFixture(t)
	first := fileSumOf(t, path)
	if again := fileSumOf(t, path); again != first {
		t.Fatalf("two sums of an unchanged file differ: %s, %s", first, again)
	}
	db, err := roconn.Open(ctx, path, testPolicy(t), roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT * FROM orders", "SELECT count(*) FROM customer_regions", "DELETE FROM orders", "VACUUM"} {
		db.Query(ctx, q)
	}
	if _, err := roconn.Checksum(ctx, path); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if again := fileSumOf(t, path); again != first {
		t.Fatalf("FileChecksum changed after reads: %s, then %s", first, again)
	}
	prev := first
	for _, change := range []string{
		"UPDATE secrets SET token = 'other' WHERE id = 2",
		"UPDATE orders SET receipt = '1' WHERE id = 1",
		"CREATE INDEX orders_status ON orders(status)",
		"DELETE FROM customers WHERE id = 3",
	} {
		execScript(t, path, change)
		next := fileSumOf(t, path)
		if next == prev {
			t.Errorf("after %q: FileChecksum unchanged", change)
		}
		prev = next
	}
}

// On a WAL-mode database whose owner keeps it open, a write that is only in
// the -wal file changes the sum, and reading through roconn does not.
func TestFileChecksumWAL(t *testing.T) {
	ctx := context.Background()
	path, owner := walOwner(t)
	first := fileSumOf(t, path)
	db, err := roconn.Open(ctx, path, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 3 {
		if _, err := db.Query(ctx, "SELECT * FROM events"); err != nil {
			t.Fatal(err)
		}
	}
	if again := fileSumOf(t, path); again != first {
		t.Fatalf("FileChecksum changed after reads: %s, then %s", first, again)
	}
	if _, err := owner.Exec("INSERT INTO events (what) VALUES ('d')"); err != nil {
		t.Fatal(err)
	}
	if fileSumOf(t, path) == first {
		t.Error("a write held in the -wal file left FileChecksum unchanged")
	}
}
