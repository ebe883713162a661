// Package mcpserver serves the agent's three tools (list_tables,
// describe_table, run_sql) over the Model Context Protocol, so that any MCP
// client gets the same guarded database the agent's model gets.
//
// Safety contract: every call goes to agent.Tools.Call, the agent's own
// path, with the agent's input schemas: run_sql meets the guard and then the
// read-only connection, with the same policy and limits; list_tables and
// describe_table answer from what the policy exposes. Nothing here reads the
// database another way. A refusal, an SQL error, an unknown table and bad
// arguments are tool errors (a result with isError set) whose text is the
// tools' JSON: a refusal is {"refused": true, "layer", "reason"}. Only a
// protocol fault (an unknown tool's name) is a JSON-RPC error. Logs never
// carry the SQL or the rows, and go where the caller says (for stdio:
// stderr, never stdout).
package mcpserver

import (
	"context"
	"errors"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sqlbot/agent"
)

// Name is the server's name in the MCP handshake.
const Name = "sqlbot"

// Instructions are sent to a client at the handshake, for its model.
const Instructions = "Read-only SQL over one SQLite database. Call list_tables first, describe_table for the columns, " +
	"then run_sql with one SELECT. Writes and reads of what the policy hides are refused; a refusal names the layer that refused and why."

// New returns an MCP server offering tools' list_tables, describe_table and
// run_sql with the tools' own descriptions and input schemas. version is
// the server's version in the handshake. Logs (never the SQL) go to lg
// (nil: discarded).
func New(tools *agent.Tools, version string, lg *slog.Logger) *mcp.Server {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "sqlbot: read-only SQL", Version: version},
		&mcp.ServerOptions{Instructions: Instructions, Logger: lg})
	closed := false // the tools are closed-world: the database, nothing outside it
	for _, d := range tools.Defs() {
		s.AddTool(&mcp.Tool{
			Name:        d.Name,
			Description: d.Description,
			InputSchema: d.Parameters,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed},
		}, handler(tools, d.Name, lg))
	}
	return s
}

// handler calls the tool name with the call's arguments as they arrived.
func handler(tools *agent.Tools, name string, lg *slog.Logger) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args string
		if req.Params != nil {
			args = string(req.Params.Arguments)
		}
		res, err := tools.Call(ctx, name, args)
		if err != nil { // ctx ended: the client went away or cancelled the call
			return nil, err
		}
		attrs := []slog.Attr{slog.String("tool", name), slog.String("status", string(res.Status))}
		if res.Run != nil && res.Run.Statement.Status == agent.StatusRefused {
			attrs = append(attrs, slog.String("layer", string(res.Run.Statement.Layer)))
		}
		lg.LogAttrs(ctx, slog.LevelInfo, "mcp: tool call", attrs...)
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: res.Content}},
			IsError: res.Status != agent.StatusOK,
		}, nil
	}
}

// Serve runs s on t until the client closes the connection (for stdio:
// stdin reaches EOF), which returns nil, or ctx is cancelled, which returns
// nil too: both are a requested stop.
func Serve(ctx context.Context, s *mcp.Server, t mcp.Transport) error {
	err := s.Run(ctx, t)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
