package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"sqlbot/agent"
	"sqlbot/agent/cache"
	"sqlbot/agent/openai"
	"sqlbot/agent/present"
	"sqlbot/bot"
	"sqlbot/bot/web"
	"sqlbot/config"
	"sqlbot/evalrun"
	"sqlbot/evalrun/demo"
	"sqlbot/roconn"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitRefused = 3
	exitBudget  = 4
	exitWrong   = 5
)

// exitErr carries an exit code other than 1. A nil err means the message was
// already printed (a refusal, a budget stop, a wrong verdict).
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// exitCode prints err (unless it was already reported) and maps it to the
// process's exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	// An error can quote the model's SQL or SQLite's message about it (a
	// column name of its choosing): it is made safe for the terminal.
	var e *exitErr
	if errors.As(err, &e) {
		if e.err != nil {
			fmt.Fprintln(stderr, "sqlbot:", present.Block(e.err.Error()))
		}
		return e.code
	}
	fmt.Fprintln(stderr, "sqlbot:", present.Block(err.Error()))
	return exitError
}

// usage is the help text. The defaults it states are the components' own
// constants: config keeps none.
func usage() string {
	return `sqlbot answers questions about a SQLite database, in Slack and here, with SQL that can only read.

Usage:
  sqlbot serve                          run the Slack bot (Socket Mode, when its tokens are set) and the
                                        web page and JSON API until SIGINT/SIGTERM
  sqlbot ask [--json] QUESTION          answer one question through the agent
  sqlbot sql [--json] SQL               run one statement through the guard and the read-only connection
  sqlbot eval [flags]                   run the evaluation (--questions verified: the answers verified in
                                        Slack); sqlbot eval score REF CAND scores one answer;
                                        sqlbot eval export-verified writes the verified answers as questions
  sqlbot demo --out PATH                write the demo database (the same bytes every time)
  sqlbot manifest                       print the Slack app manifest
  sqlbot policy draft [--out FILE]      write a starting policy for --db, private-looking columns hidden
  sqlbot mcp                            serve list_tables, describe_table and run_sql over MCP (stdio)

The database commands (sql, ask, serve, eval, mcp) take --db PATH and --policy FILE (defaults:
SQLBOT_DB and SQLBOT_POLICY, else the demo database and its policy). On another database,
serve needs a policy (sqlbot policy draft writes one; a policy of expose: all exposes every
table), and the others warn without one. Flags come before arguments; -- ends the flags.
sqlbot COMMAND -h describes a command's flags.

Settings (environment variables):
  SQLBOT_DB, SQLBOT_POLICY              the SQLite file (opened read-only) and its policy file
  SQLBOT_QUESTIONS                      question file for this database, for sqlbot eval and /sqlbot eval
                                        (default: the demo's questions, on the demo database)
` + fmt.Sprintf(`  SQLBOT_QUERY_TIMEOUT                  time limit per statement (%v)
  SQLBOT_ROW_CAP, SQLBOT_MAX_COLUMNS,   rows (%d), columns (%d) and bytes per value (%d)
  SQLBOT_MAX_VALUE_BYTES                of a result
  SQLBOT_MAX_RESULT_BYTES               bytes of one result, all values together (%d)
  SQLBOT_MAX_STEPS                      model calls per question (%d)
  SQLBOT_PROMPT_CHARS                   characters of the system prompt at most; a larger schema is
                                        described in part, the tables nearest the question first (%d)
  SQLBOT_SCORE_ROWS                     rows of one result that sqlbot eval scores (%d)
  OPENAI_BASE_URL, OPENAI_API_KEY,      the model: comma-separated lists, providers tried in order;
  OPENAI_MODEL                          with none, only the demo's recorded questions are answered
  SQLBOT_MODEL_TIMEOUT                  per model call (%v)
  SLACK_APP_TOKEN, SLACK_BOT_TOKEN      xapp-… and xoxb-…: serve runs the Slack bot when they are set
  SLACK_API_URL                         the Slack Web API (%s)
  SQLBOT_SLASH_COMMAND                  the slash command (%s)
  SQLBOT_RATE_PER_MINUTE, _PER_DAY,     questions per person a minute (%d) and a day (%d),
  SQLBOT_GLOBAL_PER_DAY                 and from everyone a day (%d)
  SQLBOT_MAX_QUESTION_CHARS             characters per question (%d)
  SQLBOT_MAX_CONCURRENT                 questions worked on at once (%d)
`, roconn.DefaultTimeout, roconn.DefaultRows, roconn.DefaultColumns, roconn.DefaultValueBytes, roconn.DefaultResultBytes,
		agent.DefaultMaxSteps, agent.DefaultPromptChars, evalrun.DefaultScoreRows, openai.DefaultCallTimeout, bot.DefaultAPIURL, bot.DefaultSlashCommand,
		bot.DefaultRatePerMinute, bot.DefaultRatePerDay, bot.DefaultGlobalPerDay, bot.DefaultMaxQuestionChars,
		roconn.DefaultConcurrent) + `  SQLBOT_HTTP_ADDR                      address for the web page, /api/ask, /healthz and /metrics
                                        (off with Slack; ` + web.DefaultAddr + ` without)
  SQLBOT_API_TOKEN                      bearer token the web page and /api/ask require off loopback (none)
  SQLBOT_LOG_FORMAT, SQLBOT_LOG_LEVEL   text or json; debug, info, warn or error (text, info)
  SQLBOT_STATE                          the file where sqlbot keeps what it writes (limits, threads, reports, …)
                                        (default: sqlbot/state.db in XDG_DATA_HOME, else HOME/.local/share)
  SQLBOT_REDIS_URL                      share that state between replicas through Redis (off)
  SQLBOT_CACHE_TTL                      how long an answer is reused for the same question; 0 is off (` + cache.DefaultTTL.String() + `)
  SQLBOT_VERIFIERS                      Slack user ids whose ✅ on an answer marks it verified (anyone)
  XDG_CACHE_HOME, else HOME             where the demo database is cached
`
}

