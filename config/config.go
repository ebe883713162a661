// Package config reads every sqlbot setting from the environment into a plain,
// validated struct.
//
// Load is the only place that knows variable names; it reports every problem
// at once, each naming its variable and the value it expected. Only package
// main imports config: the other packages receive plain values.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// Config holds every setting. A zero value means that the variable is
// unset (or empty): the component that uses the setting then applies its own
// default (roconn.Default…, agent.DefaultMaxSteps, bot.Default…, openai.Default…),
// and for the statement limits, the policy file's `limits` first. Config
// keeps no default of its own: it only overrides.
type Config struct {
	DB     string `env:"SQLBOT_DB"`
	Policy string `env:"SQLBOT_POLICY"`
	// Questions is the question file for the deployment's own database (the
	// JSON that `sqlbot eval --questions` reads); "" means the demo's on the
	// demo database, and none elsewhere.
	Questions string `env:"SQLBOT_QUESTIONS"`

	QueryTimeout   time.Duration `env:"SQLBOT_QUERY_TIMEOUT"`
	RowCap         int           `env:"SQLBOT_ROW_CAP"`
	MaxColumns     int           `env:"SQLBOT_MAX_COLUMNS"`
	MaxValueBytes  int           `env:"SQLBOT_MAX_VALUE_BYTES"`
	MaxResultBytes int           `env:"SQLBOT_MAX_RESULT_BYTES"`
	MaxSteps       int           `env:"SQLBOT_MAX_STEPS"`
	// PromptChars bounds the system prompt, in bytes of UTF-8 (characters,
	// for the ASCII a schema's names mostly are).
	PromptChars int `env:"SQLBOT_PROMPT_CHARS"`
	// ScoreRows bounds the rows of one result that the evaluation scores,
	// apart from the row cap of what an answer shows.
	ScoreRows int `env:"SQLBOT_SCORE_ROWS"`

	OpenAIBaseURL []string      `env:"OPENAI_BASE_URL" envSeparator:","`
	OpenAIAPIKey  []string      `env:"OPENAI_API_KEY" envSeparator:","`
	OpenAIModel   []string      `env:"OPENAI_MODEL" envSeparator:","`
	ModelTimeout  time.Duration `env:"SQLBOT_MODEL_TIMEOUT"`

	SlackAppToken string `env:"SLACK_APP_TOKEN"`
	SlackBotToken string `env:"SLACK_BOT_TOKEN"`
	SlackAPIURL   string `env:"SLACK_API_URL"`
	// SlashCommand is checked by the bot, which owns Slack's rule for it.
	SlashCommand string `env:"SQLBOT_SLASH_COMMAND"`

	RatePerMinute    int `env:"SQLBOT_RATE_PER_MINUTE"`
	RatePerDay       int `env:"SQLBOT_RATE_PER_DAY"`
	GlobalPerDay     int `env:"SQLBOT_GLOBAL_PER_DAY"`
	MaxQuestionChars int `env:"SQLBOT_MAX_QUESTION_CHARS"`
	MaxConcurrent    int `env:"SQLBOT_MAX_CONCURRENT"`

	HTTPAddr string `env:"SQLBOT_HTTP_ADDR"`
	// APIToken is the bearer token that the web page and the JSON API
	// require when they are served off loopback; "" means none, and then
	// they may be served on loopback only.
	APIToken  string     `env:"SQLBOT_API_TOKEN"`
	LogFormat string     `env:"SQLBOT_LOG_FORMAT"` // "text" (also when unset) or "json"
	LogLevel  slog.Level `env:"SQLBOT_LOG_LEVEL"`  // info when unset

	// State is the state file (SQLite) where sqlbot keeps what it writes;
	// "" means the default path in the user's data directory.
	State string `env:"SQLBOT_STATE"`
	// RedisURL, when set, shares the state between replicas through Redis
	// (redis:// or rediss://); the state file is then not used.
	RedisURL string `env:"SQLBOT_REDIS_URL"`
	// CacheTTL is how long an answer is reused for the same question: nil
	// when unset (the answer cache's default), 0 turns the cache off.
	CacheTTL *time.Duration `env:"SQLBOT_CACHE_TTL"`
	// Verifiers are the Slack user ids whose ✅ on an answer marks it
	// verified; none means anyone who can see the answer. See VerifierIDs.
	Verifiers []string `env:"SQLBOT_VERIFIERS" envSeparator:","`

	XDGCacheHome string `env:"XDG_CACHE_HOME"` // where the demo database is cached
	XDGDataHome  string `env:"XDG_DATA_HOME"`  // where the state file goes by default
	Home         string `env:"HOME"`
}

