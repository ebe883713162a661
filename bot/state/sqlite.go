package state

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"modernc.org/sqlite"
)

var _ Store = (*SQLite)(nil)

// DefaultBusyTimeout is how long a write waits for another writer of the
// same file (another replica or process) before it fails.
const DefaultBusyTimeout = 5 * time.Second

// schemaVersion is the version of the schema below, kept in the file's
// user_version. Append a migration for each new version; never edit one.
const schemaVersion = 2

// migration returns the statements that take a file from user_version v
// to v+1.
func migration(v int) (string, error) {
	switch v {
	case 0:
		return `CREATE TABLE claims (key TEXT PRIMARY KEY, expires INTEGER NOT NULL) WITHOUT ROWID;
	CREATE INDEX claims_expires ON claims(expires);
	CREATE TABLE hits (user TEXT NOT NULL, at INTEGER NOT NULL);
	CREATE INDEX hits_user_at ON hits(user, at);
	CREATE INDEX hits_at ON hits(at);
	CREATE TABLE told (user TEXT PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID;
	CREATE TABLE threads (conv TEXT PRIMARY KEY, turns BLOB NOT NULL, expires INTEGER NOT NULL);
	CREATE INDEX threads_expires ON threads(expires);
	CREATE TABLE cache (key TEXT PRIMARY KEY, val BLOB NOT NULL, expires INTEGER NOT NULL);
	CREATE INDEX cache_expires ON cache(expires);
	CREATE TABLE verified (channel TEXT NOT NULL, ts TEXT NOT NULL, question TEXT NOT NULL,
		sql TEXT NOT NULL, checksum TEXT NOT NULL, source TEXT NOT NULL, PRIMARY KEY (channel, ts));
	CREATE TABLE votes (channel TEXT NOT NULL, ts TEXT NOT NULL, user TEXT NOT NULL, at INTEGER NOT NULL,
		PRIMARY KEY (channel, ts, user)) WITHOUT ROWID;
	CREATE TABLE reports (key TEXT PRIMARY KEY, at INTEGER NOT NULL, data BLOB NOT NULL);
	CREATE TABLE locks (name TEXT PRIMARY KEY, token TEXT NOT NULL, expires INTEGER NOT NULL) WITHOUT ROWID;`, nil
	case 1:
		// verified_gen counts the changes to the verified answers, so that
		// a process can tell whether the list it read is still the list.
		// Triggers count them, whoever writes: another process on the
		// file, an older sqlbot still running beside this one included.
		return `CREATE TABLE verified_gen (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL);
	INSERT INTO verified_gen (id, n) VALUES (0, 0);
	CREATE TRIGGER verified_ins AFTER INSERT ON verified BEGIN UPDATE verified_gen SET n = n + 1; END;
	CREATE TRIGGER verified_upd AFTER UPDATE ON verified BEGIN UPDATE verified_gen SET n = n + 1; END;
	CREATE TRIGGER verified_del AFTER DELETE ON verified BEGIN UPDATE verified_gen SET n = n + 1; END;
	CREATE TRIGGER votes_ins AFTER INSERT ON votes BEGIN UPDATE verified_gen SET n = n + 1; END;
	CREATE TRIGGER votes_upd AFTER UPDATE ON votes BEGIN UPDATE verified_gen SET n = n + 1; END;
	CREATE TRIGGER votes_del AFTER DELETE ON votes BEGIN UPDATE verified_gen SET n = n + 1; END;`, nil
	}
	return "", fmt.Errorf("no migration from schema version %d", v)
}

// SQLiteOptions are OpenSQLite's settings. The zero value is usable.
type SQLiteOptions struct {
	// Answered is the path of the database sqlbot answers from. OpenSQLite
	// refuses to keep state in that file (compared by file identity, so a
	// link or another spelling of the path is refused too).
	Answered string
	// Now is the clock for limits and expiry (time.Now if nil). Every
	// process sharing a file should use the same clock.
	Now func() time.Time
	// BusyTimeout is how long a write waits for another writer
	// (DefaultBusyTimeout if zero).
	BusyTimeout time.Duration
}

