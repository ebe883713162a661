package evalrun_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"sqlbot/evalrun"
	"sqlbot/roconn"
)

// fixtureSQL is a small music shop whose rows make each scoring case below
// meaningful: two albums tie on price and two on June sales, one album has no
// price, two artists share a first name, one name carries Unicode and
// surrounding white space, and a shipped sale falls on 2025-06-30.
const fixtureSQL = `
CREATE TABLE artists (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL);
CREATE TABLE albums (id INTEGER PRIMARY KEY, artist_id INTEGER NOT NULL REFERENCES artists(id),
	title TEXT NOT NULL, year INTEGER NOT NULL, price REAL);
CREATE TABLE sales (id INTEGER PRIMARY KEY, album_id INTEGER NOT NULL REFERENCES albums(id),
	day DATE NOT NULL, qty INTEGER NOT NULL, status TEXT NOT NULL);

INSERT INTO artists VALUES
	(1, 'Ada', 'Lovelace'),
	(2, 'Alan', 'Turing'),
	(3, 'Grace', 'Hopper'),
	(4, char(160) || 'Zoë', 'Çelik  '),
	(5, 'Ada', 'Byron');

INSERT INTO albums VALUES
	(1, 1, 'Analytical', 2019, 9.99),
	(2, 1, 'Engines', 2021, 14.50),
	(3, 2, 'Enigma', 2020, 14.50),
	(4, 3, 'Cobol', 2020, 19.99),
	(5, 3, 'Compilers', 2022, 19.99),
	(6, 4, 'Ünïcode', 2023, NULL),
	(7, 5, 'Poems', 2018, 7.25);

INSERT INTO sales VALUES
	(1, 1, '2025-05-31', 2, 'shipped'),
	(2, 1, '2025-06-01', 3, 'shipped'),
	(3, 2, '2025-06-15', 2, 'shipped'),
	(4, 3, '2025-06-15', 5, 'returned'),
	(5, 4, '2025-06-20', 3, 'shipped'),
	(6, 4, '2025-06-30', 2, 'shipped'),
	(7, 5, '2025-06-30', 3, 'pending'),
	(8, 5, '2025-07-01', 4, 'shipped'),
	(9, 6, '2025-06-10', 3, 'shipped'),
	(10, 7, '2025-06-05', 1, 'canceled'),
	(11, 2, '2025-06-25', 3, 'shipped');
`

// fixture returns a fresh copy of the fixture database in t's temp
// directory, opened as the evaluation reads: through roconn (every table
// readable), with a row limit far above the tests' results.
func fixture(t testing.TB) *roconn.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rw.ExecContext(context.Background(), fixtureSQL)
	if cerr := rw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("create fixture: %v", err)
	}
	db, err := roconn.Open(context.Background(), path, nil, roconn.Limits{Rows: 10000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// query runs q on db and returns its result as the scorer sees it: roconn's
// values (nil, int64, float64, string), as the evaluation and `sqlbot eval
// score` give them.
func query(t testing.TB, db *roconn.DB, q string) evalrun.ResultSet {
	t.Helper()
	res, err := db.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("query %q: %v", q, err)
	}
	return evalrun.ResultSet{Columns: res.Columns, Rows: res.Rows, Truncated: res.Truncated}
}

type scoreCase struct {
	name      string
	ref, cand string
	ordered   bool
	want      bool     // Correct
	mapping   []string // when set, the Mapping wanted
	wantRows  int      // when > 0, the reference must return this many rows (guards against a vacuous case)
}

func runCases(t *testing.T, cases []scoreCase) {
	t.Helper()
	db := fixture(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref, cand := query(t, db, c.ref), query(t, db, c.cand)
			if c.wantRows > 0 && len(ref.Rows) != c.wantRows {
				t.Fatalf("fixture drift: reference returned %d rows, want %d", len(ref.Rows), c.wantRows)
			}
			v := evalrun.Score(ref, cand, c.ordered)
			t.Log(v.Reason)
			if v.Correct != c.want {
				t.Errorf("Score(%q, %q, ordered=%v): Correct=%v (%s), want %v\nref:  %v\ncand: %v",
					c.ref, c.cand, c.ordered, v.Correct, v.Reason, c.want, ref.Rows, cand.Rows)
			}
			if want := "wrong:"; c.want {
				want = "correct:"
				if !strings.HasPrefix(v.Reason, want) {
					t.Errorf("Score(%q, %q): Reason %q does not start with %q", c.ref, c.cand, v.Reason, want)
				}
			} else if !strings.HasPrefix(v.Reason, want) {
				t.Errorf("Score(%q, %q): Reason %q does not start with %q", c.ref, c.cand, v.Reason, want)
			}
			if c.mapping != nil && !slices.Equal(v.Mapping, c.mapping) {
				t.Errorf("Score(%q, %q): Mapping %q, want %q", c.ref, c.cand, v.Mapping, c.mapping)
			}
			if !v.Correct && v.Mapping != nil {
				t.Errorf("Score(%q, %q): wrong verdict with Mapping %q, want nil", c.ref, c.cand, v.Mapping)
			}
		})
	}
}

