package transforms

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

func init() {
	{
		fn := &exportMarksFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &clusterSizeFn{}
		register.Function3x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &exportSeedFn{}
		register.Function2x0(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &exportSliceFn{}
		register.Function2x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function2x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &exportJoinFn{}
		register.Function2x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function2x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
}

// exportBatch is the most marks one batch carries (about 2 bytes each,
// 15-40 with the added columns' values).
const exportBatch = 1 << 18

// ExportSliceRows is the rows of an input file one worker copies: a
// file's slices are copied in parallel and joined, so no worker holds
// more than one slice's decisions (and values), and a big file does not
// export on one core.
const ExportSliceRows = 1 << 17

// sliceKey is the key of slice slice of file i (fewer than 2^24 slices
// of a file: 2 * 10^12 rows).
func sliceKey(i int, slice int64) int { return i<<24 | int(slice) }

func fromSliceKey(k int) (file int, slice int64) { return k >> 24, int64(k & (1<<24 - 1)) }

// ExportFiles are the files an export writes: of the run's input files
// (Inputs, its manifest's paths, whose indexes the docs rows are matched
// to), those in Write, each under its name in Names (by input index),
// in slices of SliceRows rows (0: ExportSliceRows).
type ExportFiles struct {
	Inputs    []string
	Write     []int
	Names     []string
	SliceRows int64
}

// sliceRows is the rows per slice of the input file at path: slice for
// Parquet, the whole file for JSON lines, which can be read only from its
// start (a compressed one) and is copied by one worker.
func sliceRows(slice int64, path string) int64 {
	if crawl.IsJSONLines(path) {
		return 1 << 40
	}
	return slice
}

func (f ExportFiles) slice() int64 {
	if f.SliceRows > 0 {
		return f.SliceRows
	}
	return ExportSliceRows
}

// ExportMarks takes a PCollection<string> of the docs shards of a
// finished output and returns a PCollection<KV<int, []byte>>: for each
// slice of each input file to write (sliceKey of its index in
// files.Inputs and the slice) packed batches
// (export.Pack) of the decision rule makes for each of its rows, with
// the row's values for the columns add names, at most exportBatch marks
// per batch. Each shard is read on its own (only the columns needed),
// so no worker holds the docs table. A cluster's size is counted where
// its members meet: each clustered row's mark goes to the hash partition
// of its cluster (one of partitions) and comes back with the size.
func ExportMarks(s beam.Scope, shards beam.PCollection, files ExportFiles, rule export.Rule, add export.Added, partitions int) beam.PCollection {
	s = s.Scope("ExportMarks")
	sizes := add.Needs(export.ColClusterSize)
	fn := &exportMarksFn{Inputs: files.Inputs, Write: files.Write, Drop: string(rule.Drop), DropInvalid: rule.DropInvalid,
		Values: len(add.Columns) > 0, Slice: files.slice()}
	if sizes {
		fn.Partitions = partitions
	}
	marks, clustered := beam.ParDo2(s, fn, beam.Reshuffle(s, shards))
	if !sizes {
		return marks
	}
	return beam.Flatten(s, marks, beam.ParDo(s, &clusterSizeFn{Inputs: files.Inputs, Slice: files.slice()}, beam.GroupByKey(s, clustered)))
}

type exportMarksFn struct {
	Inputs      []string
	Write       []int
	Drop        string
	DropInvalid bool
	Values      bool  // the marks carry the added columns' values
	Slice       int64 // rows per slice
	// Partitions, when not 0, sends each clustered row's mark to its
	// cluster's partition (the second output) to have its size counted.
	Partitions int
}

func (f *exportMarksFn) ProcessElement(ctx context.Context, shard string, emit, emitClustered func(int, []byte)) error {
	docs, err := tables.ReadKeepColumns(ctx, shard, f.Values)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(f.Inputs))
	for i, p := range f.Inputs {
		index[p] = -1 - i // not written
	}
	for _, i := range f.Write {
		index[f.Inputs[i]] = i
	}
	rule := export.Rule{Drop: export.Drop(f.Drop), DropInvalid: f.DropInvalid}
	var direct, clustered markBatches
	for _, d := range docs {
		i, ok := index[d.SourceFile]
		switch {
		case !ok:
			return fmt.Errorf("%s: source_file %s is not among the run's inputs in its manifest", shard, d.SourceFile)
		case i < 0:
			continue
		}
		m := export.Mark{File: i, Row: d.SourceRow, Code: rule.Decide(d.Status, d.IdenticalTo != nil, d.IsRepresentative)}
		if f.Values {
			m.Values = docValues(d)
		}
		if f.Partitions > 0 && d.ClusterID != nil {
			clustered.add(packed.Partition(uint64(*d.ClusterID), f.Partitions), m)
			continue
		}
		direct.add(sliceKey(i, m.Row/sliceRows(f.Slice, f.Inputs[i])), m)
	}
	// The shard's rows come in a fixed order, and so do the batches: the
	// same elements on a retry.
	direct.each(func(i int, b []export.Mark) { emit(i, export.Pack(b, f.Values)) })
	clustered.each(func(p int, b []export.Mark) { emitClustered(p, export.Pack(b, true)) })
	return nil
}

// docValues are a docs row's values for the added columns; a document
// not in a cluster counts as a cluster of one.
func docValues(d tables.Doc) export.Values {
	v := export.Values{DocID: d.DocID, ClusterSize: 1}
	if d.ClusterID != nil {
		v.ClusterID, v.Has = *d.ClusterID, v.Has|export.HasCluster
	}
	if d.KeptDocID != nil {
		v.KeptDocID, v.Has = *d.KeptDocID, v.Has|export.HasKept
	}
	if d.ResemblanceToKept != nil {
		v.Resemblance, v.Has = *d.ResemblanceToKept, v.Has|export.HasResemblance
	}
	return v
}

// markBatches are marks gathered by key (a slice or a partition), cut at
// exportBatch. The project's batcher packs fixed-width records into
// partitions numbered densely; marks are packed sorted and delta-encoded
// (export.Pack, about 2 bytes each) under sparse slice keys.
type markBatches struct {
	by   map[int][]export.Mark
	keys []int // in first-seen order
	full []keyedMarks
}

type keyedMarks struct {
	key   int
	batch []export.Mark
}

func (b *markBatches) add(key int, x export.Mark) {
	if b.by == nil {
		b.by = map[int][]export.Mark{}
	}
	s, seen := b.by[key]
	if !seen {
		b.keys = append(b.keys, key)
	}
	s = append(s, x)
	if len(s) == exportBatch {
		b.full = append(b.full, keyedMarks{key, s})
		s = nil
	}
	b.by[key] = s
}

// each calls fn with every batch: the full ones, then the rest by key in
// the order the keys were first seen.
func (b *markBatches) each(fn func(key int, batch []export.Mark)) {
	for _, k := range b.full {
		fn(k.key, k.batch)
	}
	for _, k := range b.keys {
		if s := b.by[k]; len(s) > 0 {
			fn(k, s)
		}
	}
}

// clusterSizeFn takes one partition's clustered marks, which hold every
// member of each of its clusters, sets each mark's cluster size, and
// emits them by file.
type clusterSizeFn struct {
	Inputs []string
	Slice  int64 // rows per slice
}

func (f *clusterSizeFn) ProcessElement(_ int, in func(*[]byte) bool, emit func(int, []byte)) error {
	var marks []export.Mark
	size := map[int64]int64{}
	var b []byte
	for in(&b) {
		err := export.Unpack(b, func(m export.Mark) error {
			marks = append(marks, m)
			size[m.Values.ClusterID]++
			return nil
		})
		if err != nil {
			return err
		}
	}
	var out markBatches
	for _, m := range marks {
		m.Values.ClusterSize = size[m.Values.ClusterID]
		if m.File < 0 || m.File >= len(f.Inputs) {
			return fmt.Errorf("a mark of input file %d of %d", m.File, len(f.Inputs))
		}
		out.add(sliceKey(m.File, m.Row/sliceRows(f.Slice, f.Inputs[m.File])), m)
	}
	out.each(func(key int, b []export.Mark) { emit(key, export.Pack(b, true)) })
	return nil
}

// exportSeedFn gives every file to write an empty batch for its first
// slice, so that a file without rows is written too.
type exportSeedFn struct{}

func (f *exportSeedFn) ProcessElement(i int, emit func(int, []byte)) { emit(sliceKey(i, 0), nil) }

// WriteExport takes ExportMarks' PCollection<KV<int, []byte>> and writes
// each file to write's kept rows, with the columns add names, to
// place.TempDir under its name, and the file's counts under _counts there
// for export.Dir.Publish. On the embedded runner the slices and files of
// one bundle are copied on place.Lanes goroutines (see lanes). It returns a PCollection<string> of the files
// written.
//
// Each slice of a file is copied by one worker (export.Copy), which holds
// the slice's decisions, one byte per row (about 50 more with added
// columns), never its text: the rows stream from the input to a part
// file one row group at a time. Then one worker per file joins its parts
// (export.Concat), copying their compressed row groups as they are.
func WriteExport(s beam.Scope, marks beam.PCollection, files ExportFiles, add export.Added, place Placement) beam.PCollection {
	s = s.Scope("WriteExport")
	seeds := beam.ParDo(s, &exportSeedFn{}, beam.CreateList(s, files.Write))
	slices := beam.GroupByKey(s, beam.Flatten(s, marks, seeds))
	parts := beam.ParDo(s, &exportSliceFn{Inputs: files.Inputs, Names: files.Names, Slice: files.slice(),
		Columns: add.Columns, Prefix: add.Prefix, TempDir: place.TempDir, Lanes: place.Lanes}, slices)
	written := beam.ParDo(s, &exportJoinFn{Inputs: files.Inputs, Names: files.Names, Slice: files.slice(), TempDir: place.TempDir, Lanes: place.Lanes},
		beam.GroupByKey(s, parts))
	// Prism spins on a stage whose output nothing consumes (see drain):
	// 12.9 s against 5.7 s for an export of 1 GB of text.
	drain(s, written)
	return written
}

// exportPart is one slice's part file and its counts.
type exportPart struct {
	Slice  int64         `json:"slice"`
	Path   string        `json:"path"`
	Counts export.Counts `json:"counts"`
}

type exportSliceFn struct {
	Inputs  []string
	Names   []string
	Slice   int64
	Columns []export.Column
	Prefix  string
	TempDir string
	Lanes   int
	lanes   lanes[func(int, []byte)]
}

func (f *exportSliceFn) StartBundle(ctx context.Context, emit func(int, []byte)) { f.lanes.reset() }

func (f *exportSliceFn) FinishBundle(ctx context.Context, emit func(int, []byte)) error {
	return f.lanes.finish(ctx, emit)
}

// ProcessElement copies one slice of a file to its part. The part has a
// fixed name, so a retry rewrites it.
func (f *exportSliceFn) ProcessElement(ctx context.Context, key int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "export_slice")
	defer g.done()
	batches = g.iter(batches)
	n := hold(f.Lanes, &batches)
	return f.lanes.do(ctx, n, emit, func(ctx context.Context) (laneOut[func(int, []byte)], error) {
		i, part, err := f.copy(ctx, key, batches)
		return func(_ context.Context, emit func(int, []byte)) error {
			emit(i, part)
			return nil
		}, err
	})
}

