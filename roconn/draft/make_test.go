package draft_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"sqlbot/roconn/draft"
)

func col(name, typ string, samples ...any) draft.Column {
	seen := map[any]bool{}
	for _, s := range samples {
		seen[s] = true
	}
	return draft.Column{Name: name, Type: typ, NonNull: len(samples), Distinct: len(seen), Samples: samples}
}

func decisions(t *testing.T, d *draft.Draft, table string) map[string]draft.Decision {
	t.Helper()
	e, ok := d.Entry(table)
	if !ok {
		t.Fatalf("no entry %s", table)
	}
	m := map[string]draft.Decision{}
	for _, c := range e.Columns {
		m[c.Column] = c
	}
	return m
}

// TestMakeDecisions covers the rules that lift a name's suspicion, the table
// context of a name, free text, listed values and views.
func TestMakeDecisions(t *testing.T) {
	emails := []any{"ana@example.org", "bo@example.com", "cy@example.net"}
	s := &draft.Schema{Source: "unit.db", Objects: []draft.Object{
		{Name: "users", Rows: 3, Scanned: 3, Columns: []draft.Column{
			{Name: "id", Type: "INTEGER", PrimaryKey: true, NonNull: 3, Distinct: 3, Samples: []any{int64(1), int64(2), int64(3)}},
			col("email", "TEXT", emails...),
			{Name: "email_verified", Type: "INTEGER", NonNull: 3, Distinct: 2, Samples: []any{int64(0), int64(1)}},
			col("phone_type", "TEXT", "home", "work", "mobile"),
			col("name", "TEXT", "Ana Souza", "Bo Jensen", "Cy Twombly"),
			col("city", "TEXT", "Lyon", "Porto", "Graz"),
			col("notes", "TEXT", "called twice", "vip", "prefers mail"),
			col("mobile", "TEXT", "yes", "no"),
			col("ref", "TEXT", "DE89370400440532013000", "GB82WEST12345698765432", "NL91ABNA0417164300"),
		}},
		{Name: "products", Rows: 3, Scanned: 3, Columns: []draft.Column{
			col("name", "TEXT", "Summit Pack", "Trail Tent", "Merino Beanie"),
			{Name: "status", Type: "TEXT", NonNull: 30, Distinct: 3, Samples: []any{"active", "retired", "draft"}},
			col("description", "TEXT", "A light pack for long days in the hills, with a rain cover.",
				"Two-person tent with taped seams and a porch for wet boots.",
				"Soft merino wool beanie that keeps its shape after washing."),
		}},
		{Name: "settings", Rows: 3, Scanned: 3, Columns: []draft.Column{
			col("key", "TEXT", "theme", "locale", "mail.footer"),
			col("value", "TEXT", "dark", "en", "Thanks for shopping"),
		}},
		{Name: "user_roles", Rows: 3, Scanned: 3, Columns: []draft.Column{col("name", "TEXT", "admin", "editor", "viewer")}},
		{Name: "customers_2024", Rows: 3, Scanned: 3, Columns: []draft.Column{col("name", "TEXT", "Ana Souza", "Bo Jensen", "Cy Twombly")}},
		{Name: "mailing", View: true, Rows: 3, Scanned: 3,
			Columns: []draft.Column{col("ref", "TEXT"), col("plan", "TEXT", "free", "pro")},
			Reads:   []draft.ColumnRef{{Table: "users", Column: "ref"}, {Table: "users", Column: "notes"}}},
	}}
	d := draft.Make(s)

	users := decisions(t, d, "users")
	for c, hidden := range map[string]bool{
		"id": false, "email": true, "email_verified": false, "phone_type": false, "name": true,
		"city": true, "notes": true, "mobile": false, "ref": true,
	} {
		if users[c].Hidden != hidden {
			t.Errorf("users.%s hidden = %v, want %v (%+v)", c, users[c].Hidden, hidden, users[c])
		}
	}
	if !strings.Contains(users["email"].Reason, "by its name") || !strings.Contains(users["email"].Reason, "3 of 3 sampled values") {
		t.Errorf("users.email reason %q, want the name and the values", users["email"].Reason)
	}
	if !strings.Contains(users["mobile"].Note, "yes/no") {
		t.Errorf("users.mobile note %q, want it to say its values are flags", users["mobile"].Note)
	}

	products := decisions(t, d, "products")
	if products["name"].Hidden {
		t.Error("products.name is hidden: a product's name is not a person's")
	}
	if m := products["status"].Meaning; !strings.Contains(m, "one of: active, draft, retired") {
		t.Errorf("products.status means %q, want its values listed", m)
	}
	if !products["description"].FreeText || products["description"].Hidden {
		t.Errorf("products.description: %+v, want readable and marked free text", products["description"])
	}

	if decisions(t, d, "user_roles")["name"].Hidden {
		t.Error("user_roles.name is hidden: its rows are roles, not users")
	}
	if !decisions(t, d, "customers_2024")["name"].Hidden {
		t.Error("customers_2024.name is readable: its rows are customers")
	}
	if settings := decisions(t, d, "settings"); settings["key"].Hidden {
		t.Errorf("settings.key hidden (%s): its values are plain words", settings["key"].Reason)
	}

	mailing := decisions(t, d, "mailing")
	if !mailing["ref"].Hidden || !strings.Contains(mailing["ref"].Reason, "users.ref") {
		t.Errorf("mailing.ref: %+v, want hidden as it carries users.ref", mailing["ref"])
	}
	e, _ := d.Entry("mailing")
	if len(e.Notes) != 1 || !strings.Contains(e.Notes[0], "users.notes") {
		t.Errorf("mailing notes %v, want one naming users.notes", e.Notes)
	}

	var buf bytes.Buffer
	if err := d.WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, private := range []string{"ana@example.org", "Ana Souza", "called twice", "prefers mail", "DE89370400440532013000"} {
		if strings.Contains(out, private) {
			t.Errorf("the YAML shows %q, a value of a hidden column", private)
		}
	}
	if !slices.Equal(e.Hidden(), []string{"ref"}) {
		t.Errorf("mailing hides %v, want [ref]", e.Hidden())
	}
}

