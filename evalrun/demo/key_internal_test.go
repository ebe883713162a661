package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// TestKeyFollowsTheGenerator: Ensure's file name comes from the generator
// itself, the source of demo.go as built, not from a version bumped by hand:
// the key is that file's hash, so any change to the generator (its schema,
// pragmas, seeds or code) names a new file.
func TestKeyFollowsTheGenerator(t *testing.T) {
	src, err := os.ReadFile("demo.go")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if want := hex.EncodeToString(sum[:])[:12]; Key() != want {
		t.Errorf("Key() = %s, want the hash of demo.go as it is on disk, %s", Key(), want)
	}
	// The data the file holds is all made in demo.go: two generations are
	// the same rows (TestWriteDemoSameBytes pins the bytes).
	a, err := demoGenerate(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := demoGenerate(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.orders) != len(b.orders) || a.orders[len(a.orders)-1].totalCents != b.orders[len(b.orders)-1].totalCents {
		t.Error("two generations differ")
	}
}
