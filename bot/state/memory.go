package state

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

var _ Store = (*Memory)(nil)

// Memory is a Store in the process: for tests, for one replica that need not
// survive a restart, and for Failover while Redis is away. It keeps each item
// until it expires (expired items are swept every few hundred writes), and
// verified answers and reports until the process ends. It keeps no more than
// 2,048 claims, 1,024 threads and 1,024 cache entries: past that, those that
// expire first are forgotten first, so that a process answering many
// questions within their TTLs does not grow without bound. A limit window
// holds no more times than the largest limit reads.
type Memory struct {
	now func() time.Time

	mu       sync.Mutex
	writes   int                  // calls that may write since the last sweep
	claims   map[string]int64     // key → expiry (Unix ms)
	users    map[string][]int64   // user → accepted questions within 24 h, oldest first
	global   []int64              // accepted questions within 24 h, oldest first
	told     map[string]int64     // user → end of the wait they were told
	threads  map[string]*thread   // conversation → turns
	cache    map[string]cacheItem // key → value
	verified map[string]*Verified // channel+"\x00"+ts → answer
	reports  map[string]Report
	locks    map[string]lockItem
}

type thread struct {
	turns   []Turn
	expires int64
}

type cacheItem struct {
	val     []byte
	expires int64
}

type lockItem struct {
	token   string
	expires int64
}

// sweepEvery is how many writes pass between sweeps of expired items.
const sweepEvery = 256

// The most items of each kind a Memory keeps. A claim only has to outlive
// Slack's redeliveries (the last about five minutes after the event): 2,048
// cover them at seven messages a second. A thread or an answer record
// forgotten early costs a follow-up its context, or a ✅ on an old answer
// its effect (Redis or the state file keep them for their whole TTL).
const (
	maxClaims  = 2048
	maxThreads = 1024
	maxCached  = 1024
)

// bound forgets the items of m that expire first, a quarter of max at a
// time, once m holds more than max; so a write pays for the sort of the
// expiries only once in max/4 writes.
func bound[V any](m map[string]V, max int, expires func(V) int64) {
	if len(m) <= max {
		return
	}
	type item struct {
		key string
		exp int64
	}
	all := make([]item, 0, len(m))
	for k, v := range m {
		all = append(all, item{k, expires(v)})
	}
	slices.SortFunc(all, func(a, b item) int { return cmp.Compare(a.exp, b.exp) })
	for _, it := range all[:len(m)-max*3/4] {
		delete(m, it.key)
	}
}

// keepLast returns the last n of times (all of them if fewer; none if n <= 0).
func keepLast(times []int64, n int) []int64 {
	if n <= 0 {
		return nil
	}
	if len(times) > n {
		return append([]int64(nil), times[len(times)-n:]...)
	}
	return times
}

// NewMemory returns an empty Memory whose clock is now (time.Now if nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now,
		claims: map[string]int64{}, users: map[string][]int64{}, told: map[string]int64{},
		threads: map[string]*thread{}, cache: map[string]cacheItem{}, verified: map[string]*Verified{},
		reports: map[string]Report{}, locks: map[string]lockItem{}}
}

// wrote counts a call that may write, and sweeps when it is time; m.mu is
// held.
func (m *Memory) wrote(now int64) {
	m.writes++
	if m.writes < sweepEvery {
		return
	}
	m.writes = 0
	for k, exp := range m.claims {
		if now >= exp {
			delete(m.claims, k)
		}
	}
	for u, times := range m.users {
		if times = after(times, now-dayMS); len(times) == 0 {
			delete(m.users, u)
		} else {
			m.users[u] = times
		}
	}
	m.global = after(m.global, now-dayMS)
	for u, until := range m.told {
		if now >= until {
			delete(m.told, u)
		}
	}
	for k, t := range m.threads {
		if now >= t.expires {
			delete(m.threads, k)
		}
	}
	for k, c := range m.cache {
		if now >= c.expires {
			delete(m.cache, k)
		}
	}
	for k, l := range m.locks {
		if now >= l.expires {
			delete(m.locks, k)
		}
	}
}

