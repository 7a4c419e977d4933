package pipelines

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

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
	// Overwrite lets the export write into a folder holding other files.
	Overwrite bool
}

// Export writes the rows of the inputs of the run in opt.From that
// opt.Rule keeps, one file per input (export.Names), every column as it
// was, and publishes the folder atomically (export.json, then _SUCCESS).
// It refuses an input that is missing or whose size differs from what the
// run's manifest recorded, and an --output inside the run's output or
// holding an input file.
func Export(ctx context.Context, opt ExportOptions) (*export.Manifest, error) {
	if err := absolute(&opt.From, &opt.Output); err != nil {
		return nil, err
	}
	start, src, err := startFrom(ctx, opt.From)
	if err != nil {
		return nil, err
	}
	if output.Within(opt.Output, opt.From) {
		return nil, fmt.Errorf("--output %s is inside the run's output %s; choose a folder outside it", opt.Output, opt.From)
	}
	var inputs []string
	for _, in := range src.Inputs {
		if output.Within(in.Path, opt.Output) {
			return nil, fmt.Errorf("--output %s holds input file %s; choose another folder", opt.Output, in.Path)
		}
		size, err := store.Size(ctx, in.Path)
		if err != nil {
			return nil, fmt.Errorf("input file %s of %s: %w", in.Path, opt.From, err)
		}
		if size != in.Bytes {
			return nil, fmt.Errorf("input file %s changed since the run in %s: %d bytes, the run read %d", in.Path, opt.From, size, in.Bytes)
		}
		inputs = append(inputs, in.Path)
	}
	shards, err := store.List(ctx, store.Join(opt.From, tables.DocsTable, "*.parquet"))
	if err == nil && len(shards) == 0 {
		err = fmt.Errorf("%s has no %s table", opt.From, tables.DocsTable)
	}
	if err != nil {
		return nil, err
	}
	names := export.Names(inputs)
	m := &export.Manifest{Tool: "neardup export", From: opt.From, Drop: opt.Rule.Drop, DropInvalid: opt.Rule.DropInvalid,
		StartedAt: start.UTC().Format(time.RFC3339)}
	for i, in := range inputs {
		m.Files = append(m.Files, export.File{Input: in, Output: names[i]})
	}
	out, err := export.Prepare(ctx, opt.Output, opt.Overwrite)
	if err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	BuildExport(s, shards, inputs, names, opt.Rule, out.TempDir)
	if err := beamx.Run(ctx, p); err != nil {
		return nil, pipelineError(err)
	}
	m.WallSeconds = time.Since(start).Seconds()
	if err := out.Publish(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// BuildExport adds the export pipeline to scope s: the docs shards' rows
// become per-file decisions, and each input file's kept rows are written
// under tempDir by the name names gives it.
func BuildExport(s beam.Scope, shards, inputs, names []string, rule export.Rule, tempDir string) {
	marks := transforms.ExportMarks(s, beam.CreateList(s, shards), inputs, rule)
	transforms.WriteExport(s, marks, inputs, names, tempDir)
}
