package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

var _ Store = (*Redis)(nil)

// Defaults for RedisOptions.
const (
	DefaultRedisPrefix = "sqlbot:"
	// DefaultRedisTimeout bounds dialing, and each read and write, when the
	// URL does not set dial_timeout, read_timeout or write_timeout: a Redis
	// that is away must not hold up an answer.
	DefaultRedisTimeout = 500 * time.Millisecond
)

// RedisOptions are NewRedis's settings. The zero value is usable.
type RedisOptions struct {
	// Prefix starts every key (DefaultRedisPrefix if empty), so that several
	// deployments can share one Redis.
	Prefix string
	// Now is the clock for limits. If nil, the limit script reads the Redis
	// server's clock, which all replicas share, so that their clocks'
	// skew cannot matter. Expiry (claims, locks, threads, cache) is always
	// Redis's own.
	Now func() time.Time
	// Timeout is the dial, read and write timeout the URL does not set
	// (DefaultRedisTimeout if zero).
	Timeout time.Duration
	// Log, if set, receives go-redis's own messages (dial failures, pool
	// trouble) as warnings, instead of standard error. go-redis has one
	// logger per process: the last NewRedis given a Log sets it.
	Log *slog.Logger
}

// redisLog hands go-redis's messages to a slog.Logger.
type redisLog struct{ lg *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.lg.WarnContext(ctx, "state: redis client: "+strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// Redis is a Store in Redis, shared by every replica that uses the same
// server and prefix. Claims and locks are SET NX PX (a lock is released or
// extended only by its token, in a script); each limit decision, Take (a
// claim and its decision), verification and listing is one Lua script, so it
// is atomic. Verified answers and reports
// have no TTL and last as long as Redis keeps its data (configure persistence).
// It is meant for one Redis server (or a failover pair), not a Redis Cluster.
type Redis struct {
	c      *redis.Client
	prefix string
	now    func() time.Time // nil: the server's clock

	allow, take, verify, unverify, list, unlock, extend, saveIfNewer *redis.Script
}

// NewRedis returns a Redis Store for a redis:// or rediss:// (TLS) URL. It
// does not connect: the first call does, and Ping checks the server.
func NewRedis(rawURL string, opt RedisOptions) (*Redis, error) {
	// The URL may hold a password: no error below repeats it.
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil, errors.New("state: redis URL: want redis://[user:password@]host:port[/db] or rediss://…")
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errors.New("state: redis URL: cannot parse it (host, port, database number or options)")
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultRedisTimeout
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = timeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = timeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = timeout
	}
	if o.PoolTimeout == 0 {
		o.PoolTimeout = timeout
	}
	o.DialerRetries = 1            // a refused connection is an answer, not something to retry 5 times
	o.ContextTimeoutEnabled = true // the caller's deadline bounds every call
	o.DisableIdentity = true       // no CLIENT SETINFO: older servers and proxies reject it
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if opt.Log != nil {
		redis.SetLogger(redisLog{opt.Log})
	}
	prefix := opt.Prefix
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &Redis{c: redis.NewClient(o), prefix: prefix, now: opt.Now,
		allow: redis.NewScript(allowScript), take: redis.NewScript(takeScript), verify: redis.NewScript(verifyScript),
		unverify: redis.NewScript(unverifyScript), list: redis.NewScript(listScript),
		unlock: redis.NewScript(unlockScript), extend: redis.NewScript(extendScript),
		saveIfNewer: redis.NewScript(saveReportIfNewerScript)}, nil
}

// Ping checks that the server answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("state: ping redis: %w", err)
	}
	return nil
}

// Close implements Store.
func (r *Redis) Close() error {
	if err := r.c.Close(); err != nil {
		return fmt.Errorf("state: close redis: %w", err)
	}
	return nil
}

func (r *Redis) key(parts ...string) string { return r.prefix + strings.Join(parts, ":") }

// nowArg is the time passed to scripts: the caller's clock in Unix ms, or -1
// for the server's.
func (r *Redis) nowArg() int64 {
	if r.now == nil {
		return -1
	}
	return ms(r.now())
}