// Claim implements Claimer.
func (m *Memory) Claim(_ context.Context, key string, ttl time.Duration) (bool, error) {
	if err := checkTTL("claim", ttl); err != nil {
		return false, err
	}
	if key == "" {
		return true, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	m.wrote(now)
	if exp, ok := m.claims[key]; ok && now < exp {
		return false, nil
	}
	m.claims[key] = now + ttl.Milliseconds()
	bound(m.claims, maxClaims, func(exp int64) int64 { return exp })
	return true, nil
}

// Take implements Taker.
func (m *Memory) Take(ctx context.Context, key string, ttl time.Duration, user string, l Limits) (bool, Verdict, error) {
	return claimThenAllow(ctx, m, key, ttl, user, l)
}

// liveClaims returns the claims that have not expired, with the time each
// has left.
func (m *Memory) liveClaims() map[string]time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	out := make(map[string]time.Duration)
	for k, exp := range m.claims {
		if now < exp {
			out[k] = time.Duration(exp-now) * time.Millisecond
		}
	}
	return out
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, user string, l Limits) (Verdict, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	m.wrote(now)
	times := after(m.users[user], now-dayMS)
	m.global = after(m.global, now-dayMS)
	recent := times[firstAfter(times, now-minuteMS):]
	var v Verdict
	switch {
	case l.PerMinute > 0 && len(recent) >= l.PerMinute:
		v = Verdict{Rule: RuleUserMinute, Count: l.PerMinute, Wait: msDur(recent[len(recent)-l.PerMinute] + minuteMS - now)}
	case l.PerDay > 0 && len(times) >= l.PerDay:
		v = Verdict{Rule: RuleUserDay, Count: l.PerDay, Wait: msDur(times[len(times)-l.PerDay] + dayMS - now)}
	case l.GlobalPerDay > 0 && len(m.global) >= l.GlobalPerDay:
		v = Verdict{Rule: RuleGlobalDay, Count: l.GlobalPerDay, Wait: msDur(m.global[len(m.global)-l.GlobalPerDay] + dayMS - now)}
	default:
		if l.on() {
			// A verdict reads only the last PerMinute, PerDay and
			// GlobalPerDay times, so no more are kept.
			if kept := keepLast(append(times, now), max(l.PerMinute, l.PerDay)); len(kept) > 0 {
				m.users[user] = kept
			} else {
				delete(m.users, user)
			}
			m.global = keepLast(append(m.global, now), l.GlobalPerDay)
		}
		return Verdict{}, nil
	}
	if len(times) == 0 {
		delete(m.users, user)
	} else {
		m.users[user] = times
	}
	if until, ok := m.told[user]; !ok || now >= until {
		m.told[user] = now + v.Wait.Milliseconds()
		v.Tell = true
	}
	return v, nil
}

// after returns the times after cutoff (times is sorted), in a new slice
// when some were dropped.
func after(times []int64, cutoff int64) []int64 {
	i := firstAfter(times, cutoff)
	if i == 0 {
		return times
	}
	return append([]int64(nil), times[i:]...)
}

// firstAfter is the index of the first time after cutoff (times is sorted).
func firstAfter(times []int64, cutoff int64) int {
	i, _ := slices.BinarySearch(times, cutoff+1)
	return i
}

