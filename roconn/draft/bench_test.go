package draft_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"sqlbot/roconn"
	"sqlbot/roconn/draft"
)

// draftOnce runs the whole path once: Inspect, Make, WriteYAML.
func draftOnce(b *testing.B, path string) {
	s, err := roconn.Inspect(context.Background(), path, roconn.InspectOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := draft.Make(s).WriteYAML(io.Discard); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDraftChinook drafts a policy for Chinook (11 tables, 15,607
// rows, 1 MB).
func BenchmarkDraftChinook(b *testing.B) {
	path := chinook(b)
	for b.Loop() {
		draftOnce(b, path)
	}
}

// BenchmarkDraft200Tables drafts a policy for a generated database of 200
// tables (the adversarial schema's tables, repeated under new names, with
// their own row counts: 2,559 columns, 65,020 rows).
func BenchmarkDraft200Tables(b *testing.B) {
	path := build200(b)
	for b.Loop() {
		draftOnce(b, path)
	}
}

func build200(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "wide.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := &gen{r: rand.New(rand.NewPCG(7, 200))}
	tables := adversarialTables()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		tb := tables[i%len(tables)]
		name := fmt.Sprintf("%s_%03d", tb.name, i)
		var defs, names, marks []string
		for _, c := range tb.cols {
			defs = append(defs, fmt.Sprintf("%q %s", c.name, c.typ))
			names = append(names, fmt.Sprintf("%q", c.name))
			marks = append(marks, "?")
		}
		if _, err := tx.Exec(fmt.Sprintf("CREATE TABLE %q (%s)", name, strings.Join(defs, ", "))); err != nil {
			b.Fatal(err)
		}
		ins, err := tx.Prepare(fmt.Sprintf("INSERT INTO %q (%s) VALUES (%s)", name, strings.Join(names, ", "), strings.Join(marks, ", ")))
		if err != nil {
			b.Fatal(err)
		}
		for row := range tb.rows {
			vals := make([]any, len(tb.cols))
			for j, c := range tb.cols {
				vals[j] = c.gen(g, row)
			}
			if _, err := ins.Exec(vals...); err != nil {
				b.Fatal(err)
			}
		}
		ins.Close()
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return path
}
