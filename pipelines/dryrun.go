package pipelines

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/output"
)

// ErrDryRun is what Run, Update, Recluster and Export return after a
// Dataflow dry run (--runner=dataflow --dry_run): the Go SDK built the
// job, translated it for Dataflow and logged it instead of submitting
// it, so no tables were written and there is nothing to publish. The
// launcher wrote nothing either: the output folder was checked as a run
// would check it, and left as it was.
var ErrDryRun = errors.New("a dry run: the job above is what Dataflow would receive; it was not submitted, and nothing was written or published")

// DryRun reports whether this launch is a Dataflow dry run. Beam's
// Dataflow runner defines --dry_run; the other runners ignore it.
func DryRun() bool {
	switch strings.ToLower(*runners.Runner) {
	case "dataflow", "dataflowrunner":
	default:
		return false
	}
	f := flag.Lookup("dry_run")
	return f != nil && f.Value.String() == "true"
}

// prepareOutput is output.Prepare, or under a dry run output.PrepareDry.
func prepareOutput(ctx context.Context, dir, command string, inputs []string, overwrite bool) (*output.Dir, error) {
	if DryRun() {
		return output.PrepareDry(ctx, dir, command, inputs, overwrite)
	}
	return output.Prepare(ctx, dir, command, inputs, overwrite)
}

// prepareExport is export.Prepare, or under a dry run export.PrepareDry.
func prepareExport(ctx context.Context, dir string, overwrite bool) (*export.Dir, error) {
	if DryRun() {
		return export.PrepareDry(ctx, dir, overwrite)
	}
	return export.Prepare(ctx, dir, overwrite)
}