// run parses the subcommand and runs it. Tests call it with their own
// arguments and environment.
//
// Help (help, -h, --help, and each command's -h) and manifest work whatever
// the environment holds: a setting that is wrong is reported by the
// commands that use the settings, after their flags are parsed.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return &exitErr{code: exitUsage}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return nil
	}
	cfg, cfgErr := config.Load(envMap(environ))
	app := &app{cfg: cfg, cfgErr: checkSettings(cfg, cfgErr), stdout: stdout, stderr: stderr, log: newLogger(cfg, stderr)}
	commands := map[string]func(context.Context, []string) error{
		"sql": app.sql, "demo": app.demo, "ask": app.ask, "serve": app.serve,
		"manifest": app.manifest, "eval": app.eval, "policy": app.policy, "mcp": app.mcp,
	}
	if command, ok := commands[cmd]; ok {
		return command(ctx, rest)
	}
	fmt.Fprint(stderr, usage())
	return &exitErr{code: exitUsage, err: fmt.Errorf("unknown command %q", cmd)}
}

// app holds what every subcommand shares.
type app struct {
	// cfg is the settings; when cfgErr is set, only what a command needs no
	// settings for may use it (see parse).
	cfg            config.Config
	cfgErr         error
	stdout, stderr io.Writer
	log            *slog.Logger
}

// checkSettings adds to config's problems those with the settings whose rule
// a component owns (the slash command's name is Slack's rule, which the bot
// states), so that every problem is reported at once.
func checkSettings(cfg config.Config, cfgErr error) error {
	errs := []error{cfgErr}
	if cfg.SlashCommand != "" {
		if err := bot.CheckSlashCommand(cfg.SlashCommand); err != nil {
			errs = append(errs, fmt.Errorf("config: SQLBOT_SLASH_COMMAND: %w", err))
		}
	}
	return errors.Join(errs...)
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// dbFlags are the flags every database command takes.
type dbFlags struct {
	db, policy string
}

func (f *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.db, "db", "", "SQLite file to answer from (default: SQLBOT_DB, else the demo database)")
	fs.StringVar(&f.policy, "policy", "", "policy file (default: SQLBOT_POLICY, else the demo's policy for the demo database; elsewhere serve needs one, and the others read every user table)")
}

// dbFlagSet returns the flag set of a database command, with the flags
// every database command takes, and -h printing the usage lines, then the
// flags.
func (a *app) dbFlagSet(name string, usage ...string) (*flag.FlagSet, *dbFlags) {
	fs := newFlagSet(name, a.stderr)
	f := &dbFlags{}
	f.register(fs)
	fs.Usage = func() {
		for _, u := range usage {
			fmt.Fprintln(a.stderr, u)
		}
		fs.PrintDefaults()
	}
	return fs, f
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sqlbot "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses a command's args, turning -h into a clean exit and bad flags
// into a usage exit; then, unless the command asked for help, it reports the
// settings that are wrong, every one at once. Every command that uses the
// settings calls it before anything else.
func (a *app) parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return a.cfgErr
}

