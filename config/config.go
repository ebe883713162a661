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

// Config holds every setting. The limits are pointers, nil when the
// variable is unset, so that a policy file's `limits` and then roconn's
// defaults apply unless the environment overrides them.
type Config struct {
	DB     string `env:"SQLBOT_DB"`
	Policy string `env:"SQLBOT_POLICY"`
	// Questions is the question file for the deployment's own database (the
	// JSON that `sqlbot eval --questions` reads); "" means the demo's on the
	// demo database, and none elsewhere.
	Questions string `env:"SQLBOT_QUESTIONS"`

	QueryTimeout   *time.Duration `env:"SQLBOT_QUERY_TIMEOUT"`
	RowCap         *int           `env:"SQLBOT_ROW_CAP"`
	MaxColumns     *int           `env:"SQLBOT_MAX_COLUMNS"`      // nil: roconn.DefaultColumns (40)
	MaxValueBytes  *int           `env:"SQLBOT_MAX_VALUE_BYTES"`  // nil: roconn.DefaultValueBytes (1 MiB)
	MaxResultBytes *int           `env:"SQLBOT_MAX_RESULT_BYTES"` // nil: roconn.DefaultResultBytes (8 MiB)
	MaxSteps       int            `env:"SQLBOT_MAX_STEPS" envDefault:"6"`

	OpenAIBaseURL []string      `env:"OPENAI_BASE_URL" envSeparator:","`
	OpenAIAPIKey  []string      `env:"OPENAI_API_KEY" envSeparator:","`
	OpenAIModel   []string      `env:"OPENAI_MODEL" envSeparator:","`
	ModelTimeout  time.Duration `env:"SQLBOT_MODEL_TIMEOUT" envDefault:"60s"`

	SlackAppToken string `env:"SLACK_APP_TOKEN"`
	SlackBotToken string `env:"SLACK_BOT_TOKEN"`
	SlackAPIURL   string `env:"SLACK_API_URL" envDefault:"https://slack.com/api/"`
	SlashCommand  string `env:"SQLBOT_SLASH_COMMAND" envDefault:"/sqlbot"`

	RatePerMinute    int `env:"SQLBOT_RATE_PER_MINUTE" envDefault:"6"`
	RatePerDay       int `env:"SQLBOT_RATE_PER_DAY" envDefault:"40"`
	GlobalPerDay     int `env:"SQLBOT_GLOBAL_PER_DAY" envDefault:"600"`
	MaxQuestionChars int `env:"SQLBOT_MAX_QUESTION_CHARS" envDefault:"500"`
	MaxConcurrent    int `env:"SQLBOT_MAX_CONCURRENT" envDefault:"4"`

	HTTPAddr  string     `env:"SQLBOT_HTTP_ADDR"`
	LogFormat string     `env:"SQLBOT_LOG_FORMAT" envDefault:"text"`
	LogLevel  slog.Level `env:"SQLBOT_LOG_LEVEL" envDefault:"info"`

	XDGCacheHome string `env:"XDG_CACHE_HOME"` // where the demo database is cached
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

// DefaultOpenAIBaseURL is used when OPENAI_API_KEY is set without OPENAI_BASE_URL.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

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
	positive := map[string]int{
		"SQLBOT_MAX_STEPS": c.MaxSteps, "SQLBOT_RATE_PER_MINUTE": c.RatePerMinute,
		"SQLBOT_RATE_PER_DAY": c.RatePerDay, "SQLBOT_GLOBAL_PER_DAY": c.GlobalPerDay,
		"SQLBOT_MAX_QUESTION_CHARS": c.MaxQuestionChars, "SQLBOT_MAX_CONCURRENT": c.MaxConcurrent,
	}
	for name, v := range map[string]*int{"SQLBOT_ROW_CAP": c.RowCap, "SQLBOT_MAX_COLUMNS": c.MaxColumns, "SQLBOT_MAX_VALUE_BYTES": c.MaxValueBytes,
		"SQLBOT_MAX_RESULT_BYTES": c.MaxResultBytes} {
		if v != nil {
			positive[name] = *v
		}
	}
	for _, name := range sortedKeys(positive) {
		if positive[name] <= 0 {
			bad(name, "must be a whole number above 0, got %d", positive[name])
		}
	}
	if c.QueryTimeout != nil && *c.QueryTimeout <= 0 {
		bad("SQLBOT_QUERY_TIMEOUT", "must be a positive duration such as 5s, got %v", *c.QueryTimeout)
	}
	if c.ModelTimeout <= 0 {
		bad("SQLBOT_MODEL_TIMEOUT", "must be a positive duration such as 60s, got %v", c.ModelTimeout)
	}
	if c.SlackAppToken != "" && !strings.HasPrefix(c.SlackAppToken, "xapp-") {
		bad("SLACK_APP_TOKEN", "must start with xapp- (an app-level token with connections:write)")
	}
	if c.SlackBotToken != "" && !strings.HasPrefix(c.SlackBotToken, "xoxb-") {
		bad("SLACK_BOT_TOKEN", "must start with xoxb- (the bot user OAuth token)")
	}
	if !strings.HasPrefix(c.SlackAPIURL, "http://") && !strings.HasPrefix(c.SlackAPIURL, "https://") {
		bad("SLACK_API_URL", "must be an http:// or https:// URL, got %q", c.SlackAPIURL)
	}
	if !validSlashCommand(c.SlashCommand) {
		bad("SQLBOT_SLASH_COMMAND", "must be / and 1 to 31 lowercase letters, digits, - or _ (like /sqlbot), got %q", c.SlashCommand)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("SQLBOT_LOG_FORMAT", "must be text or json, got %q", c.LogFormat)
	}
	if strings.TrimSpace(c.Questions) != c.Questions {
		bad("SQLBOT_QUESTIONS", "must be the path of a question file, without spaces around it, got %q", c.Questions)
	}
	if !unparsed["OPENAI_BASE_URL"] && !unparsed["OPENAI_API_KEY"] && !unparsed["OPENAI_MODEL"] {
		if _, err := c.Providers(); err != nil {
			errs = append(errs, err)
		}
	}
	return c, errors.Join(errs...)
}

// validSlashCommand is Slack's rule for a command name, which bot.New applies
// too: "/" then 1 to 31 lowercase letters, digits, - or _.
func validSlashCommand(cmd string) bool {
	name, ok := strings.CutPrefix(cmd, "/")
	if !ok || len(name) < 1 || len(name) > 31 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Providers zips OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL into the
// providers to try, in order. Each list has either one entry (shared by all
// providers) or as many as the longest. It returns no providers when neither a
// URL nor a key is set: then only the recorded questions can be answered.
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
		urls = []string{DefaultOpenAIBaseURL}
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
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
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
		case k == reflect.TypeFor[time.Duration]() || k == reflect.TypeFor[*time.Duration]():
			want = "a duration such as 5s or 1m30s"
		case k == reflect.TypeFor[slog.Level]():
			want = "debug, info, warn or error"
		case k.Kind() == reflect.Int || (k.Kind() == reflect.Pointer && k.Elem().Kind() == reflect.Int):
			want = "a whole number"
		}
		name := vars[pe.Name]
		names = append(names, name)
		errs = append(errs, fmt.Errorf("config: %s must be %s, got %q", name, want, environ[name]))
	}
	return errs, names
}
