package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"sqlbot/agent/cache"
	"sqlbot/bot/state"
	"sqlbot/roconn"
)

// cached wraps ans in the answer cache on st, unless SQLBOT_CACHE_TTL is 0:
// a question asked again on the same data (see answerSource) within the TTL
// is answered without the model, on every surface and replica sharing st.
func (a *app) cached(ans cache.Answerer, st cache.Store, db *database, lg *slog.Logger) cache.Answerer {
	ttl := cache.DefaultTTL
	if a.cfg.CacheTTL != nil {
		ttl = *a.cfg.CacheTTL
	}
	if ttl <= 0 {
		return ans
	}
	return cache.New(ans, st, cache.Options{TTL: ttl, Source: answerSource(db), Log: lg})
}

// answerSource names what an answer depends on besides its question: the
// database's contents and policy (sourceID) and the result limits.
func answerSource(db *database) func(context.Context) (string, error) {
	l := db.Limits()
	limits := fmt.Sprintf("rows=%d columns=%d value=%d result=%d", l.Rows, l.Columns, l.ValueBytes, l.ResultBytes)
	return func(ctx context.Context) (string, error) {
		src, err := db.source.Get(ctx)
		if err != nil {
			return "", err
		}
		return src + " " + limits, nil
	}
}

// cacheOff reports whether SQLBOT_CACHE_TTL turns the answer cache off.
func (a *app) cacheOff() bool { return a.cfg.CacheTTL != nil && *a.cfg.CacheTTL <= 0 }

// openState opens where sqlbot keeps what it writes: Redis through a
// Failover when SQLBOT_REDIS_URL is set (health then reports whether the
// state is shared), else the state file (SQLBOT_STATE, else the default path
// in the user's data directory), which may not be the file answered (the
// database answered from; "" when none is). health is nil for the state
// file.
func (a *app) openState(ctx context.Context, answered string, lg *slog.Logger) (st state.Store, health func() state.Health, err error) {
	if a.cfg.RedisURL != "" {
		r, err := state.NewRedis(a.cfg.RedisURL, state.RedisOptions{Log: lg})
		if err != nil {
			return nil, nil, fmt.Errorf("SQLBOT_REDIS_URL: %w", err)
		}
		f := state.NewFailover(ctx, r, lg, state.FailoverOptions{})
		lg.InfoContext(ctx, "state shared through redis", "health", f.Health().String())
		return f, f.Health, nil
	}
	path, err := a.statePath()
	if err != nil {
		return nil, nil, err
	}
	s, err := state.OpenSQLite(ctx, path, state.SQLiteOptions{Answered: answered})
	if err != nil {
		return nil, nil, fmt.Errorf("SQLBOT_STATE: %w", err)
	}
	return s, nil, nil
}

// statePath is the state file's path: SQLBOT_STATE, else the default in
// the user's data directory.
func (a *app) statePath() (string, error) {
	if a.cfg.State != "" {
		return a.cfg.State, nil
	}
	path, err := state.DefaultPath(map[string]string{"XDG_DATA_HOME": a.cfg.XDGDataHome, "HOME": a.cfg.Home})
	if err != nil {
		return "", fmt.Errorf("SQLBOT_STATE is not set and %w", err)
	}
	return path, nil
}

// A sourceID names what an answer is computed on: the contents of the
// database and the policy that reads it. Two replicas reading equal
// contents under equal policies have the same one, whatever their paths.
//
// The contents are roconn.Checksum's, over every row of every table. It is
// computed again only when the file or its WAL changes (size or
// modification time), so a question costs two stat calls; the first call after
// a change reads the whole database once.
type sourceID struct {
	path      string
	policySum string // hex SHA-256 of the policy file's bytes, or of the default's name

	mu   sync.Mutex
	stat string // the file's stat when id was computed
	id   string
}

// newSourceID returns the source of the database at path read with the
// policy file's bytes (nil: the default policy, every user table).
func newSourceID(path string, policy []byte) *sourceID {
	h := sha256.New()
	if policy != nil {
		h.Write([]byte("policy\x00"))
		h.Write(policy)
	} else {
		h.Write([]byte("default policy"))
	}
	return &sourceID{path: path, policySum: hex.EncodeToString(h.Sum(nil))}
}

// Get returns the current source id ("src:" and a hex SHA-256).
func (s *sourceID) Get(ctx context.Context) (string, error) {
	st := changeStamp(s.path) + "|" + changeStamp(s.path+"-wal")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id != "" && st == s.stat {
		return s.id, nil
	}
	sum, err := roconn.Checksum(ctx, s.path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(sum + "\x00" + s.policySum))
	s.stat, s.id = st, "src:"+hex.EncodeToString(h[:])
	return s.id, nil
}

// changeStamp is what changes when a file is written: its size and
// modification time; "-" when it does not exist.
func changeStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
}