// parseFlags parses args, turning -h into a clean exit and bad flags into a
// usage exit. Only a command that needs no settings calls it instead of parse.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &exitErr{code: exitOK}
		}
		return &exitErr{code: exitUsage}
	}
	return nil
}

// A database is an open read-only connection and what was resolved to open it.
type database struct {
	*roconn.DB
	path   string         // the SQLite file
	demo   bool           // the file is sqlbot's demo database
	policy *roconn.Policy // the policy it is read with
	source *sourceID      // what answers on it are computed on
}

// resolveDB resolves the database and policy files: the flag, then the
// environment, then the demo (written to the cache directory if needed). A
// policy of "" means none was given.
func (a *app) resolveDB(ctx context.Context, f dbFlags) (path, policy string, isDemo bool, err error) {
	path = cmp.Or(f.db, a.cfg.DB)
	policy = cmp.Or(f.policy, a.cfg.Policy)
	if path == "" {
		dir, err := a.cfg.CacheDir()
		if err != nil {
			return "", "", false, err
		}
		if path, err = demo.Ensure(ctx, dir); err != nil {
			return "", "", false, err
		}
	}
	return path, policy, demo.Is(path), nil
}

// openDB resolves the database and policy (flag, then environment, then the
// demo) and opens the read-only connection with the effective limits. On a
// database other than the demo without a policy, every user table is
// readable: openDB says so on stderr, with how to draft a policy (serve
// refuses to start that way instead, before it gets here: see
// requirePolicy).
func (a *app) openDB(ctx context.Context, f dbFlags) (*database, error) {
	path, policyFile, isDemo, err := a.resolveDB(ctx, f)
	if err != nil {
		return nil, err
	}
	var policyYAML []byte
	switch {
	case policyFile != "":
		b, err := os.ReadFile(policyFile)
		if err != nil {
			return nil, fmt.Errorf("read policy: %w", err)
		}
		policyYAML = b
	case isDemo:
		policyYAML = demo.Policy()
	default:
		fmt.Fprintf(a.stderr, "sqlbot: warning: no policy for %s, so every table and column in it is readable. "+
			"Draft one with `%s`, review it, and pass it with --policy (serve does not start without one).\n",
			path, draftCommand(path))
	}
	var policy *roconn.Policy
	if policyYAML != nil {
		p, err := roconn.ParsePolicy(policyYAML)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", cmp.Or(policyFile, "(demo)"), err)
		}
		policy = p
	}
	db, err := roconn.Open(ctx, path, policy, a.limits())
	if err != nil {
		return nil, err
	}
	return &database{DB: db, path: path, demo: isDemo, policy: policy, source: newSourceID(path, policyYAML)}, nil
}

// requirePolicy returns an error unless the database f resolves to is the
// demo or comes with a policy: what serves other people must not expose a
// database whole by default. The error says how to draft a policy and how
// to pass it, and how to expose everything on purpose.
func (a *app) requirePolicy(ctx context.Context, command string, f dbFlags) error {
	path, policy, isDemo, err := a.resolveDB(ctx, f)
	if err != nil || policy != "" || isDemo {
		return err
	}
	return fmt.Errorf("%s: %s is not the demo database, and no policy says what may be read from it; "+
		"without one, everyone who can reach the bot could read every table and column. "+
		"Draft a policy with `%s`, review it, then pass it with --policy policy.yaml or SQLBOT_POLICY=policy.yaml. "+
		"To expose every table on purpose, pass a policy file that says `expose: all`",
		command, path, draftCommand(path))
}

// draftCommand is the command line that drafts a policy for the database
// at path, quoted for a POSIX shell where it needs to be.
func draftCommand(path string) string {
	return "sqlbot policy draft --db " + shellWord(path) + " --out policy.yaml"
}

// shellWord quotes s for a POSIX shell unless it needs no quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// limits are the environment's limits; zero fields take the policy's, then
// roconn's defaults (roconn.Open does that merge). serve gives the bot the
// pool's size as the questions it works on at once, so that no question
// waits for a connection.
func (a *app) limits() roconn.Limits {
	return roconn.Limits{
		Rows: a.cfg.RowCap, Columns: a.cfg.MaxColumns, ValueBytes: a.cfg.MaxValueBytes,
		ResultBytes: a.cfg.MaxResultBytes, Timeout: a.cfg.QueryTimeout, Concurrent: a.cfg.MaxConcurrent,
	}
}
