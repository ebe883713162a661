package demo_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"sqlbot/evalrun/demo"
)

// Versions of the demo from other seeds keep the schema and the arranged
// facts (Check passes) and change the rows; each seed writes the same bytes
// every time, and seed 0 is the demo itself.
func TestWriteVariant(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "v0.db")
	if err := demo.WriteVariant(t.Context(), zero, 0); err != nil {
		t.Fatal(err)
	}
	if got := fileSHA256(t, zero); got != wantDemoSHA256 {
		t.Fatalf("seed 0 has sha256 %s, want the demo's %s", got, wantDemoSHA256)
	}
	sums := map[string]uint64{wantDemoSHA256: 0}
	for seed := uint64(1); seed <= 3; seed++ {
		a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
		for _, p := range []string{a, b} {
			if err := demo.WriteVariant(t.Context(), p, seed); err != nil {
				t.Fatalf("WriteVariant(seed %d): %v", seed, err)
			}
		}
		if err := demo.Check(t.Context(), a); err != nil {
			t.Errorf("seed %d breaks the demo's rules: %v", seed, err)
		}
		ha, hb := fileSHA256(t, a), fileSHA256(t, b)
		if ha != hb {
			t.Errorf("seed %d: two writes differ", seed)
		}
		if other, ok := sums[ha]; ok {
			t.Errorf("seed %d writes the same bytes as seed %d", seed, other)
		}
		sums[ha] = seed
		if !slices.Equal(schemaOf(t, a), schemaOf(t, zero)) {
			t.Errorf("seed %d has another schema", seed)
		}
		path, err := demo.EnsureVariant(t.Context(), dir, seed)
		if err != nil || fileSHA256(t, path) != ha {
			t.Errorf("EnsureVariant(seed %d) = %s, %v: want the same bytes as WriteVariant", seed, path, err)
		}
	}
}

func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT sql FROM sqlite_schema ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		rows.Scan(&s)
		out = append(out, s.String)
	}
	return out
}
