// Command sqlbot answers questions about a SQLite database in Slack, and from
// the terminal, by letting a language model write SQL that can only read.
//
// Usage: sqlbot serve | ask | sql | eval | demo | manifest | policy | mcp (see
// `sqlbot help`).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
