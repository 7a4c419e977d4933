package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/neardup/neardup/io/output"
)

// publishMain is "runner publish": it finishes the publication of a run
// (or an export) whose launcher died, or whose moves failed, after it had
// proven its tables and written its plan (output.Resume). Nothing else
// of the run is redone.
func publishMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	out := fs.String("output", "", "the output (or export) folder whose publication stopped midway")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return usage("publish needs --output (the folder a run stopped publishing into)")
	}
	msg, err := output.Resume(ctx, *out)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "neardup:", msg)
	return nil
}
