package bot

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"sqlbot/agent"
)

// clock is a settable time source for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestLimiterPerMinute(t *testing.T) {
	c := newClock()
	l := newLimiter(c.now, 6, 40, 600)
	for i := range 6 {
		if v := l.allow("U1"); v.Limit != limitNone {
			t.Fatalf("question %d: limited by %s, want accepted", i+1, v.Limit)
		}
		c.advance(3 * time.Second) // the 6th is at +15 s
	}
	// Now at +18 s: the first question (at +0) leaves the window at +60 s.
	v := l.allow("U1")
	if v.Limit != limitMinute || v.Count != 6 || v.Wait != 42*time.Second {
		t.Fatalf("7th question: %+v, want user_minute, 6, 42s", v)
	}
	if got := limitText(v); got != "You've asked 6 questions in the last minute; you can ask again in 42 s." {
		t.Errorf("limitText = %q", got)
	}
	if v := l.allow("U2"); v.Limit != limitNone {
		t.Errorf("another user limited by %s", v.Limit)
	}
	c.advance(41 * time.Second)
	if v := l.allow("U1"); v.Limit != limitMinute || v.Wait != time.Second {
		t.Errorf("at +59 s: %+v, want user_minute with 1s to wait", v)
	}
	c.advance(time.Second)
	if v := l.allow("U1"); v.Limit != limitNone {
		t.Errorf("at +60 s: limited by %s, want accepted (the first question left the window)", v.Limit)
	}
}

// A user over a limit is told once per window: until the wait that the
// notice named has passed, further refusals are silent.
func TestLimiterTellsOncePerWindow(t *testing.T) {
	c := newClock()
	l := newLimiter(c.now, 1, 40, 600)
	if v := l.allow("U1"); v.Limit != limitNone {
		t.Fatalf("first question limited by %s", v.Limit)
	}
	v := l.allow("U1")
	if v.Limit != limitMinute || !v.Tell {
		t.Fatalf("2nd question: %+v, want user_minute, to be told", v)
	}
	for i := range 5 {
		c.advance(10 * time.Second)
		if v := l.allow("U1"); v.Limit != limitMinute || v.Tell {
			t.Fatalf("at +%d0 s: %+v, want user_minute, silent (told already)", i+1, v)
		}
	}
	if v := l.allow("U2"); v.Limit != limitNone {
		t.Errorf("another user limited by %s", v.Limit)
	}
	c.advance(10 * time.Second) // +60 s: the window has passed
	if v := l.allow("U1"); v.Limit != limitNone {
		t.Fatalf("after the window: limited by %s", v.Limit)
	}
	if v := l.allow("U1"); v.Limit != limitMinute || !v.Tell {
		t.Errorf("over the limit in the next window: %+v, want to be told again", v)
	}
}

func TestLimiterPerDayAndGlobal(t *testing.T) {
	c := newClock()
	l := newLimiter(c.now, 6, 3, 5)
	for range 3 {
		if v := l.allow("U1"); v.Limit != limitNone {
			t.Fatalf("limited by %s", v.Limit)
		}
		c.advance(time.Hour)
	}
	v := l.allow("U1")
	if v.Limit != limitDay || v.Count != 3 || v.Wait != 21*time.Hour {
		t.Fatalf("4th question of the day: %+v, want user_day, 3, 21h", v)
	}
	if !strings.Contains(limitText(v), "in 21 h") {
		t.Errorf("limitText = %q, want the reset time", limitText(v))
	}
	l.allow("U2")
	l.allow("U3") // 5 accepted in all
	v = l.allow("U4")
	if v.Limit != limitGlobal || v.Count != 5 {
		t.Fatalf("6th question from everyone: %+v, want global_day", v)
	}
	// Refused questions are not counted: U1 comes back after the window.
	c.advance(21 * time.Hour)
	if v := l.allow("U1"); v.Limit != limitNone {
		t.Errorf("after 24 h: limited by %s", v.Limit)
	}
}

func TestLimiterForgetsIdleUsers(t *testing.T) {
	c := newClock()
	l := newLimiter(c.now, 6, 40, 600)
	for i := range 300 {
		l.allow(fmt.Sprintf("U%d", i))
	}
	c.advance(25 * time.Hour)
	for range 256 {
		l.allow("UNEW")
	}
	if n := len(l.users); n != 1 {
		t.Errorf("%d users remembered after a day, want 1", n)
	}
}