const (
	juneShipped = `SELECT sum(qty) FROM sales WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01'`
	fullName    = `first_name || ' ' || last_name`
)

func TestScoreCorrectThoughShapedDifferently(t *testing.T) {
	runCases(t, []scoreCase{
		{
			name: "extra COUNT column",
			ref: `SELECT ` + fullName + ` AS artist FROM artists ar JOIN albums al ON al.artist_id = ar.id
				GROUP BY ar.id HAVING count(*) >= 2`,
			cand: `SELECT ar.first_name, ar.last_name, count(*) AS albums FROM albums al JOIN artists ar ON ar.id = al.artist_id
				GROUP BY ar.id HAVING count(*) > 1`,
			want: true, wantRows: 2, mapping: []string{"first_name+last_name"},
		},
		{
			name: "name in two columns and total under another alias",
			ref: `SELECT ar.` + fullName + ` AS artist, sum(s.qty) AS sold FROM sales s
				JOIN albums al ON al.id = s.album_id JOIN artists ar ON ar.id = al.artist_id
				WHERE s.status = 'shipped' GROUP BY ar.id`,
			cand: `SELECT sum(s.qty) AS n, ar.first_name, ar.last_name FROM artists ar
				JOIN albums al ON al.artist_id = ar.id JOIN sales s ON s.album_id = al.id
				WHERE s.status = 'shipped' GROUP BY ar.first_name, ar.last_name`,
			want: true, wantRows: 3, mapping: []string{"first_name+last_name", "n"},
		},
		{
			name: "different row order, order not asked for",
			ref:  `SELECT title, year FROM albums ORDER BY title`,
			cand: `SELECT title, year FROM albums ORDER BY year DESC, price`,
			want: true, wantRows: 7,
		},
		{
			name: "13 against 13.0",
			ref:  juneShipped,
			cand: `SELECT sum(qty * 1.0) FROM sales WHERE status = 'shipped' AND day BETWEEN '2025-06-01' AND '2025-06-30'`,
			want: true, wantRows: 1,
		},
		{
			name: "a number against its printf text",
			ref:  juneShipped,
			cand: `SELECT printf('%.2f', sum(qty)) AS total FROM sales WHERE status = 'shipped' AND strftime('%Y-%m', day) = '2025-06'`,
			want: true,
		},
		{
			name: "text year against an integer year",
			ref:  `SELECT DISTINCT strftime('%Y', day) FROM sales WHERE status = 'pending'`,
			cand: `SELECT 2025`,
			want: true, wantRows: 1,
		},
		{
			name: "average equal at 2 decimal places",
			ref: `SELECT round(avg(qty), 2) FROM sales
				WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01'`,
			cand: `SELECT sum(qty) * 1.0 / count(*) AS avg_qty FROM sales
				WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01'`,
			want: true,
		},
		{
			name: "different aliases",
			ref:  `SELECT title AS album, price AS cost FROM albums WHERE artist_id = 3`,
			cand: `SELECT title AS name, price AS p FROM albums WHERE artist_id = 3`,
			want: true, wantRows: 2, mapping: []string{"name", "p"},
		},
		{
			name: "columns in a different order",
			ref:  `SELECT title, year, price FROM albums WHERE year >= 2020`,
			cand: `SELECT price, year, id, title FROM albums WHERE year > 2019`,
			want: true, wantRows: 5, mapping: []string{"title", "year", "price"},
		},
		{
			name: "boundary date written two ways",
			ref:  juneShipped,
			cand: `SELECT sum(qty) FROM sales WHERE status = 'shipped' AND day >= '2025-06-01' AND day <= '2025-06-30'`,
			want: true,
		},
		{
			name: "two identical reference columns from one candidate column",
			ref:  `SELECT title, title AS again FROM albums WHERE year = 2020`,
			cand: `SELECT title FROM albums WHERE year = 2020`,
			want: true, mapping: []string{"title", "title"},
		},
		{
			name: "same-named candidate columns are told apart",
			ref:  `SELECT al.id AS album, ar.id AS artist FROM albums al JOIN artists ar ON ar.id = al.artist_id`,
			cand: `SELECT ar.id, al.id FROM albums al JOIN artists ar ON ar.id = al.artist_id`,
			want: true, mapping: []string{"id#2", "id#1"},
		},
		{
			name: "DATE column against its text",
			ref:  `SELECT day FROM sales WHERE qty = 4`,
			cand: `SELECT substr(day, 1, 10) AS d FROM sales WHERE qty = 4`,
			want: true, wantRows: 1,
		},
	})
}

