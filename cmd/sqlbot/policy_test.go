package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"sqlbot/roconn"
)

// draftedPolicy is the drafted file's shape, decoded strictly.
type draftedPolicy struct {
	Expose map[string]struct {
		About   string            `yaml:"about"`
		Columns map[string]string `yaml:"columns"`
		Hide    []string          `yaml:"hide"`
	} `yaml:"expose"`
}

func decodeDraft(t *testing.T, data []byte) draftedPolicy {
	t.Helper()
	var p draftedPolicy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("the draft does not decode: %v\n%s", err, data)
	}
	return p
}

// TestPolicyDraftChinook runs `sqlbot policy draft` on Chinook to standard
// output, then to a file: the file is refused when it exists, replaced with
// --force, and the database is left as it was.
func TestPolicyDraftChinook(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "chinook", "chinook.sqlite")
	if _, err := os.Stat(path); err != nil {
		t.Skip("Chinook is not present:", err)
	}
	before := sum(t, path)
	out, errOut, code := sqlbot(t, nil, "policy", "draft", "--db", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	p := decodeDraft(t, []byte(out))
	if got := slices.Sorted(slices.Values(p.Expose["Customer"].Hide)); !slices.Contains(got, "Email") || !slices.Contains(got, "Phone") {
		t.Errorf("Customer hides %v, want its e-mail and phone among them", got)
	}
	if len(p.Expose["Track"].Hide) != 0 || len(p.Expose["Track"].Columns) != 9 {
		t.Errorf("Track: hides %v, describes %d columns; want all 9 readable", p.Expose["Track"].Hide, len(p.Expose["Track"].Columns))
	}

	file := filepath.Join(t.TempDir(), "policy.yaml")
	if _, errOut, code := sqlbot(t, []string{"SQLBOT_DB=" + path}, "policy", "draft", "--out", file); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, errOut)
	} else if !strings.Contains(errOut, "wrote "+file) {
		t.Errorf("--out says %q, want it to name the file", errOut)
	}
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != out {
		t.Error("the file differs from what standard output got")
	}
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = sqlbot(t, nil, "policy", "draft", "--db", path, "--out", file)
	if code != exitError || !strings.Contains(errOut, "--force") {
		t.Errorf("over an existing file: exit %d, %q; want 1 and a hint to --force", code, errOut)
	}
	if b, _ := os.ReadFile(file); string(b) != "mine\n" {
		t.Error("an existing file was changed without --force")
	}
	if _, errOut, code := sqlbot(t, nil, "policy", "draft", "--db", path, "--out", file, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(file); string(b) != out {
		t.Error("--force did not write the draft")
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want only the policy (no temporary left)", len(entries))
	}
	if sum(t, path) != before {
		t.Error("Chinook's file changed")
	}
}

// TestPolicyDraftLoads drafts a policy for a database with nothing private:
// the draft hides nothing, and the current policy parser and Open accept it
// as it is.
func TestPolicyDraftLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL);
		INSERT INTO products (name, category, price) VALUES
			('Summit Pack 45L', 'Backpacks', 149.0), ('Trail Tent 2P', 'Tents', 329.5), ('Merino Beanie', 'Clothing', 29.9);
		CREATE VIEW cheap AS SELECT name, price FROM products WHERE price < 100;`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sqlbot(t, nil, "policy", "draft", "--db", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	p, err := roconn.ParsePolicy([]byte(out))
	if err != nil {
		t.Fatalf("ParsePolicy: %v\n%s", err, out)
	}
	conn, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		t.Fatalf("Open with the draft: %v\n%s", err, out)
	}
	defer conn.Close()
	o, ok := conn.Object("products")
	if !ok || !strings.Contains(o.About, "3 rows") {
		t.Errorf("products: %+v, want an about with its row count", o)
	}
	for _, c := range o.Columns {
		if c.Name == "category" && !strings.Contains(c.Meaning, "Backpacks, Clothing, Tents") {
			t.Errorf("category means %q, want its three values listed", c.Meaning)
		}
	}
	if _, ok := conn.Object("cheap"); !ok {
		t.Error("the view is not in the draft")
	}
}

func TestPolicyUsage(t *testing.T) {
	for _, args := range [][]string{{"policy"}, {"policy", "write"}, {"policy", "draft", "extra"}} {
		if _, _, code := sqlbot(t, nil, args...); code != exitUsage {
			t.Errorf("sqlbot %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	_, errOut, code := sqlbot(t, nil, "policy", "draft", "--db", filepath.Join(t.TempDir(), "missing.db"))
	if code != exitError || !strings.Contains(errOut, "missing.db") {
		t.Errorf("a missing database: exit %d, %q; want 1 naming the file", code, errOut)
	}
}
