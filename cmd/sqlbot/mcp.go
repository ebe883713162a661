package main

import (
	"cmp"
	"context"
	"io"
	"os"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sqlbot/agent"
	"sqlbot/agent/mcpserver"
	"sqlbot/guard"
)

// mcp serves list_tables, describe_table and run_sql over the Model Context
// Protocol on stdin and stdout until stdin ends (or SIGINT/SIGTERM), through
// the same guard, connection, policy and limits as the agent's tools. Logs go
// to stderr: stdout carries the protocol and nothing else.
func (a *app) mcp(ctx context.Context, args []string) error {
	fs, f := a.dbFlagSet("mcp", "usage: sqlbot mcp [--db PATH] [--policy FILE]",
		"Serves the tools over MCP on stdin/stdout; an MCP client starts it as a command.")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitErr{code: exitUsage}
	}
	db, err := a.openDB(ctx, *f)
	if err != nil {
		return err
	}
	defer db.Close()
	tools := agent.NewTools(db.DB, guard.New(db.Limits().Rows), a.log)
	s := mcpserver.New(tools, buildVersion(), a.log)
	a.log.InfoContext(ctx, "serving MCP on stdio", "db", db.path)
	return mcpserver.Serve(ctx, s, &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{a.stdout}})
}

// buildVersion is the module's version as built ("(devel)" from a checkout).
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return cmp.Or(bi.Main.Version, "(devel)")
	}
	return "(devel)"
}

// nopWriteCloser lets the protocol close its writer without closing stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