func TestScoreWrongThoughClose(t *testing.T) {
	runCases(t, []scoreCase{
		{
			name: "the whole table",
			ref:  `SELECT title FROM albums WHERE year = 2020`,
			cand: `SELECT * FROM albums`,
			want: false, wantRows: 2,
		},
		{
			name: "the right row plus extra rows",
			ref:  `SELECT title FROM albums WHERE year = 2022`,
			cand: `SELECT title FROM albums WHERE year >= 2022`,
			want: false, wantRows: 1,
		},
		{
			name: "a missing row",
			ref:  `SELECT title FROM albums WHERE year BETWEEN 2019 AND 2021`,
			cand: `SELECT title FROM albums WHERE year > 2019 AND year <= 2021`,
			want: false, wantRows: 4,
		},
		{
			name: "an id instead of a name",
			ref: `SELECT ar.` + fullName + ` FROM artists ar JOIN albums al ON al.artist_id = ar.id
				WHERE al.title = 'Cobol'`,
			cand: `SELECT artist_id FROM albums WHERE title = 'Cobol'`,
			want: false, wantRows: 1,
		},
		{
			name: "off-by-one date range",
			ref:  juneShipped,
			cand: `SELECT sum(qty) FROM sales WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-06-30'`,
			want: false,
		},
		{
			name: "a missing status filter",
			ref:  juneShipped,
			cand: `SELECT sum(qty) FROM sales WHERE day >= '2025-06-01' AND day < '2025-07-01'`,
			want: false,
		},
		{
			name:    "wrong order where order was asked for",
			ref:     `SELECT title, year FROM albums ORDER BY year, title`,
			cand:    `SELECT title, year FROM albums ORDER BY year DESC, title`,
			ordered: true, want: false, wantRows: 7,
		},
		{
			name: "one of several tied rows",
			ref: `WITH t AS (SELECT album_id, sum(qty) AS n FROM sales
					WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01' GROUP BY album_id)
				SELECT al.title, t.n FROM t JOIN albums al ON al.id = t.album_id WHERE t.n = (SELECT max(n) FROM t)`,
			cand: `SELECT al.title, sum(s.qty) AS n FROM sales s JOIN albums al ON al.id = s.album_id
				WHERE s.status = 'shipped' AND s.day >= '2025-06-01' AND s.day < '2025-07-01'
				GROUP BY al.id ORDER BY n DESC LIMIT 1`,
			want: false, wantRows: 2,
		},
		{
			name: "the most expensive album, one of two ties",
			ref:  `SELECT title FROM albums WHERE price = (SELECT max(price) FROM albums)`,
			cand: `SELECT title FROM albums ORDER BY price DESC LIMIT 1`,
			want: false, wantRows: 2,
		},
		{
			// Each column on its own matches (same last names, same album
			// counts), but the candidate pairs sorted names with sorted counts.
			name: "columns matching only under different row pairings",
			ref: `SELECT ar.last_name, count(al.id) AS albums FROM artists ar
				JOIN albums al ON al.artist_id = ar.id GROUP BY ar.id`,
			cand: `WITH n AS (SELECT last_name, row_number() OVER (ORDER BY last_name) AS rn FROM artists),
				c AS (SELECT count(*) AS albums, row_number() OVER (ORDER BY count(*), artist_id) AS rn
					FROM albums GROUP BY artist_id)
				SELECT n.last_name, c.albums FROM n JOIN c USING (rn)`,
			want: false, wantRows: 5,
		},
		{
			name: "joined on the wrong key",
			ref: `SELECT ar.first_name, al.title FROM albums al JOIN artists ar ON ar.id = al.artist_id
				WHERE al.year BETWEEN 2019 AND 2021`,
			cand: `SELECT ar.first_name, al.title FROM albums al JOIN artists ar ON ar.id = 4 - al.artist_id
				WHERE al.year BETWEEN 2019 AND 2021`,
			want: false, wantRows: 4,
		},
		{
			name: "average truncated instead of rounded",
			ref: `SELECT round(avg(qty), 2) FROM sales
				WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01'`,
			cand: `SELECT CAST(avg(qty) * 100 AS INTEGER) / 100.0 FROM sales
				WHERE status = 'shipped' AND day >= '2025-06-01' AND day < '2025-07-01'`,
			want: false,
		},
		{
			name: "name split across non-adjacent columns",
			ref:  `SELECT ` + fullName + ` FROM artists`,
			cand: `SELECT first_name, id, last_name FROM artists`,
			want: false, wantRows: 5,
		},
		{
			name: "first name only",
			ref:  `SELECT ` + fullName + ` FROM artists WHERE id IN (1, 2, 3)`,
			cand: `SELECT first_name FROM artists WHERE id IN (1, 2, 3)`,
			want: false, wantRows: 3,
		},
		{
			name: "two reference columns, one candidate column",
			ref:  `SELECT first_name, last_name FROM artists`,
			cand: `SELECT first_name FROM artists`,
			want: false,
		},
	})
}

