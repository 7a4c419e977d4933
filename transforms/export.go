package transforms

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

func init() {
	register.DoFn3x1[context.Context, string, func(int, []byte), error](&exportMarksFn{})
	register.DoFn2x0[int, func(int, []byte)](&exportSeedFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(string), error](&exportWriteFn{})
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
}

// exportBatch is the most marks one batch carries (about 2 bytes each).
const exportBatch = 1 << 18

// ExportMarks takes a PCollection<string> of the docs shards of a
// finished output and returns a PCollection<KV<int, []byte>>: for each
// input file (its index in inputs, the output's manifest's input paths)
// and each shard holding its rows, packed batches (export.Pack) of the
// decision rule makes for each of them, at most exportBatch rows per
// batch. Each shard is read on its own (only the five columns the rule
// needs), so no worker holds the docs table.
func ExportMarks(s beam.Scope, shards beam.PCollection, inputs []string, rule export.Rule) beam.PCollection {
	s = s.Scope("ExportMarks")
	return beam.ParDo(s, &exportMarksFn{Inputs: inputs, Drop: string(rule.Drop), DropInvalid: rule.DropInvalid}, beam.Reshuffle(s, shards))
}

type exportMarksFn struct {
	Inputs      []string
	Drop        string
	DropInvalid bool
}

func (f *exportMarksFn) ProcessElement(ctx context.Context, shard string, emit func(int, []byte)) error {
	docs, err := tables.ReadKeepColumns(ctx, shard)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(f.Inputs))
	for i, p := range f.Inputs {
		index[p] = i
	}
	rule := export.Rule{Drop: export.Drop(f.Drop), DropInvalid: f.DropInvalid}
	byFile := map[int][]export.Mark{}
	for _, d := range docs {
		i, ok := index[d.SourceFile]
		if !ok {
			return fmt.Errorf("%s: source_file %s is not among the run's inputs in its manifest", shard, d.SourceFile)
		}
		m := append(byFile[i], export.Mark{Row: d.SourceRow, Code: rule.Decide(d.Status, d.IdenticalTo != nil, d.IsRepresentative)})
		if len(m) == exportBatch {
			emit(i, export.Pack(m))
			m = m[:0]
		}
		byFile[i] = m
	}
	for i := range f.Inputs { // in the inputs' order: the same elements on a retry
		if m := byFile[i]; len(m) > 0 {
			emit(i, export.Pack(m))
		}
	}
	return nil
}

// exportSeedFn gives every input file an empty batch, so that a file
// without docs rows (no rows) is written too.
type exportSeedFn struct{}

func (f *exportSeedFn) ProcessElement(i int, emit func(int, []byte)) { emit(i, nil) }

// WriteExport takes ExportMarks' PCollection<KV<int, []byte>> and writes
// each input file's kept rows (export.Copy) to tempDir under its output
// name (names[i] for inputs[i]), with the file's counts under
// tempDir/_counts for export.Dir.Publish. It returns a
// PCollection<string> of the files written.
//
// Each file is written by one worker, which holds that file's decisions,
// one byte per row of the file (a file of 10 million rows: 10 MB), never
// its text: the rows stream from the input to the output one row group at
// a time. The batches grouped for one file are about 2 bytes per row.
func WriteExport(s beam.Scope, marks beam.PCollection, inputs, names []string, tempDir string) beam.PCollection {
	s = s.Scope("WriteExport")
	files := make([]int, len(inputs))
	for i := range files {
		files[i] = i
	}
	seeds := beam.ParDo(s, &exportSeedFn{}, beam.CreateList(s, files))
	grouped := beam.GroupByKey(s, beam.Flatten(s, marks, seeds))
	return beam.ParDo(s, &exportWriteFn{Inputs: inputs, Names: names, TempDir: tempDir}, grouped)
}

type exportWriteFn struct {
	Inputs  []string
	Names   []string
	TempDir string
}

// ProcessElement writes file i. Its output and counts have fixed names,
// so a retry rewrites them.
func (f *exportWriteFn) ProcessElement(ctx context.Context, i int, batches func(*[]byte) bool, emit func(string)) error {
	path := f.Inputs[i]
	n, err := tables.NumRows(ctx, path)
	if err != nil {
		return err
	}
	codes := make([]export.Code, n)
	var b []byte
	for batches(&b) {
		err := export.Unpack(b, func(m export.Mark) error {
			switch {
			case m.Row < 0 || m.Row >= n:
				return fmt.Errorf("%s: the docs table names row %d, the file has %d rows: the file changed since the run", path, m.Row, n)
			case codes[m.Row] != export.Unseen:
				return fmt.Errorf("%s: the docs table names row %d twice", path, m.Row)
			}
			codes[m.Row] = m.Code
			return nil
		})
		if err != nil {
			return err
		}
	}
	for row, c := range codes {
		if c == export.Unseen {
			return fmt.Errorf("%s: the docs table has no row for row %d (of %d): the file changed since the run", path, row, n)
		}
	}
	name := store.Join(f.TempDir, f.Names[i])
	if _, err := export.Copy(ctx, path, name, codes); err != nil {
		return err
	}
	counts, err := json.Marshal(export.Tally(codes))
	if err != nil {
		return err
	}
	if err := store.WriteFile(ctx, store.Join(f.TempDir, export.CountsDir, export.CountsName(i)), counts); err != nil {
		return err
	}
	emit(name)
	return nil
}
