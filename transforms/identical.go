package transforms

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/sketch"
)

var (
	identicalGroups  = beam.NewCounter(Namespace, "identical_groups")
	identicalSkipped = beam.NewCounter(Namespace, "identical_skipped")
	representatives  = beam.NewCounter(Namespace, "representatives")
	identicalTime    = newPhaseTimer("identical")
)

func init() {
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(int, []byte), func(int, []byte), error](&identicalFn{})
	register.Iter1[[]byte]()
}

// Identical is Broder's identical-document shortcut. It takes the sketches
// of Sketch, groups documents by the fingerprint that decides identity (the
// raw content, or with Config.Lexical the canonical token stream) and keeps
// the lowest doc ID of each group as its representative. It returns
// postings, PCollection<KV<int, []byte>> of the representatives' packed.Posting
// batches keyed by shingle partition (the input of phase 2), and copies,
// PCollection<KV<int, []byte>> of packed.Edge batches (Copy set) joining each
// skipped copy to its representative, all under key 0 for the union-find.
func Identical(s beam.Scope, sketches beam.PCollection, cfg Config) (postings, copies beam.PCollection) {
	s = s.Scope("Identical")
	grouped := beam.GroupByKey(s, sketches)
	return beam.ParDo2(s, &identicalFn{Cfg: cfg}, grouped)
}

type identicalFn struct{ Cfg Config }

func (f *identicalFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emitPostings, emitCopies func(int, []byte)) error {
	defer identicalTime.done(ctx, time.Now())
	var all []packed.Sketch
	var b []byte
	var err error
	for batches(&b) {
		if all, err = packed.AppendSketches(all, b); err != nil {
			return err
		}
	}
	slices.SortFunc(all, func(x, y packed.Sketch) int {
		if x.Key != y.Key {
			return cmp.Compare(x.Key, y.Key)
		}
		return cmp.Compare(x.Doc, y.Doc)
	})
	postings := newBatcher(f.Cfg.Partitions, emitPostings)
	copies := newBatcher(1, emitCopies)
	rankSketch := f.Cfg.Sketch.Kind == sketch.Min
	var groups, skipped, reps int64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Key == all[i].Key {
			j++
		}
		rep := all[i]
		reps++
		for r, v := range rep.Values {
			p := packed.Posting{Shingle: v, Doc: rep.Doc, Size: uint32(len(rep.Values))}
			if rankSketch {
				p.Rank = uint16(r)
			}
			postings.add(packed.Partition(v, f.Cfg.Partitions), p)
		}
		if j-i > 1 {
			groups++
			skipped += int64(j - i - 1)
			for _, c := range all[i+1 : j] {
				copies.add(0, packed.Edge{A: rep.Doc, B: c.Doc, Resemblance: 1, Copy: true})
			}
		}
		i = j
	}
	postings.flush()
	copies.flush()
	identicalGroups.Inc(ctx, groups)
	identicalSkipped.Inc(ctx, skipped)
	representatives.Inc(ctx, reps)
	return nil
}
