package roconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"modernc.org/libc"
	"modernc.org/sqlite"
)

// ReadOnlyDSN returns the URI roconn opens the database file at the absolute
// path abs with, for the external tests' plain comparison connections.
func ReadOnlyDSN(abs string) string { return dsnFor(abs) }

// A Record is one statement of a corpus file in testdata.
type Record struct {
	Name     string // CATEGORY/NAME
	Category string
	SQL      string
}

// LoadCorpus reads testdata/file, whose records each start with a line
// "-- name: CATEGORY/NAME". Every "/tmp/" in a statement is redirected into
// dir, so that a statement that would create a file can only create it where
// the test looks for it.
func LoadCorpus(t testing.TB, file, dir string) []Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, chunk := range strings.Split("\n"+string(b), "\n-- name: ")[1:] {
		name, body, _ := strings.Cut(chunk, "\n")
		r := Record{Name: strings.TrimSpace(name), SQL: strings.TrimRight(body, "\n")}
		r.Category, _, _ = strings.Cut(r.Name, "/")
		r.SQL = strings.ReplaceAll(r.SQL, "/tmp/", dir+"/")
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no records", file)
	}
	return recs
}

// WALFacts are the facts checkWAL decides on, for the external tests.
type WALFacts struct {
	WAL                              bool
	EUID, Owner                      int
	WALExists, SHMExists, DirCreates bool
}

// Verdict is checkWAL's decision on f for the database at path.
func (f WALFacts) Verdict(path string) error {
	return walFacts{wal: f.WAL, euid: f.EUID, owner: f.Owner, walExists: f.WALExists, shmExists: f.SHMExists, dirCreates: f.DirCreates}.verdict(path)
}

// RaceDetector is true when the tests run under the race detector: timing
// bounds are then logged, not checked.
const RaceDetector = raceDetector

// PlainWithFunctions opens the file at the absolute path abs read-only with
// no layer of roconn's, but with roconn's own LIKE, GLOB, instr, replace
// and trim functions and its query optimizations (subqueries run whole; see
// viewsWhole): an oracle whose rows, and their order where a statement
// leaves it to SQLite, differ from roconn's only where the checks do. (Plain SQLite 3.54.1 answers some statements wrongly where
// its built-in LIKE is optimized, for one a LIKE on an INTEGER PRIMARY KEY
// inside a flattened FULL JOIN; roconn's LIKE is a function, which SQLite
// does not optimize, and answers them rightly.)
func PlainWithFunctions(abs string) (*sql.DB, error) {
	d := &sqlite.Driver{}
	if err := registerFunctions(d, maxLikePattern, math.MaxInt32); err != nil {
		return nil, err
	}
	return sql.OpenDB(&wholeConnector{plainConnector{driver: d, dsn: dsnFor(abs)}}), nil
}

// A wholeConnector is a plainConnector whose connections run subqueries
// whole, as roconn's do.
type wholeConnector struct{ plainConnector }

func (c *wholeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.plainConnector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	h, err := sqliteHandle(dc)
	if err == nil {
		tls := libc.NewTLS()
		err = viewsWhole(tls, h)
		tls.Close()
	}
	if err != nil {
		dc.Close()
		return nil, err
	}
	return dc, nil
}

// OpenRecording is Open, and also returns every statement the DB's Query
// was given during Open.
func OpenRecording(ctx context.Context, path string, p *Policy, lim Limits) (*DB, []string, error) {
	var mu sync.Mutex
	var during []string
	opening := true
	db, err := open(ctx, path, p, lim, testHooks{onQuery: func(q string) {
		mu.Lock()
		defer mu.Unlock()
		if opening {
			during = append(during, q)
		}
	}})
	mu.Lock()
	opening = false
	mu.Unlock()
	return db, during, err
}

// OpenWithout is Open with the authorizer allowing everything
// (noAuthorizer), or with no check of the compiled program's reads
// (noReadCheck), or both: to show what the other layer stops alone, and
// that a test fails with neither.
func OpenWithout(ctx context.Context, path string, p *Policy, lim Limits, noAuthorizer, noReadCheck bool) (*DB, error) {
	return open(ctx, path, p, lim, testHooks{noAuthorizer: noAuthorizer, noReadCheck: noReadCheck})
}
