// Package draft writes a starting policy for a database that sqlbot has not
// seen before: every table and view described, and every column that looks
// private hidden, each with the reason.
//
// Make takes a Schema (tables, views, columns with their declared types,
// row counts, foreign keys, and a bounded sample of each column's values,
// as roconn.Inspect reads them) and returns a Draft; Draft.WriteYAML writes
// it as a policy file. The package is pure: it never opens a database, so
// its decisions can be tested on any schema a test can describe.
//
// The contract: a column is hidden when its name or its sampled values say
// it is private, and a hidden column's values never appear in the draft,
// not even in a comment. Every hidden column carries the reason, naming what
// it looks like and how that was decided (the name, or how many of the
// sampled values matched). Values are listed only for readable text columns
// whose at most 30 distinct values are all short labels, since a column's
// meaning reaches the model's prompt.
//
// How a column is judged private:
//
//   - By its name. The name is split into words (at separators, case changes
//     and digits: BillingPostalCode is billing, postal, code), folded (lower
//     case, no diacritics), and matched against phrases in English, German,
//     French, Spanish, Portuguese, Italian and Dutch, written with or without
//     separators (first_name, FirstName, firstname, Vorname, prénom,
//     apellido), and against word stems inside compounds (Geburtsdatum,
//     Kundentelefonnummer). The categories: passwords, hashes, tokens,
//     secrets and keys; e-mail; IP and MAC addresses; phone and fax; bank
//     accounts and cards; national identity, passport and tax numbers; birth
//     dates and places; salary and pay; people's names; street addresses and
//     postal codes; free-text notes and comments; health, religion and
//     other special categories; user names.
//   - A name that is about the thing rather than the thing is not private:
//     email_verified, phone_type, address_id, has_email, address_city,
//     pay_method. Nor is a column whose values contradict its name: yes/no
//     flags, numbers where an e-mail or a name should be, dates where a phone
//     number should be, or plain words where a key should be (a settings
//     table's key column).
//   - A generic "name" (name, nom, nombre, nome, naam) is a person's name
//     only in a table of people: one named for people (customer, employee,
//     user, patient, Kunde, client, usuario, klant...) or with a first or
//     last name column. Artist.Name, Track.Name and Genre.Name are not
//     people's names; Customer.Name is. Tables of credited people (artists,
//     authors, composers) keep their names: credits in a catalogue are
//     public.
//   - By its values, whatever its name. Each sampled value is tested for the
//     shapes of private data: e-mail addresses (alone, as "Name <address>",
//     or inside a longer value such as a JSON document); phone numbers in
//     national and international formats, and E.164 numbers stored without
//     their + for the countries whose mobile numbering the package knows;
//     IPv4 and IPv6 addresses; MAC addresses; payment card numbers (issuer
//     prefix and Luhn check); IBANs (country length and mod-97 check); JSON
//     web tokens (a decoded header with "alg"); API keys by their vendors'
//     prefixes (sk-, AKIA, ghp_, xoxb-, AIza, glpat-...) and generic secrets
//     (at least 20 characters mixing upper case, lower case and digits as
//     random strings do, or 48 hex digits or more: a SHA-256 digest or a
//     32-byte token, while 32 and 40 digits are left alone, being as often
//     UUIDs without dashes, file checksums and commit ids); password hashes (bcrypt, argon2, sha-crypt,
//     md5-crypt, scrypt, yescrypt, pbkdf2 in passlib, Django and Werkzeug
//     forms, LDAP, phpass); national numbers with a checksum or distinctive
//     shape (US SSN, Spanish DNI and NIE, Brazilian CPF, Italian codice
//     fiscale, UK NINO, French NIR, Dutch BSN); coordinate pairs with at
//     least 4 decimals (decimal points or commas); street addresses (a house
//     number beside a street word, or a compound ending in one, in each
//     language's order); and people's names (two to four capitalised words
//     whose given name, and ideally family name, are in the embedded lists,
//     which come from @faker-js/faker's locales for those languages and the
//     Nordic, Polish, Czech and Turkish ones; in lower case both must be
//     known; a value that is a known city's name is not a person's), or
//     a family and a given name of Japan, Korea, Vietnam or China, in
//     either order, from a shorter list of romanised names trusted only in
//     pairs ("Watanabe Hiroshi", "Nguyen Van An", "Kim Min-jun").
//   - A column is private by its values when enough of its distinct sampled
//     values take one shape: a fifth for the shapes nothing else takes (a
//     checksum with a fixed format, a vendor prefix, a hash format), 0.3 for
//     cards and national numbers (whose checksums one random number in ten or
//     eleven passes, so a column of order numbers is not a column of card
//     numbers), IP addresses, coordinates and API keys, and 0.4 for phone
//     numbers, street addresses and names; or half of them across all shapes
//     together (a contact column of e-mail addresses and phone numbers).
//     Names must also be varied: a column whose name-like values share a few
//     last words ("Hazel Wood", "Rose Garden": paint colours) is a list of
//     labels, as is one of at most 30 values repeated.
//   - A numeric column is a precise coordinate when most of its values have
//     4 or more decimals (about 11 metres) within ±180, and either its name
//     says so (lat, lng, loc, position, Breite...) or it has a partner of
//     the same kind in its table, one of them within ±90. Without the name,
//     its values must be 1 or more from zero, or lie on both sides of zero
//     and mostly 0.1 or more from it (longitudes near the prime meridian,
//     latitudes near the equator): shares and weights in [0, 1] and small
//     signed changes are not coordinates. Rounded coordinates (a store's,
//     to 2 decimals) are kept.
//   - Free text (values of six words or more, or long, or over several
//     lines) is where instructions can hide: such columns are marked in a
//     comment, and hidden when their values hold e-mail addresses or phone
//     numbers.
//   - A view is judged like a table, and also by what it reads: a view
//     column named like a base column this draft hides is hidden too, and a
//     view that reads a hidden base column otherwise gets a comment saying so.
//   - What a policy cannot hide is left out rather than exposed: a view
//     with a column to hide (a view cannot hide columns; a narrower view
//     can be written instead), a table whose rowid or WITHOUT ROWID primary
//     key looks private (every read of the table carries it), and a table
//     whose every column looks private. A VIRTUAL generated column computed
//     from a hidden column is hidden with it. Each left-out object is named
//     in a comment with the reason, so the draft always loads as it is.
//   - Coarse places are kept: a city, a state, a country or a company name
//     alone does not single a person out, and analysts group by them. In a
//     table of people, though, a city and a state are part of each person's
//     address (in a table of a few dozen people they single them out) and
//     are hidden; the country and the company are kept there, with a
//     comment to review them. The same holds for a table whose rows belong
//     to such people through a foreign key (Invoice.CustomerId refers to
//     Customer, whose city the draft hides): its cities and regions
//     (BillingCity, BillingState) would give each person's back through a
//     join, so they are hidden with a reason naming the link. Its country
//     is kept, with a comment: a country is shared by many people, and
//     revenue by country is a question analysts ask. Street lines and
//     postal codes, which locate a building, are hidden everywhere.
package draft

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Schema is what the drafter knows about one database.
type Schema struct {
	Source  string   // the database's file name, for the draft's header
	Objects []Object // tables and views, in any order
	Skipped []Skipped
}