func TestScoreOrdered(t *testing.T) {
	runCases(t, []scoreCase{
		{
			name:    "same order, reshaped",
			ref:     `SELECT ar.` + fullName + ` AS artist, count(*) AS n FROM artists ar JOIN albums al ON al.artist_id = ar.id GROUP BY ar.id ORDER BY n DESC, ar.last_name`,
			cand:    `SELECT count(*) AS albums, ar.first_name, ar.last_name FROM albums al JOIN artists ar ON ar.id = al.artist_id GROUP BY ar.id ORDER BY albums DESC, ar.last_name`,
			ordered: true, want: true, wantRows: 5, mapping: []string{"first_name+last_name", "albums"},
		},
		{
			name:    "reversed",
			ref:     `SELECT title FROM albums ORDER BY price DESC, title`,
			cand:    `SELECT title FROM albums ORDER BY price ASC, title`,
			ordered: true, want: false,
		},
		{
			name:    "reversed, order not asked for",
			ref:     `SELECT title FROM albums ORDER BY price DESC, title`,
			cand:    `SELECT title FROM albums ORDER BY price ASC, title`,
			ordered: false, want: true,
		},
		{
			name:    "order right, a value wrong",
			ref:     `SELECT title, year FROM albums ORDER BY year, title`,
			cand:    `SELECT title, year + 1 FROM albums ORDER BY year, title`,
			ordered: true, want: false,
		},
	})
}