func msDur(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// Turns implements Threads.
func (m *Memory) Turns(_ context.Context, conv string) ([]Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[conv]
	if !ok || ms(m.now()) >= t.expires {
		return nil, nil
	}
	return slices.Clone(t.turns), nil
}

// AddTurn implements Threads.
func (m *Memory) AddTurn(_ context.Context, conv string, turn Turn, keep int, ttl time.Duration) error {
	if err := checkKeep(keep); err != nil {
		return err
	}
	if err := checkTTL("add turn", ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	t, ok := m.threads[conv]
	if !ok || now >= t.expires {
		t = &thread{}
		m.threads[conv] = t
	}
	t.turns = append(t.turns, turn)
	if len(t.turns) > keep {
		t.turns = slices.Clone(t.turns[len(t.turns)-keep:])
	}
	t.expires = now + ttl.Milliseconds()
	bound(m.threads, maxThreads, func(t *thread) int64 { return t.expires })
	m.wrote(now)
	return nil
}

// Cached implements Cache.
func (m *Memory) Cached(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cache[key]
	if !ok || ms(m.now()) >= c.expires {
		return nil, false, nil
	}
	return slices.Clone(c.val), true, nil
}

// SetCached implements Cache.
func (m *Memory) SetCached(_ context.Context, key string, val []byte, ttl time.Duration) error {
	if err := checkTTL("set cached", ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	m.cache[key] = cacheItem{val: slices.Clone(val), expires: now + ttl.Milliseconds()}
	bound(m.cache, maxCached, func(c cacheItem) int64 { return c.expires })
	m.wrote(now)
	return nil
}

// Verify implements VerifiedAnswers.
func (m *Memory) Verify(_ context.Context, v Verification) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := v.Channel + "\x00" + v.TS
	a, ok := m.verified[k]
	if !ok {
		a = &Verified{Channel: v.Channel, TS: v.TS, Question: v.Question, SQL: v.SQL, Checksum: v.Checksum, Source: v.Source}
		m.verified[k] = a
	}
	if slices.ContainsFunc(a.Votes, func(x Vote) bool { return x.User == v.User }) {
		return nil
	}
	a.Votes = append(a.Votes, Vote{User: v.User, At: time.UnixMilli(ms(v.At))})
	sortVotes(a)
	return nil
}

// sortVotes orders a's votes oldest first and sets Since.
func sortVotes(a *Verified) {
	slices.SortStableFunc(a.Votes, func(x, y Vote) int { return x.At.Compare(y.At) })
	a.Since = a.Votes[0].At
}

// Unverify implements VerifiedAnswers.
func (m *Memory) Unverify(_ context.Context, channel, ts, user string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := channel + "\x00" + ts
	a, ok := m.verified[k]
	if !ok {
		return false, nil
	}
	a.Votes = slices.DeleteFunc(a.Votes, func(x Vote) bool { return x.User == user })
	if len(a.Votes) == 0 {
		delete(m.verified, k)
		return false, nil
	}
	sortVotes(a)
	return true, nil
}

// ListVerified implements VerifiedAnswers.
func (m *Memory) ListVerified(_ context.Context, n int) ([]Verified, error) {
	if n <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	all := make([]Verified, 0, len(m.verified))
	for _, a := range m.verified {
		c := *a
		c.Votes = slices.Clone(a.Votes)
		all = append(all, c)
	}
	m.mu.Unlock()
	sortNewestFirst(all)
	return all[:min(n, len(all))], nil
}

// sortNewestFirst orders answers by Since, newest first, then by channel
// and ts so that the order is the same on every backend.
func sortNewestFirst(all []Verified) {
	slices.SortFunc(all, func(x, y Verified) int {
		if c := y.Since.Compare(x.Since); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(y.Channel, x.Channel), cmp.Compare(y.TS, x.TS))
	})
}

// SaveReport implements Reports.
func (m *Memory) SaveReport(_ context.Context, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reports[key] = Report{Data: slices.Clone(data), At: time.UnixMilli(ms(m.now()))}
	return nil
}

// LatestReport implements Reports.
func (m *Memory) LatestReport(_ context.Context, key string) (Report, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reports[key]
	r.Data = slices.Clone(r.Data)
	return r, ok, nil
}

// TryLock implements Locker.
func (m *Memory) TryLock(_ context.Context, name string, ttl time.Duration) (string, bool, error) {
	if err := checkTTL("lock", ttl); err != nil {
		return "", false, err
	}
	token, err := newToken()
	if err != nil {
		return "", false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	m.wrote(now)
	if l, ok := m.locks[name]; ok && now < l.expires {
		return "", false, nil
	}
	m.locks[name] = lockItem{token: token, expires: now + ttl.Milliseconds()}
	return token, true, nil
}

// Unlock implements Locker.
func (m *Memory) Unlock(_ context.Context, name, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[name]
	if !ok || l.token != token || ms(m.now()) >= l.expires {
		return ErrNotHeld
	}
	delete(m.locks, name)
	return nil
}

// ExtendLock implements Locker.
func (m *Memory) ExtendLock(_ context.Context, name, token string, ttl time.Duration) error {
	if err := checkTTL("extend lock", ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := ms(m.now())
	l, ok := m.locks[name]
	if !ok || l.token != token || now >= l.expires {
		return ErrNotHeld
	}
	m.locks[name] = lockItem{token: token, expires: now + ttl.Milliseconds()}
	return nil
}

// Close implements Store; a Memory has nothing to release.
func (m *Memory) Close() error { return nil }
