package cache_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/agent/cache"
)

// mapStore is a Store in a map; fail makes every call fail.
type mapStore struct {
	mu   sync.Mutex
	m    map[string][]byte
	ttls []time.Duration
	fail bool
}

func newMapStore() *mapStore { return &mapStore{m: map[string][]byte{}} }

func (s *mapStore) Cached(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return nil, false, errors.New("store down")
	}
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *mapStore) SetCached(_ context.Context, key string, val []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("store down")
	}
	s.m[key] = val
	s.ttls = append(s.ttls, ttl)
	return nil
}

// counter answers every question with outcome, counting the calls.
type counter struct {
	outcome agent.Outcome
	err     error
	calls   int
}

func (c *counter) Ask(_ context.Context, req agent.Request) (*agent.Result, error) {
	c.calls++
	return &agent.Result{
		Question: req.Question, Answer: "There are 3.", FinalSQL: "SELECT n, x, s, z FROM t",
		Statements: []agent.Statement{{SQL: "SELECT n, x, s, z FROM t", Status: agent.StatusOK}},
		Trace:      []agent.Step{{Tool: agent.ToolRunSQL, Args: `{"sql":"SELECT 1"}`, Status: agent.StatusOK}},
		Columns:    []string{"n", "x", "s", "z"},
		Rows:       [][]any{{int64(1) << 60, 2.5, "<b>", nil}, {int64(0), math.Inf(1), "", nil}},
		Truncated:  true, Steps: 3, Provider: "m@h", Elapsed: 2 * time.Second,
		Tokens: agent.Usage{Prompt: 100, Completion: 10}, Outcome: c.outcome,
	}, c.err
}

func TestRepeatAnsweredFromCache(t *testing.T) {
	ans := &counter{outcome: agent.Answered}
	st := newMapStore()
	c := cache.New(ans, st, cache.Options{TTL: time.Minute, Source: func(context.Context) (string, error) { return "db1", nil }})
	first, err := c.Ask(t.Context(), agent.Request{Question: "How many orders?"})
	if err != nil || first.Cached {
		t.Fatalf("first ask: %+v, %v; want an answer not from the cache", first, err)
	}
	for _, q := range []string{"how many orders", "  HOW   many\torders ?? ", "How many orders？", "How many orders."} {
		res, err := c.Ask(t.Context(), agent.Request{Question: q})
		if err != nil || !res.Cached {
			t.Fatalf("%q: %+v, %v; want the cached answer", q, res, err)
		}
		if res.Question != q || res.Tokens != (agent.Usage{}) {
			t.Errorf("%q: question %q, tokens %+v; want the new wording and no tokens", q, res.Question, res.Tokens)
		}
		want := *first
		want.Question, want.Cached, want.Tokens, want.Elapsed = q, true, agent.Usage{}, res.Elapsed
		if !reflect.DeepEqual(*res, want) {
			t.Errorf("%q: cached result\n%+v\nwant\n%+v", q, *res, want)
		}
	}
	if ans.calls != 1 {
		t.Errorf("%d calls to the answerer, want 1", ans.calls)
	}
	if len(st.ttls) != 1 || st.ttls[0] != time.Minute {
		t.Errorf("kept with TTLs %v, want one of 1m", st.ttls)
	}
}

// Another question, another conversation or another source is another
// answer.
func TestWhatMakesAnswersDiffer(t *testing.T) {
	ans := &counter{outcome: agent.Answered}
	src := "db1"
	c := cache.New(ans, newMapStore(), cache.Options{TTL: time.Minute, Source: func(context.Context) (string, error) { return src, nil }})
	ask := func(req agent.Request) *agent.Result {
		t.Helper()
		res, err := c.Ask(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ask(agent.Request{Question: "orders in June"})
	hist := []agent.Turn{{Question: "orders in June", Answer: "12", SQL: "SELECT 12"}}
	if ask(agent.Request{Question: "orders in July"}).Cached {
		t.Error("another question answered from the cache")
	}
	if ask(agent.Request{Question: "orders in June", History: hist}).Cached {
		t.Error("the same words in another conversation answered from the cache")
	}
	if !ask(agent.Request{Question: "orders in June", History: hist}).Cached {
		t.Error("the same conversation's repeat not answered from the cache")
	}
	if !ask(agent.Request{Question: "orders in June", History: []agent.Turn{}}).Cached {
		t.Error("an empty history is not the same as none")
	}
	src = "db2"
	if ask(agent.Request{Question: "orders in June"}).Cached {
		t.Error("a changed database answered from the cache")
	}
	if ans.calls != 4 {
		t.Errorf("%d calls, want 4", ans.calls)
	}
}

// Refusals, declines, budget stops and failures are never kept.
func TestOnlyAnswersAreKept(t *testing.T) {
	for _, o := range []agent.Outcome{agent.Refused, agent.Unanswerable, agent.Budget, agent.Failed} {
		ans := &counter{outcome: o}
		if o == agent.Failed {
			ans.err = errors.New("provider down")
		}
		st := newMapStore()
		c := cache.New(ans, st, cache.Options{TTL: time.Minute})
		for range 2 {
			res, err := c.Ask(t.Context(), agent.Request{Question: "drop the orders table"})
			if res.Cached || res.Outcome != o || !errors.Is(err, ans.err) {
				t.Errorf("%s: %+v, %v", o, res, err)
			}
		}
		if ans.calls != 2 || len(st.m) != 0 {
			t.Errorf("%s: %d calls and %d kept, want 2 and none", o, ans.calls, len(st.m))
		}
	}
}

// TTL 0 turns the cache off; a failing store or source leaves the
// questions answered.
func TestOffAndFailures(t *testing.T) {
	for name, c := range map[string]func(a cache.Answerer) *cache.Cache{
		"off": func(a cache.Answerer) *cache.Cache { return cache.New(a, newMapStore(), cache.Options{}) },
		"store down": func(a cache.Answerer) *cache.Cache {
			return cache.New(a, &mapStore{m: map[string][]byte{}, fail: true}, cache.Options{TTL: time.Minute})
		},
		"source fails": func(a cache.Answerer) *cache.Cache {
			return cache.New(a, newMapStore(), cache.Options{TTL: time.Minute,
				Source: func(context.Context) (string, error) { return "", errors.New("unreadable") }})
		},
	} {
		ans := &counter{outcome: agent.Answered}
		cc := c(ans)
		for range 2 {
			if res, err := cc.Ask(t.Context(), agent.Request{Question: "q"}); err != nil || res.Cached || res.Outcome != agent.Answered {
				t.Errorf("%s: %+v, %v; want an answer from the answerer", name, res, err)
			}
		}
		if ans.calls != 2 {
			t.Errorf("%s: %d calls, want 2", name, ans.calls)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"How many Orders?":           "how many orders",
		" how\u00a0many  orders ?!…": "how many orders",
		"ＨＯＷ ｍａｎｙ？":                  "how many",
		"Straße":                     "strasse",
		"orders (shipped)":           "orders (shipped)",
		"what is 2.5?":               "what is 2.5",
		"":                           "",
	} {
		if got := cache.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