// CacheDir returns the directory for sqlbot's cached files (the demo
// database): $XDG_CACHE_HOME/sqlbot, else $HOME/.cache/sqlbot.
func (c Config) CacheDir() (string, error) {
	switch {
	case c.XDGCacheHome != "":
		return filepath.Join(c.XDGCacheHome, "sqlbot"), nil
	case c.Home != "":
		return filepath.Join(c.Home, ".cache", "sqlbot"), nil
	}
	return "", errors.New("config: neither XDG_CACHE_HOME nor HOME is set; set SQLBOT_DB or pass --db")
}

// A Provider is one OpenAI-compatible endpoint, in the order they are tried.
type Provider struct {
	BaseURL, APIKey, Model string
}

// Load reads the settings from environ (os.Environ() in main, a literal map in
// tests) and reports every problem at once, each naming its variable and
// what it expected: the values that do not parse, and then every other rule
// on the values that did. With an error, the Config still holds what could be
// read (a variable that did not parse keeps its zero value), for the commands
// that need no settings (help, manifest); nothing else should use it.
func Load(environ map[string]string) (Config, error) {
	c, perr := env.ParseAsWithOptions[Config](env.Options{Environment: environ})
	var errs []error
	unparsed := map[string]bool{}
	if perr != nil {
		var names []string
		errs, names = parseErrors(perr, environ)
		for _, n := range names {
			unparsed[n] = true
		}
	}
	bad := func(name, format string, args ...any) {
		if unparsed[name] {
			return // reported already, and its zero value says nothing
		}
		errs = append(errs, fmt.Errorf("config: %s %s", name, fmt.Sprintf(format, args...)))
	}
	// set reports whether a variable was given: an unset or empty one means
	// the component's default, and is never an error.
	set := func(name string) bool { return strings.TrimSpace(environ[name]) != "" }
	positive := map[string]int{
		"SQLBOT_ROW_CAP": c.RowCap, "SQLBOT_MAX_COLUMNS": c.MaxColumns, "SQLBOT_MAX_VALUE_BYTES": c.MaxValueBytes,
		"SQLBOT_MAX_RESULT_BYTES": c.MaxResultBytes, "SQLBOT_MAX_STEPS": c.MaxSteps, "SQLBOT_SCORE_ROWS": c.ScoreRows, "SQLBOT_RATE_PER_MINUTE": c.RatePerMinute,
		"SQLBOT_RATE_PER_DAY": c.RatePerDay, "SQLBOT_GLOBAL_PER_DAY": c.GlobalPerDay,
		"SQLBOT_MAX_QUESTION_CHARS": c.MaxQuestionChars, "SQLBOT_MAX_CONCURRENT": c.MaxConcurrent,
	}
	for _, name := range sortedKeys(positive) {
		if set(name) && positive[name] <= 0 {
			bad(name, "must be a whole number above 0, got %d", positive[name])
		}
	}
	// Below this the house rules and the instructions, which are never cut,
	// leave next to no room for the schema.
	if set("SQLBOT_PROMPT_CHARS") && c.PromptChars < 2000 {
		bad("SQLBOT_PROMPT_CHARS", "must be a whole number of at least 2000, got %d", c.PromptChars)
	}
	if set("SQLBOT_QUERY_TIMEOUT") && c.QueryTimeout <= 0 {
		bad("SQLBOT_QUERY_TIMEOUT", "must be a positive duration such as 5s, got %v", c.QueryTimeout)
	}
	if set("SQLBOT_MODEL_TIMEOUT") && c.ModelTimeout <= 0 {
		bad("SQLBOT_MODEL_TIMEOUT", "must be a positive duration such as 60s, got %v", c.ModelTimeout)
	}
	if c.SlackAppToken != "" && !strings.HasPrefix(c.SlackAppToken, "xapp-") {
		bad("SLACK_APP_TOKEN", "must start with xapp- (an app-level token with connections:write)")
	}
	if c.SlackBotToken != "" && !strings.HasPrefix(c.SlackBotToken, "xoxb-") {
		bad("SLACK_BOT_TOKEN", "must start with xoxb- (the bot user OAuth token)")
	}
	if c.SlackAPIURL != "" && !strings.HasPrefix(c.SlackAPIURL, "http://") && !strings.HasPrefix(c.SlackAPIURL, "https://") {
		bad("SLACK_API_URL", "must be an http:// or https:// URL, got %q", c.SlackAPIURL)
	}
	if c.LogFormat != "" && c.LogFormat != "text" && c.LogFormat != "json" {
		bad("SQLBOT_LOG_FORMAT", "must be text or json, got %q", c.LogFormat)
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		// The URL may hold a password: it is not repeated.
		bad("SQLBOT_REDIS_URL", "must be a redis:// or rediss:// URL (redis://[user:password@]host:port[/db])")
	}
	if c.CacheTTL != nil && *c.CacheTTL < 0 {
		bad("SQLBOT_CACHE_TTL", "must be a duration such as 10m, or 0 to turn the cache off, got %v", *c.CacheTTL)
	}
	if c.APIToken != "" && !goodToken(c.APIToken) {
		// A secret: it is not repeated.
		bad("SQLBOT_API_TOKEN", "must be at least %d characters of printable ASCII without spaces (for example the output of `openssl rand -hex 32`)", MinAPITokenChars)
	}
	if strings.TrimSpace(c.State) != c.State {
		bad("SQLBOT_STATE", "must be the path of the state file, without spaces around it, got %q", c.State)
	}
	if strings.TrimSpace(c.Questions) != c.Questions {
		bad("SQLBOT_QUESTIONS", "must be the path of a question file, without spaces around it, got %q", c.Questions)
	}
	for _, id := range c.VerifierIDs() {
		if !slackUserID(id) {
			bad("SQLBOT_VERIFIERS", "must be Slack user ids (such as U012AB3CD), separated by commas, got %q", id)
		}
	}
	if !unparsed["OPENAI_BASE_URL"] && !unparsed["OPENAI_API_KEY"] && !unparsed["OPENAI_MODEL"] {
		if _, err := c.Providers(); err != nil {
			errs = append(errs, err)
		}
	}
	return c, errors.Join(errs...)
}

