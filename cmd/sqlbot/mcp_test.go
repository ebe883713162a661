package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sqlbot/agent"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// mcpSession starts `sqlbot mcp --db db` as a process (this test binary
// standing in for sqlbot, see TestMain) and connects the MCP SDK's client
// to its stdin and stdout. Its stderr is returned for failure messages.
func mcpSession(t *testing.T, db string) (*mcp.ClientSession, *safeBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp", "--db", db)
	cmd.Env = []string{"SQLBOT_TEST_MAIN=1", "XDG_CACHE_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}
	logs := &safeBuffer{}
	cmd.Stderr = logs
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "sqlbot-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to sqlbot mcp: %v\n%s", err, logs)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, logs
}

// callText calls a tool and returns its one text content and isError.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v, want a result", name, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s(%v): %d contents, want 1", name, args, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s(%v): content %T, want text", name, args, res.Content[0])
	}
	return tc.Text, res.IsError
}

// TestMCP drives `sqlbot mcp` as a process with the SDK's client: the three
// tools are listed with the agent's own schemas, run_sql answers a SELECT
// with rows, a DELETE is a tool error naming the guard and why, and the
// database file is byte-for-byte unchanged; at EOF on stdin it exits 0.
func TestMCP(t *testing.T) {
	db := demoFile(t)
	before := sum(t, db)
	cs, logs := mcpSession(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The schemas the agent offers its model, from the same database.
	rdb, err := roconn.Open(ctx, db, nil, roconn.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defs := agent.NewTools(rdb, guard.New(roconn.DefaultRows), nil).Defs()
	rdb.Close()

	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, logs)
	}
	if len(listed.Tools) != len(defs) {
		t.Fatalf("tools/list: %d tools, want %d", len(listed.Tools), len(defs))
	}
	byName := make(map[string]*mcp.Tool)
	for _, tool := range listed.Tools {
		byName[tool.Name] = tool
	}
	for _, d := range defs {
		got, ok := byName[d.Name]
		if !ok {
			t.Errorf("tools/list lacks %s", d.Name)
			continue
		}
		if got.Description != d.Description {
			t.Errorf("%s: description %q, want %q", d.Name, got.Description, d.Description)
		}
		var want, have any
		if err := json.Unmarshal(d.Parameters, &want); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got.InputSchema)
		if err := json.Unmarshal(b, &have); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("%s's input schema: %s, want %s", d.Name, b, d.Parameters)
		}
		if got.Annotations == nil || !got.Annotations.ReadOnlyHint {
			t.Errorf("%s is not marked read-only", d.Name)
		}
	}

	text, isErr := callText(t, cs, "run_sql", map[string]any{"sql": "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status"})
	if isErr {
		t.Fatalf("run_sql SELECT: tool error %s", text)
	}
	var rows struct {
		Columns  []string `json:"columns"`
		Rows     [][]any  `json:"rows"`
		RowCount int      `json:"row_count"`
	}
	if err := json.Unmarshal([]byte(text), &rows); err != nil {
		t.Fatalf("run_sql's result is not JSON: %v: %s", err, text)
	}
	if !reflect.DeepEqual(rows.Columns, []string{"status", "n"}) || rows.RowCount != 4 || len(rows.Rows) != 4 || rows.Rows[0][0] != "canceled" {
		t.Errorf("run_sql SELECT: %s, want the four statuses with counts", text)
	}

	text, isErr = callText(t, cs, "run_sql", map[string]any{"sql": "DELETE FROM orders"})
	var refusal struct {
		Refused bool   `json:"refused"`
		Layer   string `json:"layer"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(text), &refusal); err != nil {
		t.Fatalf("the refusal is not JSON: %v: %s", err, text)
	}
	if !isErr || !refusal.Refused || refusal.Layer != "guard" || refusal.Reason != "only SELECT and WITH queries are allowed" {
		t.Errorf("run_sql DELETE: isError %v, %s; want a tool error naming the guard and why", isErr, text)
	}

	text, isErr = callText(t, cs, "list_tables", map[string]any{})
	if isErr || !strings.Contains(text, `"name":"orders"`) {
		t.Errorf("list_tables: isError %v, %s", isErr, text)
	}
	text, isErr = callText(t, cs, "describe_table", map[string]any{"table": "orders"})
	if isErr || !strings.Contains(text, `"columns"`) || !strings.Contains(text, `"status"`) {
		t.Errorf("describe_table orders: isError %v, %s", isErr, text)
	}

	// Closing stdin ends the session: the process exits 0 by itself.
	if err := cs.Close(); err != nil {
		t.Errorf("sqlbot mcp at EOF: %v, want exit 0\n%s", err, logs)
	}
	if sum(t, db) != before {
		t.Error("the database file changed")
	}
	if strings.Contains(logs.String(), "DELETE") {
		t.Error("the logs hold the SQL")
	}
}

// TestMCPBadInput: what a client gets wrong comes back as a tool error that
// says what to do, and the session goes on.
func TestMCPBadInput(t *testing.T) {
	db := demoFile(t)
	before := sum(t, db)
	cs, _ := mcpSession(t, db)
	huge := "SELECT 1 AS x WHERE 1 = 1" + strings.Repeat(" AND 1 = 1", 300_000) // 3 MB of SQL
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string // in the tool error's text
	}{
		{"describe_table", map[string]any{"table": "salaries"}, "unknown table: salaries; the tables you may read are:"},
		{"describe_table", map[string]any{"table": ""}, "unknown table"},
		{"run_sql", map[string]any{"sql": ""}, `run_sql needs {\"sql\": \"SELECT ...\"}`},
		{"run_sql", map[string]any{"sql": "   "}, `run_sql needs {\"sql\": \"SELECT ...\"}`},
		{"run_sql", map[string]any{"sql": "SELECT nosuchcolumn FROM orders"}, "no such column: nosuchcolumn"},
		{"run_sql", map[string]any{"sql": huge}, `"refused":true,"layer":"limit","reason":"the statement is longer than the limit of`},
	} {
		text, isErr := callText(t, cs, tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s(%.60v): isError %v, %.300s; want a tool error with %q", tc.tool, tc.args, isErr, text, tc.want)
		}
	}
	// The session still answers.
	if text, isErr := callText(t, cs, "run_sql", map[string]any{"sql": "SELECT 1 AS one"}); isErr || !strings.Contains(text, `[[1]]`) {
		t.Errorf("after bad input, run_sql SELECT 1: isError %v, %s", isErr, text)
	}
	if sum(t, db) != before {
		t.Error("the database file changed")
	}
}
