package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
)

// exportMain runs runner export and says on w what it did: rows read,
// kept and dropped by reason, and the invalid rows kept. It returns the
// exit code.
func exportMain(ctx context.Context, logs *runLog, w io.Writer) int {
	opt, err := exportOptions()
	var m *export.Manifest
	if err == nil {
		m, err = pipelines.Export(ctx, opt)
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintln(w, "neardup:", err)
		fmt.Fprintf(w, "neardup: runner %s--help lists the flags\n", commandWord())
		return 2
	}
	if errors.Is(err, pipelines.ErrDryRun) {
		fmt.Fprintln(w, "neardup:", err)
		return 0
	}
	if err != nil {
		logs.fail(err)
		return 1
	}
	logs.succeeded()
	exported(w, m, run.Output)
	return 0
}

// exported says on w what export m did.
func exported(w io.Writer, m *export.Manifest, dir string) {
	c := m.Counts
	fmt.Fprintf(w, "neardup: export of %s (--drop=%s, invalid rows %s, sweep %s, added columns %s): %d rows read in %d files\n",
		m.From, m.Drop, map[bool]string{true: "dropped", false: "kept"}[m.DropInvalid], m.Sweep, m.Columns, c["rows_read"], len(m.Files))
	fmt.Fprintf(w, "neardup: %d kept (%d of them empty or rejected), %d dropped: %d near duplicates, %d identical copies, %d empty or rejected",
		c["rows_kept"], c[export.KeptInvalid.Name()], c["rows_dropped"], c[export.DroppedNear.Name()], c[export.DroppedCopy.Name()], c[export.DroppedEmpty.Name()])
	if n := c[export.DroppedRedirect.Name()]; n > 0 {
		fmt.Fprintf(w, ", %d redirects", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "neardup: %.1fs; files in %s\n", m.WallSeconds, shown(dir))
}

// exportOptions are runner export's.
func exportOptions() (pipelines.ExportOptions, error) {
	set, _ := given()
	if err := refuse(set, settings.Export, ": it copies the kept rows of a finished run"); err != nil {
		return pipelines.ExportOptions{}, err
	}
	if run.From == "" || run.Output == "" {
		return pipelines.ExportOptions{}, usage("export needs --from (a finished output) and --output")
	}
	rule, add := run.Export()
	return pipelines.ExportOptions{From: run.From, Output: run.Output, Overwrite: run.Overwrite, Rule: rule, Add: add, Sweep: run.ExportSweep}, nil
}

// checkDedupOutput refuses, before the run starts, a --dedup-output the
// export at its end would refuse: inside the run's output, or a folder
// holding other files (without --overwrite).
func checkDedupOutput(ctx context.Context) error {
	if run.DedupOutput == "" {
		return nil
	}
	if err := pipelines.Reachable("dedup-output", run.DedupOutput); err != nil {
		return err
	}
	dedup, err := store.Abs(run.DedupOutput)
	if err != nil {
		return err
	}
	out, err := store.Abs(run.Output)
	if err != nil {
		return err
	}
	if output.Within(dedup, out) || output.Within(out, dedup) {
		return usage("--dedup-output %s and --output %s overlap: give the deduplicated crawl a folder of its own", run.DedupOutput, run.Output)
	}
	return export.Check(ctx, dedup, run.Overwrite)
}

// dedupAfter writes the deduplicated crawl of the finished run in
// --output to --dedup-output, when given: the rows of sweep's input files
// ("" for the latest), and says on w what it did.
func dedupAfter(ctx context.Context, w io.Writer, sweep string) error {
	if run.DedupOutput == "" {
		return nil
	}
	rule, add := run.Export()
	m, err := pipelines.Export(ctx, pipelines.ExportOptions{From: run.Output, Output: run.DedupOutput, Overwrite: run.Overwrite,
		Rule: rule, Add: add, Sweep: sweep})
	if err != nil {
		return fmt.Errorf("the run in %s has finished, but its deduplicated crawl was not written (runner export --from %s writes it): %w", run.Output, run.Output, err)
	}
	exported(w, m, run.DedupOutput)
	return nil
}
