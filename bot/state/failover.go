package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

var _ Store = (*Failover)(nil)

// Defaults for FailoverOptions.
const (
	DefaultProbeInterval = 2 * time.Second
	DefaultCallTimeout   = time.Second
	DefaultMaxPending    = 10000
)

// FailoverOptions are NewFailover's settings. The zero value is usable.
type FailoverOptions struct {
	// Probe is how often Redis is pinged, to notice that it went away while
	// nobody called, and that it came back (DefaultProbeInterval if zero).
	Probe time.Duration
	// CallTimeout bounds each call to Redis, its retries included
	// (DefaultCallTimeout if zero). Past it the call is answered locally.
	CallTimeout time.Duration
	// Now is the clock of the per-process store (time.Now if nil).
	Now func() time.Time
	// MaxPending bounds the writes kept for Redis's return (see Failover);
	// past it the oldest are dropped (DefaultMaxPending if zero).
	MaxPending int
}

// A Health is a Failover's status, for /healthz and a gauge.
type Health struct {
	OK     bool      // answering from Redis
	Reason string    // why not, when !OK (the last Redis error)
	Since  time.Time // when the status began
}

// Failover is a Store that answers from Redis while Redis answers, and from
// a per-process Memory while it does not: when a call fails because Redis is
// unreachable (refused, timed out, loading, read-only), that call and every
// later one go to the Memory until a background probe finds Redis back.
// Meanwhile limits, de-duplication, thread memory, the cache and the lock
// hold per process only, and each transition is logged once.
//
// What is written while degraded stays in this process, with two
// exceptions, replayed into Redis before shared state resumes: claims not
// yet expired (so that an event answered here is not answered again by
// another replica), and verified answers and reports (so that nothing a
// person did is lost). Accepted questions, thread turns, cache entries and
// locks taken while degraded are not copied: after the return a follow-up
// may start a fresh conversation, and users may have had up to the per-
// replica limit on each replica.
type Failover struct {
	r     *Redis
	local *Memory
	log   *slog.Logger
	now   func() time.Time
	probe time.Duration
	call  time.Duration
	max   int

	mu      sync.Mutex
	health  Health
	pending []replay // writes to copy into Redis on its return, oldest first
	dropped int      // pending writes dropped since the last return

	cancel context.CancelFunc
	done   chan struct{}
}

// A replay writes into Redis what was written locally while it was away.
type replay func(ctx context.Context, r *Redis, now time.Time) error

// NewFailover returns a Failover over r that logs to lg. It pings r once
// (bounded by the call timeout) to set its first Health, and probes r in the
// background until ctx is done or Close is called. Close closes r.
func NewFailover(ctx context.Context, r *Redis, lg *slog.Logger, opt FailoverOptions) *Failover {
	f := &Failover{r: r, log: lg, now: opt.Now, probe: opt.Probe, call: opt.CallTimeout, max: opt.MaxPending,
		done: make(chan struct{})}
	if f.now == nil {
		f.now = time.Now
	}
	if f.probe <= 0 {
		f.probe = DefaultProbeInterval
	}
	if f.call <= 0 {
		f.call = DefaultCallTimeout
	}
	if f.max <= 0 {
		f.max = DefaultMaxPending
	}
	f.local = NewMemory(f.now)
	f.health = Health{OK: true, Since: f.now()}
	pctx, cancel := context.WithTimeout(ctx, f.call)
	if err := r.Ping(pctx); err != nil {
		f.degrade(err)
	}
	cancel()
	ctx, f.cancel = context.WithCancel(ctx)
	go f.loop(ctx)
	return f
}

// Health returns the current status.
func (f *Failover) Health() Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.health
}

// Close stops the probe and closes Redis.
func (f *Failover) Close() error {
	f.cancel()
	<-f.done
	return f.r.Close()
}

// loop probes Redis every f.probe until ctx is done.
func (f *Failover) loop(ctx context.Context) {
	defer close(f.done)
	t := time.NewTicker(f.probe)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, f.call)
		err := f.r.Ping(pctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && unavailable(err):
			f.degrade(err)
		case err == nil && !f.Health().OK:
			f.restore(ctx)
		}
	}
}

// unavailable reports whether err means Redis cannot serve now: the
// network failed or timed out, or the server said it cannot serve (loading,
// read-only, out of memory, …). A bad request, or a lock not held, is not
// unavailability, and a local answer would only hide it.
func unavailable(err error) bool {
	var ne net.Error
	switch {
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted):
		return true
	}
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil) &&
		(redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsMasterDownError(err) ||
			redis.IsClusterDownError(err) || redis.IsTryAgainError(err) || redis.IsMaxClientsError(err) ||
			redis.IsOOMError(err) || redis.IsAuthError(err))
}

// degrade switches to local state because of err, logging the switch once.
func (f *Failover) degrade(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.health.OK {
		return
	}
	f.health = Health{Reason: err.Error(), Since: f.now()}
	f.log.Warn("state: redis unavailable; answering from per-process state (limits and de-duplication per replica)",
		"reason", f.health.Reason)
}

