// Package cache answers a question asked again from the answer given the
// first time, without calling the model.
//
// A Cache wraps an Answerer (the agent) and keeps its answered results in a
// Store for a TTL. A question is the same when its normalized text (Unicode
// NFKC, case folded, runs of white space made one space, trailing sentence
// punctuation dropped), the conversation's earlier turns and the Source
// (the database's contents and the policy that reads it, and whatever else
// the caller says changes an answer) are equal. Only answered results are
// kept: a refusal, an "unanswerable", a budget stop or a failure is asked
// again every time, so that a refusal is always the guard's decision of
// the moment and a passing failure is not repeated. A reused result says so
// (agent.Result.Cached). Every surface that wraps the same Answerer with a
// Cache on the same Store shares it; with a shared Store, every replica
// does.
//
// The cache is a convenience: when the Store or the Source fails, the
// question goes to the Answerer, and the failure is logged.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"sqlbot/agent"
)

// DefaultTTL is how long an answer is reused when the caller sets none.
const DefaultTTL = 10 * time.Minute

// storeTimeout bounds one call to the Store.
const storeTimeout = 2 * time.Second

// A Store keeps values for a time. bot/state's Stores implement it.
type Store interface {
	// Cached returns the value stored under key, if it has not expired.
	Cached(ctx context.Context, key string) (val []byte, ok bool, err error)
	// SetCached stores val under key for ttl, replacing any value.
	SetCached(ctx context.Context, key string, val []byte, ttl time.Duration) error
}

// An Answerer answers one question; *agent.Agent implements it.
type Answerer interface {
	Ask(ctx context.Context, req agent.Request) (*agent.Result, error)
}

// Options are New's settings.
type Options struct {
	// TTL is how long an answer is reused; 0 or less turns the cache off
	// (every question goes to the Answerer).
	TTL time.Duration
	// Source names what an answer depends on besides the question and its
	// conversation: the database's contents, the policy, the limits. It is
	// called once per question. Nil: no Source (for tests only: a changed
	// database would be answered from the cache until the TTL passes).
	Source func(ctx context.Context) (string, error)
	// Log receives the Store's and the Source's failures (nil: discarded).
	Log *slog.Logger
	// Now is the clock for Elapsed (time.Now if nil).
	Now func() time.Time
}

// A Cache is an Answerer that reuses answers. It is safe for concurrent
// use if its Answerer and Store are. Two identical questions asked at the
// same moment may both reach the Answerer.
type Cache struct {
	next Answerer
	st   Store
	opt  Options
}

// New returns a Cache over next, keeping answers in st.
func New(next Answerer, st Store, opt Options) *Cache {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Cache{next: next, st: st, opt: opt}
}

// Ask answers req from the cache when it can, and otherwise asks the
// Answerer and keeps an answered result.
func (c *Cache) Ask(ctx context.Context, req agent.Request) (*agent.Result, error) {
	if c.opt.TTL <= 0 || c.st == nil {
		return c.next.Ask(ctx, req)
	}
	start := c.opt.Now()
	key, err := c.key(ctx, req)
	if err != nil {
		c.opt.Log.WarnContext(ctx, "cache: no key for the question; asking without the cache", "err", err)
		return c.next.Ask(ctx, req)
	}
	if res, ok := c.lookup(ctx, key); ok {
		res.Question = req.Question
		res.Cached = true
		res.Tokens = agent.Usage{}
		res.Elapsed = c.opt.Now().Sub(start)
		return res, nil
	}
	res, err := c.next.Ask(ctx, req)
	if err != nil || res == nil || res.Outcome != agent.Answered {
		return res, err
	}
	c.keep(ctx, key, res)
	return res, nil
}