// SQLite is a Store in a SQLite file of its own. It survives restarts, and
// several SQLite values or processes on one file behave as one Store: each
// write is one IMMEDIATE transaction, so writers take turns (waiting up to
// the busy timeout) and readers see committed state (WAL mode). A commit is
// synced to disk at the next checkpoint (synchronous=NORMAL): it survives
// the process, not necessarily a power loss.
type SQLite struct {
	// Writes go through one connection of their own, kept open: its
	// statements stay compiled and its page cache warm (a connection's
	// cache is dropped whenever another connection has written since its
	// last transaction). Reads outside a write go through a pool of their
	// own, so that they never wait for a write.
	wdb, rdb *sql.DB
	wstmts   [nQueries]*sql.Stmt // every query, on wdb
	rstmts   [nQueries]*sql.Stmt // the reading ones (readQueries), on rdb
	now      func() time.Time

	wmu    sync.Mutex // one writer at a time from this value, in turn
	writes int        // writes since the last sweep; under wmu

	listed listCache // the last list of verified answers read
}

// A listCache is the last list ListVerified read, and the count of changes
// to the verified answers (verified_gen) read before it: while the count is
// the same, nothing has changed them, and the list is still the list. Only
// the count is read then (one row), not the list (a join and a sort of every
// verified answer; 220 µs with 20). It holds at most the largest n asked.
type listCache struct {
	mu   sync.Mutex
	ok   bool
	gen  int64
	n    int // the n it was read for
	list []Verified
}

// A connector opens connections through a driver value of its own, never
// the process-wide "sqlite" registration, so that nothing another package
// registers there (hooks, authorizers) reaches the state file.
type connector struct {
	driver *sqlite.Driver
	dsn    string
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.driver.Open(c.dsn)
}

func (c connector) Driver() driver.Driver { return c.driver }

// OpenSQLite opens the state file at path, creating it (mode 0600, in a
// directory made 0700 if missing) and its schema if needed. It refuses the
// file of opt.Answered with an error wrapping ErrAnsweredDatabase, and a
// file written by a newer schema.
func OpenSQLite(ctx context.Context, path string, opt SQLiteOptions) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("state: open: no path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	if err := notAnswered(abs, opt.Answered); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("state: open %s: %w", abs, err)
	}
	// The file holds questions, DMs' included: only its owner may read it.
	// SQLite gives its -wal and -shm files the same mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", abs, err)
	}
	f.Close()
	busy := opt.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_txlock", "immediate") // a write transaction takes the lock at BEGIN, so it never fails upgrading
	// In WAL mode, NORMAL syncs the log at checkpoints, not at every commit:
	// a commit survives the process dying, and only a power loss or an
	// operating system crash can take back the last ones (a claim, a count,
	// a turn). FULL cost a sync per write, 0.66 ms against 0.13 ms for a
	// claim here, four writes a question, one writer at a time: at 50
	// questions at once, over 100 ms for the last (issue 12).
	q.Add("_pragma", "synchronous(NORMAL)")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	// Every connection is kept open once made: one closed for being idle
	// (past database/sql's default of two) would be opened again at the
	// next burst, its schema read and its statements compiled anew.
	open := func(dsn string, n int) *sql.DB {
		db := sql.OpenDB(connector{driver: &sqlite.Driver{}, dsn: dsn})
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
		return db
	}
	// A reader's page cache is dropped whenever the writer has committed
	// since its last read, so a large one seldom serves; it is bounded
	// lower than the writer's (SQLite's default, 2,000 KiB), which stays
	// warm. Filling the caches as the file grows is what RSS creeps by
	// (issue 12), up to their bounds.
	rdsn := dsn + "&" + url.Values{"_pragma": {"cache_size(-" + strconv.Itoa(readerCacheKiB) + ")"}}.Encode()
	s := &SQLite{wdb: open(dsn, 1), rdb: open(rdsn, maxReaders), now: opt.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.init(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("state: open %s: %w", abs, err)
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("state: open %s: %w", abs, err)
	}
	return s, nil
}

// maxReaders is how many connections one SQLite value keeps for reads
// outside a write, besides its writer's.
const maxReaders = 4

// readerCacheKiB bounds each reader's page cache.
const readerCacheKiB = 512

// A query is one of the statements the Store runs, compiled once per
// connection (prepare): compiling them at every call was about half of the
// state file's cost per question (issue 12).
type query int

