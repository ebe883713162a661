package draft_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"sqlbot/roconn"
	"sqlbot/roconn/draft"
)

// policyDoc is the policy file's shape as this test reads it: the draft's
// own structure, decoded strictly (an unknown key is an error).
type policyDoc struct {
	Expose map[string]struct {
		About   string            `yaml:"about"`
		Columns map[string]string `yaml:"columns"`
		Hide    []string          `yaml:"hide"`
	} `yaml:"expose"`
}

// draftFile runs the whole path on the database at path: Inspect, Make,
// WriteYAML. It returns the YAML and the policy decoded from it.
func draftFile(t testing.TB, path string) (string, policyDoc) {
	t.Helper()
	schema, err := roconn.Inspect(context.Background(), path, roconn.InspectOptions{})
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	var buf bytes.Buffer
	if err := draft.Make(schema).WriteYAML(&buf); err != nil {
		t.Fatalf("WriteYAML: %v", err)
	}
	return buf.String(), decodePolicy(t, buf.Bytes())
}

// decodePolicy decodes a drafted policy strictly.
func decodePolicy(t testing.TB, data []byte) policyDoc {
	t.Helper()
	var doc policyDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("the draft is not a policy: %v\n%s", err, data)
	}
	return doc
}

// TestAdversarialSchema drafts a policy for a generated database of 150
// columns in 12 tables and a view, 47 of them private in ways their names do
// not show, and scores which columns the draft hides.
func TestAdversarialSchema(t *testing.T) {
	path, truth, opaque := buildAdversarial(t)
	if len(truth) < 120 || len(opaque) < 40 {
		t.Fatalf("the schema has %d columns, %d private by their values only; want at least 120 and 40", len(truth), len(opaque))
	}
	text, doc := draftFile(t, path)

	hidden := map[string]bool{} // unreadable under the draft
	judged := map[string]bool{} // what the draft judged private: its values must not appear
	seen := map[string]bool{}
	// An object the draft leaves out is read by nobody: its columns count
	// as hidden, the harmless ones as wrongly hidden. Its comment lists the
	// columns that look private, each on a line of its own.
	leftOut := ""
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "  # left out: "); ok {
			leftOut, _, _ = strings.Cut(rest, ":")
			for col := range truth {
				if strings.HasPrefix(col, leftOut+".") {
					hidden[col], seen[col] = true, true
				}
			}
		} else if rest, ok := strings.CutPrefix(line, "  #   "); ok && leftOut != "" {
			col, _, _ := strings.Cut(rest, ":")
			judged[leftOut+"."+col] = true
		} else {
			leftOut = ""
		}
	}
	for table, e := range doc.Expose {
		for _, c := range e.Hide {
			hidden[table+"."+c] = true
			judged[table+"."+c] = true
			seen[table+"."+c] = true
		}
		for c := range e.Columns {
			if hidden[table+"."+c] {
				t.Errorf("%s.%s is both hidden and described", table, c)
			}
			seen[table+"."+c] = true
		}
	}
	var missed, wrong []string
	tp, private := 0, 0
	for col, p := range truth {
		if !seen[col] {
			t.Errorf("the draft does not mention %s", col)
		}
		if p {
			private++
			if hidden[col] {
				tp++
			} else {
				missed = append(missed, col)
			}
		} else if hidden[col] {
			wrong = append(wrong, col)
		}
	}
	sort.Strings(missed)
	sort.Strings(wrong)
	recall := float64(tp) / float64(private)
	precision := float64(tp) / float64(len(hidden))
	t.Logf("%d columns, %d private (%d by their values only); hidden %d", len(truth), private, len(opaque), len(hidden))
	t.Logf("recall %.3f (%d/%d), precision %.3f (%d/%d)", recall, tp, private, precision, tp, len(hidden))
	t.Logf("private but readable: %v", missed)
	t.Logf("hidden but harmless: %v", wrong)
	if recall < 0.98 {
		t.Errorf("recall %.3f, want at least 0.98", recall)
	}
	if precision < 0.85 {
		t.Errorf("precision %.3f, want at least 0.85", precision)
	}
	noHiddenValues(t, path, judged, text)
}