// lookup returns the result kept under key, if any.
func (c *Cache) lookup(ctx context.Context, key string) (*agent.Result, bool) {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	data, ok, err := c.st.Cached(sctx, key)
	if err != nil {
		c.opt.Log.WarnContext(ctx, "cache: the store failed; asking without the cache", "err", err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	res, err := decode(data)
	if err != nil {
		c.opt.Log.WarnContext(ctx, "cache: a kept answer does not decode; asking again", "err", err)
		return nil, false
	}
	return res, true
}

// keep stores res under key.
func (c *Cache) keep(ctx context.Context, key string, res *agent.Result) {
	data, err := encode(res)
	if err == nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		err = c.st.SetCached(sctx, key, data, c.opt.TTL)
		cancel()
	}
	if err != nil {
		c.opt.Log.WarnContext(ctx, "cache: could not keep the answer", "err", err)
	}
}

// key is "answer:" and the hex SHA-256 of the source, the normalized
// question and the earlier turns.
func (c *Cache) key(ctx context.Context, req agent.Request) (string, error) {
	var src string
	if c.opt.Source != nil {
		var err error
		if src, err = c.opt.Source(ctx); err != nil {
			return "", err
		}
	}
	var hist []byte
	if len(req.History) > 0 { // no history, nil or empty, is one
		var err error
		if hist, err = json.Marshal(req.History); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	for _, part := range []string{"v1", src, Normalize(req.Question), string(hist)} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return "answer:" + hex.EncodeToString(h.Sum(nil)), nil
}

// fold is Unicode case folding; a cases.Caser keeps state, so each call
// makes its own.
func fold(s string) string { return cases.Fold().String(s) }

// trailing is the punctuation that may end a question without changing it.
const trailing = ".?!…,;:。"

// Normalize returns the form of a question that the cache compares: Unicode
// NFKC (so that full-width "？" is "?"), case folded, white space runs made
// one space and trimmed, and trailing sentence punctuation (. ? ! … , ; :
// 。) dropped. "How many orders?" and "  how many ORDERS ?? " are the same.
func Normalize(q string) string {
	q = fold(norm.NFKC.String(q))
	q = strings.Join(strings.FieldsFunc(q, unicode.IsSpace), " ")
	return strings.TrimRightFunc(q, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(trailing, r) })
}

// A kept result: agent.Result with its rows' values tagged by type, so that
// an int64 comes back an int64 (JSON alone would make it a float64).
type kept struct {
	Answer     string            `json:"answer"`
	Statements []agent.Statement `json:"statements"`
	Trace      []keptStep        `json:"trace"`
	FinalSQL   string            `json:"final_sql"`
	Columns    []string          `json:"columns"`
	Rows       [][]keptValue     `json:"rows"`
	Truncated  bool              `json:"truncated"`
	Steps      int               `json:"steps"`
	Provider   string            `json:"provider"`
	Outcome    agent.Outcome     `json:"outcome"`
	Refusal    *agent.Statement  `json:"refusal,omitempty"`
}

type keptStep struct {
	Tool   string       `json:"tool"`
	Args   string       `json:"args"`
	Status agent.Status `json:"status"`
}

// A keptValue is one of roconn's values: null, or exactly one of I (int64),
// F (float64, as text, so that infinities survive) and S (string).
type keptValue struct {
	I *int64  `json:"i,omitempty"`
	F *string `json:"f,omitempty"`
	S *string `json:"s,omitempty"`
}

func encode(res *agent.Result) ([]byte, error) {
	k := kept{Answer: res.Answer, Statements: res.Statements, FinalSQL: res.FinalSQL, Columns: res.Columns,
		Truncated: res.Truncated, Steps: res.Steps, Provider: res.Provider, Outcome: res.Outcome, Refusal: res.Refusal}
	for _, s := range res.Trace {
		k.Trace = append(k.Trace, keptStep(s))
	}
	k.Rows = make([][]keptValue, len(res.Rows))
	for i, row := range res.Rows {
		k.Rows[i] = make([]keptValue, len(row))
		for j, v := range row {
			switch v := v.(type) {
			case nil:
			case int64:
				k.Rows[i][j].I = &v
			case float64:
				f := strconv.FormatFloat(v, 'g', -1, 64)
				k.Rows[i][j].F = &f
			case string:
				k.Rows[i][j].S = &v
			default:
				return nil, fmt.Errorf("cache: a value of type %T cannot be kept", v)
			}
		}
	}
	return json.Marshal(k)
}

func decode(data []byte) (*agent.Result, error) {
	var k kept
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("cache: decode: %w", err)
	}
	res := &agent.Result{Answer: k.Answer, Statements: k.Statements, FinalSQL: k.FinalSQL, Columns: k.Columns,
		Truncated: k.Truncated, Steps: k.Steps, Provider: k.Provider, Outcome: k.Outcome, Refusal: k.Refusal}
	for _, s := range k.Trace {
		res.Trace = append(res.Trace, agent.Step(s))
	}
	res.Rows = make([][]any, len(k.Rows))
	for i, row := range k.Rows {
		res.Rows[i] = make([]any, len(row))
		for j, v := range row {
			switch {
			case v.I != nil:
				res.Rows[i][j] = *v.I
			case v.F != nil:
				f, err := strconv.ParseFloat(*v.F, 64)
				if err != nil {
					return nil, fmt.Errorf("cache: decode: %w", err)
				}
				res.Rows[i][j] = f
			case v.S != nil:
				res.Rows[i][j] = *v.S
			}
		}
	}
	if res.Outcome != agent.Answered {
		return nil, errors.New("cache: decode: a kept result that was not answered")
	}
	return res, nil
}
