package transforms

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/packed"
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
func ShingleMerge(s beam.Scope, postings beam.PCollection, cfg Config) (lists, recapped beam.PCollection) {
	s = s.Scope("ShingleMerge")
	grouped := beam.GroupByKey(s, postings)
	return beam.ParDo2(s, &shingleMergeFn{Cfg: cfg}, grouped)
}

type shingleMergeFn struct{ Cfg Config }

func (f *shingleMergeFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit, emitRecapped func([]byte)) error {
	defer phase2Time.done(ctx, time.Now())
	all, err := decodeBatches(batches, packed.AppendPostings)
	if err != nil {
		return err
	}
	packed.SortPostings(all)
	var out []byte
	var distinct, shared, dropped, recapped int64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Shingle == all[i].Shingle {
			j++
		}
		distinct++
		switch n := j - i; {
		case n > f.Cfg.MaxShingleDocs:
			dropped++
			if first := f.Cfg.FirstNewDoc; first > 0 {
				old := all[i:j]
				for k, p := range old {
					if p.Doc >= first {
						old = old[:k]
						break
					}
				}
				if len(old) >= 2 && len(old) <= f.Cfg.MaxShingleDocs {
					var b []byte
					for _, p := range old {
						b = p.Append(b)
					}
					emitRecapped(b)
					recapped++
				}
			}
		case n >= 2:
			shared++
			if len(out) > 0 && len(out)+n*packed.PostingSize > maxBatchBytes {
				emit(out)
				out = nil
			}
			for _, p := range all[i:j] {
				out = p.Append(out)
			}
		}
		i = j
	}
	if len(out) > 0 {
		emit(out)
	}
	distinctShingles.Inc(ctx, distinct)
	sharedShingles.Inc(ctx, shared)
	commonDropped.Inc(ctx, dropped)
	recappedCount.Inc(ctx, recapped)
	return nil
}
