package transforms

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	distinctShingles = beam.NewCounter(Namespace, "distinct_shingles")
	sharedShingles   = beam.NewCounter(Namespace, "shared_shingles")
	commonDropped    = beam.NewCounter(Namespace, "common_shingles_dropped")
	commonAnchored   = beam.NewCounter(Namespace, "common_shingles_anchored")
	recappedCount    = beam.NewCounter(Namespace, "recapped_shingles")
	phase2Time       = newPhaseTimer("phase2_shingle_merge")
)

func init() {
	{
		fn := &shingleMergeFn{}
		register.Function4x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function4x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Emitter1[[]byte]()
}

// ShingleMerge is phase 2: the <shingle, doc> lists. It takes the postings
// of Identical, keyed by shingle partition, and sorts each partition by
// shingle and doc. Shingles of a single document cannot link anything and
// are left out; shingles found in more than cand.MaxShingleDocs documents
// are dropped and counted, as Broder drops very common shingles. It returns
// lists, in place.Waves waves (see groupInWaves; a PCollection<[]byte> per
// wave): batches of packed.Posting sorted by (shingle, doc), each
// shingle's list whole within one batch; and recapped, in an
// update (up.FirstNewDoc), the lists of the index's documents for the
// shingles the new documents push over cand.MaxShingleDocs (the index
// counted them; a full run would not), in the same form (empty otherwise).
// It writes every posting, those of single-document and too common
// shingles included, to the postings table under place.TempDir (one shard
// per partition), and in an update (up.Index) reads the index's postings
// of each partition from there, beside the new documents'.
func ShingleMerge(s beam.Scope, postings beam.PCollection, cand Candidates, up Update, place Placement) (lists Waves, recapped beam.PCollection) {
	s = s.Scope("ShingleMerge")
	// Every partition: in an update the index's postings are read
	// there, and every partition's receipt of the postings table is
	// expected.
	fn := &shingleMergeFn{Candidates: cand, FirstNewDoc: up.FirstNewDoc, Index: up.Index.Postings,
		Partitions: place.Partitions, TempDir: place.shards(tables.PostingsTable), Lanes: place.Lanes}
	// In waves (place.Waves): the postings are the biggest shuffle of a
	// crawl with few near-duplicates.
	outs := groupInWaves(s, Waves{postings, everyPartition(s, place.Partitions)}, place.Waves, func(s beam.Scope, grouped, after beam.PCollection) []beam.PCollection {
		lists, recapped := beam.ParDo2(s, fn, grouped, beam.SideInput{Input: after})
		return []beam.PCollection{lists, recapped}
	})
	return outs[0], outs[1].flatten(s)
}

type shingleMergeFn struct {
	Candidates  Candidates
	FirstNewDoc uint64
	Index       []Shard // the index's postings shards, in an update
	Partitions  int
	TempDir     string // where the postings shards go ("": nowhere)
	Lanes       int
	lanes       lanes[[2]func([]byte)]
	sideRead    bool // the bundle has measured its side input
}

func (f *shingleMergeFn) StartBundle(ctx context.Context, _ func(*int) bool, emit, emitRecapped func([]byte)) {
	f.lanes.reset()
	f.sideRead = false
}

func (f *shingleMergeFn) FinishBundle(ctx context.Context, _ func(*int) bool, emit, emitRecapped func([]byte)) error {
	return f.lanes.finish(ctx, [2]func([]byte){emit, emitRecapped})
}

// ProcessElement merges one partition; after is groupInWaves' (empty).
func (f *shingleMergeFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, after func(*int) bool, emit, emitRecapped func([]byte)) error {
	waveSideInput(ctx, "shingle_merge", &f.sideRead, after)
	g := measureGroup(ctx, "shingle_merge")
	defer g.done()
	batches = g.iter(batches)
	n := hold(f.Lanes, &batches)
	// Inline (one lane), the lists are emitted as they are cut; on a lane
	// they wait for its out.
	var direct func([]byte)
	if n <= 1 {
		direct = emit
	}
	return f.lanes.timed(ctx, n, [2]func([]byte){emit, emitRecapped}, phase2Time, func(ctx context.Context) (laneOut[[2]func([]byte)], error) {
		m, err := f.merge(ctx, part, batches, direct)
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
			commonAnchored.Inc(ctx, m.anchored)
			recappedCount.Inc(ctx, int64(len(m.recapped)))
			return nil
		}, err
	})
}

// merged is what phase 2 makes of one shingle partition: the batches of
// lists (unless emitted as cut) and recapped lists to emit, and its counts.
type merged struct {
	lists, recapped                     [][]byte
	distinct, shared, dropped, anchored int64
}

