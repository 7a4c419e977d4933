package pipelines

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/transforms"
)

// ExportOptions is one export: the kept rows of a finished run's inputs.
type ExportOptions struct {
	From   string // a finished neardup output folder
	Output string // the export folder
	Rule   export.Rule
	Add    export.Added // the columns added to the input's
	// Sweep is the sweep whose input files are written: "" for the
	// output's latest.
	Sweep string
	// Overwrite lets the export write into a folder holding other files.
	Overwrite bool
	// SliceRows are the rows of a file one worker copies (0:
	// transforms.ExportSliceRows).
	SliceRows int64
}

// Export writes the rows of the inputs of the run in opt.From that
// opt.Rule keeps (those of one sweep's files), one file per input
// (export.Names), every column as it was and opt.Add's after them, and
// publishes the folder atomically (_export.json, then _SUCCESS). It
// refuses an input that is missing or that changed since the run (its
// size or modification time differs from the manifest's), and an
// --output inside the run's output or holding an input file.
func Export(ctx context.Context, opt ExportOptions) (*export.Manifest, error) {
	if err := absolute(&opt.From, &opt.Output); err != nil {
		return nil, err
	}
	if err := workersReach(flagPath{"from", opt.From}, flagPath{"output", opt.Output}); err != nil {
		return nil, err
	}
	start, src, err := startFrom(ctx, opt.From)
	if err != nil {
		return nil, err
	}
	if output.Within(opt.Output, opt.From) {
		return nil, fmt.Errorf("--output %s is inside the run's output %s; choose a folder outside it", opt.Output, opt.From)
	}
	sweep, err := exportSweep(opt, src)
	if err != nil {
		return nil, err
	}
	files := transforms.ExportFiles{Names: make([]string, len(src.Inputs)), SliceRows: opt.SliceRows}
	var paths []string
	for i, in := range src.Inputs {
		files.Inputs = append(files.Inputs, in.Path)
		if output.Within(in.Path, opt.Output) {
			return nil, fmt.Errorf("--output %s holds input file %s; choose another folder", opt.Output, in.Path)
		}
		if inputSweep(in, src) != sweep {
			continue
		}
		how, err := in.Changed(ctx)
		if err != nil {
			return nil, fmt.Errorf("input file %s of %s: %w", in.Path, opt.From, err)
		}
		if how != "" {
			return nil, fmt.Errorf("input file %s changed since the run in %s: %s", in.Path, opt.From, how)
		}
		if err := workersReach(flagPath{"from's input", in.Path}); err != nil {
			return nil, err // the workers copy its rows
		}
		files.Write = append(files.Write, i)
		paths = append(paths, in.Path)
	}
	if err := src.Needs(opt.From, "export", tables.ExportNeeds); err != nil {
		return nil, err
	}
	shards, err := store.List(ctx, store.Join(opt.From, tables.DocsTable, "*.parquet"))
	if err == nil && len(shards) == 0 {
		err = fmt.Errorf("%s has no %s table", opt.From, tables.DocsTable)
	}
	if err != nil {
		return nil, err
	}
	m := &export.Manifest{Tool: "neardup export", From: opt.From, Drop: opt.Rule.Drop, DropInvalid: opt.Rule.DropInvalid,
		Columns: export.FormatColumns(opt.Add.Columns), Sweep: sweep, StartedAt: start.UTC().Format(time.RFC3339)}
	if len(opt.Add.Columns) > 0 {
		m.Prefix = opt.Add.Prefix
	}
	for k, name := range export.Names(paths) {
		i := files.Write[k]
		files.Names[i] = name
		m.Files = append(m.Files, export.File{Input: paths[k], Output: name})
	}
	out, err := prepareExport(ctx, opt.Output, opt.Overwrite)
	if err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	BuildExport(s, shards, files, opt.Rule, opt.Add, transforms.Placement{Partitions: src.Partitions, TempDir: out.TempDir, Lanes: lanes(0)})
	release := out.Hold(ctx) // the lease renewed while the job runs and its files are published
	defer release()
	if _, err = runJob(ctx, p); err != nil {
		return nil, pipelineError(err)
	}
	if DryRun() {
		return nil, ErrDryRun
	}
	m.WallSeconds = time.Since(start).Seconds()
	if err := out.Publish(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// exportSweep is the sweep an export writes: opt.Sweep, or the output's
// latest; an error names the sweeps there are when the output has no
// such sweep.
func exportSweep(opt ExportOptions, src *output.Manifest) (string, error) {
	sweeps := map[string]bool{}
	latest := ""
	for _, in := range src.Inputs {
		sw := inputSweep(in, src)
		if sw == "" {
			return "", fmt.Errorf("%s was written by an earlier neardup that did not record each input's sweep: run it again to export it", opt.From)
		}
		sweeps[sw] = true
		latest = max(latest, sw)
	}
	if opt.Sweep == "" {
		return latest, nil
	}
	if !sweeps[opt.Sweep] {
		return "", fmt.Errorf("--sweep %s: %s has no input of that sweep; its sweeps: %s", opt.Sweep, opt.From, strings.Join(slices.Sorted(maps.Keys(sweeps)), ", "))
	}
	return opt.Sweep, nil
}

// inputSweep is the sweep of input in of output src: as recorded, or,
// for an output written before inputs recorded theirs, the run's sweep
// when it was not an update (all its inputs have that one).
func inputSweep(in output.Input, src *output.Manifest) string {
	if in.Sweep == "" && src.UpdatedFrom == "" {
		return src.Settings["sweep_date"]
	}
	return in.Sweep
}

// BuildExport adds the export pipeline to scope s: the docs shards' rows
// become per-slice decisions (and added values), and each file to write
// has its kept rows written under place.TempDir by its name.
func BuildExport(s beam.Scope, shards []string, files transforms.ExportFiles, rule export.Rule, add export.Added, place transforms.Placement) {
	marks := transforms.ExportMarks(s, beam.CreateList(s, shards), files, rule, add, place.Partitions)
	transforms.WriteExport(s, marks, files, add, place)
}
