package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// slowSearch finds its first row at once and then searches until its time
// limit stops it.
const slowSearch = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x AS found FROM c WHERE x = 1 OR x = 0"

// TestSQLPrintsRowsAsRead: `sqlbot sql` prints a row while its statement is
// still running. The statement runs for 30 s, to its time limit; the row
// must appear in the first half of that, and the test then kills the
// process. A `sql` that printed its rows only at the end would show the row
// after 30 s, beside the refusal.
func TestSQLPrintsRowsAsRead(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "sql", "--db", demoFile(t), slowSearch)
	cmd.Env = []string{"SQLBOT_TEST_MAIN=1", "SQLBOT_QUERY_TIMEOUT=30s", "TMPDIR=" + tmp, "HOME=" + tmp, "PATH=" + os.Getenv("PATH")}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var out []string
	var seen time.Duration
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out = append(out, sc.Text())
		if strings.Contains(sc.Text(), "│     1 │") && seen == 0 {
			seen = time.Since(start)
			cmd.Process.Kill()
		}
	}
	cmd.Wait()
	all := strings.Join(out, "\n")
	switch {
	case seen == 0:
		t.Fatalf("no row printed:\n%s", all)
	case seen > 15*time.Second:
		t.Errorf("the row was printed after %v, as the statement ended:\n%s", seen, all)
	}
	t.Logf("the row was printed %v after the process started", seen.Round(time.Millisecond))
}

// TestSQLRowsThenRefusal: when a limit stops a statement after some of its
// rows were printed, the table is closed, a line says that the rows shown
// are not the whole result, and the refusal follows, with exit 3.
func TestSQLRowsThenRefusal(t *testing.T) {
	out, errOut, code := sqlbot(t, []string{"SQLBOT_QUERY_TIMEOUT=1s"}, "sql", "--db", demoFile(t), slowSearch)
	if code != exitRefused {
		t.Errorf("exit %d, want %d; stderr %s", code, exitRefused, errOut)
	}
	want := "├───────┤\n│     1 │\n└───────┘\n(1 row read before the statement was stopped; not the whole result)\nrefused by the time limit (timeout): the statement ran longer than 1s and was stopped\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("output:\n%s\nwant it to end with\n%s", out, want)
	}
}