// merge sorts one partition's postings, the index's included in an
// update, writes them to the postings table and cuts them into lists,
// which go to emit as they are cut if it is not nil. The postings are
// kept as decoded, a batch at a time, and sorted a key range at a time
// (packed.RangeSorter): a partition's postings are the most phase 2
// holds, and beside them it holds about an eighth more.
func (f *shingleMergeFn) merge(ctx context.Context, part int, batches func(*[]byte) bool, emit func([]byte)) (merged, error) {
	var m merged
	sorter := packed.NewPostingSorter()
	written := 0 // the postings the shard gets: in an update, the new documents'
	err := eachBatch(batches, func(b []byte) error {
		ps, err := packed.AppendPostings(make([]packed.Posting, 0, len(b)/packed.PostingSize), b)
		for _, p := range ps {
			if p.Doc >= f.FirstNewDoc {
				written++
			}
		}
		sorter.Add(ps)
		return err
	})
	if err != nil {
		return m, err
	}
	old, err := appendIndexPostings(ctx, nil, f.Index, part, f.Partitions)
	if err != nil {
		return m, err
	}
	sorter.Add(old)
	if emit == nil {
		emit = func(b []byte) { m.lists = append(m.lists, b) }
	}
	cut := listCutter{Candidates: f.Candidates, firstNewDoc: f.FirstNewDoc, m: &m, emit: emit}
	// The shard's rows are drawn from the sorted ranges as the writer asks
	// for them; each range is cut into lists when it is drawn, and the
	// ranges left after the shard's last row (or all, with no shard) after.
	var cur []packed.Posting
	draw := func() bool {
		for len(cur) == 0 {
			if cur = sorter.Next(); cur == nil {
				return false
			}
			cut.add(cur)
		}
		return true
	}
	if err := writePostings(ctx, f.TempDir, part, written, func() packed.Posting {
		for draw() {
			p := cur[0]
			cur = cur[1:]
			if p.Doc >= f.FirstNewDoc {
				return p
			}
		}
		panic("shinglemerge: fewer postings than counted") // written counted them
	}); err != nil {
		return m, err
	}
	for draw() {
		cur = nil
	}
	cut.flush()
	return m, nil
}

// listCutter cuts sorted postings into the lists of phase 2: each
// shingle's list whole within one batch of at most maxBatchBytes (unless
// the list alone is larger), single-document shingles left out and too
// common ones dropped, or kept for phase 3 to anchor (AnchorDocs), and in
// an update recapped. add must be given
// whole shingles: a key range of a packed.RangeSorter holds them whole.
type listCutter struct {
	Candidates
	firstNewDoc uint64
	m           *merged
	emit        func([]byte)
	out         []byte
}

func (c *listCutter) add(all []packed.Posting) {
	m := c.m
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Shingle == all[i].Shingle {
			j++
		}
		m.distinct++
		n := j - i
		if n > c.maxShingleDocs() {
			if c.AnchorDocs > 0 {
				m.anchored++
			} else {
				m.dropped++
			}
			if first := c.firstNewDoc; first > 0 {
				old := all[i:j]
				for k, p := range old {
					if p.Doc >= first {
						old = old[:k]
						break
					}
				}
				// The index's documents of a list the new ones push
				// over the cap: their pairs lose this shingle, or
				// under --anchor-docs are counted again as a full
				// run counts them (UpdatePairs).
				if len(old) <= c.maxShingleDocs() {
					if len(old) >= 2 {
						var b []byte
						for _, p := range old {
							b = p.Append(b)
						}
						m.recapped = append(m.recapped, b)
					}
				}
			}
			if c.AnchorDocs == 0 {
				i = j
				continue
			}
		}
		if n >= 2 {
			m.shared++
			if len(c.out) > 0 && len(c.out)+n*packed.PostingSize > maxBatchBytes {
				c.flush()
			}
			if c.out == nil {
				c.out = make([]byte, 0, max(maxBatchBytes, n*packed.PostingSize))
			}
			for _, p := range all[i:j] {
				c.out = p.Append(c.out)
			}
		}
		i = j
	}
}

// flush emits the batch being cut, if any.
func (c *listCutter) flush() {
	if len(c.out) > 0 {
		c.emit(c.out)
		c.out = nil
	}
}

// writePostings writes the postings shard of one shingle partition under
// tempDir: n postings, taken in order (by shingle and doc) from next. The
// name is fixed by the partition, so a retried bundle rewrites the same
// file. In an update the caller gives the new documents' only: the
// index's shards are carried over (CarryShards).
func writePostings(ctx context.Context, tempDir string, part, n int, next func() packed.Posting) error {
	if tempDir == "" {
		return nil
	}
	// The rows are made a chunk at a time: a table row of each posting
	// beside them was another 24 bytes per posting.
	r, err := output.WriteShardEach(ctx, tempDir, tables.PostingsTable, part, n, func(buf []tables.Posting, _ int) {
		for i := range buf {
			p := next()
			buf[i] = tables.Posting{Shingle: int64(p.Shingle), DocID: int64(p.Doc), SketchSize: int32(p.Size), Rank: int32(p.Rank)}
		}
	})
	if err != nil {
		return err
	}
	return output.WriteRecord(ctx, tempDir, "postings", part, nil, r)
}
