package main

import (
	"context"
	"fmt"

	"sqlbot/evalrun/demo"
)

// demo writes the demo database: the same bytes every time.
func (a *app) demo(ctx context.Context, args []string) error {
	fs := newFlagSet("demo", a.stderr)
	out := fs.String("out", "", "path to write the demo database to")
	if err := parseFlags(fs, args); err != nil { // the demo needs no settings
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(a.stderr, "usage: sqlbot demo --out PATH")
		return &exitErr{code: exitUsage}
	}
	if err := demo.Write(ctx, *out); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "wrote %s\n", *out)
	return nil
}