// noHiddenValues checks that no value of a hidden column, of six characters
// or more, appears anywhere in the draft's text, comments included.
//
// A value that a readable column also holds (named in public, as
// "table.column") may appear: the draft lists it for that column.
func noHiddenValues(t *testing.T, path string, hidden map[string]bool, text string, public ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	shared := map[string]bool{}
	for _, col := range public {
		table, column, _ := strings.Cut(col, ".")
		rows, err := db.Query(fmt.Sprintf("SELECT DISTINCT CAST(%q AS TEXT) FROM %q WHERE %q IS NOT NULL", column, table, column))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			shared[v] = true
		}
		rows.Close()
	}
	for col := range hidden {
		table, column, _ := strings.Cut(col, ".")
		rows, err := db.Query(fmt.Sprintf("SELECT DISTINCT CAST(%q AS TEXT) FROM %q WHERE %q IS NOT NULL", column, table, column))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			if len(v) >= 6 && !shared[v] && strings.Contains(text, v) {
				t.Errorf("the draft shows a value of hidden column %s: %q", col, v)
			}
		}
		rows.Close()
	}
}

// chinook returns the path of the Chinook sample database, or skips.
func chinook(t testing.TB) string {
	const path = "../../../shared/data/chinook/chinook.sqlite"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Chinook is not here (%v)", err)
	}
	return path
}

// TestChinook drafts a policy for Chinook, a database nobody on this project
// designed: every contact, address and birth-date column of Customer and
// Employee is hidden (a person's city and state included: in a table of a
// few dozen people they single them out), as are Invoice's billing address,
// postal code, city and state, since Invoice.CustomerId joins them to each
// customer; the catalogue, the invoice lines, Invoice's totals and dates,
// its billing country (revenue by country), and the customers' country and
// company stay readable.
func TestChinook(t *testing.T) {
	text, doc := draftFile(t, chinook(t))
	want := map[string][]string{
		"Customer": {"Address", "City", "Email", "Fax", "FirstName", "LastName", "Phone", "PostalCode", "State"},
		"Employee": {"Address", "BirthDate", "City", "Email", "Fax", "FirstName", "LastName", "Phone", "PostalCode", "State"},
		"Invoice":  {"BillingAddress", "BillingCity", "BillingPostalCode", "BillingState"},
	}
	for table, e := range doc.Expose {
		got := slices.Sorted(slices.Values(e.Hide))
		if !slices.Equal(got, want[table]) {
			t.Errorf("%s hides %v, want %v", table, got, want[table])
		}
	}
	readable := map[string][]string{
		"Track":       {"TrackId", "Name", "AlbumId", "MediaTypeId", "GenreId", "Composer", "Milliseconds", "Bytes", "UnitPrice"},
		"Album":       {"AlbumId", "Title", "ArtistId"},
		"Artist":      {"ArtistId", "Name"},
		"Genre":       {"GenreId", "Name"},
		"MediaType":   {"MediaTypeId", "Name"},
		"Playlist":    {"PlaylistId", "Name"},
		"InvoiceLine": {"InvoiceLineId", "InvoiceId", "TrackId", "UnitPrice", "Quantity"},
		"Invoice":     {"InvoiceId", "CustomerId", "InvoiceDate", "Total", "BillingCountry"},
		"Customer":    {"CustomerId", "Country", "Company", "SupportRepId"},
		"Employee":    {"EmployeeId", "Title", "HireDate", "Country"},
	}
	for table, cols := range readable {
		e, ok := doc.Expose[table]
		if !ok {
			t.Errorf("%s is not in the draft", table)
			continue
		}
		if e.About == "" {
			t.Errorf("%s has no about", table)
		}
		for _, c := range cols {
			if _, ok := e.Columns[c]; !ok {
				t.Errorf("%s.%s is not readable", table, c)
			}
		}
	}
	if len(doc.Expose) != 11 {
		t.Errorf("the draft exposes %d objects, want Chinook's 11", len(doc.Expose))
	}
	hidden := map[string]bool{}
	for table, cols := range want {
		for _, c := range cols {
			hidden[table+"."+c] = true
		}
	}
	noHiddenValues(t, chinook(t), hidden, text)
	// The reason names the link a join would follow.
	for _, c := range []string{"BillingCity", "BillingState"} {
		if !reasonMentions(text, c, "Invoice.CustomerId") {
			t.Errorf("Invoice.%s's reason does not name Invoice.CustomerId:\n%s", c, text)
		}
	}
}

// reasonMentions reports whether the draft's comment for a hidden column
// mentions want.
func reasonMentions(text, column, want string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, column) && strings.Contains(line, "#") && strings.Contains(line, want) {
			return true
		}
	}
	return false
}
