package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sqlbot/agent"
	"sqlbot/agent/cache"
	"sqlbot/agent/openai"
	"sqlbot/bot"
	"sqlbot/config"
	"sqlbot/evalrun"
	"sqlbot/roconn"
)

// TestDocumentedDefaults: the defaults the README's settings table states
// are the components' own (config keeps none), and so are those of the help
// text, which is written from them.
func TestDocumentedDefaults(t *testing.T) {
	want := map[string]any{
		"SQLBOT_QUERY_TIMEOUT":      roconn.DefaultTimeout,
		"SQLBOT_ROW_CAP":            roconn.DefaultRows,
		"SQLBOT_MAX_COLUMNS":        roconn.DefaultColumns,
		"SQLBOT_MAX_VALUE_BYTES":    roconn.DefaultValueBytes,
		"SQLBOT_MAX_RESULT_BYTES":   roconn.DefaultResultBytes,
		"SQLBOT_MAX_STEPS":          agent.DefaultMaxSteps,
		"SQLBOT_PROMPT_CHARS":       agent.DefaultPromptChars,
		"SQLBOT_SCORE_ROWS":         evalrun.DefaultScoreRows,
		"SQLBOT_MODEL_TIMEOUT":      openai.DefaultCallTimeout,
		"SLACK_API_URL":             bot.DefaultAPIURL,
		"SQLBOT_SLASH_COMMAND":      bot.DefaultSlashCommand,
		"SQLBOT_RATE_PER_MINUTE":    bot.DefaultRatePerMinute,
		"SQLBOT_RATE_PER_DAY":       bot.DefaultRatePerDay,
		"SQLBOT_GLOBAL_PER_DAY":     bot.DefaultGlobalPerDay,
		"SQLBOT_MAX_QUESTION_CHARS": bot.DefaultMaxQuestionChars,
		"SQLBOT_MAX_CONCURRENT":     roconn.DefaultConcurrent,
		"SQLBOT_CACHE_TTL":          cache.DefaultTTL,
		"SQLBOT_LOG_FORMAT":         "text",
		"SQLBOT_LOG_LEVEL":          strings.ToLower(slog.LevelInfo.String()),
	}
	// The bot's own default for questions at once is the pool's, which serve
	// gives it.
	if bot.DefaultMaxConcurrent != roconn.DefaultConcurrent {
		t.Errorf("bot.DefaultMaxConcurrent %d, roconn.DefaultConcurrent %d; want them equal", bot.DefaultMaxConcurrent, roconn.DefaultConcurrent)
	}
	documented := readmeDefaults(t)
	for name, w := range want {
		got, ok := documented[name]
		if !ok {
			t.Errorf("the README's settings table has no default for %s", name)
			continue
		}
		if d, isDur := w.(time.Duration); isDur {
			if g, err := time.ParseDuration(got); err != nil || g != d {
				t.Errorf("README: %s defaults to %q, the component to %v", name, got, d)
			}
			continue
		}
		if got != fmt.Sprint(w) {
			t.Errorf("README: %s defaults to %q, the component to %v", name, got, w)
		}
	}
	// An unset setting reaches the components as zero: their default.
	cfg, err := config.Load(map[string]string{"HOME": "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	app := &app{cfg: cfg}
	if lim := app.limits(); lim != (roconn.Limits{}) {
		t.Errorf("limits() with nothing set = %+v, want zero (roconn's defaults)", lim)
	}
}

// readmeDefaults reads the README's settings table: the second column of
// each row, split on " / " like the variables of the first.
func readmeDefaults(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		names := strings.Split(cells[1], " / ")
		values := strings.Split(cells[2], " / ")
		if len(values) != len(names) {
			continue
		}
		for i, n := range names {
			out[strings.Trim(strings.TrimSpace(n), "`")] = strings.Trim(strings.TrimSpace(values[i]), "`")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// SQLBOT_SLASH_COMMAND follows Slack's rule for command names, the rule the
// bot states (bot.CheckSlashCommand): "/" and 1 to 31 lowercase letters,
// digits, - or _. A bad one is reported with config's problems, naming the
// variable.
func TestSlashCommandSetting(t *testing.T) {
	for cmd, ok := range map[string]bool{
		"/sqlbot": true, "/ask-db_2": true, "/" + strings.Repeat("a", 31): true,
		"sqlbot": false, "/SQL": false, "/": false, "/" + strings.Repeat("a", 32): false, "/ask db": false, "/dé": false,
	} {
		cfg, cfgErr := config.Load(map[string]string{"SQLBOT_SLASH_COMMAND": cmd, "SQLBOT_MAX_STEPS": "0"})
		err := checkSettings(cfg, cfgErr)
		if err == nil || !strings.Contains(err.Error(), "SQLBOT_MAX_STEPS") {
			t.Errorf("SQLBOT_SLASH_COMMAND=%q: error %v, want config's own problem too", cmd, err)
		}
		if got := err != nil && strings.Contains(err.Error(), "SQLBOT_SLASH_COMMAND"); got == ok {
			t.Errorf("SQLBOT_SLASH_COMMAND=%q: error %v; want one naming the variable: %v", cmd, err, !ok)
		}
	}
}
