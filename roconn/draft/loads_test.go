package draft_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sqlbot/roconn"
)

// loadDraft drafts a policy for the database at path and opens the database
// with it, as serve would: a draft that does not load fails the test.
func loadDraft(t *testing.T, path string) (string, policyDoc, *roconn.DB) {
	t.Helper()
	text, doc := draftFile(t, path)
	p, err := roconn.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatalf("ParsePolicy of the draft: %v\n%s", err, text)
	}
	db, err := roconn.Open(context.Background(), path, p, roconn.Limits{})
	if err != nil {
		t.Fatalf("Open with the draft: %v\n%s", err, text)
	}
	t.Cleanup(func() { db.Close() })
	return text, doc, db
}

// TestChinookDraftLoads: the draft for Chinook loads, and a hidden column is
// refused while the catalogue is readable.
func TestChinookDraftLoads(t *testing.T) {
	_, _, db := loadDraft(t, chinook(t))
	if _, err := db.Query(context.Background(), "SELECT count(*) FROM Track"); err != nil {
		t.Errorf("Track is not readable: %v", err)
	}
	var r *roconn.Refusal
	if _, err := db.Query(context.Background(), "SELECT Email FROM Customer"); !errors.As(err, &r) {
		t.Errorf("Customer.Email: %v, want a refusal", err)
	}
}

// TestDraftLoadsWhatPolicyCannotHide: a schema with what a policy cannot
// hide (a view's columns, a rowid or WITHOUT ROWID key, a virtual column
// computed from a hidden one, a table that is all private) or expose (a
// virtual table) still gets a
// draft that loads. The draft hides the virtual column with its source and
// leaves out, with the reason in a comment, the objects whose private
// columns cannot be hidden; what is not private stays exposed.
func TestDraftLoadsWhatPolicyCannotHide(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crm.db")
	execScript(t, path, `
		CREATE TABLE customers (
			id INTEGER PRIMARY KEY, email TEXT, city TEXT, plan TEXT,
			email_domain TEXT GENERATED ALWAYS AS (substr(email, instr(email, '@') + 1)) VIRTUAL,
			email_user TEXT GENERATED ALWAYS AS (substr(email, 1, instr(email, '@') - 1)) STORED);
		CREATE TABLE subscriptions (email TEXT PRIMARY KEY, plan TEXT, started TEXT) WITHOUT ROWID;
		CREATE TABLE credentials (password_hash TEXT, api_token TEXT);
		CREATE TABLE taxpayers (ssn INTEGER PRIMARY KEY, bracket TEXT);
		CREATE VIEW contacts AS SELECT id, email, plan FROM customers;
		CREATE VIEW plans AS SELECT plan, count(*) AS customers FROM customers GROUP BY plan;
		CREATE VIRTUAL TABLE docs USING fts5(body);
		INSERT INTO customers (email, city, plan) VALUES
			('ana.souza@example.org', 'Lyon', 'pro'), ('bo.jensen@example.com', 'Porto', 'free'),
			('cy.twombly@example.net', 'Graz', 'pro'), ('di.prince@example.org', 'Lyon', 'team');
		INSERT INTO subscriptions VALUES ('ana.souza@example.org', 'pro', '2025-01-02'), ('cy.twombly@example.net', 'pro', '2025-03-04');
		INSERT INTO credentials VALUES ('$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW', 'ghp_16C7e42F292c6912E7710c838347Ae178B4a');
		INSERT INTO taxpayers VALUES (123456789, 'B'), (987654321, 'C');`)
	text, doc, db := loadDraft(t, path)

	if e, ok := doc.Expose["customers"]; !ok || !slices.Contains(e.Hide, "email") || !slices.Contains(e.Hide, "email_domain") || !slices.Contains(e.Hide, "email_user") {
		t.Errorf("customers hides %v, want email, the virtual email_domain computed from it and the stored email_user", e.Hide)
	}
	if _, ok := doc.Expose["plans"]; !ok {
		t.Error("the view plans, which shows nothing private, is left out")
	}
	for _, name := range []string{"contacts", "subscriptions", "credentials", "taxpayers", "docs"} {
		if _, ok := doc.Expose[name]; ok {
			t.Errorf("%s is exposed, want it left out", name)
		}
		if !strings.Contains(text, "# left out: "+name+":") {
			t.Errorf("the draft does not say why %s is left out:\n%s", name, text)
		}
	}
	for _, q := range []string{"SELECT email FROM contacts", "SELECT email FROM subscriptions", "SELECT email_domain FROM customers", "SELECT email_user FROM customers", "SELECT api_token FROM credentials"} {
		var r *roconn.Refusal
		if _, err := db.Query(context.Background(), q); !errors.As(err, &r) {
			t.Errorf("%s: %v, want a refusal", q, err)
		}
	}
	if res, err := db.Query(context.Background(), "SELECT plan, customers FROM plans ORDER BY plan"); err != nil || len(res.Rows) != 3 {
		t.Errorf("plans: %v, %v; want its 3 rows", res, err)
	}
	noHiddenValues(t, path, map[string]bool{
		"customers.email": true, "customers.email_domain": true, "customers.email_user": true, "subscriptions.email": true,
		"credentials.password_hash": true, "credentials.api_token": true, "taxpayers.ssn": true, "contacts.email": true,
	}, text)
}

// execScript runs script on a new database at path, through a plain
// read-write connection.
func execScript(t *testing.T, path, script string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err == nil {
		defer db.Close()
		_, err = db.Exec(script)
	}
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}
