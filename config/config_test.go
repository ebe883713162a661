package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"sqlbot/config"
)

// Config keeps no defaults: an unset variable is the zero value, and the
// component that uses it applies its own (cmd/sqlbot's TestDocumentedDefaults
// checks that the README's defaults are the components').
func TestUnsetIsZero(t *testing.T) {
	c, err := config.Load(map[string]string{"HOME": "/home/x"})
	if err != nil {
		t.Fatalf("Load(empty): %v", err)
	}
	if !reflect.DeepEqual(c, config.Config{Home: "/home/x"}) {
		t.Errorf("Load(empty) = %+v, want only HOME set", c)
	}
	if ps, err := c.Providers(); err != nil || len(ps) != 0 {
		t.Errorf("Providers() with nothing set = %v, %v; want none", ps, err)
	}
	// An empty variable is unset too, not an error.
	if _, err := config.Load(map[string]string{"SQLBOT_ROW_CAP": "", "SQLBOT_MODEL_TIMEOUT": ""}); err != nil {
		t.Errorf("Load with empty variables: %v", err)
	}
}

func TestOverrides(t *testing.T) {
	c, err := config.Load(map[string]string{
		"SQLBOT_ROW_CAP": "50", "SQLBOT_QUERY_TIMEOUT": "2s", "SLACK_API_URL": "http://127.0.0.1:9/api", "SQLBOT_MAX_RESULT_BYTES": "65536",
		"SQLBOT_PROMPT_CHARS": "12000",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.RowCap != 50 || c.QueryTimeout != 2*time.Second || c.MaxResultBytes != 65536 || c.PromptChars != 12000 {
		t.Errorf("got row cap %d, timeout %v, result bytes %d, prompt chars %d", c.RowCap, c.QueryTimeout, c.MaxResultBytes, c.PromptChars)
	}
	// The bot, not config, adds the "/" slack-go needs (see bot's tests and
	// cmd/sqlbot's TestServeSlashTables, which passes a URL without one).
	if c.SlackAPIURL != "http://127.0.0.1:9/api" {
		t.Errorf("SLACK_API_URL = %q, want it as given", c.SlackAPIURL)
	}
}

// Every bad value is reported at once, each naming its variable.
func TestErrorsNameTheVariable(t *testing.T) {
	_, err := config.Load(map[string]string{
		"SQLBOT_ROW_CAP": "lots", "SQLBOT_QUERY_TIMEOUT": "5 seconds", "SQLBOT_LOG_LEVEL": "loud", "SQLBOT_MAX_RESULT_BYTES": "8MB",
	})
	if err == nil {
		t.Fatal("Load accepted unparsable values")
	}
	for _, name := range []string{"SQLBOT_ROW_CAP", "SQLBOT_QUERY_TIMEOUT", "SQLBOT_LOG_LEVEL", "SQLBOT_MAX_RESULT_BYTES"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	_, err = config.Load(map[string]string{
		"SQLBOT_MAX_STEPS": "0", "SQLBOT_MAX_COLUMNS": "-1", "SLACK_APP_TOKEN": "xoxb-wrong", "SLACK_BOT_TOKEN": "xapp-wrong",
		"SQLBOT_LOG_FORMAT": "xml", "SQLBOT_MAX_RESULT_BYTES": "0", "SQLBOT_MODEL_TIMEOUT": "-1s",
		"SQLBOT_PROMPT_CHARS": "500",
	})
	if err == nil {
		t.Fatal("Load accepted invalid values")
	}
	for _, name := range []string{"SQLBOT_MAX_STEPS", "SQLBOT_MAX_COLUMNS", "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "SQLBOT_LOG_FORMAT",
		"SQLBOT_MAX_RESULT_BYTES", "SQLBOT_MODEL_TIMEOUT", "SQLBOT_PROMPT_CHARS"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

// A value that does not parse and a value that breaks a rule are reported
// together, each with what it expected, and no third error comes from the
// unparsed value's zero.
func TestParseAndRuleErrorsTogether(t *testing.T) {
	c, err := config.Load(map[string]string{"SQLBOT_ROW_CAP": "lots", "SQLBOT_LOG_FORMAT": "xml", "SQLBOT_MAX_STEPS": "many", "SQLBOT_SLASH_COMMAND": "/ok"})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`SQLBOT_ROW_CAP must be a whole number, got "lots"`,
		`SQLBOT_LOG_FORMAT must be text or json, got "xml"`,
		`SQLBOT_MAX_STEPS must be a whole number, got "many"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 3 {
		t.Errorf("%d errors, want 3:\n%s", n, msg)
	}
	// What could be read is there, for help and manifest.
	if c.SlashCommand != "/ok" {
		t.Errorf("SlashCommand = %q, want the value read", c.SlashCommand)
	}
}

func TestQuestions(t *testing.T) {
	c, err := config.Load(map[string]string{"SQLBOT_QUESTIONS": "/srv/questions.json"})
	if err != nil || c.Questions != "/srv/questions.json" {
		t.Errorf("SQLBOT_QUESTIONS: %q, %v", c.Questions, err)
	}
	if _, err := config.Load(map[string]string{"SQLBOT_QUESTIONS": " q.json"}); err == nil || !strings.Contains(err.Error(), "SQLBOT_QUESTIONS") {
		t.Errorf("SQLBOT_QUESTIONS with a space: %v, want an error naming it", err)
	}
}

func TestProviders(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    []config.Provider
		wantErr bool
	}{
		{map[string]string{"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"},
			[]config.Provider{{"", "k", "m"}}, false}, // no URL: the adapter's default, OpenAI's API
		{map[string]string{"OPENAI_BASE_URL": "http://a/v1, http://b/v1", "OPENAI_API_KEY": "k1,k2", "OPENAI_MODEL": "m"},
			[]config.Provider{{"http://a/v1", "k1", "m"}, {"http://b/v1", "k2", "m"}}, false},
		{map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_MODEL": "llama3.1"},
			[]config.Provider{{"http://localhost:11434/v1", "", "llama3.1"}}, false},
		{map[string]string{"OPENAI_API_KEY": "k"}, nil, true},                                                                         // no model
		{map[string]string{"OPENAI_BASE_URL": "http://a,http://b,http://c", "OPENAI_API_KEY": "1,2", "OPENAI_MODEL": "m"}, nil, true}, // 3 vs 2
		{map[string]string{"OPENAI_BASE_URL": "ftp://a", "OPENAI_MODEL": "m"}, nil, true},
	}
	for _, tt := range tests {
		c, err := config.Load(tt.env)
		if tt.wantErr {
			if err == nil {
				t.Errorf("Load(%v): no error, want one", tt.env)
			}
			continue
		}
		if err != nil {
			t.Errorf("Load(%v): %v", tt.env, err)
			continue
		}
		got, _ := c.Providers()
		if len(got) != len(tt.want) {
			t.Errorf("Providers(%v) = %v, want %v", tt.env, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Providers(%v)[%d] = %v, want %v", tt.env, i, got[i], tt.want[i])
			}
		}
	}
}

func TestRequireSlack(t *testing.T) {
	c, _ := config.Load(map[string]string{})
	err := c.RequireSlack()
	if err == nil || !strings.Contains(err.Error(), "SLACK_APP_TOKEN") || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
		t.Errorf("RequireSlack() = %v, want both variables named", err)
	}
	if strings.Contains(err.Error(), "README") {
		t.Errorf("RequireSlack() = %v: it cites a document that does not ship with the binary", err)
	}
	c, _ = config.Load(map[string]string{"SLACK_APP_TOKEN": "xapp-1", "SLACK_BOT_TOKEN": "xoxb-1"})
	if err := c.RequireSlack(); err != nil {
		t.Errorf("RequireSlack() with both tokens = %v", err)
	}
}

// The state settings: the file, Redis (whose URL, which may hold a password,
// no error repeats), and the answer cache's TTL, where 0 (off) differs from
// unset (the cache's default).
func TestStateSettings(t *testing.T) {
	c, err := config.Load(map[string]string{"SQLBOT_STATE": "/var/lib/sqlbot/state.db",
		"SQLBOT_REDIS_URL": "redis://127.0.0.1:6379/0", "SQLBOT_CACHE_TTL": "0", "XDG_DATA_HOME": "/data"})
	if err != nil {
		t.Fatal(err)
	}
	if c.State != "/var/lib/sqlbot/state.db" || c.RedisURL != "redis://127.0.0.1:6379/0" || c.XDGDataHome != "/data" {
		t.Errorf("got state %q, redis %q, data home %q", c.State, c.RedisURL, c.XDGDataHome)
	}
	if c.CacheTTL == nil || *c.CacheTTL != 0 {
		t.Errorf("SQLBOT_CACHE_TTL=0 read as %v, want 0 (off)", c.CacheTTL)
	}
	if c, err := config.Load(map[string]string{"SQLBOT_CACHE_TTL": "2m"}); err != nil || c.CacheTTL == nil || *c.CacheTTL != 2*time.Minute {
		t.Errorf("SQLBOT_CACHE_TTL=2m: %v, %v", c.CacheTTL, err)
	}
	if c, err := config.Load(map[string]string{}); err != nil || c.CacheTTL != nil {
		t.Errorf("SQLBOT_CACHE_TTL unset: %v, %v; want nil", c.CacheTTL, err)
	}
	_, err = config.Load(map[string]string{"SQLBOT_REDIS_URL": "http://user:s3cret@host", "SQLBOT_CACHE_TTL": "-1m"})
	if err == nil || !strings.Contains(err.Error(), "SQLBOT_REDIS_URL") || !strings.Contains(err.Error(), "SQLBOT_CACHE_TTL") {
		t.Fatalf("Load = %v, want errors naming SQLBOT_REDIS_URL and SQLBOT_CACHE_TTL", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error repeats the Redis password: %v", err)
	}
	if _, err := config.Load(map[string]string{"SQLBOT_CACHE_TTL": "soon"}); err == nil || !strings.Contains(err.Error(), "SQLBOT_CACHE_TTL must be a duration") {
		t.Errorf("SQLBOT_CACHE_TTL=soon: %v", err)
	}
}

// SQLBOT_VERIFIERS is a comma-separated list of Slack user ids, spaces
// around them allowed; anything that is not a user id is an error naming
// the variable and the entry.
func TestVerifiersSetting(t *testing.T) {
	c, err := config.Load(map[string]string{"SQLBOT_VERIFIERS": "U0ANN, W0BOB ,U123ABC456"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.VerifierIDs(); strings.Join(got, ",") != "U0ANN,W0BOB,U123ABC456" {
		t.Errorf("verifiers %q", got)
	}
	if c, err := config.Load(map[string]string{}); err != nil || len(c.VerifierIDs()) != 0 {
		t.Errorf("unset: %v, %v; want none (anyone verifies)", c.VerifierIDs(), err)
	}
	for _, bad := range []string{"ann", "U0ANN,@bob", "u0ann", "C0GENERAL"} {
		_, err := config.Load(map[string]string{"SQLBOT_VERIFIERS": bad})
		if err == nil || !strings.Contains(err.Error(), "SQLBOT_VERIFIERS") {
			t.Errorf("SQLBOT_VERIFIERS=%q: %v, want an error naming the variable", bad, err)
		}
	}
}

// SQLBOT_API_TOKEN is taken as given when it can be sent as a bearer token
// and is long enough; otherwise the error names the variable and never
// repeats the token.
func TestAPITokenSetting(t *testing.T) {
	const good = "0123456789abcdef-TOKEN"
	c, err := config.Load(map[string]string{"SQLBOT_API_TOKEN": good})
	if err != nil || c.APIToken != good {
		t.Fatalf("SQLBOT_API_TOKEN=%q: %q, %v", good, c.APIToken, err)
	}
	if c, err := config.Load(map[string]string{}); err != nil || c.APIToken != "" {
		t.Errorf("unset: %q, %v; want none", c.APIToken, err)
	}
	for _, bad := range []string{"short-s3cret", "has a space in the middle 0123", "tab\tinside-the-token-0123", "ünïcode-token-0123456789"} {
		_, err := config.Load(map[string]string{"SQLBOT_API_TOKEN": bad})
		if err == nil || !strings.Contains(err.Error(), "SQLBOT_API_TOKEN") {
			t.Errorf("SQLBOT_API_TOKEN=%q: %v, want an error naming the variable", bad, err)
			continue
		}
		if strings.Contains(err.Error(), bad) {
			t.Errorf("the error repeats the token: %v", err)
		}
	}
}

// Either Slack token asks for Slack; neither runs serve without it.
func TestSlackWanted(t *testing.T) {
	for env, want := range map[string]bool{"": false, "SLACK_APP_TOKEN": true, "SLACK_BOT_TOKEN": true} {
		m := map[string]string{}
		if env == "SLACK_APP_TOKEN" {
			m[env] = "xapp-1"
		} else if env != "" {
			m[env] = "xoxb-1"
		}
		c, _ := config.Load(m)
		if got := c.SlackWanted(); got != want {
			t.Errorf("SlackWanted() with %q set = %v, want %v", env, got, want)
		}
	}
}
