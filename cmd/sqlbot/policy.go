package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"sqlbot/evalrun/demo"
	"sqlbot/roconn"
	"sqlbot/roconn/draft"
)

const policyUsage = `usage: sqlbot policy draft [--db PATH] [--out FILE] [--force]

Writes a starting policy for the database: every table and view described,
columns that look private hidden, each with the reason in a comment. Review it,
then serve with SQLBOT_POLICY=FILE.
`

// policy runs `sqlbot policy draft`.
func (a *app) policy(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "draft" {
		fmt.Fprint(a.stderr, policyUsage)
		if len(args) == 0 {
			return &exitErr{code: exitUsage}
		}
		return &exitErr{code: exitUsage, err: fmt.Errorf("unknown policy command %q", args[0])}
	}
	fset := newFlagSet("policy draft", a.stderr)
	db := fset.String("db", "", "SQLite file to draft a policy for (default: SQLBOT_DB, else the demo database)")
	out := fset.String("out", "", "file to write the policy to (default: standard output)")
	force := fset.Bool("force", false, "replace --out if it exists")
	fset.Usage = func() {
		fmt.Fprint(a.stderr, policyUsage)
		fset.PrintDefaults()
	}
	if err := a.parse(fset, args[1:]); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		fset.Usage()
		return &exitErr{code: exitUsage}
	}
	path := cmp.Or(*db, a.cfg.DB)
	if path == "" {
		dir, err := a.cfg.CacheDir()
		if err != nil {
			return err
		}
		if path, err = demo.Ensure(ctx, dir); err != nil {
			return err
		}
	}
	if *out != "" && !*force {
		// Say so before the work, not after: the file is never touched.
		if _, err := os.Lstat(*out); err == nil {
			return fmt.Errorf("policy draft: %s exists; pass --force to replace it", *out)
		}
	}
	schema, err := roconn.Inspect(ctx, path, roconn.InspectOptions{Timeout: a.limits().Timeout})
	if err != nil {
		return err
	}
	if len(schema.Objects) == 0 {
		return fmt.Errorf("policy draft: %s has no table or view that can be read", path)
	}
	d := draft.Make(schema)
	var cols, hidden, left int
	for _, e := range d.Entries {
		if e.LeftOut != "" {
			left++
			continue
		}
		cols += len(e.Columns)
		hidden += len(e.Hidden())
	}
	if left == len(d.Entries) {
		return fmt.Errorf("policy draft: nothing in %s can be exposed: in every table and view, what looks private could not be hidden (run without --out to see why)", path)
	}
	if *out == "" {
		return d.WriteYAML(a.stdout)
	}
	if err := writeNew(*out, *force, d.WriteYAML); err != nil {
		return fmt.Errorf("policy draft: %w", err)
	}
	leftOut := ""
	if left > 0 {
		leftOut = fmt.Sprintf(", %d left out (see the comments at the end)", left)
	}
	fmt.Fprintf(a.stderr, "wrote %s: %d tables and views, %d of %d columns hidden%s. Review it, then serve with SQLBOT_POLICY=%s\n",
		*out, len(d.Entries)-left, hidden, cols, leftOut, *out)
	return nil
}

// writeNew writes path with write, through a temporary file in the same
// directory, so a failed write leaves no half file behind. Without force,
// an existing path is never replaced, even one created meanwhile.
func writeNew(path string, force bool, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sqlbot-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if force {
		return os.Rename(tmp.Name(), path)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists; pass --force to replace it", path)
		}
		return err
	}
	return os.Remove(tmp.Name())
}