func TestScoreNulls(t *testing.T) {
	const ref = `SELECT title, price FROM albums WHERE artist_id IN (4, 5)`
	runCases(t, []scoreCase{
		{name: "NULL equals NULL", ref: ref, cand: `SELECT price AS p, title AS t FROM albums WHERE artist_id > 3`, want: true, wantRows: 2},
		{name: "NULL is not zero", ref: ref, cand: `SELECT title, coalesce(price, 0) FROM albums WHERE artist_id IN (4, 5)`, want: false},
		{name: "NULL is not empty text", ref: ref, cand: `SELECT title, coalesce(price, '') FROM albums WHERE artist_id IN (4, 5)`, want: false},
		{name: "NULL is not the text NULL", ref: ref, cand: `SELECT title, coalesce(price, 'NULL') FROM albums WHERE artist_id IN (4, 5)`, want: false},
		{
			name: "a join with NULL is NULL",
			ref:  `SELECT CASE WHEN id = 1 THEN NULL ELSE ` + fullName + ` END FROM artists WHERE id IN (1, 5)`,
			cand: `SELECT first_name, CASE WHEN id = 1 THEN NULL ELSE last_name END FROM artists WHERE id IN (1, 5)`,
			want: true, wantRows: 2,
		},
		{
			name: "a join with NULL is not its other part",
			ref:  `SELECT CASE WHEN id = 1 THEN first_name ELSE ` + fullName + ` END FROM artists WHERE id IN (1, 5)`,
			cand: `SELECT first_name, CASE WHEN id = 1 THEN NULL ELSE last_name END FROM artists WHERE id IN (1, 5)`,
			want: false, wantRows: 2,
		},
		{name: "an all-NULL column", ref: `SELECT NULL UNION ALL SELECT NULL`, cand: `SELECT 1, NULL UNION ALL SELECT 2, NULL`, want: true},
	})
}

func TestScoreEmpty(t *testing.T) {
	const ref = `SELECT title, year FROM albums WHERE year > 3000`
	runCases(t, []scoreCase{
		{name: "both empty, more candidate columns", ref: ref, cand: `SELECT title, year, price FROM albums WHERE year > 2999`, want: true},
		{name: "both empty, same columns", ref: ref, cand: `SELECT id, price FROM albums WHERE price < 0`, want: true},
		{name: "both empty, fewer candidate columns", ref: ref, cand: `SELECT title FROM albums WHERE year > 3000`, want: false},
		{name: "reference empty, candidate not", ref: ref, cand: `SELECT title, year FROM albums WHERE year > 2022`, want: false},
		{name: "candidate empty, reference not", ref: `SELECT title, year FROM albums WHERE year > 2022`, cand: ref, want: false},
		{name: "an empty sum is one NULL row", ref: `SELECT sum(qty) FROM sales WHERE day > '2030-01-01'`, cand: `SELECT sum(qty) FROM sales WHERE status = 'lost'`, want: true},
		{name: "an empty sum is not zero", ref: `SELECT sum(qty) FROM sales WHERE day > '2030-01-01'`, cand: `SELECT total(qty) FROM sales WHERE status = 'lost'`, want: false},
	})
}

func TestScoreDuplicateRows(t *testing.T) {
	runCases(t, []scoreCase{
		{
			name: "same rows, same counts, other order",
			ref:  `SELECT first_name FROM artists WHERE id IN (1, 2, 5)`,
			cand: `SELECT first_name FROM artists WHERE id IN (5, 2, 1) ORDER BY id DESC`,
			want: true, wantRows: 3,
		},
		{
			name: "duplicates collapsed",
			ref:  `SELECT first_name FROM artists WHERE id IN (1, 2, 5)`,
			cand: `SELECT DISTINCT first_name FROM artists WHERE id IN (1, 2, 5)`,
			want: false,
		},
		{
			name: "same row count, other multiplicities",
			ref:  `SELECT first_name FROM artists WHERE id IN (1, 2, 5)`,
			cand: `SELECT first_name FROM artists WHERE id IN (1, 2) UNION ALL SELECT 'Alan'`,
			want: false,
		},
		{
			name: "duplicate whole rows",
			ref:  `SELECT status, qty FROM sales WHERE album_id IN (1, 2, 4)`,
			cand: `SELECT qty, status FROM sales WHERE album_id IN (1, 2, 4) ORDER BY qty`,
			want: true, wantRows: 6,
		},
		{
			// Each column keeps its values; the rows pair them differently.
			name: "same column values, other row multiplicities",
			ref:  `VALUES ('shipped', 2), ('shipped', 3), ('pending', 2), ('pending', 3)`,
			cand: `VALUES ('shipped', 2), ('shipped', 2), ('pending', 3), ('pending', 3)`,
			want: false,
		},
		{
			name: "duplicate whole rows, one traded",
			ref:  `SELECT status, qty FROM sales WHERE album_id IN (1, 2, 4)`,
			cand: `SELECT status, qty FROM sales WHERE album_id IN (1, 2, 4) AND id <> 6 UNION ALL SELECT 'shipped', 3`,
			want: false,
		},
	})
}