// copy copies the slice key of a file, whose marks batches holds, and
// returns the file's index and its part (exportPart, as JSON).
func (f *exportSliceFn) copy(ctx context.Context, key int, batches func(*[]byte) bool) (int, []byte, error) {
	i, slice := fromSliceKey(key)
	path := f.Inputs[i]
	rows := sliceRows(f.Slice, path)
	lo := slice * rows
	// A JSON lines file is one slice, and no footer says its rows: they
	// are the rows its marks name (n < 0), and export.CopyJSONLines fails
	// if the file holds any other number.
	jsonl := crawl.IsJSONLines(path)
	n := int64(-1)
	if !jsonl {
		var err error
		if n, err = tables.NumRows(ctx, path); err != nil {
			return i, nil, err
		}
		if lo >= n && lo > 0 {
			return i, nil, fmt.Errorf("%s: the docs table names row %d or later, the file has %d rows: the file changed since the run", path, lo, n)
		}
	}
	add := export.Added{Columns: f.Columns, Prefix: f.Prefix}
	codes, values, err := sliceCodes(path, i, slice, rows, n, len(add.Columns) > 0, batches)
	if err != nil {
		return i, nil, err
	}
	part := store.Join(f.TempDir, export.PartsDir, fmt.Sprintf("%s.%06d", f.Names[i], slice))
	err = withCopySlot(ctx, func() error {
		var err error
		if jsonl {
			_, err = export.CopyJSONLines(ctx, path, part, codes, add, values)
		} else {
			_, err = export.Copy(ctx, path, part, lo, codes, add, values)
		}
		return err
	})
	if err != nil {
		return i, nil, err
	}
	b, err := json.Marshal(exportPart{Slice: slice, Path: part, Counts: export.Tally(codes)})
	return i, b, err
}

