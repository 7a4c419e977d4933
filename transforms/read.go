package transforms

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/crawl"
)

// InputFile is one matched input file and its position in the sorted list
// of matched files, the high part of its documents' IDs.
type InputFile struct {
	Index int
	Path  string
}

func init() {
	beam.RegisterType(reflect.TypeOf((*InputFile)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*crawl.Split)(nil)).Elem())
	register.DoFn3x1[context.Context, InputFile, func(crawl.Split), error](&splitFn{})
	register.Emitter1[crawl.Split]()
}

// ReadSplits takes the matched input files (in sorted order) and returns a
// PCollection<crawl.Split>, one element per row group, redistributed so that
// the row groups of one large file are read by every worker.
func ReadSplits(s beam.Scope, files []string, cfg Config) beam.PCollection {
	s = s.Scope("ReadSplits")
	in := make([]InputFile, len(files))
	for i, f := range files {
		in[i] = InputFile{Index: i, Path: f}
	}
	col := beam.CreateList(s, in)
	splits := beam.ParDo(s, &splitFn{Cfg: cfg}, col)
	return beam.Reshuffle(s, splits)
}

type splitFn struct{ Cfg Config }

func (f *splitFn) ProcessElement(ctx context.Context, in InputFile, emit func(crawl.Split)) error {
	splits, err := crawl.Splits(ctx, in.Index, in.Path, f.Cfg.Columns)
	if err != nil {
		return err
	}
	for _, sp := range splits {
		emit(sp)
	}
	return nil
}