func TestScoreText(t *testing.T) {
	runCases(t, []scoreCase{
		{
			name: "surrounding white space, Unicode included, is trimmed",
			ref:  `SELECT 'Zoë Çelik' AS artist`,
			cand: `SELECT first_name || ' ' || last_name FROM artists WHERE id = 4`,
			want: true,
		},
		{
			name: "a Unicode name split in two columns",
			ref:  `SELECT trim(first_name) || ' ' || trim(last_name) AS artist FROM artists WHERE id = 4`,
			cand: `SELECT first_name, last_name FROM artists WHERE id = 4`,
			want: true, mapping: []string{"first_name+last_name"},
		},
		{
			name: "trailing white space on a Unicode title",
			ref:  `SELECT title FROM albums WHERE price IS NULL`,
			cand: `SELECT char(9) || title || ' ' || char(160) FROM albums WHERE price IS NULL`,
			want: true, wantRows: 1,
		},
		{
			// Joined as || joins them: white space inside the pair is kept.
			name: "a pair joined as || joins it",
			ref:  `SELECT 'Ada ' || ' ' || 'Lovelace' AS who`,
			cand: `SELECT 'Ada ' AS first, 'Lovelace' AS last`,
			want: true, mapping: []string{"first+last"},
		},
		{
			name: "case matters",
			ref:  `SELECT last_name FROM artists WHERE id = 4`,
			cand: `SELECT 'çelik'`,
			want: false,
		},
		{
			name: "inner white space matters",
			ref:  `SELECT ` + fullName + ` FROM artists WHERE id = 1`,
			cand: `SELECT first_name || '  ' || last_name FROM artists WHERE id = 1`,
			want: false,
		},
		{
			name: "decomposed Unicode is other text",
			ref:  `SELECT title FROM albums WHERE id = 6`,
			cand: `SELECT 'U' || char(776) || 'n' || char(239) || 'code'`,
			want: false,
		},
		{
			name: "numeric text with white space is a number",
			ref:  `SELECT 16`,
			cand: `SELECT ' 16.000 '`,
			want: true,
		},
		{
			name: "text that only starts with a number is text",
			ref:  `SELECT 16`,
			cand: `SELECT '16 units'`,
			want: false,
		},
	})
}