// Skipped is a table or view left out of the draft because it cannot be
// read or cannot be exposed, and why (a sentence that starts with "it").
type Skipped struct {
	Name, Why string
}

// An Object is one table or view.
type Object struct {
	Name    string
	View    bool
	Rows    int64 // row count; -1 if counting was stopped by a limit
	Scanned int   // rows whose values were read for the samples
	Partial bool  // reading the values was stopped by a limit before Scanned reached its aim
	Columns []Column
	Foreign []ForeignKey
	Reads   []ColumnRef // for a view: the base columns its definition reads
	// Keys are a table's columns that every read of it carries, which a
	// policy therefore cannot hide: its rowid (an INTEGER PRIMARY KEY), or
	// the primary key of a WITHOUT ROWID table.
	Keys []string
}

// A Column is one column of a table or view, with what was read of it.
type Column struct {
	Name       string
	Type       string // declared type, may be empty
	PrimaryKey bool
	NonNull    int   // non-null values among the scanned rows
	Distinct   int   // distinct non-null values among the scanned rows
	Samples    []any // distinct non-null values: int64, float64, string, or []byte for a blob that is not UTF-8
	// From lists, for a VIRTUAL generated column, the columns it is
	// computed from: it must be hidden when one of them is.
	From []string
	// Stored says it is a STORED generated column: what it is computed
	// from cannot be told, so it must be hidden when any column of its
	// table is.
	Stored bool
}

// A ForeignKey says Column refers to RefTable.RefColumn.
type ForeignKey struct {
	Column, RefTable, RefColumn string
}

// A ColumnRef names a column of a table.
type ColumnRef struct {
	Table, Column string
}

// A Draft is a starting policy: one Entry per table and view, sorted by name.
type Draft struct {
	Source  string
	Entries []Entry
	Skipped []Skipped // objects left out of the draft because they cannot be read or exposed
}

// An Entry is a table or view of the draft.
type Entry struct {
	Name    string
	View    bool
	About   string     // what it seems to hold, and its row count
	Columns []Decision // in the schema's order
	Notes   []string   // comments for the reviewer about the whole object
	// LeftOut, when set, says why the object is left out of the policy: a
	// column to hide that a policy cannot hide, or nothing left to read.
	LeftOut string

	people        bool // its rows are people
	addressHidden bool // it is a table of people and the draft hides part of their address
}