// restore copies the pending writes into Redis and then switches back to
// shared state, logging the switch once. If Redis fails meanwhile it stays
// degraded and keeps what is left for the next probe.
func (f *Failover) restore(ctx context.Context) {
	replayed := 0
	for {
		f.mu.Lock()
		batch := f.pending
		f.pending = nil
		if len(batch) == 0 {
			// No local write can slip in between: degraded writes queue
			// under f.mu, and from here on calls go to Redis.
			now := f.now()
			degradedFor := now.Sub(f.health.Since).Round(time.Millisecond)
			f.health = Health{OK: true, Since: now}
			dropped := f.dropped
			f.dropped = 0
			f.mu.Unlock()
			f.log.Info("state: redis is back; shared state resumed",
				"degraded_for", degradedFor, "replayed", replayed, "dropped", dropped)
			return
		}
		f.mu.Unlock()
		for i, op := range batch {
			cctx, cancel := context.WithTimeout(ctx, f.call)
			err := op(cctx, f.r, f.now())
			cancel()
			if err != nil && unavailable(err) {
				f.mu.Lock()
				f.pending = append(batch[i:], f.pending...)
				f.mu.Unlock()
				return
			}
			if err != nil {
				f.log.Error("state: a write made while redis was away could not be copied to it", "err", err)
			}
			replayed++
		}
	}
}

// queue adds op to the pending writes, dropping the oldest past the bound;
// f.mu is held.
func (f *Failover) queue(op replay) {
	if len(f.pending) >= f.max {
		f.pending = f.pending[1:]
		f.dropped++
	}
	f.pending = append(f.pending, op)
}

// shared runs fn on Redis, bounded by the call timeout, unless degraded. It
// returns handled=false when the caller should answer locally: degraded, or
// Redis just failed (which degrades). An error other than unavailability,
// or the caller's own cancellation, is returned as is.
func (f *Failover) shared(ctx context.Context, fn func(ctx context.Context) error) (handled bool, err error) {
	if !f.Health().OK {
		return false, nil
	}
	cctx, cancel := context.WithTimeout(ctx, f.call)
	err = fn(cctx)
	cancel()
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return true, ctx.Err()
	case unavailable(err):
		f.degrade(err)
		return false, nil
	}
	return true, err
}

// sharedDurable is shared for writes that must reach Redis eventually: when
// answered locally, local runs and op is queued for Redis's return, both
// under f.mu so that restore cannot miss it.
func (f *Failover) sharedDurable(ctx context.Context, fn func(ctx context.Context) error, local func() error, op replay) error {
	for {
		handled, err := f.shared(ctx, fn)
		if handled {
			return err
		}
		if f.lockDegraded() {
			break
		}
	}
	defer f.mu.Unlock()
	if err := local(); err != nil {
		return err
	}
	f.queue(op)
	return nil
}

// lockDegraded locks f.mu and returns true if f is degraded; if Redis came
// back since the caller looked, it returns false with f.mu unlocked, and
// the caller should go to Redis: a write queued now would wait for the next
// outage to be replayed.
func (f *Failover) lockDegraded() bool {
	f.mu.Lock()
	if f.health.OK {
		f.mu.Unlock()
		return false
	}
	return true
}

// Claim implements Claimer.
func (f *Failover) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	var first bool
	for {
		handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
			first, err = f.r.Claim(ctx, key, ttl)
			return err
		})
		if handled {
			return first, err
		}
		if f.lockDegraded() {
			break
		}
	}
	defer f.mu.Unlock()
	first, err := f.local.Claim(ctx, key, ttl)
	if first && err == nil && key != "" {
		expires := f.now().Add(ttl)
		f.queue(func(ctx context.Context, r *Redis, now time.Time) error {
			if left := expires.Sub(now); left > 0 {
				return r.setClaims(ctx, map[string]time.Duration{key: left})
			}
			return nil
		})
	}
	return first, err
}

// Allow implements Limiter.
func (f *Failover) Allow(ctx context.Context, user string, l Limits) (Verdict, error) {
	var v Verdict
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		v, err = f.r.Allow(ctx, user, l)
		return err
	})
	if handled {
		return v, err
	}
	return f.local.Allow(ctx, user, l)
}

// Take implements Taker: by Redis in one call, or, when Redis is away (or
// fails during the call), with Claim and Allow, each answered by Redis or
// locally as it goes.
func (f *Failover) Take(ctx context.Context, key string, ttl time.Duration, user string, l Limits) (bool, Verdict, error) {
	var first bool
	var v Verdict
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		first, v, err = f.r.Take(ctx, key, ttl, user, l)
		return err
	})
	if handled {
		return first, v, err
	}
	return claimThenAllow(ctx, f, key, ttl, user, l)
}

// Turns implements Threads.
func (f *Failover) Turns(ctx context.Context, conv string) ([]Turn, error) {
	var turns []Turn
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		turns, err = f.r.Turns(ctx, conv)
		return err
	})
	if handled {
		return turns, err
	}
	return f.local.Turns(ctx, conv)
}