// Claim implements Claimer.
func (r *Redis) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := checkTTL("claim", ttl); err != nil {
		return false, err
	}
	if key == "" {
		return true, nil
	}
	ok, err := r.c.SetNX(ctx, r.key("claim", key), 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("state: claim: %w", err)
	}
	return ok, nil
}

// scriptNow sets now to the caller's time, or to the server's when ARGV[1]
// is negative. Reading TIME in a script is allowed since Redis 5, whose
// scripts replicate their effects rather than themselves.
const scriptNow = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

// allowScript decides one question: KEYS are the user's sorted set of
// accepted questions, everyone's, and the user's "told until" key; ARGV are
// now (ms, or -1), the per-minute, per-day and global limits, and a unique
// member suffix. Scores are times in ms. It returns {rule, count, wait ms,
// tell}. Every step is O(log n) in the size of a set: the nth newest member
// is read by rank, never by walking the window.
const allowScript = scriptNow + allowBody

// takeScript claims a message and, if it was the first, decides on its
// question, in one script: one round trip where Claim and then Allow take
// two. KEYS and ARGV are allowScript's, then KEYS[4] is the claim's key and
// ARGV[6] its ttl in ms, and ARGV[7] is "1" to claim (else the key is
// empty: always first, never recorded). It returns {0} when the message was
// claimed before (nothing counted), else {1} followed by allowScript's
// answer.
const takeScript = scriptNow + `
local function decide()
` + allowBody + `
end
if ARGV[7] == '1' and not redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[6]) then
  return {0}
end
local v = decide()
return {1, v[1], v[2], v[3], v[4]}
`

// allowBody is allowScript after scriptNow, a chunk that returns its answer.
const allowBody = `
local pm, pd, pg = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local minute, day = 60000, 86400000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - day)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - day)
local users, all = redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])
-- nth returns the score of the nth newest member of key, which has size members.
local function nth(key, size, n)
  local r = redis.call('ZRANGE', key, size - n, size - n, 'WITHSCORES')
  return tonumber(r[2])
end
local rule, count, wait = '', 0, 0
if pm > 0 and users >= pm and redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%d', now - minute), '+inf') >= pm then
  -- the window's members are the newest, so its pm-th newest is the set's
  rule, count, wait = 'user_minute', pm, nth(KEYS[1], users, pm) + minute - now
elseif pd > 0 and users >= pd then
  rule, count, wait = 'user_day', pd, nth(KEYS[1], users, pd) + day - now
elseif pg > 0 and all >= pg then
  rule, count, wait = 'global_day', pg, nth(KEYS[2], all, pg) + day - now
end
if rule == '' then
  if pm > 0 or pd > 0 or pg > 0 then
    local member = string.format('%d', now) .. ':' .. ARGV[5]
    redis.call('ZADD', KEYS[1], now, member)
    redis.call('ZADD', KEYS[2], now, member)
    redis.call('PEXPIRE', KEYS[1], day + minute)
    redis.call('PEXPIRE', KEYS[2], day + minute)
  end
  return {'', 0, 0, 0}
end
local told = tonumber(redis.call('GET', KEYS[3]) or '-1')
if told >= 0 and now < told then
  return {rule, count, wait, 0}
end
-- The stored end decides; the expiry only cleans up.
redis.call('SET', KEYS[3], string.format('%d', now + wait), 'PX', wait + minute)
return {rule, count, wait, 1}
`

// Allow implements Limiter.
func (r *Redis) Allow(ctx context.Context, user string, l Limits) (Verdict, error) {
	id, err := newToken()
	if err != nil {
		return Verdict{}, err
	}
	res, err := r.allow.Run(ctx, r.c, r.limitKeys(user), r.nowArg(), l.PerMinute, l.PerDay, l.GlobalPerDay, id).Slice()
	if err != nil {
		return Verdict{}, fmt.Errorf("state: allow: %w", err)
	}
	v, err := verdictOf(res)
	if err != nil {
		return Verdict{}, fmt.Errorf("state: allow: %w", err)
	}
	return v, nil
}

