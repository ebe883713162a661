package bot_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"sqlbot/agent"
	"sqlbot/bot"
	"sqlbot/bot/slacktest"
	"sqlbot/bot/state"
)

// The drivers of issue 12's "many questions at once" (see docs/BENCHMARKS.md).
// They measure; they assert only that every mention was answered.
var (
	botLoad          = flag.Bool("botload", false, "run TestBotLoadOverhead and TestBotLoadMemory (drivers, not tests)")
	botLoadRounds    = flag.Int("botload.rounds", 10, "TestBotLoadOverhead: interleaved rounds of the bot and the floor")
	botLoadMentions  = flag.Int("botload.mentions", 50, "TestBotLoadOverhead: mentions sent at once per round")
	botLoadQuestions = flag.Int("botload.questions", 10_000, "TestBotLoadMemory: questions in all (sampled every 1,000)")
	botLoadState     = flag.String("botload.state", "memory", "TestBotLoadMemory: the bot's Store, memory or sqlite")
	botLoadVerified  = flag.Int("botload.verified", 0, "TestBotLoadOverhead: verified answers in the Store before the first round (the bot reads them for every question)")
)

// fastResult is what the fast Answerer returns to every question: one row,
// no chart, no CSV, so that the reply is the bot's usual answer and the
// agent costs nothing.
func fastResult(q string) *agent.Result {
	return &agent.Result{
		Question: q,
		Answer:   "There are 3,000 orders.",
		FinalSQL: "SELECT count(*) AS orders FROM orders",
		Columns:  []string{"orders"},
		Rows:     [][]any{{int64(3000)}},
		Steps:    2,
		Provider: "fake:fast",
		Outcome:  agent.Answered,
	}
}

// fastAnswerer answers every question at once with fastResult.
type fastAnswerer struct{}

func (fastAnswerer) Ask(_ context.Context, req agent.Request) (*agent.Result, error) {
	return fastResult(req.Question), nil
}

// loadBotConfig is the bot of the drivers: no limit gets in the way.
func loadBotConfig(s *slacktest.Server) bot.Config {
	return bot.Config{AppToken: s.AppToken(), BotToken: s.BotToken(), APIURL: s.URL,
		RatePerMinute: 1 << 30, RatePerDay: 1 << 30, GlobalPerDay: 1 << 30}
}

func loadServer(t testing.TB) *slacktest.Server {
	t.Helper()
	manifest, err := bot.Manifest("")
	if err != nil {
		t.Fatal(err)
	}
	return slacktest.NewServer(t, slacktest.AppManifest(manifest))
}

// floorClient is the floor of TestBotLoadOverhead: a minimal Socket Mode
// client doing the bot's wire work for each mention and nothing else. It
// acks on the loop that reads events, then on a goroutine of its own adds
// the working reaction (beside the answer, as the bot does), waits for one
// of as many slots as the bot has, posts the bot's reply blocks with
// chat.postMessage and removes the reaction.
type floorClient struct {
	api    *slack.Client
	text   string
	blocks []slack.Block
	slots  chan struct{}

	mu    sync.Mutex
	waits map[string]time.Duration // question ts → time waiting for a slot
}

