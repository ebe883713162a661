package evalrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
)

// The evaluation's tests run the demo's question set on the demo database
// (package demo), as `sqlbot eval` does by default.

// testDir is a directory for the whole test binary; TestMain removes it.
var testDir string

// demoFile writes the demo database into testDir once per test binary, when
// a test first asks for it (sharedDemo).
var demoFile = sync.OnceValues(func() (string, error) {
	path := filepath.Join(testDir, "demo.db")
	return path, demo.Write(context.Background(), path)
})

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "evalrun-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sharedDemo returns the demo database written once per test binary. Tests
// share it, so a test must not write it: one that writes uses demoCopy.
func sharedDemo(t *testing.T) string {
	t.Helper()
	path, err := demoFile()
	if err != nil {
		t.Fatalf("demo.Write: %v", err)
	}
	return path
}

// demoCopy returns a copy of the shared demo database in a new temporary
// directory, for a test that writes it.
func demoCopy(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sharedDemo(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// demoQuestion is one entry of the demo question set, with the keys
// ParseQuestions ignores.
type demoQuestion struct {
	evalrun.Question
	Notes    string  `json:"notes"`
	WrongSQL *string `json:"wrong_sql"`
}

// demoQuestions parses demo.Questions, failing on a key demoQuestion lacks.
func demoQuestions(t *testing.T) []demoQuestion {
	t.Helper()
	var qs []demoQuestion
	dec := json.NewDecoder(bytes.NewReader(demo.Questions()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&qs); err != nil {
		t.Fatalf("parse demo questions: %v", err)
	}
	return qs
}