// Providers zips OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL into the
// providers to try, in order. Each list has either one entry (shared by all
// providers) or as many as the longest. A provider with a key and no URL has
// BaseURL "": the model adapter's default (OpenAI's API). It returns no
// providers when neither a URL nor a key is set: then only the recorded
// questions can be answered.
func (c Config) Providers() ([]Provider, error) {
	urls, keys, models := trimAll(c.OpenAIBaseURL), trimAll(c.OpenAIAPIKey), trimAll(c.OpenAIModel)
	n := max(len(urls), len(keys))
	if n == 0 {
		return nil, nil
	}
	n = max(n, len(models))
	if len(models) == 0 {
		return nil, errors.New("config: OPENAI_MODEL must name the model to use (for example gpt-4o-mini, or llama3.1 on a local server)")
	}
	if len(urls) == 0 {
		urls = []string{""} // the adapter's default
	}
	if len(keys) == 0 {
		keys = []string{""} // local OpenAI-compatible servers often need no key
	}
	var errs []error
	for name, l := range map[string][]string{"OPENAI_BASE_URL": urls, "OPENAI_API_KEY": keys, "OPENAI_MODEL": models} {
		if len(l) != 1 && len(l) != n {
			errs = append(errs, fmt.Errorf("config: %s has %d entries; give 1 or %d (one per provider)", name, len(l), n))
		}
	}
	for _, u := range urls {
		if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			errs = append(errs, fmt.Errorf("config: OPENAI_BASE_URL entry %q must be an http:// or https:// URL", u))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ps := make([]Provider, n)
	for i := range ps {
		ps[i] = Provider{BaseURL: pick(urls, i), APIKey: pick(keys, i), Model: pick(models, i)}
	}
	return ps, nil
}

// VerifierIDs returns SQLBOT_VERIFIERS's user ids, trimmed, without empty
// entries.
func (c Config) VerifierIDs() []string { return trimAll(c.Verifiers) }

// slackUserID reports whether s looks like a Slack user id: U or W, then
// upper-case letters and digits.
func slackUserID(s string) bool {
	if len(s) < 3 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, r := range s[1:] {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// MinAPITokenChars is the shortest SQLBOT_API_TOKEN accepted: a request
// that carries a wrong token is turned away before any limit counts it, so
// the token alone must be hard to guess.
const MinAPITokenChars = 16

// goodToken reports whether t can be sent as a bearer token as it is and is
// long enough: printable ASCII, no spaces, at least MinAPITokenChars.
func goodToken(t string) bool {
	if len(t) < MinAPITokenChars {
		return false
	}
	for i := range len(t) {
		if t[i] <= ' ' || t[i] > '~' {
			return false
		}
	}
	return true
}

// SlackWanted reports whether either Slack token is set: `serve` then runs
// the Slack bot, and RequireSlack says what else it needs.
func (c Config) SlackWanted() bool { return c.SlackAppToken != "" || c.SlackBotToken != "" }

// RequireSlack reports the Slack settings that `serve` needs and lacks.
func (c Config) RequireSlack() error {
	var errs []error
	if c.SlackAppToken == "" {
		errs = append(errs, errors.New("config: SLACK_APP_TOKEN is not set: it is the xapp- app-level token with the connections:write scope, "+
			"made on your Slack app's Basic Information page (`sqlbot manifest` prints the app to create)"))
	}
	if c.SlackBotToken == "" {
		errs = append(errs, errors.New("config: SLACK_BOT_TOKEN is not set: it is the xoxb- Bot User OAuth Token, "+
			"shown on your Slack app's Install App page once the app is installed"))
	}
	return errors.Join(errs...)
}

func pick(l []string, i int) string {
	if len(l) == 1 {
		return l[0]
	}
	return l[i]
}

func trimAll(l []string) []string {
	var out []string
	for _, s := range l {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// parseErrors rewrites env's parse errors, which name Go fields, into errors
// that name the variable and the kind of value expected, and returns the
// names of the variables that did not parse.
func parseErrors(err error, environ map[string]string) ([]error, []string) {
	vars := map[string]string{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		vars[f.Name] = strings.Split(f.Tag.Get("env"), ",")[0]
	}
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return []error{fmt.Errorf("config: %w", err)}, nil
	}
	var errs []error
	var names []string
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			errs = append(errs, fmt.Errorf("config: %w", e))
			continue
		}
		want := "a valid value"
		switch k := pe.Type; {
		case k == reflect.TypeFor[time.Duration](), k == reflect.TypeFor[*time.Duration]():
			want = "a duration such as 5s or 1m30s"
		case k == reflect.TypeFor[slog.Level]():
			want = "debug, info, warn or error"
		case k.Kind() == reflect.Int:
			want = "a whole number"
		}
		name := vars[pe.Name]
		names = append(names, name)
		if name == "SQLBOT_REDIS_URL" { // may hold a password
			errs = append(errs, fmt.Errorf("config: %s must be %s", name, want))
			continue
		}
		errs = append(errs, fmt.Errorf("config: %s must be %s, got %q", name, want, environ[name]))
	}
	return errs, names
}