// AddTurn implements Threads.
func (f *Failover) AddTurn(ctx context.Context, conv string, t Turn, keep int, ttl time.Duration) error {
	handled, err := f.shared(ctx, func(ctx context.Context) error { return f.r.AddTurn(ctx, conv, t, keep, ttl) })
	if handled {
		return err
	}
	return f.local.AddTurn(ctx, conv, t, keep, ttl)
}

// Cached implements Cache.
func (f *Failover) Cached(ctx context.Context, key string) ([]byte, bool, error) {
	var val []byte
	var ok bool
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		val, ok, err = f.r.Cached(ctx, key)
		return err
	})
	if handled {
		return val, ok, err
	}
	return f.local.Cached(ctx, key)
}

// SetCached implements Cache.
func (f *Failover) SetCached(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	handled, err := f.shared(ctx, func(ctx context.Context) error { return f.r.SetCached(ctx, key, val, ttl) })
	if handled {
		return err
	}
	return f.local.SetCached(ctx, key, val, ttl)
}

// Verify implements VerifiedAnswers.
func (f *Failover) Verify(ctx context.Context, v Verification) error {
	return f.sharedDurable(ctx,
		func(ctx context.Context) error { return f.r.Verify(ctx, v) },
		func() error { return f.local.Verify(ctx, v) },
		func(ctx context.Context, r *Redis, _ time.Time) error { return r.Verify(ctx, v) })
}

// Unverify implements VerifiedAnswers. While degraded it answers from what
// this process knows, and the removal reaches Redis on its return.
func (f *Failover) Unverify(ctx context.Context, channel, ts, user string) (bool, error) {
	var still bool
	err := f.sharedDurable(ctx,
		func(ctx context.Context) (err error) {
			still, err = f.r.Unverify(ctx, channel, ts, user)
			return err
		},
		func() (err error) {
			still, err = f.local.Unverify(ctx, channel, ts, user)
			return err
		},
		func(ctx context.Context, r *Redis, _ time.Time) error {
			_, err := r.Unverify(ctx, channel, ts, user)
			return err
		})
	return still, err
}

// ListVerified implements VerifiedAnswers. While degraded it lists only the
// answers verified in this process since it started.
func (f *Failover) ListVerified(ctx context.Context, n int) ([]Verified, error) {
	var out []Verified
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		out, err = f.r.ListVerified(ctx, n)
		return err
	})
	if handled {
		return out, err
	}
	return f.local.ListVerified(ctx, n)
}

// SaveReport implements Reports. A report saved while degraded reaches Redis
// on its return unless another replica saved a newer one meanwhile.
func (f *Failover) SaveReport(ctx context.Context, key string, data []byte) error {
	at := f.now()
	return f.sharedDurable(ctx,
		func(ctx context.Context) error { return f.r.SaveReport(ctx, key, data) },
		func() error { return f.local.SaveReport(ctx, key, data) },
		func(ctx context.Context, r *Redis, _ time.Time) error { return r.saveReportIfNewer(ctx, key, data, at) })
}

// LatestReport implements Reports.
func (f *Failover) LatestReport(ctx context.Context, key string) (Report, bool, error) {
	var rep Report
	var ok bool
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		rep, ok, err = f.r.LatestReport(ctx, key)
		return err
	})
	if handled {
		return rep, ok, err
	}
	return f.local.LatestReport(ctx, key)
}

// TryLock implements Locker. While degraded the lock is per process.
func (f *Failover) TryLock(ctx context.Context, name string, ttl time.Duration) (string, bool, error) {
	var token string
	var ok bool
	handled, err := f.shared(ctx, func(ctx context.Context) (err error) {
		token, ok, err = f.r.TryLock(ctx, name, ttl)
		return err
	})
	if handled {
		return token, ok, err
	}
	return f.local.TryLock(ctx, name, ttl)
}

// Unlock implements Locker. A lock taken while degraded is released here
// whether or not Redis has come back.
func (f *Failover) Unlock(ctx context.Context, name, token string) error {
	handled, err := f.shared(ctx, func(ctx context.Context) error { return f.r.Unlock(ctx, name, token) })
	if handled && !errors.Is(err, ErrNotHeld) {
		return err
	}
	return f.local.Unlock(ctx, name, token)
}

// ExtendLock implements Locker, for locks taken from Redis or, while it was
// away, locally.
func (f *Failover) ExtendLock(ctx context.Context, name, token string, ttl time.Duration) error {
	handled, err := f.shared(ctx, func(ctx context.Context) error { return f.r.ExtendLock(ctx, name, token, ttl) })
	if handled && !errors.Is(err, ErrNotHeld) {
		return err
	}
	return f.local.ExtendLock(ctx, name, token, ttl)
}

// String describes h for logs and /healthz.
func (h Health) String() string {
	if h.OK {
		return fmt.Sprintf("ok since %s", h.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("degraded since %s: %s", h.Since.Format(time.RFC3339), h.Reason)
}