func TestScoreNumbers(t *testing.T) {
	runCases(t, []scoreCase{
		{name: "0.1+0.2 is 0.3", ref: `SELECT 0.3`, cand: `SELECT 0.1 + 0.2`, want: true},
		{name: "2.666 is 2.67", ref: `SELECT 2.67`, cand: `SELECT 8.0 / 3`, want: true},
		{name: "2.666 is not 2.66", ref: `SELECT 2.66`, cand: `SELECT 8.0 / 3`, want: false},
		{name: "a cent apart", ref: `SELECT 14.50`, cand: `SELECT 14.51`, want: false},
		{name: "a thousandth apart", ref: `SELECT 14.501`, cand: `SELECT 14.5`, want: true},
		{name: "half away from zero", ref: `SELECT -0.125`, cand: `SELECT -0.13`, want: true},
		{name: "not half to even", ref: `SELECT -0.125`, cand: `SELECT -0.12`, want: false},
		{name: "as SQLite rounds 2.675", ref: `SELECT 2.675`, cand: `SELECT round(2.675, 2)`, want: true},
		{name: "as SQLite rounds 1.005", ref: `SELECT round(1.005, 2)`, cand: `SELECT 1.005`, want: true},
		{name: "as SQLite rounds 1.115", ref: `SELECT round(1.115, 2)`, cand: `SELECT 1.115`, want: true},
		{name: "as printf rounds", ref: `SELECT printf('%.2f', 2.675)`, cand: `SELECT 2.675`, want: true},
		{
			// 1.005 is stored just below the half, 1.0050000000000001 just
			// above: two computations of one figure, noise apart.
			name: "noise across a half",
			ref:  `SELECT 1.0050000000000001`, cand: `SELECT 1.005`, want: true,
		},
		{name: "noise across a half, negative", ref: `SELECT -1.005`, cand: `SELECT -1.0050000000000001`, want: true},
		{name: "beyond noise across a half", ref: `SELECT 1.0050001`, cand: `SELECT 1.0049999`, want: false},
		{name: "integers compared exactly when large", ref: `SELECT 9007199254740993`, cand: `SELECT 9007199254740992`, want: false},
		{name: "large integer and float", ref: `SELECT 10000000000000000`, cand: `SELECT 1e16`, want: true},
		{name: "infinity", ref: `SELECT 1e999`, cand: `SELECT 2e999`, want: true},
		{name: "infinity is not large", ref: `SELECT 1e999`, cand: `SELECT 1e308`, want: false},
		{name: "hex text is text", ref: `SELECT 16`, cand: `SELECT '0x10'`, want: false},
		{name: "exponent text is a number", ref: `SELECT 1500`, cand: `SELECT '1.5e3'`, want: true},
	})
}

// TestScoreTruncated: a result cut at the row cap is never scored correct,
// even when the rows kept match.
func TestScoreTruncated(t *testing.T) {
	rows := evalrun.ResultSet{Columns: []string{"id"}, Rows: [][]any{{int64(1)}, {int64(2)}}}
	cut := rows
	cut.Truncated = true
	for _, tt := range []struct {
		name      string
		ref, cand evalrun.ResultSet
	}{
		{"candidate cut", rows, cut},
		{"reference cut", cut, rows},
		{"both cut", cut, cut},
	} {
		if v := evalrun.Score(tt.ref, tt.cand, true); v.Correct || !strings.HasPrefix(v.Reason, "wrong: ") || !strings.Contains(v.Reason, "row cap") {
			t.Errorf("Score(%s): %v (%s), want wrong, naming the row cap", tt.name, v.Correct, v.Reason)
		}
	}
	if v := evalrun.Score(rows, rows, true); !v.Correct {
		t.Errorf("Score(same rows, not cut): %s, want correct", v.Reason)
	}
}

// TestScoreSearchBounded gives Score a candidate whose every column matches
// a reference column and whose every 7 columns match together, yet no full
// mapping exists: rows are all 7-bit numbers plus a parity column, which the
// candidate inverts. The search must end, in a wrong verdict.
func TestScoreSearchBounded(t *testing.T) {
	db := fixture(t)
	bits := make([]string, 7)
	for i := range bits {
		bits[i] = fmt.Sprintf("((i >> %d) & 1)", i)
	}
	parity := "(" + strings.Join(bits, " + ") + ") % 2"
	gen := `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 127) SELECT `
	ref := query(t, db, gen+strings.Join(bits, ", ")+", "+parity+" FROM n")
	cand := query(t, db, gen+"1 - "+parity+", "+strings.Join(bits, ", ")+" FROM n")
	v := evalrun.Score(ref, cand, false)
	if v.Correct {
		t.Errorf("Score(parity, inverted parity): correct (%s), want wrong", v.Reason)
	}
	t.Log(v.Reason)
	// The same candidate with the parity kept is correct.
	cand = query(t, db, gen+parity+", "+strings.Join(reversed(bits), ", ")+" FROM n")
	if v := evalrun.Score(ref, cand, false); !v.Correct {
		t.Errorf("Score(parity, reordered): %s, want correct", v.Reason)
	}
}

