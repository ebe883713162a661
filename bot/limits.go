package bot

import (
	"fmt"
	"sync"
	"time"

	"sqlbot/agent/present"
)

// A limit names the rule that turned a question away. Its values are the
// label of sqlbot_rate_limited_total.
type limit string

const (
	limitNone   limit = ""
	limitMinute limit = "user_minute" // RatePerMinute questions per user in any 60 s
	limitDay    limit = "user_day"    // RatePerDay questions per user in any 24 h
	limitGlobal limit = "global_day"  // GlobalPerDay questions across all users in any 24 h
	limitLength limit = "length"      // MaxQuestionChars characters per question
)

const day = 24 * time.Hour

// A limiter counts accepted questions in sliding windows, so that it can say
// exactly when a limit resets. It keeps at most one timestamp per question
// accepted in the last 24 h, which the global limit bounds, and per user
// turned away, until when they know it. Every limit is positive. It is safe
// for concurrent use.
type limiter struct {
	now                         func() time.Time
	perMinute, perDay, perGlobe int

	mu     sync.Mutex
	users  map[string][]time.Time // accepted questions per user, oldest first, within 24 h
	global []time.Time            // accepted questions, oldest first, within 24 h
	told   map[string]time.Time   // per user turned away: the end of the wait they were told
	calls  int                    // allow calls since the last sweep of idle users
}

func newLimiter(now func() time.Time, perMinute, perDay, global int) *limiter {
	return &limiter{now: now, perMinute: perMinute, perDay: perDay, perGlobe: global,
		users: make(map[string][]time.Time), told: make(map[string]time.Time)}
}

// A verdict is the limiter's answer for one question.
type verdict struct {
	Limit limit         // limitNone: accepted (and counted)
	Count int           // the limit's number, for the message
	Wait  time.Duration // until the question would be accepted
	// Tell is set on the first refusal of a user within a wait: the user
	// should be told once, and not again until that wait is over.
	Tell bool
}

// allow counts a question from user if no limit stops it, and otherwise says
// which limit did, for how long, and whether to tell the user. A refused
// question is not counted.
func (l *limiter) allow(user string) verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.calls++
	if l.calls%256 == 0 {
		l.sweep(now)
	}
	times := trim(l.users[user], now.Add(-day))
	l.global = trim(l.global, now.Add(-day))
	recent := times[firstAfter(times, now.Add(-time.Minute)):]
	var v verdict
	switch {
	case len(recent) >= l.perMinute:
		v = verdict{Limit: limitMinute, Count: l.perMinute, Wait: recent[len(recent)-l.perMinute].Add(time.Minute).Sub(now)}
	case len(times) >= l.perDay:
		v = verdict{Limit: limitDay, Count: l.perDay, Wait: times[len(times)-l.perDay].Add(day).Sub(now)}
	case len(l.global) >= l.perGlobe:
		v = verdict{Limit: limitGlobal, Count: l.perGlobe, Wait: l.global[len(l.global)-l.perGlobe].Add(day).Sub(now)}
	default:
		l.users[user] = append(times, now)
		l.global = append(l.global, now)
		return verdict{}
	}
	if until, ok := l.told[user]; !ok || !now.Before(until) {
		l.told[user] = now.Add(v.Wait)
		v.Tell = true
	}
	return v
}

// sweep forgets users with nothing in the last 24 h, and refusals whose
// wait is over.
func (l *limiter) sweep(now time.Time) {
	for u, times := range l.users {
		if times = trim(times, now.Add(-day)); len(times) == 0 {
			delete(l.users, u)
		} else {
			l.users[u] = times
		}
	}
	for u, until := range l.told {
		if !now.Before(until) {
			delete(l.told, u)
		}
	}
}

// trim drops the times at or before cutoff; the rest are kept in order.
func trim(times []time.Time, cutoff time.Time) []time.Time {
	i := firstAfter(times, cutoff)
	if i == 0 {
		return times
	}
	return append(times[:0:0], times[i:]...)
}

// firstAfter is the index of the first time after cutoff (times is sorted).
func firstAfter(times []time.Time, cutoff time.Time) int {
	for i, t := range times {
		if t.After(cutoff) {
			return i
		}
	}
	return len(times)
}

// lengthText is the polite reply for a question longer than maxChars.
func lengthText(chars, maxChars int) string {
	return fmt.Sprintf("Your question is %s characters long; I can take up to %s. Could you ask it more briefly?",
		present.Thousands(chars), present.Thousands(maxChars))
}

// limitText is the polite reply for a question that a rate limit turned away.
func limitText(v verdict) string {
	switch v.Limit {
	case limitMinute:
		return fmt.Sprintf("You've asked %d questions in the last minute; you can ask again in %s.", v.Count, waitText(v.Wait))
	case limitDay:
		return fmt.Sprintf("You've asked %d questions in the last 24 hours, which is the daily limit; you can ask again in %s.", v.Count, waitText(v.Wait))
	case limitGlobal:
		return fmt.Sprintf("I've taken %d questions from everyone in the last 24 hours, which is my daily limit; I can take new ones again in %s.", v.Count, waitText(v.Wait))
	}
	return ""
}

// waitText is "42 s", "3 min", "2 h 5 min", always rounded up so that a user
// who waits that long is accepted.
func waitText(d time.Duration) string {
	switch {
	case d <= time.Second:
		return "1 s"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int((d+time.Minute-1)/time.Minute))
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}