const (
	qClaim   query = iota
	qNthUser       // the time of the nth newest question of a user in a window
	qNthAll        // the same for everyone
	qKept          // at least how many questions the table keeps
	qHit
	qTold
	qTell
	qTurns
	qSetTurns
	qCached
	qSetCached
	qVerify
	qVote
	qUnvote
	qVotes
	qUnverify
	qListVerified
	qVerifiedGen
	qSaveReport
	qReport
	qLock
	qUnlock
	qExtendLock
	nQueries
)

var queries = [nQueries]string{
	qClaim: `INSERT INTO claims (key, expires) VALUES (?1, ?2)
		ON CONFLICT (key) DO UPDATE SET expires = excluded.expires WHERE claims.expires <= ?3`,
	qNthUser: "SELECT at FROM hits WHERE user = ?1 AND at > ?2 ORDER BY at DESC LIMIT 1 OFFSET ?3",
	qNthAll:  "SELECT at FROM hits WHERE at > ?1 ORDER BY at DESC LIMIT 1 OFFSET ?2",
	qKept:    "SELECT coalesce((SELECT max(rowid) FROM hits) - (SELECT min(rowid) FROM hits) + 1, 0)",
	qHit:     "INSERT INTO hits (user, at) VALUES (?, ?)",
	qTold:    "SELECT until FROM told WHERE user = ?",
	qTell: `INSERT INTO told (user, until) VALUES (?1, ?2)
		ON CONFLICT (user) DO UPDATE SET until = excluded.until`,
	qTurns: "SELECT turns FROM threads WHERE conv = ? AND expires > ?",
	qSetTurns: `INSERT INTO threads (conv, turns, expires) VALUES (?1, ?2, ?3)
		ON CONFLICT (conv) DO UPDATE SET turns = excluded.turns, expires = excluded.expires`,
	qCached: "SELECT val FROM cache WHERE key = ? AND expires > ?",
	qSetCached: `INSERT INTO cache (key, val, expires) VALUES (?1, ?2, ?3)
		ON CONFLICT (key) DO UPDATE SET val = excluded.val, expires = excluded.expires`,
	qVerify: `INSERT INTO verified (channel, ts, question, sql, checksum, source)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
	qVote: `INSERT INTO votes (channel, ts, user, at) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
	qUnvote:   "DELETE FROM votes WHERE channel = ? AND ts = ? AND user = ?",
	qVotes:    "SELECT count(*) FROM votes WHERE channel = ? AND ts = ?",
	qUnverify: "DELETE FROM verified WHERE channel = ? AND ts = ?",
	qListVerified: `SELECT v.channel, v.ts, v.question, v.sql, v.checksum, v.source,
			json_group_array(json_object('u', o.user, 'at', o.at)) AS votes, min(o.at) AS since
		FROM verified v JOIN votes o ON o.channel = v.channel AND o.ts = v.ts
		GROUP BY v.channel, v.ts
		ORDER BY since DESC, v.channel DESC, v.ts DESC
		LIMIT ?`,
	qVerifiedGen: "SELECT n FROM verified_gen",
	qSaveReport: `INSERT INTO reports (key, at, data) VALUES (?1, ?2, ?3)
		ON CONFLICT (key) DO UPDATE SET at = excluded.at, data = excluded.data`,
	qReport: "SELECT at, data FROM reports WHERE key = ?",
	qLock: `INSERT INTO locks (name, token, expires) VALUES (?1, ?2, ?3)
		ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires = excluded.expires
		WHERE locks.expires <= ?4`,
	qUnlock:     "DELETE FROM locks WHERE name = ? AND token = ? AND expires > ?",
	qExtendLock: "UPDATE locks SET expires = ? WHERE name = ? AND token = ? AND expires > ?",
}

// readQueries are the queries run outside a write, on the readers.
var readQueries = []query{qTurns, qCached, qListVerified, qVerifiedGen, qReport}