// limitKeys are allowScript's keys for a question from user.
func (r *Redis) limitKeys(user string) []string {
	return []string{r.key("limit", "user", user), r.key("limit", "global"), r.key("limit", "told", user)}
}

// verdictOf reads allowScript's answer.
func verdictOf(res []any) (Verdict, error) {
	if len(res) != 4 {
		return Verdict{}, fmt.Errorf("the script returned %d values", len(res))
	}
	rule, _ := res[0].(string)
	count, _ := res[1].(int64)
	wait, _ := res[2].(int64)
	tell, _ := res[3].(int64)
	return Verdict{Rule: Rule(rule), Count: int(count), Wait: msDur(wait), Tell: tell == 1}, nil
}

// Take implements Taker, in one script (takeScript): one round trip, and
// the claim and the decision one atomic step.
func (r *Redis) Take(ctx context.Context, key string, ttl time.Duration, user string, l Limits) (bool, Verdict, error) {
	if err := checkTTL("take", ttl); err != nil {
		return false, Verdict{}, err
	}
	id, err := newToken()
	if err != nil {
		return false, Verdict{}, err
	}
	claim := "0"
	if key != "" {
		claim = "1"
	}
	res, err := r.take.Run(ctx, r.c, append(r.limitKeys(user), r.key("claim", key)),
		r.nowArg(), l.PerMinute, l.PerDay, l.GlobalPerDay, id, max(1, ttl.Milliseconds()), claim).Slice()
	if err != nil {
		return false, Verdict{}, fmt.Errorf("state: take: %w", err)
	}
	if len(res) == 0 {
		return false, Verdict{}, errors.New("state: take: the script returned nothing")
	}
	if first, _ := res[0].(int64); first != 1 {
		return false, Verdict{}, nil
	}
	v, err := verdictOf(res[1:])
	if err != nil {
		return false, Verdict{}, fmt.Errorf("state: take: %w", err)
	}
	return true, v, nil
}

