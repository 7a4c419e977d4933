package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/io/export"
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
	if err != nil {
		logs.fail(err)
		return 1
	}
	logs.succeeded()
	c := m.Counts
	fmt.Fprintf(w, "neardup: export of %s (--drop=%s, invalid rows %s): %d rows read in %d files\n",
		m.From, m.Drop, map[bool]string{true: "dropped", false: "kept"}[m.DropInvalid], c["rows_read"], len(m.Files))
	fmt.Fprintf(w, "neardup: %d kept (%d of them empty or rejected), %d dropped: %d near duplicates, %d identical copies, %d empty or rejected\n",
		c["rows_kept"], c[export.KeptInvalid.Name()], c["rows_dropped"], c[export.DroppedNear.Name()], c[export.DroppedCopy.Name()], c[export.DroppedEmpty.Name()])
	fmt.Fprintf(w, "neardup: %.1fs; files in %s\n", m.WallSeconds, shown(run.Output))
	return 0
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
	return pipelines.ExportOptions{From: run.From, Output: run.Output, Overwrite: run.Overwrite,
		Rule: export.Rule{Drop: run.Drop, DropInvalid: run.DropInvalid}}, nil
}