// A Decision is what the draft says about one column.
type Decision struct {
	Column   string
	Meaning  string // seeded from the name and type; empty for a hidden column
	Hidden   bool
	Reason   string // why it is hidden: what it looks like, and how that was decided
	FreeText bool   // its values read as prose, where instructions can hide
	Note     string // for the reviewer, on a readable column
	address  bool   // hidden as part of an address: a street, a postal code, a city or a region
}

// Hidden returns the names of the entry's hidden columns, in schema order.
func (e Entry) Hidden() []string {
	var out []string
	for _, d := range e.Columns {
		if d.Hidden {
			out = append(out, d.Column)
		}
	}
	return out
}

// Entry returns the entry called name, ignoring case, and whether there is
// one.
func (d *Draft) Entry(name string) (Entry, bool) {
	for _, e := range d.Entries {
		if strings.EqualFold(e.Name, name) {
			return e, true
		}
	}
	return Entry{}, false
}

// headNoun returns the last word of a table's name that says what its rows
// are, skipping words that only say how the table is kept (data, info, list,
// v2, 2024, tbl, staging...).
func headNoun(ws []string) string {
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		if w == "" || (w[0] >= '0' && w[0] <= '9') {
			continue
		}
		switch w {
		case "data", "info", "information", "details", "detail", "list", "table", "tbl", "tab", "t", "v",
			"master", "raw", "import", "imports", "export", "exports", "archive", "backup", "bak", "old", "new",
			"tmp", "temp", "stage", "staging", "copy", "view", "vw", "all", "current", "hist", "history", "log",
			"dim", "fact", "src", "dump", "daten", "donnees", "datos", "dados", "dati", "gegevens":
			continue
		}
		return w
	}
	return ""
}

// maxEnumValues is the most distinct values a column may have for the draft
// to list them in its meaning.
const maxEnumValues = 30