func startFloor(t *testing.T, s *slacktest.Server) *floorClient {
	t.Helper()
	text, blocks := bot.ReplyOf(fastResult("how many orders?"))
	f := &floorClient{
		api: slack.New(s.BotToken(), slack.OptionAppLevelToken(s.AppToken()), slack.OptionAPIURL(s.URL+"/"),
			slack.OptionHTTPClient(&http.Client{Timeout: 20 * time.Second})),
		text: text, blocks: blocks,
		slots: make(chan struct{}, bot.DefaultMaxConcurrent),
		waits: map[string]time.Duration{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	sm := socketmode.New(f.api)
	var wg sync.WaitGroup
	wg.Go(func() { _ = sm.RunContext(ctx) })
	wg.Go(func() {
		for {
			var evt socketmode.Event
			select {
			case <-ctx.Done():
				return
			case evt = <-sm.Events:
			}
			if r := evt.Request; r != nil && r.EnvelopeID != "" {
				actx, acancel := context.WithTimeout(ctx, time.Second)
				_ = sm.AckCtx(actx, r.EnvelopeID, nil)
				acancel()
			}
			if evt.Type != socketmode.EventTypeEventsAPI {
				continue
			}
			api, ok := evt.Data.(slackevents.EventsAPIEvent)
			if !ok {
				continue
			}
			if m, ok := api.InnerEvent.Data.(*slackevents.AppMentionEvent); ok {
				wg.Go(func() { f.answer(ctx, m) })
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := s.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *floorClient) answer(ctx context.Context, m *slackevents.AppMentionEvent) {
	ref := slack.NewRefToMessage(m.Channel, m.TimeStamp)
	posted := make(chan struct{})
	go func() {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f.api.AddReactionContext(rctx, "hourglass_flowing_sand", ref)
		cancel()
		<-posted
		if err == nil {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = f.api.RemoveReactionContext(rctx, "hourglass_flowing_sand", ref)
			cancel()
		}
	}()
	queued := time.Now()
	f.slots <- struct{}{}
	wait := time.Since(queued)
	<-f.slots // the answer is instant
	f.mu.Lock()
	f.waits[m.TimeStamp] = wait
	f.mu.Unlock()
	_, _, _ = f.api.PostMessageContext(ctx, m.Channel, slack.MsgOptionText(f.text, false),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl(),
		slack.MsgOptionBlocks(f.blocks...), slack.MsgOptionTS(m.TimeStamp))
	close(posted)
}

func (f *floorClient) slotWaits() map[string]time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.waits)
}

// botSlotWaits reads the bot's "question answered" lines: for each question
// ts, how long it waited for a slot.
func botSlotWaits(t *testing.T, logs string) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg    string `json:"msg"`
			TS     string `json:"ts"`
			Queued int64  `json:"queued"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "bot: question answered" {
			out[l.TS] = time.Duration(l.Queued)
		}
	}
	return out
}

// A loadRound is one side's figures in one round.
type loadRound struct {
	p50, p99       time.Duration // envelope → reply, less the slot wait
	ackP50, ackP99 time.Duration // envelope sent → ack received
	wait           time.Duration // the longest slot wait
	overheads      []time.Duration
	acks           []time.Duration
}

func runRound(t *testing.T, s *slacktest.Server, n int, waits func() map[string]time.Duration) loadRound {
	t.Helper()
	before := len(s.Acks())
	r, err := s.Load(t.Context(), slacktest.LoadSpec{Mentions: n, Users: n, Settle: time.Second, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("%v\n%v", err, r)
	}
	if r.ByReplies[1] != n {
		t.Fatalf("replies: %v\n%v\nconns %+v", r.ByReplies, r, s.Conns())
	}
	w := waits()
	var lr loadRound
	for _, m := range r.Mentions {
		wait, ok := w[m.TS]
		if !ok {
			t.Fatalf("no slot wait for mention %s", m.TS)
		}
		lr.wait = max(lr.wait, wait)
		lr.overheads = append(lr.overheads, m.Latency-wait)
	}
	for _, a := range s.Acks()[before:] {
		lr.acks = append(lr.acks, a.Latency)
	}
	slices.Sort(lr.overheads)
	slices.Sort(lr.acks)
	lr.p50, lr.p99 = slacktest.Percentile(lr.overheads, 50), slacktest.Percentile(lr.overheads, 99)
	lr.ackP50, lr.ackP99 = slacktest.Percentile(lr.acks, 50), slacktest.Percentile(lr.acks, 99)
	return lr
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0
	}
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestBotLoadOverhead sends bursts of mentions (50 at once) through the fake
// Slack to the real bot (bot.New, the fast Answerer, a state.Memory) and to
// the floor, a minimal client doing the same wire work, in turn (each first
// in every other round, after a warm-up round of each), and logs for each
// side p50 and p99 of envelope → reply less the slot wait, and of envelope
// → ack, per round and as medians over the rounds, with the ratios.
//
//	go test -count=1 -v -run 'TestBotLoadOverhead$' ./bot -botload
func TestBotLoadOverhead(t *testing.T) {
	if !*botLoad {
		t.Skip("a driver: run with -botload")
	}
	n := *botLoadMentions

	sb := loadServer(t)
	logs := &syncBuffer{}
	cfg := loadBotConfig(sb)
	cfg.State = loadState(t, *botLoadState, filepath.Join(t.TempDir(), "state.db"))
	if *botLoadVerified > 0 {
		if cfg.State == nil {
			cfg.State = state.NewMemory(time.Now)
		}
		for i := range *botLoadVerified {
			err := cfg.State.Verify(t.Context(), state.Verification{Channel: "C0LOAD", TS: fmt.Sprintf("1700000000.%06d", i),
				Question: fmt.Sprintf("how many orders were placed in week %d?", i), SQL: "SELECT count(*) AS orders FROM orders WHERE week = " + strconv.Itoa(i),
				Checksum: "sha256:0", Source: "load", User: "U0VERIFIER", At: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := bot.New(cfg, fastAnswerer{}, nil, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			for _, l := range strings.Split(logs.String(), "\n") {
				if !strings.Contains(l, `"level":"INFO"`) {
					t.Log(l)
				}
			}
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := sb.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}

	sf := loadServer(t)
	floor := startFloor(t, sf)

	sides := []struct {
		name  string
		s     *slacktest.Server
		waits func() map[string]time.Duration
	}{
		{"sqlbot", sb, func() map[string]time.Duration { return botSlotWaits(t, logs.String()) }},
		{"floor", sf, floor.slotWaits},
	}
	var p50, p99, ack50, ack99 [2][]float64
	var r50, r99 []float64
	var pooled, pooledAcks [2][]time.Duration
	for round := 0; round <= *botLoadRounds; round++ {
		var got [2]loadRound
		for k := range 2 {
			i := (k + round) % 2
			t.Logf("round %d: %s", round, sides[i].name)
			got[i] = runRound(t, sides[i].s, n, sides[i].waits)
		}
		if round == 0 {
			continue // warm-up
		}
		for i := range 2 {
			p50[i] = append(p50[i], ms(got[i].p50))
			p99[i] = append(p99[i], ms(got[i].p99))
			ack50[i] = append(ack50[i], ms(got[i].ackP50))
			ack99[i] = append(ack99[i], ms(got[i].ackP99))
			pooled[i] = append(pooled[i], got[i].overheads...)
			pooledAcks[i] = append(pooledAcks[i], got[i].acks...)
		}
		r50 = append(r50, ms(got[0].p50)/ms(got[1].p50))
		r99 = append(r99, ms(got[0].p99)/ms(got[1].p99))
		t.Logf("round %2d: sqlbot p50 %6.2f p99 %6.2f ms (slot wait ≤ %5.2f), acks p50 %5.2f p99 %5.2f | floor p50 %6.2f p99 %6.2f ms (slot wait ≤ %5.2f), acks p50 %5.2f p99 %5.2f | p99 ratio %.2f",
			round, ms(got[0].p50), ms(got[0].p99), ms(got[0].wait), ms(got[0].ackP50), ms(got[0].ackP99),
			ms(got[1].p50), ms(got[1].p99), ms(got[1].wait), ms(got[1].ackP50), ms(got[1].ackP99), r99[len(r99)-1])
	}
	for i := range 2 {
		slices.Sort(pooled[i])
		slices.Sort(pooledAcks[i])
	}
	t.Logf("medians over %d rounds of %d mentions: sqlbot p50 %.2f p99 %.2f ms, floor p50 %.2f p99 %.2f ms; ratio of p99 %.2f (median of per-round ratios), of p50 %.2f",
		*botLoadRounds, n, median(p50[0]), median(p99[0]), median(p50[1]), median(p99[1]), median(r99), median(r50))
	t.Logf("acks, medians over the rounds: sqlbot p50 %.2f p99 %.2f ms, floor p50 %.2f p99 %.2f ms",
		median(ack50[0]), median(ack99[0]), median(ack50[1]), median(ack99[1]))
	t.Logf("pooled (%d mentions each): sqlbot p50 %.2f p99 %.2f ms, floor p50 %.2f p99 %.2f ms (ratio %.2f); acks p99 sqlbot %.2f ms, floor %.2f ms",
		len(pooled[0]), ms(slacktest.Percentile(pooled[0], 50)), ms(slacktest.Percentile(pooled[0], 99)), ms(slacktest.Percentile(pooled[1], 50)), ms(slacktest.Percentile(pooled[1], 99)),
		ms(slacktest.Percentile(pooled[0], 99))/ms(slacktest.Percentile(pooled[1], 99)), ms(slacktest.Percentile(pooledAcks[0], 99)), ms(slacktest.Percentile(pooledAcks[1], 99)))
	t.Logf("state %s, %d verified answers; load average: %s", *botLoadState, *botLoadVerified, loadAverage())
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// A memSample is the bot process's memory after some questions.
type memSample struct {
	Questions  int
	RSS        int64 // bytes, VmRSS
	Anon       int64 // bytes, RssAnon: the Go runtime's and SQLite's (whose allocator is outside Go's heap)
	HeapLive   int64 `json:"heap_live"`   // after a GC
	GoResident int64 `json:"go_resident"` // mapped by the Go runtime and not released to the OS
	Objects    int64 `json:"objects"`
	Goroutines int64 `json:"goroutines"`
	File, WAL  int64 // bytes: the state file and its log
}

// TestBotLoadMemory runs the real bot as a process of its own (this test
// binary, see TestBotLoadChild) against the fake Slack in this one, sends
// it -botload.questions mentions from 50 people in 5 channels at 400 a
// second, and after every 1,000 samples its RSS (and the anonymous part of
// it), the memory the Go runtime holds (mapped, less what it released to
// the OS), and after a GC its live heap, objects and goroutines, and the
// sizes of the state file and its log (with -botload.state=sqlite).
//
//	go test -count=1 -v -run 'TestBotLoadMemory$' ./bot -botload [-botload.state=sqlite]
func TestBotLoadMemory(t *testing.T) {
	if !*botLoad {
		t.Skip("a driver: run with -botload")
	}
	s := loadServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBotLoadChild$", "-test.count=1")
	stateFile := filepath.Join(t.TempDir(), "state.db")
	cmd.Env = append(os.Environ(), "BOTLOAD_CHILD=1", "BOTLOAD_API_URL="+s.URL, "BOTLOAD_APP_TOKEN="+s.AppToken(), "BOTLOAD_BOT_TOKEN="+s.BotToken(), "BOTLOAD_STATE="+*botLoadState,
		"BOTLOAD_STATE_FILE="+stateFile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the bot's warnings and errors:\n%s", stderr)
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		timer := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		timer.Stop()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "BOTLOAD_ADDR="); ok {
				addr <- a
			}
		}
	}()
	var heapURL string
	select {
	case a := <-addr:
		heapURL = "http://" + a + "/heap"
	case <-time.After(20 * time.Second):
		t.Fatal("the bot process did not start")
	}
	wctx, wcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer wcancel()
	if err := s.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	sample := func(q int) memSample {
		resp, err := http.Get(heapURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m memSample
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		m.Questions = q
		m.RSS, m.Anon = rss(t, cmd.Process.Pid)
		for _, f := range []struct {
			path string
			size *int64
		}{{stateFile, &m.File}, {stateFile + "-wal", &m.WAL}} {
			if fi, err := os.Stat(f.path); err == nil {
				*f.size = fi.Size()
			}
		}
		return m
	}
	samples := []memSample{sample(0)}
	const step = 1000
	for q := 0; q < *botLoadQuestions; q += step {
		r, err := s.Load(t.Context(), slacktest.LoadSpec{Mentions: step, Users: 50, Channels: 5, Rate: 400,
			Text:   func(i int) string { return fmt.Sprintf("how many orders were placed in week %d?", q+i) },
			Settle: 2 * time.Second, Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatalf("%v\n%v", err, r)
		}
		if r.ByReplies[1] != step {
			_ = cmd.Process.Signal(syscall.SIGQUIT) // the bot's goroutines, on its stderr
			time.Sleep(time.Second)
			t.Fatalf("replies %v\n%v", r.ByReplies, r)
		}
		samples = append(samples, sample(q+step))
	}
	t.Logf("state %s; load average %s", *botLoadState, loadAverage())
	t.Logf("%9s %9s %9s %11s %10s %9s %10s %9s %8s", "questions", "RSS MiB", "anon MiB", "Go res. MiB", "heap MiB", "objects", "goroutines", "file MiB", "log MiB")
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	for _, m := range samples {
		t.Logf("%9d %9.1f %9.1f %11.1f %10.2f %9d %10d %9.2f %8.2f", m.Questions, mib(m.RSS), mib(m.Anon), mib(m.GoResident), mib(m.HeapLive),
			m.Objects, m.Goroutines, mib(m.File), mib(m.WAL))
	}
}

// rss is VmRSS and RssAnon of process pid, in bytes.
func rss(t *testing.T, pid int) (all, anon int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"VmRSS:", "RssAnon:"} {
			if v, ok := strings.CutPrefix(l, k); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				got[k] = kb << 10
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("VmRSS or RssAnon missing: %v", got)
	}
	return got["VmRSS:"], got["RssAnon:"]
}

// loadState is the bot's Store for -botload.state: nil (the bot's own
// state.Memory) for "memory", a state file at path for "sqlite", as `sqlbot
// serve` keeps by default.
func loadState(t *testing.T, kind, path string) bot.Store {
	t.Helper()
	switch kind {
	case "memory":
		return nil
	case "sqlite":
		st, err := state.OpenSQLite(context.Background(), path, state.SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	t.Fatalf("-botload.state=%q: want memory or sqlite", kind)
	return nil
}

// TestBotLoadChild is the bot process of TestBotLoadMemory: with
// BOTLOAD_CHILD=1 it runs the bot with the fast Answerer against the fake
// at BOTLOAD_API_URL until its stdin closes, and serves /heap on loopback
// (the address on stdout): a GC, then the live heap, objects and goroutines.
func TestBotLoadChild(t *testing.T) {
	if os.Getenv("BOTLOAD_CHILD") != "1" {
		t.Skip("the bot process of TestBotLoadMemory")
	}
	cfg := bot.Config{AppToken: os.Getenv("BOTLOAD_APP_TOKEN"), BotToken: os.Getenv("BOTLOAD_BOT_TOKEN"), APIURL: os.Getenv("BOTLOAD_API_URL"),
		RatePerMinute: 1 << 30, RatePerDay: 1 << 30, GlobalPerDay: 1 << 30}
	cfg.State = loadState(t, os.Getenv("BOTLOAD_STATE"), os.Getenv("BOTLOAD_STATE_FILE"))
	b, err := bot.New(cfg, fastAnswerer{}, nil, slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		ss := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/objects:objects"}, {Name: "/sched/goroutines:goroutines"},
			{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		metrics.Read(ss)
		_ = json.NewEncoder(w).Encode(memSample{HeapLive: int64(ss[0].Value.Uint64()), Objects: int64(ss[1].Value.Uint64()),
			Goroutines: int64(ss[2].Value.Uint64()), GoResident: int64(ss[3].Value.Uint64() - ss[4].Value.Uint64())})
	})
	go func() { _ = http.Serve(ln, mux) }()
	fmt.Printf("BOTLOAD_ADDR=%s\n", ln.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
}
