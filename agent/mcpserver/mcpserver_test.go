package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sqlbot/agent"
	"sqlbot/agent/agenttest"
	"sqlbot/agent/mcpserver"
	"sqlbot/guard"
	"sqlbot/roconn"
)

// connect serves the shop's tools in memory and returns a client session.
func connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	db := agenttest.Open(t, roconn.Limits{})
	s := mcpserver.New(agent.NewTools(db, guard.New(roconn.DefaultRows), nil), "test", nil)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- mcpserver.Serve(ctx, s, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v, want nil at the end of the session", err)
		}
	})
	return cs
}

// Every layer's refusal is a tool error with the layer and the reason, and
// a statement that runs is not an error.
func TestRefusalsAreToolErrors(t *testing.T) {
	cs := connect(t)
	for _, tc := range []struct {
		sql       string
		wantError bool
		wantLayer string
	}{
		{"SELECT count(*) AS n FROM regions", false, ""},
		{"DROP TABLE regions", true, "guard"},
		{"SELECT * FROM customers", true, "authorizer"}, // not exposed by the policy
		{"SELECT * FROM regions; DELETE FROM regions", true, "guard"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: agent.ToolRunSQL, Arguments: map[string]string{"sql": tc.sql}})
		cancel()
		if err != nil {
			t.Fatalf("run_sql %q: %v", tc.sql, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var out struct {
			Refused bool   `json:"refused"`
			Layer   string `json:"layer"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("run_sql %q: %v: %s", tc.sql, err, text)
		}
		if res.IsError != tc.wantError || out.Layer != tc.wantLayer || (tc.wantError && (!out.Refused || out.Reason == "")) {
			t.Errorf("run_sql %q: isError %v, %s; want isError %v, layer %q with a reason", tc.sql, res.IsError, text, tc.wantError, tc.wantLayer)
		}
		if strings.Contains(text, "@") { // the hidden table's e-mail addresses
			t.Errorf("run_sql %q leaked private data: %s", tc.sql, text)
		}
	}
}

// An unknown tool is a protocol fault (a JSON-RPC error), not a result.
func TestUnknownTool(t *testing.T) {
	cs := connect(t)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_table", Arguments: map[string]string{}})
	if err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}
}
