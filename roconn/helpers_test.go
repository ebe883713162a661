package roconn_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the plain driver that builds fixtures
	"sqlbot/roconn"
)

// newFixture writes testdata/fixture.sql to a new database in t.TempDir()
// through a plain read-write modernc connection, and returns its path.
func newFixture(t *testing.T) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", "fixture.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fixture.db")
	execScript(t, path, string(script))
	return path
}

// execScript runs script on the database at path through a plain read-write
// connection, creating the file if needed.
func execScript(t *testing.T, path, script string) {
	t.Helper()
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.Exec(script); err != nil {
		t.Fatalf("exec script: %v", err)
	}
}

// testPolicy returns testdata/policy.yaml, parsed.
func testPolicy(t *testing.T) *roconn.Policy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := roconn.ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openFixture opens a new fixture under the test policy with lim.
func openFixture(t *testing.T, lim roconn.Limits) (*roconn.DB, string) {
	t.Helper()
	path := newFixture(t)
	db, err := roconn.Open(context.Background(), path, testPolicy(t), lim)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// layerOf returns the Layer of a *roconn.Refusal in err's chain, or "".
func layerOf(err error) roconn.Layer {
	var r *roconn.Refusal
	if errors.As(err, &r) {
		return r.Layer
	}
	return ""
}

// fileSum returns the SHA-256 of the file's bytes.
func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
