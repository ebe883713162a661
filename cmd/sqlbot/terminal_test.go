package main

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"sqlbot/agent/openaitest"
)

// Escape sequences a model or a value could use against the terminal: erase
// the line, move up, set the window title, a bare C1 CSI, a carriage return,
// and a right-to-left override.
const (
	eraseLine = "\x1b[2K"
	cursorUp  = "\x1b[1A"
	setTitle  = "\x1b]0;pwned\x07"
	c1CSI     = "\u009b2K"
	rlo       = "\u202e"
)

// terminalSafe fails the test if out holds anything that could redraw the
// terminal or reorder what the reader sees.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			t.Errorf("%s: output holds %U:\n%q", what, r, out)
			return
		}
	}
}

// TestSQLTerminalSafe: whatever the database names its tables and columns
// and whatever its values hold, `sqlbot sql` prints nothing that acts on the
// terminal, in text and in JSON; the JSON still carries the names, escaped.
// (The guard refuses SQL that holds control characters, so the names come
// from the schema here: a view over a table whose names hold escapes.)
func TestSQLTerminalSafe(t *testing.T) {
	evil := eraseLine + cursorUp + setTitle + c1CSI + "\r" + rlo
	path := filepath.Join(t.TempDir(), "evil.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	quoted := func(s string) string { return `"` + s + `"` }
	if _, err := rw.Exec("CREATE TABLE " + quoted("t"+evil) + " (" + quoted("c"+evil) + " TEXT);" +
		"INSERT INTO " + quoted("t"+evil) + " VALUES ('v' || char(27) || '[2K' || char(13) || char(8238));" +
		"CREATE VIEW plain AS SELECT * FROM " + quoted("t"+evil)); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	for _, q := range []string{"SELECT * FROM plain", "SELECT *, 1 AS n FROM plain WHERE nosuch = 1"} {
		for _, args := range [][]string{{"sql", "--db", path, q}, {"sql", "--db", path, "--json", q}} {
			out, errOut, code := sqlbot(t, nil, args...)
			terminalSafe(t, strings.Join(args[3:], " ")+" (stdout)", out)
			terminalSafe(t, strings.Join(args[3:], " ")+" (stderr)", errOut)
			if code != exitOK {
				continue
			}
			if len(args) == 4 && !strings.Contains(out, "c") {
				t.Errorf("text: the column is missing:\n%s", out)
			}
			if len(args) == 5 {
				var res struct{ Columns []string }
				if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Columns) != 1 || res.Columns[0] != "c"+evil {
					t.Errorf("--json columns %q (%v), want the name as the schema has it", res.Columns, err)
				}
			}
		}
	}
}

// TestSQLInfinity: ±Inf print as such and have a JSON form; SQLite makes
// NaN (0.0/0) NULL itself.
func TestSQLInfinity(t *testing.T) {
	db := demoFile(t)
	q := "SELECT 9e999 AS inf, -9e999 AS ninf, 0.0/0 AS nan"
	out, errOut, code := sqlbot(t, nil, "sql", "--db", db, q)
	if code != exitOK || !strings.Contains(out, "+Inf") || !strings.Contains(out, "-Inf") || !strings.Contains(out, "NULL") {
		t.Errorf("text: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = sqlbot(t, nil, "sql", "--db", db, "--json", q)
	var res struct{ Rows [][]any }
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil {
		t.Fatalf("--json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != "+Inf" || res.Rows[0][1] != "-Inf" || res.Rows[0][2] != nil {
		t.Errorf("--json rows = %v, want [[+Inf -Inf <nil>]]", res.Rows)
	}
}

// TestAskTerminalSafe: the model's answer, its tool arguments, its SQL, the
// column names it chose and the values it read cannot erase the lines above
// them, the refusal lines included.
func TestAskTerminalSafe(t *testing.T) {
	db := demoFile(t)
	evil := eraseLine + cursorUp + eraseLine + setTitle + c1CSI + "\r" + rlo
	s := openaitest.NewServer(t)
	env := []string{"OPENAI_BASE_URL=" + s.URL, "OPENAI_API_KEY=" + openaitest.DefaultAPIKey, "OPENAI_MODEL=m"}
	sqlArg, _ := json.Marshal(map[string]string{"sql": `SELECT 'x' || char(27) || '[2K' AS "n` + evil + `" -- ` + evil})
	refused, _ := json.Marshal(map[string]string{"sql": "DELETE FROM orders -- " + evil})
	for _, asJSON := range []bool{false, true} {
		s.Push(
			openaitest.Calls(openaitest.Call("run_sql", string(refused))),
			openaitest.Calls(openaitest.Call("run_sql", string(sqlArg))),
			openaitest.Final("Done."+evil+" All fine."),
		)
		args := []string{"ask", "--db", db, "Anything"}
		if asJSON {
			args = []string{"ask", "--db", db, "--json", "Anything"}
		}
		out, errOut, _ := sqlbot(t, env, args...)
		terminalSafe(t, strings.Join(args, " ")+" (stdout)", out)
		terminalSafe(t, strings.Join(args, " ")+" (stderr)", errOut)
		if !strings.Contains(out, "All fine") {
			t.Errorf("%v: the answer is missing:\n%s", args, out)
		}
		if asJSON {
			var res struct{ Answer string }
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Answer != "Done."+evil+" All fine." {
				t.Errorf("--json answer %q (%v), want it as the model wrote it", res.Answer, err)
			}
		}
	}
}
