package bot

import (
	"sync"
	"time"

	"sqlbot/agent"
)

// Conversation memory: the bot's own earlier answers per thread, so that a
// follow-up ("and in July?") reaches the answerer with its context.
//
// Kept in memory rather than read back with conversations.replies: the bot
// only needs its own question/answer pairs (which it has), it saves an API
// call per question, and it needs no channels:history or groups:history
// scope, which would let the app read every message of every channel it is
// in. The price is that a restart forgets open threads; a follow-up then
// starts a fresh conversation, which is safe.
const (
	maxConversations    = 2000           // threads remembered at once; the least recently used go first
	threadTTL           = 24 * time.Hour // a thread idle this long is forgotten
	directConvTTL       = time.Hour      // a DM's top level is one conversation until idle this long
	directConvKeyPrefix = "dm:"
)

type conversation struct {
	turns   []agent.Turn
	expires time.Time
}

// memory maps a conversation key to its turns. It is safe for concurrent use.
type memory struct {
	now func() time.Time

	mu    sync.Mutex
	convs map[string]*conversation
}

func newMemory(now func() time.Time) *memory {
	return &memory{now: now, convs: make(map[string]*conversation)}
}

// history returns a copy of the turns of key (oldest first), or nil.
func (m *memory) history(key string) []agent.Turn {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.convs[key]
	if !ok {
		return nil
	}
	if m.now().After(c.expires) {
		delete(m.convs, key)
		return nil
	}
	return append([]agent.Turn(nil), c.turns...)
}

// add appends a turn to key's conversation, which stays for ttl from now.
func (m *memory) add(key string, t agent.Turn, ttl time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	c, ok := m.convs[key]
	if !ok || now.After(c.expires) {
		if len(m.convs) >= maxConversations {
			m.evict(now)
		}
		c = &conversation{}
		m.convs[key] = c
	}
	c.turns = append(c.turns, t)
	if len(c.turns) > agent.MaxHistoryTurns { // the agent sends no more than these
		c.turns = append([]agent.Turn(nil), c.turns[len(c.turns)-agent.MaxHistoryTurns:]...)
	}
	c.expires = now.Add(ttl)
}

// evict drops expired conversations, and if none had expired, the one that
// expires first (the least recently used among equal TTLs).
func (m *memory) evict(now time.Time) {
	var oldest string
	var oldestAt time.Time
	dropped := false
	for k, c := range m.convs {
		if now.After(c.expires) {
			delete(m.convs, k)
			dropped = true
			continue
		}
		if oldest == "" || c.expires.Before(oldestAt) {
			oldest, oldestAt = k, c.expires
		}
	}
	if !dropped && oldest != "" {
		delete(m.convs, oldest)
	}
}