// prepare prepares every query for the writer and the reading ones for
// the readers, once the schema is there.
func (s *SQLite) prepare(ctx context.Context) error {
	for q, text := range queries {
		st, err := s.wdb.PrepareContext(ctx, text)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", text, err)
		}
		s.wstmts[q] = st
	}
	for _, q := range readQueries {
		st, err := s.rdb.PrepareContext(ctx, queries[q])
		if err != nil {
			return fmt.Errorf("prepare %q: %w", queries[q], err)
		}
		s.rstmts[q] = st
	}
	return nil
}

// notAnswered returns an error wrapping ErrAnsweredDatabase if the file at
// abs is the file at answered.
func notAnswered(abs, answered string) error {
	if answered == "" {
		return nil
	}
	a, err := filepath.Abs(answered)
	if err != nil {
		return fmt.Errorf("state: open %s: %w", abs, err)
	}
	same := filepath.Clean(a) == filepath.Clean(abs)
	if !same {
		fa, errA := os.Stat(a)
		fs, errS := os.Stat(abs)
		same = errA == nil && errS == nil && os.SameFile(fa, fs)
	}
	if same {
		return fmt.Errorf("state: open %s: %w", abs, ErrAnsweredDatabase)
	}
	return nil
}

// init checks that WAL mode took and brings the schema to schemaVersion.
func (s *SQLite) init(ctx context.Context) error {
	var mode string
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("enable WAL: journal mode is %q", mode)
	}
	return s.write(ctx, func(w *wtx) error {
		tx := w.tx
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if v > schemaVersion {
			return fmt.Errorf("%w (schema version %d; this one knows %d)", ErrNewerSchema, v, schemaVersion)
		}
		for ; v < schemaVersion; v++ {
			m, err := migration(v)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, m); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(schemaVersion)); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		return nil
	})
}

// A wtx is a write transaction: its time, and the prepared queries run in it.
type wtx struct {
	ctx context.Context
	tx  *sql.Tx
	s   *SQLite
	now int64 // Unix ms, read once the transaction holds the write lock
}

// exec runs query q in the transaction.
func (w *wtx) exec(q query, args ...any) (sql.Result, error) {
	return w.tx.StmtContext(w.ctx, w.s.wstmts[q]).ExecContext(w.ctx, args...)
}

// row runs query q in the transaction, for one row.
func (w *wtx) row(q query, args ...any) *sql.Row {
	return w.tx.StmtContext(w.ctx, w.s.wstmts[q]).QueryRowContext(w.ctx, args...)
}

