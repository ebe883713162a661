package roconn_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"sqlbot/roconn"
)

// materialized returns an in-memory database in which each of views is a
// table holding the view's rows as read from the database at path: the
// world a statement over those views should see, with nothing behind them.
func materialized(t testing.TB, path string, views ...string) *sql.DB {
	t.Helper()
	src, err := sql.Open("sqlite", roconn.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	dst.SetMaxOpenConns(1)
	t.Cleanup(func() { dst.Close() })
	for _, v := range views {
		rows, err := src.Query("SELECT * FROM " + v)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		if _, err := dst.Exec("CREATE TABLE " + v + " (" + strings.Join(cols, ", ") + ")"); err != nil {
			t.Fatal(err)
		}
		ins := "INSERT INTO " + v + " VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if _, err := dst.Exec(ins, vals...); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// boom is an integer that abs() cannot negate: abs(boom) is an error.
const boom = "-9223372036854775808"

// viewProbes are statements over the shop's views that keep some rows, each
// with a term that raises an error for one value, the %s. hidden is a value
// only the rows a view leaves out hold; shown is one a row it keeps holds.
var viewProbes = []struct{ name, view, sql, hidden, shown string }{
	// The index over signup_day covers the term, so SQLite would test it
	// on every customer before it reads the row's region.
	{"where over an index", "west_customers", "SELECT count(*) FROM west_customers WHERE signup_day > '2000' AND abs(CASE WHEN id = %s THEN " + boom + " ELSE 1 END) > 0", "1", "5"},
	// SQLite tests a correlated subquery last.
	{"correlated exists", "west_members", "SELECT count(*) FROM west_members WHERE abs(CASE WHEN id = %s THEN " + boom + " ELSE 1 END) > 0", "1", "5"},
	{"join", "west_members", "SELECT count(*) FROM orders o JOIN west_members w ON w.id = o.customer_id WHERE abs(CASE WHEN w.id = %s THEN " + boom + " ELSE 1 END) > 0", "1", "5"},
	// A term on the grouping column would be pushed below the HAVING.
	{"having", "store_headcount", "SELECT count(*) FROM store_headcount WHERE abs(CASE WHEN store_id IS %s THEN " + boom + " ELSE 1 END) > 0", "1", "3"},
	{"having, a missing group", "store_headcount", "SELECT count(*) FROM store_headcount WHERE abs(CASE WHEN store_id IS %s THEN " + boom + " ELSE 1 END) > 0", "NULL", "12"},
	// ... below a DISTINCT, and into a window's partition.
	{"distinct", "gold_signup_days", "SELECT count(*) FROM gold_signup_days WHERE abs(CASE WHEN signup_day = '%s' THEN " + boom + " ELSE 1 END) > 0", "2022-11-28", "2023-08-09"},
	{"window partition", "gold_rank", "SELECT count(*) FROM gold_rank WHERE abs(CASE WHEN region_id = %s THEN " + boom + " ELSE 1 END) > 0", "3", "1"},
	{"json error", "west_customers", "SELECT count(*) FROM west_customers WHERE signup_day > '2000' AND json(CASE WHEN id = %s THEN 'not json' ELSE '1' END) IS NOT NULL", "1", "5"},
}

// TestViewsRunWhole: a view is the only door to what it wraps, so a term
// of the outer query is evaluated only on the rows the view keeps, never on
// those it leaves out. SQLite's query flattener and its push-down of WHERE
// terms into a subquery would merge the outer query's terms with the
// view's, and test them on rows the view's own WHERE, HAVING or DISTINCT
// leaves out: a term that raises an error (or burns time) for one value is
// then an oracle over the hidden rows. Each probe gets the outcome it gets
// on a database where the view is a table of its rows; the same probe on a
// value of a row the view keeps raises the error, so the term is tested.
func TestViewsRunWhole(t *testing.T) {
	path, p := shop(t)
	db := openShop(t, path, p, 0)
	oracle := materialized(t, path, "west_customers", "west_members", "store_headcount", "gold_signup_days", "gold_rank", "orders")
	for _, pr := range viewProbes {
		t.Run(pr.name, func(t *testing.T) {
			q := fmt.Sprintf(pr.sql, pr.hidden)
			_, want, err := plainRows(oracle, q)
			if err != nil {
				t.Fatalf("%s on the view's rows alone: %v", q, err)
			}
			res, err := db.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: %v; the error comes from a row %s leaves out (on its rows alone: %v)", q, err, pr.view, want)
			}
			if got := fmt.Sprint(res.Rows); got != fmt.Sprint(want) {
				t.Errorf("%s: %s, want %v", q, got, want)
			}
			shown := fmt.Sprintf(pr.sql, pr.shown)
			if _, _, err := plainRows(oracle, shown); err == nil {
				t.Fatalf("%s runs on the view's rows alone: the term is not an oracle", shown)
			}
			if _, err := db.Query(context.Background(), shown); err == nil {
				t.Errorf("%s: no error; the term should be tested on the rows %s keeps", shown, pr.view)
			}
		})
	}
}