// TestScoreWide scores 40 columns × 200 rows, many of them alike, with the
// candidate's columns reversed and its rows reordered.
func TestScoreWide(t *testing.T) {
	db := fixture(t)
	ref, cand := wideQueries(40)
	r, c := query(t, db, ref), query(t, db, cand)
	if len(r.Rows) != 200 || len(r.Columns) != 40 {
		t.Fatalf("reference is %d×%d, want 200×40", len(r.Rows), len(r.Columns))
	}
	if v := evalrun.Score(r, c, false); !v.Correct {
		t.Errorf("Score(wide, reversed): %s, want correct", v.Reason)
	} else if v.Mapping[0] != "c0" || v.Mapping[2] != "c2" || v.Mapping[39] != "c3" {
		// c39 is identical to c3 (both i % 5), so it maps where c3 does.
		t.Errorf("Score(wide, reversed): Mapping %q, want c0, _, c2, …, c3", v.Mapping)
	}
	// Swap two rows' values in column c1 and every column identical to it:
	// each column keeps its values, but the rows no longer pair up.
	j1 := slices.Index(c.Columns, "c1")
	a, b := 117, 118
	if c.Rows[a][j1] == c.Rows[b][j1] {
		t.Fatalf("rows %d and %d agree on c1; pick others", a, b)
	}
	swapped := 0
	for j := range c.Columns {
		if sameColumn(c, j, j1) {
			c.Rows[a][j], c.Rows[b][j] = c.Rows[b][j], c.Rows[a][j]
			swapped++
		}
	}
	if v := evalrun.Score(r, c, false); v.Correct {
		t.Errorf("Score(wide, rows %d and %d swapped in %d columns): correct (%s), want wrong", a, b, swapped, v.Reason)
	}
}

func sameColumn(rs evalrun.ResultSet, i, j int) bool {
	for _, row := range rs.Rows {
		if row[i] != row[j] {
			return false
		}
	}
	return true
}

// wideQueries returns a reference query of n columns over 200 rows and a
// candidate giving the same rows, columns reversed, in another order. Column
// k is (i*(k+1)) % 7 or, for odd k, (i % 5), so many columns share their
// multiset of values and some are identical.
func wideQueries(n int) (ref, cand string) {
	cols := wideColumns(n)
	ref = wideGen + strings.Join(cols, ", ") + " FROM n"
	cand = wideGen + strings.Join(reversed(cols), ", ") + " FROM n ORDER BY i * 37 % 200"
	return ref, cand
}

const wideGen = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199) SELECT `

func wideColumns(n int) []string {
	cols := make([]string, n)
	for k := range cols {
		if k%2 == 1 {
			cols[k] = fmt.Sprintf("(i %% 5) + %d AS c%d", k%3, k)
		} else {
			cols[k] = fmt.Sprintf("(i * %d) %% 7 AS c%d", k+1, k)
		}
	}
	return cols
}

// BenchmarkScore scores 200 rows × 10 columns against a candidate with the
// columns reversed and the rows reordered: all numbers, then with a name that
// the candidate splits in two columns.
func BenchmarkScore(b *testing.B) {
	db := fixture(b)
	for _, bc := range []struct {
		name string
		text bool
	}{{"numbers", false}, {"names", true}} {
		b.Run(bc.name, func(b *testing.B) {
			ref, cand := wideQueries(10)
			if bc.text {
				ref, cand = namedQueries(10)
			}
			r, c := query(b, db, ref), query(b, db, cand)
			if len(r.Rows) != 200 || len(r.Columns) != 10 {
				b.Fatalf("reference is %d×%d, want 200×10", len(r.Rows), len(r.Columns))
			}
			if v := evalrun.Score(r, c, false); !v.Correct {
				b.Fatalf("Score: %s", v.Reason)
			}
			b.ReportAllocs()
			for b.Loop() {
				evalrun.Score(r, c, false)
			}
		})
	}
}

// namedQueries is wideQueries with column 0 replaced by a name, which the
// candidate returns as two columns.
func namedQueries(n int) (ref, cand string) {
	cols := wideColumns(n)
	cols[0] = "'artist' || ' ' || (i * 13 % 200) AS c0"
	ref = wideGen + strings.Join(cols, ", ") + " FROM n"
	cols = reversed(cols)
	cols[n-1] = "'artist' AS c0a, i * 13 % 200 AS c0b"
	cand = wideGen + strings.Join(cols, ", ") + " FROM n ORDER BY i * 37 % 200"
	return ref, cand
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
