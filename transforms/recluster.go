package transforms

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

func init() {
	{
		fn := &relinkFn{}
		register.Function3x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &readDocsFn{}
		register.Function5x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function5x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &scoreRanksFn{}
		register.Function2x0(fn.StartBundle)
		register.Function3x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &rankByColumnFn{}
		register.Function3x0(fn.StartBundle)
		register.Function7x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// Relink redoes the linking of phase 4 from a stored pairs table, for
// recluster: Broder's "repeat the final phase for each policy". It takes
// the pairs shards of an earlier run and returns pairRows, PCollection<KV<int,
// []byte>> of pairs-table rows per shard with linked decided by
// link.Policy (on the verified figures under link.Verification), and
// links, PCollection<KV<int, []byte>> of packed.Edge batches keyed by the
// doc partition of A (of partitions), for Components.
func Relink(s beam.Scope, shards []string, link Linking, place Placement) (pairRows, links beam.PCollection) {
	s = s.Scope("Relink")
	in := make([]InputFile, len(shards))
	for i, sh := range shards {
		in[i] = InputFile{Index: i, Path: sh}
	}
	return beam.ParDo2(s, &relinkFn{Linking: link, Partitions: place.Partitions, TempDir: place.TempDir}, spread(s, in))
}

type relinkFn struct {
	Linking    Linking
	Partitions int
	TempDir    string // where its counts go (writeKeyTally)
	linksOut
}

func (f *relinkFn) ProcessElement(ctx context.Context, shard InputFile, emitRows, emitLinks func(int, []byte)) error {
	defer phase4Time.done(ctx, time.Now())
	rows, err := tables.Read[tables.Pair](ctx, shard.Path)
	if err != nil {
		return err
	}
	links := bundleBatcher(&f.links, ctx, "links", f.Partitions, emitLinks)
	kept := rows[:0]
	var nLinks, nUncertain int64
	for _, r := range rows {
		e := policy.Estimates{Shared: int(r.Shared), Resemblance: r.Resemblance, AInB: r.ContainmentAInB, BInA: r.ContainmentBInA}
		le := e
		// A verified run links on its verified figures; a pair it
		// verified without them was proved below every policy it serves.
		verified := f.Linking.verifies(uint32(r.Shared), uint32(r.SketchSizeA), uint32(r.SketchSizeB), r.Resemblance)
		if verified {
			le = policy.Estimates{Shared: int(r.Shared)}
			if res, aInB, bInA, ok := r.Verified(string(f.Linking.Verification)); ok {
				le.Resemblance, le.AInB, le.BInA = res, aInB, bInA
			}
		}
		r.Linked = f.Linking.Policy.Links(le)
		if r.Linked {
			links.add(packed.Partition(uint64(r.DocA), f.Partitions), packed.Edge{A: uint64(r.DocA), B: uint64(r.DocB), Resemblance: r.LinkResemblance()})
			nLinks++
			if !verified && clusters.Uncertain(f.Linking.Sketch, f.Linking.Policy, int(r.Shared), int(r.SketchSizeA), int(r.SketchSizeB), r.Resemblance) {
				nUncertain++
			}
		}
		if policy.Keep(e, r.Linked) || policy.Keep(le, r.Linked) {
			kept = append(kept, r)
		}
	}
	if err := writeKeyTally(ctx, f.TempDir, "relink", shard.Index, countLinks(ctx, nLinks, nUncertain, int64(len(kept)))); err != nil {
		return err
	}
	emitPairRows(ctx, shard.Index, kept, emitRows)
	return nil
}

// ReadDocs reads a stored docs table for recluster. It takes the docs
// shards of an earlier run and returns meta, PCollection<KV<int, []byte>>
// of its rows with the cluster columns cleared, keyed by doc partition (as
// Sketch returns them), and copies, PCollection<KV<int, []byte>> of
// packed.Edge batches keyed by the doc partition of the representative,
// joining each identical copy to it (as Identical returns them); and ranks,
// the documents' packed.DocRank under kp from the columns the docs table
// holds (as Sketch returns them). When kp has a max/min:COLUMN rule, which
// the docs table cannot rank by, those ranks leave that rule's number
// unknown (keep.Policy.Partial) and copies are keyed by the copy's own
// partition, unranked, for ScoreRanks and RankByColumn. In an update (up),
// meta holds only the rows the lost and found needs: those of
// span.LatestSweep when span.MultiSweep (Assemble reads the rest where
// they are).
func ReadDocs(s beam.Scope, shards []string, kp keep.Policy, span SweepSpan, up Update, place Placement) (meta, copies, ranks beam.PCollection) {
	s = s.Scope("ReadDocs")
	outs := beam.ParDoN(s, &readDocsFn{Keep: kp, SweepSpan: span, Updating: up.on(), Partitions: place.Partitions}, spread(s, shards))
	writeTallies(s, "docs", place.TempDir, outs[3])
	return outs[0], outs[1], outs[2]
}

type readDocsFn struct {
	SweepSpan
	Keep          keep.Policy
	Updating      bool // an update's index, not a recluster's source
	Partitions    int
	copies, ranks *batcher // the bundle's (see batcher)
}

func (f *readDocsFn) StartBundle(ctx context.Context, emitMeta, emitCopies, emitRanks func(int, []byte), tally func(string, int64)) {
	f.copies, f.ranks = nil, nil
}

func (f *readDocsFn) FinishBundle(ctx context.Context, emitMeta, emitCopies, emitRanks func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.copies, ctx, emitCopies)
	finishBatcher(&f.ranks, ctx, emitRanks)
}

func (f *readDocsFn) ProcessElement(ctx context.Context, shard string, emitMeta, emitCopies, emitRanks func(int, []byte), tally func(string, int64)) error {
	defer outputTime.done(ctx, time.Now())
	var docs []tables.Doc
	var err error
	if f.Updating {
		// An update needs the copies only, and the columns that rank
		// them or find the lost URLs' documents when it ranks or finds
		// (the manifest's status counts come from Assemble, which reads
		// the whole rows).
		docs, err = tables.ReadCopies(ctx, shard, f.Keep.Ranked() || f.MultiSweep)
	} else {
		docs, err = tables.Read[tables.Doc](ctx, shard)
	}
	if err != nil {
		return err
	}
	parts := f.Partitions
	metas := make([][]tables.Doc, parts)
	copies := bundleBatcher(&f.copies, ctx, "copies", parts, emitCopies)
	ranks := bundleBatcher(&f.ranks, ctx, "ranks", parts, emitRanks)
	// A rule by an input column is ranked by ScoreRanks, and each copy
	// then goes to its own partition, where RankByColumn ranks it.
	byColumn := f.Keep.NeedsColumn() != ""
	var nOK, nEmpty, nShort, nCopies int64
	for _, d := range docs {
		var r keep.Rank
		if f.Keep.Ranked() && (d.Status == tables.StatusOK || d.Status == tables.StatusTooShort) {
			r = f.Keep.Partial(keep.Doc{Tokens: d.TokenCount, URL: deref(d.URL), Date: deref(d.Date)}, false)
			ranks.add(packed.Partition(uint64(d.DocID), parts), packed.DocRank{Doc: uint64(d.DocID), Rank: r})
		}
		if d.IdenticalTo != nil {
			to := uint64(*d.IdenticalTo)
			if byColumn {
				to, r = uint64(d.DocID), nil
			}
			copies.add(packed.Partition(to, parts), packed.Edge{A: uint64(*d.IdenticalTo), B: uint64(d.DocID), Resemblance: 1, Rank: r, Copy: true})
			nCopies++
		}
		switch d.Status {
		case tables.StatusOK:
			nOK++
		case tables.StatusEmpty:
			nEmpty++
		case tables.StatusTooShort:
			nShort++
		}
		if f.Updating {
			// An update: Assemble reads the rows where they are; only
			// the lost and found needs those of the latest sweep.
			if !f.MultiSweep || d.Sweep != f.LatestSweep {
				continue
			}
			d = tables.Doc{DocID: d.DocID, URL: d.URL, Sweep: d.Sweep}
		}
		clearClusterColumns(&d)
		p := packed.Partition(uint64(d.DocID), parts)
		metas[p] = append(metas[p], d)
	}
	if err := emitDocRows(ctx, metas, emitMeta); err != nil {
		return err
	}
	docsRead.Inc(ctx, int64(len(docs)))
	docsOK.Inc(ctx, nOK)
	docsEmpty.Inc(ctx, nEmpty)
	docsTooShort.Inc(ctx, nShort)
	identicalSkipped.Inc(ctx, nCopies)
	tally("identical_skipped", nCopies) // as data too (see writeTallies)
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ReadSketches reads a stored sketches table for recluster. It takes the
// sketches shards of an earlier run and returns PCollection<KV<int,
// []byte>> of packed.Sketch batches keyed by doc partition (of partitions;
// as Identical returns the representatives' sketches).
func ReadSketches(s beam.Scope, shards []string, partitions int) beam.PCollection {
	s = s.Scope("ReadSketches")
	return beam.ParDo(s, &readSketchesFn{Partitions: partitions}, spread(s, shards))
}

// ScoreRanks ranks every input row by the numeric column of kp's
// max/min:COLUMN rule for recluster, reading only that column of the first
// run's input files (inputs, at their first-run positions, which are in
// the doc IDs). It returns PCollection<KV<int, []byte>> of packed.DocRank
// batches keyed by doc partition (of partitions) holding that rule's
// number only (keep.Policy.Partial), for RankByColumn.
func ScoreRanks(s beam.Scope, inputs []InputFile, kp keep.Policy, partitions int) beam.PCollection {
	s = s.Scope("ScoreRanks")
	return beam.ParDo(s, &scoreRanksFn{Keep: kp, Partitions: partitions}, spread(s, inputs))
}

type scoreRanksFn struct {
	Keep       keep.Policy
	Partitions int
	bundleOut  // its batcher, kept for the bundle (see batcher)
}

func (f *scoreRanksFn) ProcessElement(ctx context.Context, in InputFile, emit func(int, []byte)) error {
	defer outputTime.done(ctx, time.Now())
	scores, has, err := crawl.ReadScores(ctx, in.Path, f.Keep.NeedsColumn())
	if err != nil {
		return err
	}
	out := f.bundle(ctx, "ranks", f.Partitions, emit)
	for row, x := range scores {
		doc := crawl.DocID(in.Index, int64(row))
		r := f.Keep.Partial(keep.Doc{Score: x, HasScore: has[row]}, true)
		out.add(packed.Partition(doc, f.Partitions), packed.DocRank{Doc: doc, Rank: r})
	}
	return nil
}

// RankByColumn completes recluster's ranks when the policy has a
// max/min:COLUMN rule. It takes, keyed by doc partition, the identical
// copies (unranked, each at its own partition), the ranks ReadDocs read
// from the docs table and the column's ranks of ScoreRanks, and joins the
// two ranks of each document the docs table ranks (keep.Merge). It
// returns the copies, ranked, at their representative's partition (of
// partitions), as Identical sends them, and the documents' whole ranks at
// their own, as Sketch sends them.
func RankByColumn(s beam.Scope, copies, ranks, scores beam.PCollection, partitions int) (rankedCopies, whole beam.PCollection) {
	s = s.Scope("RankByColumn")
	return beam.ParDo2(s, &rankByColumnFn{Partitions: partitions}, beam.CoGroupByKey(s, copies, ranks, scores))
}

type rankByColumnFn struct {
	Partitions    int
	copies, ranks *batcher // the bundle's (see batcher)
}

func (f *rankByColumnFn) StartBundle(ctx context.Context, emitCopies, emitRanks func(int, []byte)) {
	f.copies, f.ranks = nil, nil
}

func (f *rankByColumnFn) FinishBundle(ctx context.Context, emitCopies, emitRanks func(int, []byte)) {
	finishBatcher(&f.copies, ctx, emitCopies)
	finishBatcher(&f.ranks, ctx, emitRanks)
}

func (f *rankByColumnFn) ProcessElement(ctx context.Context, _ int, copiesIt, ranksIt, scoresIt func(*[]byte) bool, emitCopies, emitRanks func(int, []byte)) error {
	g := measureGroup(ctx, "rank_by_column")
	defer g.done()
	copiesIt, ranksIt, scoresIt = g.iter(copiesIt), g.iter(ranksIt), g.iter(scoresIt)
	copies, err := decodeBatches(copiesIt, packed.AppendEdges)
	if err != nil {
		return err
	}
	ranks, err := decodeBatches(ranksIt, packed.AppendDocRanks)
	if err != nil {
		return err
	}
	scores, err := decodeBatches(scoresIt, packed.AppendDocRanks)
	if err != nil {
		return err
	}
	scoreOf := make(map[uint64]keep.Rank, len(ranks))
	for _, r := range ranks {
		scoreOf[r.Doc] = nil
	}
	for _, r := range scores {
		if _, ok := scoreOf[r.Doc]; ok {
			scoreOf[r.Doc] = r.Rank
		}
	}
	rankOf := make(map[uint64]keep.Rank, len(ranks))
	out := bundleBatcher(&f.ranks, ctx, "ranks", f.Partitions, emitRanks)
	for _, r := range ranks {
		whole := keep.Merge(r.Rank, scoreOf[r.Doc])
		rankOf[r.Doc] = whole
		out.add(packed.Partition(r.Doc, f.Partitions), packed.DocRank{Doc: r.Doc, Rank: whole})
	}
	cs := bundleBatcher(&f.copies, ctx, "copies", f.Partitions, emitCopies)
	for _, c := range copies {
		c.Rank = rankOf[c.B]
		cs.add(packed.Partition(c.A, f.Partitions), c)
	}
	return nil
}
