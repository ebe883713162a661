// Package state keeps what sqlbot writes: de-duplication claims, question
// limits, thread memory, the answer cache, verified answers, evaluation
// reports and the one-evaluation-at-a-time lock.
//
// Four Stores implement one contract. Memory keeps everything in the
// process. SQLite keeps it in a file of its own (never the database sqlbot
// answers from, which OpenSQLite refuses), and survives restarts; several
// Store values or processes on one file behave as one. Redis shares it
// between replicas. Failover wraps Redis and answers from a per-process
// Memory while Redis is unreachable, reporting its Health.
//
// Atomicity contract, on every Store: among all callers of one backend,
// exactly one Claim of a key wins until the key expires; Allow never accepts
// more questions than a limit allows, however many callers decide at once;
// exactly one TryLock holds a lock until it is released or expires. A Store
// is safe for concurrent use.
package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// A Store is everything sqlbot keeps. Consumers should declare the smaller
// interface they use (a Claimer, a Limiter, …); this one is for wiring.
type Store interface {
	Claimer
	Limiter
	Taker
	Threads
	Cache
	VerifiedAnswers
	Reports
	Locker
	// Close releases the Store's resources. Nothing may be called after.
	Close() error
}

// A Claimer de-duplicates events that may be delivered more than once.
type Claimer interface {
	// Claim records key for ttl and reports whether this call was the first
	// to claim it (among all callers of the backend) since it last expired.
	// The empty key is always first and never recorded. ttl must be positive.
	Claim(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
}

// A Limiter counts questions in sliding windows.
type Limiter interface {
	// Allow counts a question from user if no limit in l stops it, and
	// otherwise says which limit did, for how long, and whether to tell the
	// user. A refused question is not counted. The decision is atomic across
	// all callers of the backend.
	Allow(ctx context.Context, user string, l Limits) (Verdict, error)
}

// A Taker claims a message and decides on its question in one call: what
// a replica does first with every question it is given.
type Taker interface {
	// Take claims key for ttl as Claim does and, if this call was the
	// first, decides on a question from user as Allow does; when it was
	// not, v is the zero Verdict and nothing is counted. Each part is as
	// atomic as Claim and Allow are; the state file makes both one
	// transaction, and Redis one script. On an error the question was not counted, and the
	// claim may or may not have been recorded. ttl must be positive.
	Take(ctx context.Context, key string, ttl time.Duration, user string, l Limits) (first bool, v Verdict, err error)
}

// claimThenAllow is Take made of s's Claim and then, for the first, its
// Allow.
func claimThenAllow(ctx context.Context, s interface {
	Claimer
	Limiter
}, key string, ttl time.Duration, user string, l Limits) (bool, Verdict, error) {
	first, err := s.Claim(ctx, key, ttl)
	if err != nil || !first {
		return false, Verdict{}, err
	}
	v, err := s.Allow(ctx, user, l)
	if err != nil {
		return false, Verdict{}, err
	}
	return true, v, nil
}

// Threads remembers the earlier turns of conversations.
type Threads interface {
	// Turns returns the turns of conversation conv, oldest first, or none if
	// it is unknown or has been idle longer than the ttl of its last AddTurn.
	Turns(ctx context.Context, conv string) ([]Turn, error)
	// AddTurn appends t to conv, keeps only its newest keep turns, and keeps
	// the conversation for ttl from now. An expired conversation starts
	// afresh. keep and ttl must be positive.
	AddTurn(ctx context.Context, conv string, t Turn, keep int, ttl time.Duration) error
}

// A Cache holds values for a time.
type Cache interface {
	// Cached returns the value stored under key, if it has not expired.
	Cached(ctx context.Context, key string) (val []byte, ok bool, err error)
	// SetCached stores val under key for ttl, replacing any value. ttl must
	// be positive.
	SetCached(ctx context.Context, key string, val []byte, ttl time.Duration) error
}

// VerifiedAnswers keeps the answers that people marked correct.
//
// An answer (a message, by channel and ts) is verified while at least one
// verifier's mark remains on it: Verify adds one verifier's mark, Unverify
// removes that same verifier's mark, and the answer is withdrawn when the
// last mark goes. Verified answers never expire.
type VerifiedAnswers interface {
	// Verify records v.User's mark on the answer v describes. The first mark
	// stores the answer (question, SQL, checksum, source); later marks add
	// their verifier and leave it unchanged. A verifier marking twice keeps
	// the first mark's time.
	Verify(ctx context.Context, v Verification) error
	// Unverify removes user's mark from the answer at channel and ts, and
	// reports whether the answer is still verified by someone else. Removing
	// a mark that is not there changes nothing.
	Unverify(ctx context.Context, channel, ts, user string) (stillVerified bool, err error)
	// ListVerified returns at most n verified answers, the most recently
	// verified first (by Verified.Since). n ≤ 0 returns none.
	ListVerified(ctx context.Context, n int) ([]Verified, error)
}

// Reports keeps the latest evaluation report per key.
type Reports interface {
	// SaveReport stores data as the latest report under key (for example the
	// identity of the database, policy and question set it evaluated).
	SaveReport(ctx context.Context, key string, data []byte) error
	// LatestReport returns the report last saved under key.
	LatestReport(ctx context.Context, key string) (r Report, ok bool, err error)
}

// A Locker gives named locks that expire, so that a holder that dies does
// not hold a lock for good.
type Locker interface {
	// TryLock takes lock name for ttl if nobody holds it, and returns the
	// token that releases or extends it. ok is false, with no error, when
	// someone else holds it. ttl must be positive.
	TryLock(ctx context.Context, name string, ttl time.Duration) (token string, ok bool, err error)
	// Unlock releases lock name if token holds it, and otherwise returns
	// ErrNotHeld (it expired, or was taken by someone else after it did).
	Unlock(ctx context.Context, name, token string) error
	// ExtendLock keeps lock name for ttl from now if token holds it, and
	// otherwise returns ErrNotHeld.
	ExtendLock(ctx context.Context, name, token string, ttl time.Duration) error
}

// ErrNotHeld is returned by Unlock and ExtendLock when the token does not
// hold the lock.
var ErrNotHeld = errors.New("state: lock not held")

// ErrAnsweredDatabase is returned, wrapped, by OpenSQLite when the state
// file would be the database sqlbot answers from.
var ErrAnsweredDatabase = errors.New("state: the state file is the database sqlbot answers from")

// ErrNewerSchema is returned, wrapped, by OpenSQLite for a state file
// written by a newer sqlbot, whose schema this one does not know.
var ErrNewerSchema = errors.New("state: the state file is from a newer sqlbot")

// A Turn is one earlier question of a conversation and the bot's reply.
type Turn struct {
	Question string `json:"q"`
	Answer   string `json:"a"`
	SQL      string `json:"sql,omitempty"` // the final SQL, may be empty
}

// Limits are the question limits; a limit ≤ 0 is off.
type Limits struct {
	PerMinute    int // questions per user in any 60 s
	PerDay       int // questions per user in any 24 h
	GlobalPerDay int // questions from everyone in any 24 h
}

// on reports whether any limit is on. While one is, every accepted question
// is recorded for 24 h; with all off, nothing is.
func (l Limits) on() bool { return l.PerMinute > 0 || l.PerDay > 0 || l.GlobalPerDay > 0 }

// A Rule names the limit that turned a question away. Its values are stable
// labels, fit for metrics.
type Rule string

// The rules, in the order Allow checks them.
const (
	RuleNone       Rule = ""            // accepted
	RuleUserMinute Rule = "user_minute" // Limits.PerMinute
	RuleUserDay    Rule = "user_day"    // Limits.PerDay
	RuleGlobalDay  Rule = "global_day"  // Limits.GlobalPerDay
)

// A Verdict is Allow's answer for one question.
type Verdict struct {
	Rule  Rule          // RuleNone: accepted, and counted
	Count int           // the limit's number, for the message
	Wait  time.Duration // until a question would be accepted
	// Tell is set on the first refusal of a user within a wait: the user
	// should be told once, and not again until that wait is over.
	Tell bool
}

// A Verification is one verifier's mark on an answer.
type Verification struct {
	Channel, TS string // the answer's message
	Question    string
	SQL         string // the SQL that produced the answer
	Checksum    string // of the answer's result rows
	// Source identifies the database and policy the answer was computed
	// on, so that an evaluation can leave out answers verified elsewhere.
	Source string
	User   string    // who marked it
	At     time.Time // when
}

// A Vote is one verifier's mark.
type Vote struct {
	User string
	At   time.Time
}

// A Verified answer, with every mark that keeps it verified.
type Verified struct {
	Channel, TS string
	Question    string
	SQL         string
	Checksum    string
	Source      string
	Since       time.Time // the earliest remaining mark
	Votes       []Vote    // oldest first
}

// A Report is a saved evaluation report.
type Report struct {
	Data []byte
	At   time.Time // when it was saved
}

// DefaultPath returns where the state file goes when no path is set: the
// file sqlbot/state.db in the user's data directory, $XDG_DATA_HOME or else
// $HOME/.local/share, read from environ (only absolute paths count, as the
// XDG base directory rules say).
func DefaultPath(environ map[string]string) (string, error) {
	if d := environ["XDG_DATA_HOME"]; filepath.IsAbs(d) {
		return filepath.Join(d, "sqlbot", "state.db"), nil
	}
	if h := environ["HOME"]; filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", "sqlbot", "state.db"), nil
	}
	return "", errors.New("state: no data directory: set XDG_DATA_HOME or HOME, or give the state file's path")
}

// newToken returns a random lock token.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("state: make token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// checkTTL returns an error unless d is positive.
func checkTTL(what string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("state: %s: ttl %v is not positive", what, d)
	}
	return nil
}

// checkKeep returns an error unless keep is positive.
func checkKeep(keep int) error {
	if keep <= 0 {
		return fmt.Errorf("state: add turn: keep %d is not positive", keep)
	}
	return nil
}

// ms is t in Unix milliseconds, the resolution every backend keeps.
func ms(t time.Time) int64 { return t.UnixMilli() }

const (
	minuteMS = int64(time.Minute / time.Millisecond)
	dayMS    = int64(24 * time.Hour / time.Millisecond)
)
