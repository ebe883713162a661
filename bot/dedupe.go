package bot

import (
	"sync"
	"time"
)

// A seenSet remembers keys (event ids, message timestamps) for ttl, and at
// most size of them, forgetting the oldest first. It is safe for concurrent use.
type seenSet struct {
	now  func() time.Time
	ttl  time.Duration
	size int

	mu    sync.Mutex
	at    map[string]time.Time
	order []string // keys in insertion order; the front is the oldest
}

func newSeenSet(now func() time.Time, ttl time.Duration, size int) *seenSet {
	return &seenSet{now: now, ttl: ttl, size: size, at: make(map[string]time.Time)}
}

// firstTime records key and reports whether it was new. An empty key is
// always new (and not recorded).
func (s *seenSet) firstTime(key string) bool {
	if key == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for len(s.order) > 0 {
		k := s.order[0]
		if len(s.order) < s.size && now.Sub(s.at[k]) < s.ttl {
			break
		}
		delete(s.at, k)
		s.order[0] = ""
		s.order = s.order[1:]
	}
	if _, ok := s.at[key]; ok {
		return false
	}
	s.at[key] = now
	s.order = append(s.order, key)
	return true
}

// len is the number of keys remembered.
func (s *seenSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}