// Make drafts a policy for s. It does not change s.
func Make(s *Schema) *Draft {
	m := &maker{det: newDetector(), rules: nameRules()}
	d := &Draft{Source: s.Source, Skipped: slices.Clone(s.Skipped)}
	objs := slices.Clone(s.Objects)
	// Tables first, so that views can be judged by the base columns they read.
	slices.SortStableFunc(objs, func(a, b Object) int {
		switch {
		case a.View == b.View:
			return 0
		case b.View:
			return -1
		}
		return 1
	})
	entries := make([]Entry, len(objs))
	for i := range objs {
		if !objs[i].View {
			entries[i] = m.object(&objs[i], nil, "")
		}
	}
	// A table whose rows belong to a person whose address the draft hides
	// (Invoice.CustomerId → Customer) is decided again: its own cities and
	// regions would give that person's address back through a join.
	addressed := map[string]bool{} // folded names of tables of people whose address is hidden
	for i := range objs {
		if !objs[i].View && entries[i].addressHidden {
			addressed[fold(objs[i].Name)] = true
		}
	}
	for i := range objs {
		if !objs[i].View && !entries[i].people {
			if link := personLink(&objs[i], addressed); link != "" {
				entries[i] = m.object(&objs[i], nil, link)
			}
		}
	}
	hidden := map[string]map[string]string{} // folded table → folded column → "Table.Column"
	for i, e := range entries {
		if objs[i].View {
			continue
		}
		for _, dec := range e.Columns {
			if dec.Hidden {
				t := fold(e.Name)
				if hidden[t] == nil {
					hidden[t] = map[string]string{}
				}
				hidden[t][fold(dec.Column)] = e.Name + "." + dec.Column
			}
		}
	}
	for i := range objs {
		if objs[i].View {
			entries[i] = m.object(&objs[i], hidden, "")
		}
	}
	d.Entries = entries
	slices.SortFunc(d.Entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return d
}

type maker struct {
	det   *detector
	rules []nameRule
}

// A tableKind says what the rows of a table seem to be.
type tableKind struct {
	people       bool // rows are people: a generic name column is a person's name
	publicPeople bool // rows are credited people (artists, authors): their names are public
	catalogue    bool // rows are things or credits: names in it are titles, not people
}

func (m *maker) kindOfTable(o *Object) tableKind {
	var k tableKind
	// The head noun says what a row is: customer_segments holds segments,
	// customers_2024 and customer_data hold customers.
	if w := headNoun(splitName(o.Name)); w != "" {
		k.people = peopleWord(w)
		k.publicPeople = publicPeopleWord(w)
		k.catalogue = creditWord(w)
	}
	if k.publicPeople {
		k.people, k.catalogue = false, true
		return k
	}
	if !k.people {
		// A table with a first or last name column holds people, whatever
		// it is called.
		for _, c := range o.Columns {
			if nm, ok := matchName(m.rules, splitName(c.Name)); ok && nm.cat == catPersonName && !nm.people {
				k.people = true
				break
			}
		}
	}
	if k.people {
		k.catalogue = false
	}
	return k
}

// personLink names the foreign keys of table o that refer to a table in
// addressed ("Invoice.CustomerId → Customer"), or returns "".
func personLink(o *Object, addressed map[string]bool) string {
	var links []string
	for _, fk := range o.Foreign {
		if addressed[fold(fk.RefTable)] && !strings.EqualFold(fk.RefTable, o.Name) {
			links = append(links, o.Name+"."+fk.Column+" → "+fk.RefTable)
		}
	}
	return joinAnd(links)
}

// object decides the columns of o. hidden, for a view, holds the base
// columns the draft hides; link, for a table whose rows belong to people
// whose address the draft hides, names the foreign keys that say so.
func (m *maker) object(o *Object, hidden map[string]map[string]string, link string) Entry {
	tk := m.kindOfTable(o)
	e := Entry{Name: o.Name, View: o.View, people: tk.people}
	stats := make([]colStats, len(o.Columns))
	for i := range o.Columns {
		stats[i] = m.stats(&o.Columns[i])
		dec := m.column(o, &o.Columns[i], &stats[i], tk, link)
		e.addressHidden = e.addressHidden || (tk.people && dec.address)
		e.Columns = append(e.Columns, dec)
	}
	m.coordinates(o, stats, e.Columns)
	if o.View {
		m.viewReads(o, hidden, &e)
	}
	leaveOut(o, &e)
	for i := range e.Columns {
		if !e.Columns[i].Hidden {
			e.Columns[i].Meaning = m.meaning(o, &o.Columns[i], &stats[i], e.Columns[i].FreeText)
		}
	}
	if o.Partial {
		e.Notes = append(e.Notes, fmt.Sprintf("reading values was stopped by the time limit after %d rows: columns were judged on those", o.Scanned))
	}
	e.About = about(o, e)
	return e
}

// colStats is what the sampled values of one column look like.
type colStats struct {
	texts    []string // the samples as text
	n        int      // len(texts)
	kinds    [numKinds]int
	nameSum  float64 // sum of person-name scores
	nameLast int     // distinct last words of the values that scored as names
	nameN    int     // values that are a single known name part
	single   int     // values that are one word
	free     int     // values that read as prose
	embedded int     // prose values holding an e-mail address or phone number
	boolean  int     // yes/no flags
	numeric  int     // numbers (stored as numbers, or numeric text)
	dates    int     // dates and times
	labels   int     // plain words: letters, dots, dashes and underscores, no digits
	blobs    int
	maxLen   int
	// coordinate candidates: numbers with 4 or more decimals within ±180
	precise, within90, aboveOne int
	// of those, the ones at least 0.1 from zero, and the negative ones
	tenth, negative int
}

func (m *maker) stats(c *Column) colStats {
	var st colStats
	lastWords := map[string]bool{}
	for _, v := range c.Samples {
		var s string
		switch x := v.(type) {
		case int64:
			s = strconv.FormatInt(x, 10)
			st.numeric++
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
			st.numeric++
		case string:
			s = x
			if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				st.numeric++
			}
		case []byte:
			st.blobs++
			continue
		default:
			continue
		}
		st.texts = append(st.texts, s)
		st.maxLen = max(st.maxLen, utf8.RuneCountInString(s))
		k, score := m.det.classify(s)
		st.kinds[k]++
		if k == kindPersonName {
			score = 1
		}
		if score > 0 {
			st.nameSum += score
			lastWords[fold(lastWord(s))] = true
		}
		if len(strings.Fields(s)) == 1 {
			st.single++
			if m.det.isNamePart(strings.TrimSpace(s)) {
				st.nameN++
			}
		}
		if freeText(s) {
			st.free++
			if m.det.embeddedContact(s) {
				st.embedded++
			}
		}
		if booleanLike(s) {
			st.boolean++
		}
		if m.det.isDate(strings.TrimSpace(s)) {
			st.dates++
		}
		if labelLike(s) {
			st.labels++
		}
		if n, ok := decimals(strings.TrimSpace(s)); ok && n >= 4 {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && math.Abs(f) <= 180 {
				st.precise++
				if math.Abs(f) <= 90 {
					st.within90++
				}
				if math.Abs(f) >= 1 {
					st.aboveOne++
				}
				if math.Abs(f) >= 0.1 {
					st.tenth++
				}
				if f < 0 {
					st.negative++
				}
			}
		}
	}
	st.n = len(st.texts)
	st.nameLast = len(lastWords)
	return st
}

