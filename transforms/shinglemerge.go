package transforms

import (
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	distinctShingles = beam.NewCounter(Namespace, "distinct_shingles")
	sharedShingles   = beam.NewCounter(Namespace, "shared_shingles")
	commonDropped    = beam.NewCounter(Namespace, "common_shingles_dropped")
	recappedCount    = beam.NewCounter(Namespace, "recapped_shingles")
	phase2Time       = newPhaseTimer("phase2_shingle_merge")
)

func init() {
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func([]byte), func([]byte), error](&shingleMergeFn{})
	register.Emitter1[[]byte]()
}

// ShingleMerge is phase 2: the <shingle, doc> lists. It takes the postings
// of Identical, keyed by shingle partition, and sorts each partition by
// shingle and doc. Shingles of a single document cannot link anything and
// are left out; shingles found in more than Config.MaxShingleDocs documents
// are dropped and counted, as Broder drops very common shingles. It returns
// lists, PCollection<[]byte>: batches of packed.Posting sorted by (shingle,
// doc), each shingle's list whole within one batch; and recapped, in an
// update (Config.FirstNewDoc), the lists of the index's documents for the
// shingles the new documents push over Config.MaxShingleDocs (the index
// counted them; a full run would not), in the same form (empty otherwise).
// It writes every posting, those of single-document and too common
// shingles included, to the postings table (one shard per partition),
// and in an update (Config.Index) reads the index's postings of each
// partition from there, beside the new documents'.
func ShingleMerge(s beam.Scope, postings beam.PCollection, cfg Config) (lists, recapped beam.PCollection) {
	s = s.Scope("ShingleMerge")
	if cfg.Index.Partitions > 0 {
		postings = beam.Flatten(s, postings, everyPartition(s, cfg))
	}
	grouped := beam.GroupByKey(s, postings)
	return beam.ParDo2(s, &shingleMergeFn{Cfg: cfg}, grouped)
}

type shingleMergeFn struct {
	Cfg   Config
	lanes lanes[[2]func([]byte)]
}

func (f *shingleMergeFn) StartBundle(ctx context.Context, emit, emitRecapped func([]byte)) {
	f.lanes.reset()
}

func (f *shingleMergeFn) FinishBundle(ctx context.Context, emit, emitRecapped func([]byte)) error {
	return f.lanes.finish(ctx, [2]func([]byte){emit, emitRecapped})
}

func (f *shingleMergeFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, emit, emitRecapped func([]byte)) error {
	batches = hold(batches)
	return f.lanes.timed(ctx, f.Cfg.Lanes, [2]func([]byte){emit, emitRecapped}, phase2Time, func() (laneOut[[2]func([]byte)], error) {
		m, err := f.merge(ctx, part, batches)
		return func(ctx context.Context, emit [2]func([]byte)) error {
			for _, b := range m.lists {
				emit[0](b)
			}
			for _, b := range m.recapped {
				emit[1](b)
			}
			distinctShingles.Inc(ctx, m.distinct)
			sharedShingles.Inc(ctx, m.shared)
			commonDropped.Inc(ctx, m.dropped)
			recappedCount.Inc(ctx, int64(len(m.recapped)))
			return nil
		}, err
	})
}

// merged is what phase 2 makes of one shingle partition: the batches of
// lists and recapped lists to emit, and its counts.
type merged struct {
	lists, recapped           [][]byte
	distinct, shared, dropped int64
}

// merge sorts one partition's postings, the index's included in an
// update, writes them to the postings table and cuts them into lists.
func (f *shingleMergeFn) merge(ctx context.Context, part int, batches func(*[]byte) bool) (merged, error) {
	var m merged
	all, err := decodeBatches(batches, packed.AppendPostings)
	if err != nil {
		return m, err
	}
	if ix := f.Cfg.Index; ix.Partitions > 0 {
		old, err := readAligned(ctx, ix.Postings, part, f.Cfg.Partitions, tables.ReadPostings, func(r *tables.Posting, n int) int {
			return packed.Partition(uint64(r.Shingle), n)
		})
		if err != nil {
			return m, err
		}
		all = slices.Grow(all, len(old))
		for _, r := range old {
			all = append(all, packed.Posting{Shingle: uint64(r.Shingle), Doc: uint64(r.DocID), Size: uint32(r.SketchSize), Rank: uint16(r.Rank)})
		}
	}
	packed.SortPostings(all)
	if err := writePostings(ctx, f.Cfg, part, all); err != nil {
		return m, err
	}
	var out []byte
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Shingle == all[i].Shingle {
			j++
		}
		m.distinct++
		switch n := j - i; {
		case n > f.Cfg.maxShingleDocs():
			m.dropped++
			if first := f.Cfg.FirstNewDoc; first > 0 {
				old := all[i:j]
				for k, p := range old {
					if p.Doc >= first {
						old = old[:k]
						break
					}
				}
				if len(old) >= 2 && len(old) <= f.Cfg.maxShingleDocs() {
					var b []byte
					for _, p := range old {
						b = p.Append(b)
					}
					m.recapped = append(m.recapped, b)
				}
			}
		case n >= 2:
			m.shared++
			if len(out) > 0 && len(out)+n*packed.PostingSize > maxBatchBytes {
				m.lists = append(m.lists, out)
				out = nil
			}
			for _, p := range all[i:j] {
				out = p.Append(out)
			}
		}
		i = j
	}
	if len(out) > 0 {
		m.lists = append(m.lists, out)
	}
	return m, nil
}

// writePostings writes the postings shard of one shingle partition,
// sorted by shingle and doc (the name is fixed by the partition, so a
// retried bundle rewrites the same file).
// In an update it writes the new documents' only: the index's shards are
// carried over (CarryShards).
func writePostings(ctx context.Context, cfg Config, part int, all []packed.Posting) error {
	if cfg.TempDir == "" {
		return nil
	}
	rows := make([]tables.Posting, 0, len(all))
	for _, p := range all {
		if p.Doc >= cfg.FirstNewDoc {
			rows = append(rows, tables.Posting{Shingle: int64(p.Shingle), DocID: int64(p.Doc), SketchSize: int32(p.Size), Rank: int32(p.Rank)})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return tables.Write(ctx, store.Join(cfg.TempDir, tables.PostingsTable, tables.ShardName(part)), rows)
}