// changed runs query q in the transaction and reports whether it changed
// exactly one row.
func (w *wtx) changed(q query, args ...any) (bool, error) {
	res, err := w.exec(q, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// row runs query q (one of readQueries) on a reader, for one row.
func (s *SQLite) row(ctx context.Context, q query, args ...any) *sql.Row {
	return s.rstmts[q].QueryRowContext(ctx, args...)
}

// write runs fn in one IMMEDIATE transaction, with the time read once the
// transaction holds the file's write lock (so that writers' times are in
// the order of their writes), and commits if fn returns nil.
func (s *SQLite) write(ctx context.Context, fn func(w *wtx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w := &wtx{ctx: ctx, tx: tx, s: s, now: ms(s.now())}
	if err := fn(w); err != nil {
		return err
	}
	if s.writes++; s.writes >= sweepEvery {
		s.writes = 0
		if err := sweep(ctx, tx, w.now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// sweep deletes what has expired.
func sweep(ctx context.Context, tx *sql.Tx, now int64) error {
	for _, q := range []string{
		"DELETE FROM claims WHERE expires <= ?1",
		"DELETE FROM told WHERE until <= ?1",
		"DELETE FROM threads WHERE expires <= ?1",
		"DELETE FROM cache WHERE expires <= ?1",
		"DELETE FROM locks WHERE expires <= ?1",
		"DELETE FROM hits WHERE at <= ?1 - " + strconv.FormatInt(dayMS, 10),
	} {
		if _, err := tx.ExecContext(ctx, q, now); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	return nil
}

// Claim implements Claimer.
func (s *SQLite) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := checkTTL("claim", ttl); err != nil {
		return false, err
	}
	if key == "" {
		return true, nil
	}
	var first bool
	err := s.write(ctx, func(w *wtx) (err error) {
		first, err = w.claim(key, ttl)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("state: claim: %w", err)
	}
	return first, nil
}

// claim records key for ttl if it is not claimed, and reports whether it
// was not.
func (w *wtx) claim(key string, ttl time.Duration) (bool, error) {
	return w.changed(qClaim, key, w.now+ttl.Milliseconds(), w.now)
}

// Allow implements Limiter.
func (s *SQLite) Allow(ctx context.Context, user string, l Limits) (Verdict, error) {
	if !l.on() {
		return Verdict{}, nil // nothing to decide, and nothing recorded
	}
	var v Verdict
	err := s.write(ctx, func(w *wtx) (err error) {
		v, err = w.allow(user, l)
		return err
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("state: allow: %w", err)
	}
	return v, nil
}

// Take implements Taker, in one transaction: one turn of the writer, one
// commit, where Claim and then Allow take two.
func (s *SQLite) Take(ctx context.Context, key string, ttl time.Duration, user string, l Limits) (bool, Verdict, error) {
	if err := checkTTL("take", ttl); err != nil {
		return false, Verdict{}, err
	}
	first := true
	var v Verdict
	err := s.write(ctx, func(w *wtx) (err error) {
		if key != "" {
			if first, err = w.claim(key, ttl); err != nil || !first {
				return err
			}
		}
		v, err = w.allow(user, l)
		return err
	})
	if err != nil {
		return false, Verdict{}, fmt.Errorf("state: take: %w", err)
	}
	return first, v, nil
}

// allow decides on a question from user. Questions older than a day no
// longer count and are deleted by the sweep, not here: deleting one at
// each decision cost a page of the table and each of its indexes at
// every commit.
func (w *wtx) allow(user string, l Limits) (Verdict, error) {
	var v Verdict
	if !l.on() {
		return v, nil
	}
	now := w.now
	// nth returns the time of the nth newest question that q selects
	// with args, if there are at least n.
	nth := func(n int, q query, args ...any) (int64, bool, error) {
		var at int64
		err := w.row(q, append(args, n-1)...).Scan(&at)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		return at, err == nil, err
	}
	var (
		at   int64
		over bool
		err  error
	)
	if l.PerMinute > 0 {
		if at, over, err = nth(l.PerMinute, qNthUser, user, now-minuteMS); err != nil {
			return v, err
		} else if over {
			v = Verdict{Rule: RuleUserMinute, Count: l.PerMinute, Wait: msDur(at + minuteMS - now)}
		}
	}
	if v.Rule == RuleNone && l.PerDay > 0 {
		if at, over, err = nth(l.PerDay, qNthUser, user, now-dayMS); err != nil {
			return v, err
		} else if over {
			v = Verdict{Rule: RuleUserDay, Count: l.PerDay, Wait: msDur(at + dayMS - now)}
		}
	}
	if v.Rule == RuleNone && l.GlobalPerDay > 0 {
		// Finding the nth newest question walks n of them. The table keeps
		// at most max(rowid) - min(rowid) + 1 (two lookups): when that is
		// fewer than the limit, the window cannot be full, and the walk is
		// spared. (Questions are added in time order and the oldest swept,
		// so the bound is close; it is never low.)
		var kept int64
		if err := w.row(qKept).Scan(&kept); err != nil {
			return v, err
		}
		if kept >= int64(l.GlobalPerDay) {
			if at, over, err = nth(l.GlobalPerDay, qNthAll, now-dayMS); err != nil {
				return v, err
			} else if over {
				v = Verdict{Rule: RuleGlobalDay, Count: l.GlobalPerDay, Wait: msDur(at + dayMS - now)}
			}
		}
	}
	if v.Rule == RuleNone {
		if l.on() {
			_, err := w.exec(qHit, user, now)
			return v, err
		}
		return v, nil
	}
	var until int64
	switch err := w.row(qTold, user).Scan(&until); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return v, err
	case now < until:
		return v, nil
	}
	v.Tell = true
	_, err = w.exec(qTell, user, now+v.Wait.Milliseconds())
	return v, err
}

// Turns implements Threads.
func (s *SQLite) Turns(ctx context.Context, conv string) ([]Turn, error) {
	var data []byte
	err := s.row(ctx, qTurns, conv, ms(s.now())).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: read turns: %w", err)
	}
	var turns []Turn
	if err := json.Unmarshal(data, &turns); err != nil {
		return nil, fmt.Errorf("state: read turns: %w", err)
	}
	return turns, nil
}

// AddTurn implements Threads.
func (s *SQLite) AddTurn(ctx context.Context, conv string, t Turn, keep int, ttl time.Duration) error {
	if err := checkKeep(keep); err != nil {
		return err
	}
	if err := checkTTL("add turn", ttl); err != nil {
		return err
	}
	err := s.write(ctx, func(w *wtx) error {
		var turns []Turn
		var data []byte
		switch err := w.row(qTurns, conv, w.now).Scan(&data); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(data, &turns); err != nil {
				return err
			}
		}
		turns = append(turns, t)
		turns = turns[max(0, len(turns)-keep):]
		data, err := json.Marshal(turns)
		if err != nil {
			return err
		}
		_, err = w.exec(qSetTurns, conv, data, w.now+ttl.Milliseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("state: add turn: %w", err)
	}
	return nil
}

// Cached implements Cache.
func (s *SQLite) Cached(ctx context.Context, key string) ([]byte, bool, error) {
	var val []byte
	err := s.row(ctx, qCached, key, ms(s.now())).Scan(&val)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: read cache: %w", err)
	}
	if val == nil {
		val = []byte{}
	}
	return val, true, nil
}

// SetCached implements Cache.
func (s *SQLite) SetCached(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := checkTTL("set cached", ttl); err != nil {
		return err
	}
	if val == nil {
		val = []byte{} // NOT NULL
	}
	err := s.write(ctx, func(w *wtx) error {
		_, err := w.exec(qSetCached, key, val, w.now+ttl.Milliseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("state: write cache: %w", err)
	}
	return nil
}

// Verify implements VerifiedAnswers.
func (s *SQLite) Verify(ctx context.Context, v Verification) error {
	err := s.write(ctx, func(w *wtx) error {
		if _, err := w.exec(qVerify, v.Channel, v.TS, v.Question, v.SQL, v.Checksum, v.Source); err != nil {
			return err
		}
		_, err := w.exec(qVote, v.Channel, v.TS, v.User, ms(v.At))
		return err
	})
	if err != nil {
		return fmt.Errorf("state: verify: %w", err)
	}
	return nil
}

// Unverify implements VerifiedAnswers.
func (s *SQLite) Unverify(ctx context.Context, channel, ts, user string) (bool, error) {
	var still bool
	err := s.write(ctx, func(w *wtx) error {
		if _, err := w.exec(qUnvote, channel, ts, user); err != nil {
			return err
		}
		var n int
		if err := w.row(qVotes, channel, ts).Scan(&n); err != nil {
			return err
		}
		if still = n > 0; !still {
			_, err := w.exec(qUnverify, channel, ts)
			return err
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("state: unverify: %w", err)
	}
	return still, nil
}

// ListVerified implements VerifiedAnswers. While no verified answer has
// changed since the last list it read (verified_gen), it answers from that
// list.
func (s *SQLite) ListVerified(ctx context.Context, n int) ([]Verified, error) {
	if n <= 0 {
		return nil, nil
	}
	// The count is read before the list: a change between the two makes
	// the list newer than its count, never older, so the next call reads
	// the list again.
	var gen int64
	if err := s.row(ctx, qVerifiedGen).Scan(&gen); err != nil {
		return nil, fmt.Errorf("state: list verified: %w", err)
	}
	c := &s.listed
	c.mu.Lock()
	if c.ok && c.gen == gen && (n <= c.n || len(c.list) < c.n) {
		out := cloneVerified(c.list[:min(n, len(c.list))])
		c.mu.Unlock()
		return out, nil
	}
	c.mu.Unlock()
	out, err := s.listVerified(ctx, n)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if !c.ok || gen != c.gen || n > c.n {
		c.ok, c.gen, c.n, c.list = true, gen, n, cloneVerified(out)
	}
	c.mu.Unlock()
	return out, nil
}

// cloneVerified copies list and the votes of each answer, so that the
// cache and its callers share nothing.
func cloneVerified(list []Verified) []Verified {
	if len(list) == 0 {
		return nil
	}
	out := slices.Clone(list)
	for i := range out {
		out[i].Votes = slices.Clone(out[i].Votes)
	}
	return out
}

// listVerified reads the n most recently verified answers.
func (s *SQLite) listVerified(ctx context.Context, n int) ([]Verified, error) {
	rows, err := s.rstmts[qListVerified].QueryContext(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("state: list verified: %w", err)
	}
	defer rows.Close()
	var out []Verified
	for rows.Next() {
		var a Verified
		var votes string
		var since int64
		if err := rows.Scan(&a.Channel, &a.TS, &a.Question, &a.SQL, &a.Checksum, &a.Source, &votes, &since); err != nil {
			return nil, fmt.Errorf("state: list verified: %w", err)
		}
		var vs []struct {
			U  string `json:"u"`
			At int64  `json:"at"`
		}
		if err := json.Unmarshal([]byte(votes), &vs); err != nil {
			return nil, fmt.Errorf("state: list verified: %w", err)
		}
		for _, x := range vs {
			a.Votes = append(a.Votes, Vote{User: x.U, At: time.UnixMilli(x.At)})
		}
		slices.SortStableFunc(a.Votes, func(x, y Vote) int { return x.At.Compare(y.At) })
		a.Since = time.UnixMilli(since)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: list verified: %w", err)
	}
	return out, nil
}

// SaveReport implements Reports.
func (s *SQLite) SaveReport(ctx context.Context, key string, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	err := s.write(ctx, func(w *wtx) error {
		_, err := w.exec(qSaveReport, key, w.now, data)
		return err
	})
	if err != nil {
		return fmt.Errorf("state: save report: %w", err)
	}
	return nil
}

// LatestReport implements Reports.
func (s *SQLite) LatestReport(ctx context.Context, key string) (Report, bool, error) {
	var r Report
	var at int64
	err := s.row(ctx, qReport, key).Scan(&at, &r.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return Report{}, false, nil
	}
	if err != nil {
		return Report{}, false, fmt.Errorf("state: read report: %w", err)
	}
	if r.Data == nil {
		r.Data = []byte{}
	}
	r.At = time.UnixMilli(at)
	return r, true, nil
}

// TryLock implements Locker.
func (s *SQLite) TryLock(ctx context.Context, name string, ttl time.Duration) (string, bool, error) {
	if err := checkTTL("lock", ttl); err != nil {
		return "", false, err
	}
	token, err := newToken()
	if err != nil {
		return "", false, err
	}
	var ok bool
	err = s.write(ctx, func(w *wtx) (err error) {
		ok, err = w.changed(qLock, name, token, w.now+ttl.Milliseconds(), w.now)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("state: lock %s: %w", name, err)
	}
	if !ok {
		return "", false, nil
	}
	return token, true, nil
}

// Unlock implements Locker.
func (s *SQLite) Unlock(ctx context.Context, name, token string) error {
	return s.changeLock(ctx, "unlock", name, func(w *wtx) (bool, error) {
		return w.changed(qUnlock, name, token, w.now)
	})
}

// ExtendLock implements Locker.
func (s *SQLite) ExtendLock(ctx context.Context, name, token string, ttl time.Duration) error {
	if err := checkTTL("extend lock", ttl); err != nil {
		return err
	}
	return s.changeLock(ctx, "extend lock", name, func(w *wtx) (bool, error) {
		return w.changed(qExtendLock, w.now+ttl.Milliseconds(), name, token, w.now)
	})
}

// changeLock runs one statement on a lock held by the caller, and returns
// ErrNotHeld if it changed nothing.
func (s *SQLite) changeLock(ctx context.Context, verb, name string, stmt func(*wtx) (bool, error)) error {
	held := false
	err := s.write(ctx, func(w *wtx) (err error) {
		held, err = stmt(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("state: %s %s: %w", verb, name, err)
	}
	if !held {
		return ErrNotHeld
	}
	return nil
}

// Close implements Store.
func (s *SQLite) Close() error {
	for _, st := range append(s.wstmts[:], s.rstmts[:]...) {
		if st != nil {
			st.Close()
		}
	}
	if err := errors.Join(s.rdb.Close(), s.wdb.Close()); err != nil {
		return fmt.Errorf("state: close: %w", err)
	}
	return nil
}