// lastWord returns the family name of a name as written: the last word, or
// the part before the comma of "Family, Given".
func lastWord(s string) string {
	if i := strings.IndexByte(s, ','); i > 0 {
		return strings.TrimSpace(s[:i])
	}
	ws := strings.Fields(s)
	if len(ws) == 0 {
		return ""
	}
	return ws[len(ws)-1]
}

// privateValues is how many sampled values have a private shape.
func (st *colStats) privateValues() int {
	n := 0
	for k := kindEmail; k < numKinds; k++ {
		n += st.kinds[k]
	}
	return n
}

// labelLike reports whether s is a plain word or identifier with no digits:
// a setting's name, a status, a category.
func labelLike(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == '.', r == '-', r == ' ':
		default:
			return false
		}
	}
	return true
}

// share returns how much of n the count k is, 0 when n is 0.
func share(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// threshold is the share of a column's sampled values that must have kind k
// for the column to be private (see the package doc).
func threshold(k kind) float64 {
	switch k {
	case kindCard, kindNationalID, kindIP, kindCoordinates, kindAPIKey, kindHexSecret:
		return 0.3
	case kindPhone, kindStreet, kindPersonName:
		return 0.4
	}
	return 0.2
}

// valueVerdict returns the kind of private data the values of a column hold,
// and how many sampled values matched, or kindNone. nameAllowed is false
// where names are public (a catalogue) or the column is a coarse place.
func valueVerdict(st *colStats, c *Column, nameAllowed bool) (kind, int) {
	if st.n == 0 {
		return kindNone, 0
	}
	minHits := 2
	if st.n <= 2 {
		minHits = 1
	}
	best, bestHits, bestShare := kindNone, 0, 0.0
	total := 0
	for k := kindEmail; k < numKinds; k++ {
		hits := st.kinds[k]
		if k == kindPersonName {
			if !nameAllowed {
				continue
			}
			// Names repeat little: a column of a few values repeated is
			// a list of labels (colours, sizes) even if they are names.
			if c.Distinct <= maxEnumValues && c.NonNull > 2*c.Distinct {
				continue
			}
			// People's names draw on many family names; a list built from a
			// few words ("Hazel Wood", "Rose Garden": paint colours) does
			// not.
			hits = 0
			if st.nameLast >= 20 || float64(st.nameLast) >= 0.15*float64(st.n) {
				hits = int(math.Round(st.nameSum))
			}
			if st.single >= st.n*7/10 && c.Distinct > maxEnumValues {
				hits = max(hits, st.nameN) // one name part per value: a first-name or surname column
			}
		}
		total += hits
		sh := share(hits, st.n)
		if hits >= minHits && sh >= threshold(k) && sh > bestShare {
			best, bestHits, bestShare = k, hits, sh
		}
	}
	if best == kindNone && total >= minHits && share(total, st.n) >= 0.5 {
		// No single shape is common enough, but together they are: a contact
		// column holding e-mail addresses and phone numbers.
		for k := kindEmail; k < numKinds; k++ {
			if st.kinds[k] > bestHits {
				best, bestHits = k, st.kinds[k]
			}
		}
		bestHits = total
	}
	return best, bestHits
}

// column decides one column, apart from coordinates held as separate numbers
// (see coordinates) and what a view reads (see viewReads).
func (m *maker) column(o *Object, c *Column, st *colStats, tk tableKind, link string) Decision {
	d := Decision{Column: c.Name}
	ws := splitName(c.Name)
	byName, veto := m.byName(ws, st, tk)
	coarse := slices.ContainsFunc(ws, coarsePlaceWord)
	credit := tk.catalogue || slices.ContainsFunc(ws, creditWord) || coarse
	vk, hits := valueVerdict(st, c, !credit)

	var reasons []string
	if byName != catNone {
		reasons = append(reasons, "by its name")
	}
	if vk != kindNone {
		reasons = append(reasons, fmt.Sprintf("%d of %d sampled values are %s", hits, st.n, vk.what()))
	}
	switch {
	case byName != catNone:
		d.Hidden = true
		d.Reason = byName.what() + ": " + strings.Join(reasons, "; ")
	case vk != kindNone:
		d.Hidden = true
		d.Reason = vk.what() + ": " + strings.Join(reasons, "; ")
	}
	d.FreeText = st.n >= 3 && share(st.free, st.n) >= 0.3
	if !d.Hidden && d.FreeText && st.embedded >= max(2, st.n/10) {
		d.Hidden = true
		d.Reason = fmt.Sprintf("free text holding e-mail addresses or phone numbers: %d of %d sampled values", st.embedded, st.n)
	}
	local := veto == "" && slices.ContainsFunc(ws, localPlaceWord) && ws[len(ws)-1] != "id" && share(st.numeric, st.n) < 0.5
	switch {
	case d.Hidden:
		d.address = byName == catAddress || vk == kindStreet
	case local && tk.people:
		d.Hidden, d.address = true, true
		d.Reason = "part of a person's address (a city or region, in a table of people): by its name"
	case local && link != "":
		// Each row belongs to a person whose address this draft hides: a
		// join on the link gives that person's city back. A country is
		// shared by many people and stays readable (see below).
		d.Hidden = true
		d.Reason = "part of a person's address (a city or region), which a join on " + link + " ties to that person: by its name"
	}
	if d.Hidden {
		return d
	}
	switch {
	case veto != "":
		d.Note = veto
	case link != "" && coarse && ws[len(ws)-1] != "id" && share(st.numeric, st.n) < 0.5:
		d.Note = "kept although " + link + " ties it to a person: a country or a company is shared by many; hide it if few share one"
	case tk.people && coarse && ws[len(ws)-1] != "id" && share(st.numeric, st.n) < 0.5:
		d.Note = "kept: it does not identify a person on its own; hide it if it singles people out in a small table"
	case tk.publicPeople && m.namesLike(ws):
		d.Note = "kept: names of credited people, public in a catalogue"
	}
	return d
}

// namesLike reports whether ws names a person-name column.
func (m *maker) namesLike(ws []string) bool {
	nm, ok := matchName(m.rules, ws)
	return ok && nm.cat == catPersonName
}

// byName returns the category the column's name says, or catNone, and when a
// name's suspicion was lifted, a note saying why.
func (m *maker) byName(ws []string, st *colStats, tk tableKind) (category, string) {
	nm, ok := matchName(m.rules, ws)
	if !ok {
		return catNone, ""
	}
	switch {
	case nm.people && !tk.people:
		return catNone, ""
	case nm.cat == catPersonName && tk.publicPeople:
		return catNone, ""
	case nm.cat.contactLike() && qualified(ws, nm):
		return catNone, ""
	case nm.cat == catPay && qualifiedBy(ws, nm, payQualifier):
		return catNone, ""
	}
	if st.n == 0 {
		return nm.cat, ""
	}
	lifted := "kept although its name suggests " + nm.cat.what() + ": "
	switch {
	case nm.cat != catBirth && nm.cat != catPay && st.boolean == st.n:
		return catNone, lifted + "its values are yes/no flags"
	case (nm.cat == catEmail || nm.cat == catPersonName || nm.cat == catAccount || nm.cat == catAddress) &&
		st.privateValues() == 0 && share(st.numeric, st.n) >= 0.9:
		return catNone, lifted + "its values are numbers"
	case nm.cat.contactLike() && st.privateValues() == 0 && share(st.dates, st.n) >= 0.9:
		return catNone, lifted + "its values are dates"
	case (nm.cat == catKey || nm.cat == catToken) && st.privateValues() == 0 && st.labels == st.n:
		return catNone, lifted + "its values are plain words"
	}
	return nm.cat, ""
}

// qualifiedBy reports whether a word of ws outside the match is one that q
// accepts.
func qualifiedBy(ws []string, m nameMatch, q func(string) bool) bool {
	for i, w := range ws {
		if m.to > 0 && i >= m.from && i < m.to {
			continue
		}
		if q(w) {
			return true
		}
	}
	return false
}

// coordinates hides the numeric columns of o that are precise coordinates
// (see the package doc).
func (m *maker) coordinates(o *Object, stats []colStats, ds []Decision) {
	type cand struct {
		i      int
		lat    bool    // all within ±90
		five   bool    // most have 5 or more decimals, as GPS fixes do
		median float64 // of its values
	}
	var cands []cand
	median := func(st *colStats) float64 {
		var fs []float64
		for _, s := range st.texts {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				fs = append(fs, f)
			}
		}
		slices.Sort(fs)
		if len(fs) == 0 {
			return 0
		}
		return fs[len(fs)/2]
	}
	for i := range o.Columns {
		st := &stats[i]
		if ds[i].Hidden || st.n < 3 || share(st.precise, st.n) < 0.8 {
			continue
		}
		ws := splitName(o.Columns[i].Name)
		if slices.ContainsFunc(ws, geoWord) {
			ds[i].Hidden = true
			ds[i].Reason = fmt.Sprintf("precise coordinates: its name, and %d of %d sampled values have 4 or more decimals", st.precise, st.n)
			continue
		}
		five := 0
		for _, s := range st.texts {
			if n, ok := decimals(strings.TrimSpace(s)); ok && n >= 5 {
				five++
			}
		}
		// Most coordinates are 1 or more from zero; those near the prime
		// meridian or the equator (-3 to 2 across Britain, France, Ghana)
		// lie on both sides of it, unlike shares, weights and scores in
		// [0, 1], and away from it, unlike small signed changes.
		near := share(st.tenth, st.n) >= 0.8 && share(st.negative, st.n) >= 0.1 && share(st.precise-st.negative, st.n) >= 0.1
		if share(st.aboveOne, st.n) >= 0.8 || near {
			cands = append(cands, cand{i: i, lat: st.within90 == st.precise, five: share(five, st.n) >= 0.5, median: median(st)})
		}
	}
	// A latitude and a longitude differ: a pair of columns with nearly the
	// same values (a bid and an ask rate) is not a position.
	pair := map[int]bool{}
	for _, a := range cands {
		for _, b := range cands {
			if a.i != b.i && a.five && b.five && a.lat && math.Abs(a.median-b.median) >= 1 {
				pair[a.i], pair[b.i] = true, true
			}
		}
	}
	for _, c := range cands {
		if pair[c.i] {
			st := &stats[c.i]
			ds[c.i].Hidden = true
			ds[c.i].Reason = fmt.Sprintf("precise coordinates: %d of %d sampled values have 5 or more decimals, as has a partner column", st.precise, st.n)
		}
	}
}