func TestWaitText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond:            "1 s",
		42 * time.Second:                  "42 s",
		41*time.Second + time.Millisecond: "42 s",
		90 * time.Second:                  "2 min",
		2 * time.Hour:                     "2 h",
		3*time.Hour + 11*time.Minute + 1:  "3 h 12 min",
	} {
		if got := waitText(d); got != want {
			t.Errorf("waitText(%v) = %q, want %q", d, got, want)
		}
	}
	if got := lengthText(10000, 500); !strings.Contains(got, "10,000 characters") || !strings.Contains(got, "500") {
		t.Errorf("length text = %q", got)
	}
}

func TestSeenSet(t *testing.T) {
	c := newClock()
	s := newSeenSet(c.now, time.Hour, 3)
	if !s.firstTime("a") || s.firstTime("a") {
		t.Fatal("a: want new, then seen")
	}
	s.firstTime("b")
	s.firstTime("c")
	s.firstTime("d") // a is forgotten: at most 3 kept
	if s.len() > 3 {
		t.Errorf("%d keys kept, want at most 3", s.len())
	}
	if s.firstTime("c") {
		t.Error("c forgotten too early")
	}
	if !s.firstTime("a") {
		t.Error("a remembered, want it forgotten: at most 3 keys are kept")
	}
	c.advance(time.Hour)
	if !s.firstTime("c") {
		t.Error("c remembered past its TTL")
	}
	if !s.firstTime("") || !s.firstTime("") {
		t.Error("the empty key is always new")
	}
}

func TestFIFO(t *testing.T) {
	f := newFIFO(2)
	granted := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	a, b, c, d, e := f.reserve(), f.reserve(), f.reserve(), f.reserve(), f.reserve()
	if !granted(a) || !granted(b) || granted(c) || f.queued() != 3 {
		t.Fatalf("want a and b granted and 3 queued, got queued=%d", f.queued())
	}
	f.cancel(d) // d leaves the line
	f.release() // a's slot goes to c, the next in line
	if !granted(c) || granted(e) {
		t.Fatal("release did not go to the first in line")
	}
	f.release()
	if !granted(e) || f.queued() != 0 {
		t.Fatal("e not granted after d left")
	}
	f.cancel(e) // a granted reservation given back is released
	f.release()
	f.release()
	if x, y := f.reserve(), f.reserve(); !granted(x) || !granted(y) {
		t.Error("slots not all free again")
	}
}

func TestMemory(t *testing.T) {
	c := newClock()
	m := newMemory(c.now)
	for i := range agent.MaxHistoryTurns + 3 {
		m.add("C1:1.0", agent.Turn{Question: fmt.Sprint(i)}, threadTTL)
	}
	h := m.history("C1:1.0")
	if len(h) != agent.MaxHistoryTurns || h[0].Question != "3" || h[len(h)-1].Question != fmt.Sprint(agent.MaxHistoryTurns+2) {
		t.Fatalf("history = %d turns from %q, want the last %d", len(h), h[0].Question, agent.MaxHistoryTurns)
	}
	h[0].Question = "changed"
	if m.history("C1:1.0")[0].Question == "changed" {
		t.Error("history returned the stored slice, not a copy")
	}
	if m.history("C2:1.0") != nil {
		t.Error("history of an unknown thread")
	}
	m.add("dm:D1", agent.Turn{Question: "q"}, directConvTTL)
	c.advance(directConvTTL + time.Second)
	if m.history("dm:D1") != nil {
		t.Error("a DM conversation outlived its TTL")
	}
	if m.history("C1:1.0") == nil {
		t.Error("a thread forgotten before its TTL")
	}
	for i := range maxConversations + 10 {
		m.add(fmt.Sprintf("C:%d", i), agent.Turn{}, threadTTL)
		c.advance(time.Millisecond)
	}
	if n := len(m.convs); n > maxConversations {
		t.Errorf("%d conversations kept, want at most %d", n, maxConversations)
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<@UBOT> how many orders?", "how many orders?"},
		{"<@UBOT>", ""},
		{"  <@UBOT>   \n ", ""},
		{"<@UBOT> orders with qty &gt; 5 &amp; price &lt; 10", "orders with qty > 5 & price < 10"},
		{"<@UBOT> what did <@U123|ann> buy in <#C1|sales>?", "what did @ann buy in #sales?"},
		{"<@UBOT> see <https://example.com/x|the sheet> and <https://a.example>", "see the sheet and https://a.example"},
		{"<!here> <@UBOT> <mailto:a@b.c|a@b.c>", "@here a@b.c"},
		{"hello <@UBOT> there", "hello there"},
		{"unclosed < bracket", "unclosed < bracket"},
	}
	for _, tt := range tests {
		if got := cleanText(tt.in, "UBOT"); got != tt.want {
			t.Errorf("cleanText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
