package transforms

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	_ "github.com/neardup/neardup/io/beamfs" // the workers read gs:// and s3:// through Beam's filesystems
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
)

// InputFile is one matched input file, its position in the sorted list
// of matched files (the high part of its documents' IDs), and the version
// of it the run reads (its launcher's: see crawl.Pin).
type InputFile struct {
	Index int
	Path  string
	Pin   crawl.Pin
}

func init() {
	beam.RegisterType(reflect.TypeOf((*InputFile)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*crawl.Split)(nil)).Elem())
	{
		fn := &splitFn{}
		register.Function3x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	register.Emitter1[crawl.Split]()
}

// ReadSplits takes the input files and returns a PCollection<crawl.Split>,
// one element per row group: the files' footers are read by all workers,
// and the row groups redistributed so that those of one large file are
// read by every worker. cols are the columns read; with
// skipBad, a bad file (crawl.IsBadInput: not Parquet, a corrupt footer, a
// wanted column missing) is recorded under tempDir for the manifest
// instead of failing the run. A failed read is never skipped: it fails the
// bundle, for the runner to retry. Nor is a file whose version is not its
// Pin: it fails the run, naming it.
func ReadSplits(s beam.Scope, in []InputFile, cols crawl.Columns, skipBad bool, tempDir string) beam.PCollection {
	s = s.Scope("ReadSplits")
	// The files are spread over the workers before their footers are
	// read: Create is one bundle, so the split reader fused to it would
	// read every footer on one worker, a few requests per file one after
	// another (about half an hour for 20,000 objects).
	col := beam.Reshuffle(s, beam.CreateList(s, in))
	splits := beam.ParDo(s, &splitFn{Columns: cols, SkipBadFiles: skipBad, TempDir: tempDir}, col)
	return beam.Reshuffle(s, splits)
}

type splitFn struct {
	Columns      crawl.Columns
	SkipBadFiles bool
	TempDir      string
}

func (f *splitFn) ProcessElement(ctx context.Context, in InputFile, emit func(crawl.Split)) error {
	splits, err := crawl.SplitsPinned(ctx, in.Index, in.Path, in.Pin, f.Columns)
	if err != nil {
		if f.SkipBadFiles && crawl.IsBadInput(err) {
			return recordBadFile(ctx, f.TempDir, crawl.Split{FileIndex: in.Index, Path: in.Path, RowGroup: -1}, err)
		}
		return err
	}
	if crawl.IsJSONLines(in.Path) && f.TempDir != "" {
		// No footer told the launcher its rows: Publish needs this count
		// to prove every row has its docs row (output.Expect.Counted).
		if err := recordInputRows(ctx, f.TempDir, in, splits); err != nil {
			return err
		}
	}
	for _, sp := range splits {
		emit(sp)
	}
	return nil
}

// recordInputRows writes the rows of in counted by its splits under
// tempDir, for Publish. The name is fixed by the file, so a retried bundle
// rewrites the same record.
func recordInputRows(ctx context.Context, tempDir string, in InputFile, splits []crawl.Split) error {
	r := output.InputRows{Path: in.Path}
	for _, sp := range splits {
		r.Rows += sp.NumRows
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return store.WriteFile(ctx, store.Join(tempDir, output.InputRowsDir, fmt.Sprintf("%06d.json", in.Index)), b)
}

// recordBadFile notes a bad file or row group under the run's temporary
// folder, for the manifest. The name is fixed by the split, so a retried
// bundle rewrites the same record.
func recordBadFile(ctx context.Context, tempDir string, sp crawl.Split, cause error) error {
	badFiles.Inc(ctx, 1)
	b, err := json.Marshal(output.BadFile{Path: sp.Path, RowGroup: sp.RowGroup, Rows: sp.NumRows, Error: cause.Error()})
	if err != nil {
		return err
	}
	return store.WriteFile(ctx, store.Join(tempDir, output.BadFilesDir, fmt.Sprintf("%06d-%06d.json", sp.FileIndex, sp.RowGroup+1)), b)
}

var badFiles = beam.NewCounter(Namespace, "bad_files_or_row_groups")