// TestWriteYAMLQuoting: names and meanings that YAML would misread are
// quoted, and a name's line break cannot start a new key or end a comment.
func TestWriteYAMLQuoting(t *testing.T) {
	s := &draft.Schema{Source: "odd\nname.db", Objects: []draft.Object{
		{Name: "yes", Rows: 1, Scanned: 1, Columns: []draft.Column{
			col("key: value", "TEXT", "a"),
			col("# heading", "TEXT", "b"),
			col("line\nbreak", "TEXT", "c"),
			col("email", "TEXT", "x@example.org"),
		}},
	}}
	var buf bytes.Buffer
	if err := draft.Make(s).WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	doc := decodePolicy(t, buf.Bytes())
	e, ok := doc.Expose["yes"]
	if !ok {
		t.Fatalf("no entry \"yes\":\n%s", buf.String())
	}
	for _, c := range []string{"key: value", "# heading", "line\nbreak"} {
		if _, ok := e.Columns[c]; !ok {
			t.Errorf("column %q lost:\n%s", c, buf.String())
		}
	}
	if !slices.Equal(e.Hide, []string{"email"}) {
		t.Errorf("hide = %v, want [email]", e.Hide)
	}
}

// TestLinkedAddress: a table whose rows belong to people whose address the
// draft hides loses its own cities and regions too (a join gives them back),
// naming the link; its country stays, with a note; a table without such a
// link keeps its city.
func TestLinkedAddress(t *testing.T) {
	s := &draft.Schema{Source: "unit.db", Objects: []draft.Object{
		{Name: "orders", Rows: 3, Scanned: 3, Foreign: []draft.ForeignKey{{Column: "buyer", RefTable: "customers", RefColumn: "id"}},
			Columns: []draft.Column{
				col("id", "INTEGER", int64(1), int64(2), int64(3)),
				col("buyer", "INTEGER", int64(1), int64(2), int64(3)),
				col("ship_city", "TEXT", "Lyon", "Porto", "Graz"),
				col("ship_region", "TEXT", "Rhône", "Norte", "Steiermark"),
				col("ship_country", "TEXT", "France", "Portugal", "Austria"),
			}},
		{Name: "customers", Rows: 3, Scanned: 3, Columns: []draft.Column{
			col("id", "INTEGER", int64(1), int64(2), int64(3)),
			col("first_name", "TEXT", "Ana", "Bo", "Cy"),
			col("city", "TEXT", "Lyon", "Porto", "Graz"),
		}},
		{Name: "stores", Rows: 3, Scanned: 3, Columns: []draft.Column{
			col("id", "INTEGER", int64(1), int64(2), int64(3)),
			col("city", "TEXT", "Lyon", "Porto", "Graz"),
		}},
	}}
	d := draft.Make(s)
	o := decisions(t, d, "orders")
	for _, c := range []string{"ship_city", "ship_region"} {
		if !o[c].Hidden || !strings.Contains(o[c].Reason, "orders.buyer → customers") {
			t.Errorf("orders.%s: %+v, want it hidden with a reason naming the link", c, o[c])
		}
	}
	if o["ship_country"].Hidden || !strings.Contains(o["ship_country"].Note, "orders.buyer") {
		t.Errorf("orders.ship_country: %+v, want it readable with a note", o["ship_country"])
	}
	if st := decisions(t, d, "stores"); st["city"].Hidden {
		t.Errorf("stores.city is hidden: %s", st["city"].Reason)
	}
}