// viewReads hides the columns of view o named like a hidden base column it
// reads, and notes the hidden base columns it reads otherwise.
func (m *maker) viewReads(o *Object, hidden map[string]map[string]string, e *Entry) {
	var unattributed []string
	for _, r := range o.Reads {
		full, ok := hidden[fold(r.Table)][fold(r.Column)]
		if !ok {
			continue
		}
		found := false
		for i := range e.Columns {
			if fold(e.Columns[i].Column) == fold(r.Column) {
				found = true
				if !e.Columns[i].Hidden {
					e.Columns[i].Hidden = true
					e.Columns[i].Reason = "carries " + full + ", which this draft hides"
				}
			}
		}
		if !found && !slices.Contains(unattributed, full) {
			unattributed = append(unattributed, full)
		}
	}
	if len(unattributed) > 0 {
		e.Notes = append(e.Notes, "reads "+strings.Join(unattributed, ", ")+
			", hidden in its table: a view makes readable what it reads, so check that no column here carries it")
	}
}

// leaveOut hides the VIRTUAL generated columns computed from hidden ones
// and, beside any hidden column, the STORED ones,
// and then sets e.LeftOut when a policy could not hide what the draft
// hides: a view's columns, or a key that every read of a table carries; or
// when nothing is left to read.
func leaveOut(o *Object, e *Entry) {
	isHidden := func(name string) bool {
		return slices.ContainsFunc(e.Columns, func(d Decision) bool { return d.Hidden && fold(d.Column) == fold(name) })
	}
	anyHidden := slices.ContainsFunc(e.Columns, func(d Decision) bool { return d.Hidden })
	for i, c := range o.Columns {
		if e.Columns[i].Hidden {
			continue
		}
		if c.Stored && anyHidden {
			e.Columns[i].Hidden = true
			e.Columns[i].Reason = "a stored generated column, which may be computed from what this draft hides"
			continue
		}
		for _, f := range c.From {
			if isHidden(f) {
				e.Columns[i].Hidden = true
				e.Columns[i].Reason = "computed from " + f + ", which this draft hides"
				break
			}
		}
	}
	hidden := e.Hidden()
	var keys []string
	for _, k := range o.Keys {
		if isHidden(k) {
			keys = append(keys, k)
		}
	}
	switch {
	case len(hidden) == 0:
	case len(hidden) == len(e.Columns):
		e.LeftOut = "every column looks private"
	case o.View:
		e.LeftOut = "a view cannot hide columns, and " + joinAnd(hidden) + lookPrivate(len(hidden)) +
			"; to expose the rest, create a view without " + them(len(hidden)) + " and add it here"
	case len(keys) > 0:
		e.LeftOut = joinAnd(keys) + lookPrivate(len(keys)) + ", and every read of the table carries its key, " +
			"so a policy cannot hide it; to expose the rest, create a view without it and add it here"
	}
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func lookPrivate(n int) string {
	if n == 1 {
		return " looks private"
	}
	return " look private"
}

// meaning seeds a readable column's meaning from its name, declared type,
// keys, the format of its values and, for a few short labels, the values.
func (m *maker) meaning(o *Object, c *Column, st *colStats, free bool) string {
	parts := []string{strings.Join(splitName(c.Name), " ")}
	typ := strings.ToLower(strings.TrimSpace(c.Type))
	if typ == "" {
		typ = inferredType(c)
	}
	if c.PrimaryKey {
		typ += ", primary key"
	}
	if typ != "" {
		parts = append(parts, typ)
	}
	for _, fk := range o.Foreign {
		if strings.EqualFold(fk.Column, c.Name) {
			parts = append(parts, "refers to "+fk.RefTable+"."+fk.RefColumn)
		}
	}
	if f := m.format(st); f != "" {
		parts = append(parts, f)
	}
	if vals := enumValues(c, st); vals != "" {
		parts = append(parts, "one of: "+vals)
	}
	if free {
		parts = append(parts, "free text")
	}
	return strings.Join(parts, "; ")
}

func inferredType(c *Column) string {
	var kinds []string
	for _, v := range c.Samples {
		var k string
		switch v.(type) {
		case int64:
			k = "integer"
		case float64:
			k = "real"
		case string:
			k = "text"
		case []byte:
			k = "blob"
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return strings.Join(kinds, " or ")
}

// format names the format of a column's text values when most share one.
func (m *maker) format(st *colStats) string {
	if st.n == 0 {
		return ""
	}
	var dt, d int
	for _, s := range st.texts {
		switch {
		case m.det.isoDateTime.MatchString(s):
			dt++
		case m.det.isoDate.MatchString(s):
			d++
		}
	}
	switch {
	case share(dt, st.n) >= 0.9:
		return "date and time as text, YYYY-MM-DD HH:MM:SS"
	case share(d, st.n) >= 0.9:
		return "date as text, YYYY-MM-DD"
	case share(dt+d, st.n) >= 0.9:
		return "date (YYYY-MM-DD) or date and time (YYYY-MM-DD HH:MM:SS) as text"
	}
	return ""
}

// enumValues lists the values of a text column with few distinct values, all
// of them short single-line labels, or returns "".
func enumValues(c *Column, st *colStats) string {
	if c.Distinct == 0 || c.Distinct > maxEnumValues || len(c.Samples) != c.Distinct || st.n != c.Distinct {
		return ""
	}
	vals := make([]string, 0, len(c.Samples))
	for _, v := range c.Samples {
		s, ok := v.(string)
		if !ok || !shortLabel(s) {
			return ""
		}
		vals = append(vals, s)
	}
	if st.numeric > 0 || st.dates > 0 {
		return ""
	}
	slices.Sort(vals)
	for i, v := range vals {
		if strings.ContainsAny(v, ",\"") {
			vals[i] = strconv.Quote(v)
		}
	}
	return strings.Join(vals, ", ")
}

// shortLabel reports whether s can be listed as one of a column's values: at
// most 40 characters on one line, at most five words, printable.
func shortLabel(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > 40 || len(strings.Fields(s)) > 5 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			return false
		}
	}
	return true
}

// about says what an object seems to hold and how many rows it has.
func about(o *Object, e Entry) string {
	var b strings.Builder
	noun := singular(splitName(o.Name))
	refs := refTables(o)
	switch {
	case o.View:
		b.WriteString("A view")
		if t := readTables(o); len(t) > 0 {
			b.WriteString(" over " + joinAnd(t))
		}
	case len(refs) == 2 && len(o.Columns) <= 3:
		b.WriteString("Links " + refs[0] + " and " + refs[1] + ", one row per pair")
		refs = nil
	default:
		b.WriteString("One row per " + noun)
	}
	switch {
	case o.Rows < 0:
		b.WriteString(" (row count unknown: counting was stopped by the time limit)")
	case o.Rows == 1:
		b.WriteString(" (1 row)")
	default:
		fmt.Fprintf(&b, " (%d rows)", o.Rows)
	}
	if len(refs) > 0 {
		b.WriteString("; refers to " + joinAnd(refs))
	}
	if len(e.Hidden()) > 0 {
		b.WriteString("; personal and secret details are hidden")
	}
	b.WriteString(".")
	return b.String()
}

// singular turns the words of a table's name into a noun phrase: the last
// word made singular.
func singular(ws []string) string {
	if len(ws) == 0 {
		return "row"
	}
	out := slices.Clone(ws)
	last := out[len(out)-1]
	switch {
	case strings.HasSuffix(last, "ies") && len(last) > 4:
		last = strings.TrimSuffix(last, "ies") + "y"
	case strings.HasSuffix(last, "sses"), strings.HasSuffix(last, "shes"), strings.HasSuffix(last, "ches"), strings.HasSuffix(last, "xes"):
		last = strings.TrimSuffix(last, "es")
	case strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss") && !strings.HasSuffix(last, "us") && len(last) > 3:
		last = strings.TrimSuffix(last, "s")
	}
	out[len(out)-1] = last
	return strings.Join(out, " ")
}

func refTables(o *Object) []string {
	var out []string
	for _, fk := range o.Foreign {
		if !slices.Contains(out, fk.RefTable) && !strings.EqualFold(fk.RefTable, o.Name) {
			out = append(out, fk.RefTable)
		}
	}
	return out
}

func readTables(o *Object) []string {
	var out []string
	for _, r := range o.Reads {
		if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, r.Table) }) {
			out = append(out, r.Table)
		}
	}
	slices.Sort(out)
	return out
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