// sliceCodes reads the marks of slice slice (rows per slice) of file i at
// path from batches, and returns the decision for each of the slice's
// rows and, with values, their added columns' values. n is the file's
// rows, or < 0 when unknown: then the slice's rows are those the marks
// name. A row named twice, a row outside the slice or the file, and a
// row of the slice without a mark are errors.
func sliceCodes(path string, i int, slice, rows, n int64, withValues bool, batches func(*[]byte) bool) ([]export.Code, []export.Values, error) {
	lo := slice * rows
	var codes []export.Code
	var values []export.Values
	if n >= 0 {
		hi := min(n, lo+rows)
		codes = make([]export.Code, hi-lo)
		if withValues {
			values = make([]export.Values, hi-lo)
		}
	}
	var b []byte
	for batches(&b) {
		err := export.Unpack(b, func(m export.Mark) error {
			switch {
			case m.File != i || m.Row < lo || m.Row/rows != slice:
				return fmt.Errorf("%s: row %d of file %d reached the writer of slice %d of file %d", path, m.Row, m.File, slice, i)
			case n >= 0 && m.Row >= n:
				return fmt.Errorf("%s: the docs table names row %d, the file has %d rows: the file changed since the run", path, m.Row, n)
			}
			for n < 0 && int64(len(codes)) <= m.Row-lo {
				codes = append(codes, export.Unseen)
				if withValues {
					values = append(values, export.Values{})
				}
			}
			if codes[m.Row-lo] != export.Unseen {
				return fmt.Errorf("%s: the docs table names row %d twice", path, m.Row)
			}
			codes[m.Row-lo] = m.Code
			if withValues {
				values[m.Row-lo] = m.Values
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if n < 0 {
		n = lo + int64(len(codes))
	}
	for row, c := range codes {
		if c == export.Unseen {
			return nil, nil, fmt.Errorf("%s: the docs table has no row for row %d (of %d): the file changed since the run", path, lo+int64(row), n)
		}
	}
	return codes, values, nil
}

// copySlots caps the copies in flight in one worker process at its cores.
// Each copy buffers one output row group (the input's row-group size) in
// parquet-go's page buffers until it flushes, and a runner may run many
// copy bundles at once (Prism ran 14 at 4.5 GB of text, with a peak heap
// of 842 MB; capped, 295 MB). The copies are CPU-bound (zstd), so more of
// them than cores buys nothing: capped, the 4.5 GB export took 28-29 s
// against 31-32 s. It limits how many run, never what they write.
var copySlots = sync.OnceValue(func() chan struct{} { return make(chan struct{}, runtime.GOMAXPROCS(0)) })

// withCopySlot runs copy once a slot is free, or gives up with ctx.
func withCopySlot(ctx context.Context, copy func() error) error {
	slots := copySlots()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slots }()
	return copy()
}

type exportJoinFn struct {
	Inputs  []string
	Names   []string
	Slice   int64
	TempDir string
	Lanes   int
	lanes   lanes[func(string)]
}

func (f *exportJoinFn) StartBundle(ctx context.Context, emit func(string)) { f.lanes.reset() }

func (f *exportJoinFn) FinishBundle(ctx context.Context, emit func(string)) error {
	return f.lanes.finish(ctx, emit)
}

// ProcessElement joins file i's parts, in slice order, into its output,
// after checking that every slice is there, and writes the file's counts.
// Its output and counts have fixed names, so a retry rewrites them.
func (f *exportJoinFn) ProcessElement(ctx context.Context, i int, in func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "export_join")
	defer g.done()
	in = g.iter(in)
	n := hold(f.Lanes, &in)
	return f.lanes.do(ctx, n, emit, func(ctx context.Context) (laneOut[func(string)], error) {
		name, err := f.join(ctx, i, in)
		return func(_ context.Context, emit func(string)) error {
			emit(name)
			return nil
		}, err
	})
}

// join joins file i's parts, which in holds, and returns the file's name.
func (f *exportJoinFn) join(ctx context.Context, i int, in func(*[]byte) bool) (string, error) {
	path := f.Inputs[i]
	want, n := int64(1), int64(1<<40) // a JSON lines file's one slice
	if !crawl.IsJSONLines(path) {
		var err error
		if n, err = tables.NumRows(ctx, path); err != nil {
			return "", err
		}
		want = max(1, (n+f.Slice-1)/f.Slice)
	}
	parts := make([]string, want)
	total := export.Counts{}
	var b []byte
	for in(&b) {
		var p exportPart
		if err := json.Unmarshal(b, &p); err != nil {
			return "", err
		}
		if p.Slice >= want || parts[p.Slice] != "" {
			return "", fmt.Errorf("%s: slice %d of %d written twice or out of range", path, p.Slice, want)
		}
		parts[p.Slice] = p.Path
		total.Add(p.Counts)
	}
	for slice, p := range parts {
		if p == "" {
			return "", fmt.Errorf("%s: the docs table has no row for rows %d to %d: the file changed since the run", path, int64(slice)*f.Slice, min(n, int64(slice+1)*f.Slice)-1)
		}
	}
	name := store.Join(f.TempDir, f.Names[i])
	if _, err := export.Concat(ctx, parts, name); err != nil {
		return "", err
	}
	counts, err := json.Marshal(total)
	if err != nil {
		return "", err
	}
	if err := store.WriteFile(ctx, store.Join(f.TempDir, export.CountsDir, export.CountsName(f.Names[i])), counts); err != nil {
		return "", err
	}
	return name, nil
}