// Turns implements Threads.
func (r *Redis) Turns(ctx context.Context, conv string) ([]Turn, error) {
	items, err := r.c.LRange(ctx, r.key("thread", conv), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("state: read turns: %w", err)
	}
	var turns []Turn
	for _, it := range items {
		var t Turn
		if err := json.Unmarshal([]byte(it), &t); err != nil {
			return nil, fmt.Errorf("state: read turns: %w", err)
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// AddTurn implements Threads.
func (r *Redis) AddTurn(ctx context.Context, conv string, t Turn, keep int, ttl time.Duration) error {
	if err := checkKeep(keep); err != nil {
		return err
	}
	if err := checkTTL("add turn", ttl); err != nil {
		return err
	}
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("state: add turn: %w", err)
	}
	k := r.key("thread", conv)
	_, err = r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, k, data)
		p.LTrim(ctx, k, int64(-keep), -1)
		p.PExpire(ctx, k, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: add turn: %w", err)
	}
	return nil
}

// Cached implements Cache.
func (r *Redis) Cached(ctx context.Context, key string) ([]byte, bool, error) {
	val, err := r.c.Get(ctx, r.key("cache", key)).Bytes()
	if errors.Is(err, redis.Nil) {
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
func (r *Redis) SetCached(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := checkTTL("set cached", ttl); err != nil {
		return err
	}
	if err := r.c.Set(ctx, r.key("cache", key), val, ttl).Err(); err != nil {
		return fmt.Errorf("state: write cache: %w", err)
	}
	return nil
}

// answerID names an answer in keys: both parts escaped, so that no two
// answers share one.
func answerID(channel, ts string) string { return url.PathEscape(channel) + "/" + url.PathEscape(ts) }

// verifyKeys are an answer's hash, its votes (user → ms) and the index of
// verified answers (score: the earliest vote).
func (r *Redis) verifyKeys(channel, ts string) []string {
	id := answerID(channel, ts)
	return []string{r.key("verified", "answer", id), r.key("verified", "votes", id), r.key("verified", "index")}
}

// scriptSince is a Lua function: the earliest vote of a votes hash, or nil.
const scriptSince = `
local function since(key)
  local s = nil
  for _, v in ipairs(redis.call('HVALS', key)) do
    local n = tonumber(v)
    if s == nil or n < s then s = n end
  end
  return s
end
`

// verifyScript: KEYS as verifyKeys; ARGV are the index member, channel, ts,
// question, sql, checksum, source, user and the vote's time (ms).
const verifyScript = scriptSince + `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'channel', ARGV[2], 'ts', ARGV[3], 'question', ARGV[4],
    'sql', ARGV[5], 'checksum', ARGV[6], 'source', ARGV[7])
end
redis.call('HSETNX', KEYS[2], ARGV[8], ARGV[9])
redis.call('ZADD', KEYS[3], since(KEYS[2]), ARGV[1])
return 1
`

// unverifyScript: KEYS as verifyKeys; ARGV are the index member and the
// user. It returns 1 if the answer is still verified.
const unverifyScript = scriptSince + `
redis.call('HDEL', KEYS[2], ARGV[2])
local s = since(KEYS[2])
if s == nil then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('ZREM', KEYS[3], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[3], s, ARGV[1])
return 1
`

// listScript: KEYS[1] is the index, ARGV[1] the prefix of answer and votes
// keys and ARGV[2] how many. It returns, newest first, {answer fields,
// votes} pairs as flat arrays, read at one instant.
const listScript = `
local out = {}
for _, id in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  local a = redis.call('HGETALL', ARGV[1] .. 'answer:' .. id)
  local v = redis.call('HGETALL', ARGV[1] .. 'votes:' .. id)
  if #a > 0 and #v > 0 then
    table.insert(out, a)
    table.insert(out, v)
  end
end
return out
`

// Verify implements VerifiedAnswers.
func (r *Redis) Verify(ctx context.Context, v Verification) error {
	err := r.verify.Run(ctx, r.c, r.verifyKeys(v.Channel, v.TS),
		answerID(v.Channel, v.TS), v.Channel, v.TS, v.Question, v.SQL, v.Checksum, v.Source, v.User, ms(v.At)).Err()
	if err != nil {
		return fmt.Errorf("state: verify: %w", err)
	}
	return nil
}

// Unverify implements VerifiedAnswers.
func (r *Redis) Unverify(ctx context.Context, channel, ts, user string) (bool, error) {
	n, err := r.unverify.Run(ctx, r.c, r.verifyKeys(channel, ts), answerID(channel, ts), user).Int()
	if err != nil {
		return false, fmt.Errorf("state: unverify: %w", err)
	}
	return n == 1, nil
}

// ListVerified implements VerifiedAnswers.
func (r *Redis) ListVerified(ctx context.Context, n int) ([]Verified, error) {
	if n <= 0 {
		return nil, nil
	}
	res, err := r.list.Run(ctx, r.c, []string{r.key("verified", "index")},
		r.key("verified", ""), n).Slice()
	if err != nil {
		return nil, fmt.Errorf("state: list verified: %w", err)
	}
	var out []Verified
	for i := 0; i+1 < len(res); i += 2 {
		fields, votes := pairs(res[i]), pairs(res[i+1])
		a := Verified{Channel: fields["channel"], TS: fields["ts"], Question: fields["question"],
			SQL: fields["sql"], Checksum: fields["checksum"], Source: fields["source"]}
		for u, at := range votes {
			n, err := strconv.ParseInt(at, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("state: list verified: vote time %q: %w", at, err)
			}
			a.Votes = append(a.Votes, Vote{User: u, At: time.UnixMilli(n)})
		}
		sortVotes(&a)
		out = append(out, a)
	}
	sortNewestFirst(out)
	return out, nil
}

// pairs turns a flat array [k1, v1, k2, v2, …] from a script into a map.
func pairs(x any) map[string]string {
	m := map[string]string{}
	a, _ := x.([]any)
	for i := 0; i+1 < len(a); i += 2 {
		k, _ := a[i].(string)
		v, _ := a[i+1].(string)
		m[k] = v
	}
	return m
}

// SaveReport implements Reports.
func (r *Redis) SaveReport(ctx context.Context, key string, data []byte) error {
	at := time.Now()
	if r.now != nil {
		at = r.now()
	}
	if err := r.c.HSet(ctx, r.key("report", key), "at", ms(at), "data", data).Err(); err != nil {
		return fmt.Errorf("state: save report: %w", err)
	}
	return nil
}

// LatestReport implements Reports.
func (r *Redis) LatestReport(ctx context.Context, key string) (Report, bool, error) {
	vals, err := r.c.HMGet(ctx, r.key("report", key), "at", "data").Result()
	if err != nil {
		return Report{}, false, fmt.Errorf("state: read report: %w", err)
	}
	at, ok1 := vals[0].(string)
	data, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return Report{}, false, nil
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return Report{}, false, fmt.Errorf("state: read report: time %q: %w", at, err)
	}
	return Report{Data: []byte(data), At: time.UnixMilli(n)}, true, nil
}

// saveReportIfNewerScript sets the report hash KEYS[1] to time ARGV[1] and
// data ARGV[2] unless it holds a report at least as new.
const saveReportIfNewerScript = `
local cur = tonumber(redis.call('HGET', KEYS[1], 'at') or '-1')
if cur >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'at', ARGV[1], 'data', ARGV[2])
return 1
`

// saveReportIfNewer saves a report made at at, unless Redis holds a newer
// one under key; Failover uses it on Redis's return.
func (r *Redis) saveReportIfNewer(ctx context.Context, key string, data []byte, at time.Time) error {
	err := r.saveIfNewer.Run(ctx, r.c, []string{r.key("report", key)}, ms(at), data).Err()
	if err != nil {
		return fmt.Errorf("state: save report: %w", err)
	}
	return nil
}

// TryLock implements Locker.
func (r *Redis) TryLock(ctx context.Context, name string, ttl time.Duration) (string, bool, error) {
	if err := checkTTL("lock", ttl); err != nil {
		return "", false, err
	}
	token, err := newToken()
	if err != nil {
		return "", false, err
	}
	ok, err := r.c.SetNX(ctx, r.key("lock", name), token, ttl).Result()
	if err != nil {
		return "", false, fmt.Errorf("state: lock %s: %w", name, err)
	}
	if !ok {
		return "", false, nil
	}
	return token, true, nil
}

// unlockScript deletes KEYS[1] if it holds ARGV[1].
const unlockScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`

// extendScript sets KEYS[1] to expire in ARGV[2] ms if it holds ARGV[1].
const extendScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`

// Unlock implements Locker.
func (r *Redis) Unlock(ctx context.Context, name, token string) error {
	n, err := r.unlock.Run(ctx, r.c, []string{r.key("lock", name)}, token).Int()
	if err != nil {
		return fmt.Errorf("state: unlock %s: %w", name, err)
	}
	if n != 1 {
		return ErrNotHeld
	}
	return nil
}

// ExtendLock implements Locker.
func (r *Redis) ExtendLock(ctx context.Context, name, token string, ttl time.Duration) error {
	if err := checkTTL("extend lock", ttl); err != nil {
		return err
	}
	n, err := r.extend.Run(ctx, r.c, []string{r.key("lock", name)}, token, ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("state: extend lock %s: %w", name, err)
	}
	if n != 1 {
		return ErrNotHeld
	}
	return nil
}

// setClaims copies claims (key → time left) into Redis, each only if no one
// holds it there; Failover uses it on Redis's return.
func (r *Redis) setClaims(ctx context.Context, claims map[string]time.Duration) error {
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, left := range claims {
			p.SetNX(ctx, r.key("claim", k), 1, left)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: copy claims: %w", err)
	}
	return nil
}
