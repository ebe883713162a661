package bot

import (
	"strings"
	"testing"
	"time"

	"sqlbot/bot/state"
)

// The limits' mechanics (windows, waits, telling once) are bot/state's
// contract, tested there on every Store; here, what a person reads.
func TestLimitText(t *testing.T) {
	for _, tt := range []struct {
		v    state.Verdict
		want string
	}{
		{state.Verdict{Rule: state.RuleUserMinute, Count: 6, Wait: 42 * time.Second},
			"You've asked 6 questions in the last minute; you can ask again in 42 s."},
		{state.Verdict{Rule: state.RuleUserDay, Count: 3, Wait: 21 * time.Hour},
			"You've asked 3 questions in the last 24 hours, which is the daily limit; you can ask again in 21 h."},
		{state.Verdict{Rule: state.RuleUserMinute, Count: 1, Wait: 5 * time.Second},
			"You've asked 1 question in the last minute; you can ask again in 5 s."},
		{state.Verdict{Rule: state.RuleGlobalDay, Count: 600, Wait: 90 * time.Second},
			"I've taken 600 questions from everyone in the last 24 hours, which is my daily limit; I can take new ones again in 2 min."},
	} {
		if got := LimitText(tt.v); got != tt.want {
			t.Errorf("LimitText(%+v) = %q, want %q", tt.v, got, tt.want)
		}
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
	if got := LengthText(10000, 500); !strings.Contains(got, "10,000 characters") || !strings.Contains(got, "500") {
		t.Errorf("length text = %q", got)
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
