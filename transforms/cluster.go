package transforms

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	pairsLinked = beam.NewCounter(Namespace, "links")
	// Links taken on a sketch estimate too close to the threshold for
	// its samples (clusters.Uncertain), unverified.
	linksUncertain = beam.NewCounter(Namespace, "links_uncertain")
	pairsReported  = beam.NewCounter(Namespace, "pairs_reported")
	phase4Time     = newPhaseTimer("phase4_cluster")
)

func init() {
	{
		fn := &estimateFn{}
		register.Function4x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function4x0(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// Cluster is phase 4. It takes the counted pairs of PairCount, or the
// pairs Verify passed and those it checked (checked: not valid when the
// run verifies nothing; a batch per pair partition), the
// identical copies and
// representatives' sketches of Identical and the documents' ranks of
// Sketch. Each pair is estimated (clusters.Estimate) and link decides
// whether it links its documents; Components then gives the connected
// components of the links, with the copies, the clusters, as clu has
// them. It returns pairRows, PCollection<KV<int, []byte>> of pairs-table
// rows per pair partition in sealed batches (emitPairRows; see
// policy.Keep for which pairs), and the
// assignments, stats and clustered sketches of Components.
//
// In an update (up), carried are more links: those of the index's pairs
// shards carried over as they are (IndexPairs).
func Cluster(s beam.Scope, pairs, checked, copies, ranks, reps beam.PCollection, link Linking, clu Clustering, up Update, place Placement, carried ...beam.PCollection) (pairRows, assignments, stats, clustered beam.PCollection) {
	s = s.Scope("Cluster")
	pairRows, links, tallies := beam.ParDo3(s, &estimateFn{Linking: link, Partitions: place.Partitions}, pairs)
	if checked.IsValid() {
		checkedRows, checkedLinks, checkedTallies := beam.ParDo3(s, &estimateFn{Linking: link, Partitions: place.Partitions, Checked: true}, checked)
		pairRows = beam.Flatten(s, pairRows, checkedRows)
		carried = append(carried, checkedLinks)
		tallies = beam.Flatten(s, tallies, checkedTallies)
	}
	writeTallies(s, "estimate", place.TempDir, tallies)
	if len(carried) > 0 {
		links = beam.Flatten(s, append([]beam.PCollection{links}, carried...)...)
	}
	assignments, stats, clustered = Components(s, links, copies, ranks, reps, clu, up, place)
	return pairRows, assignments, stats, clustered
}

// linkResemblance is the resemblance a link carries to phase 4 (which
// orders and scores clusters by it): the verified one, when there is one.
func linkResemblance(sketched float64, v packed.Verified) float64 {
	if v.Checked {
		return v.Resemblance
	}
	return sketched
}

// estimateFn estimates and links a batch of pairs. Its counts go out as
// data (writeTallies), not a file per element: a partition's pairs come
// in batches of 1 MiB, so a file each would be an object store write per
// MiB of pairs, and as many files for the launcher to read.
type estimateFn struct {
	Linking    Linking
	Partitions int
	Checked    bool // its batches are Verify's checked pairs, packed.Verified
	links      *batcher
}

// StartBundle forgets any batcher: a retried bundle starts afresh.
func (f *estimateFn) StartBundle(ctx context.Context, emitRows, emitLinks func(int, []byte), tally func(string, int64)) {
	f.links = nil
}

// FinishBundle emits the links the bundle's batcher still holds.
func (f *estimateFn) FinishBundle(ctx context.Context, emitRows, emitLinks func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.links, ctx, emitLinks)
}

// linksOut is the links batcher of a DoFn that emits pairs rows and links
// (relinkFn), kept for the bundle (see batcher): the DoFn
// embeds it and gets its StartBundle and FinishBundle from it.
type linksOut struct{ links *batcher }

// StartBundle forgets any batcher: a retried bundle starts afresh.
func (o *linksOut) StartBundle(ctx context.Context, emitRows, emitLinks func(int, []byte)) {
	o.links = nil
}

// FinishBundle emits the links the bundle's batcher still holds.
func (o *linksOut) FinishBundle(ctx context.Context, emitRows, emitLinks func(int, []byte)) {
	finishBatcher(&o.links, ctx, emitLinks)
}

func (f *estimateFn) ProcessElement(ctx context.Context, part int, batch []byte, emitRows, emitLinks func(int, []byte), tally func(string, int64)) error {
	defer phase4Time.done(ctx, time.Now())
	var pairs []packed.Verified
	var err error
	if f.Checked {
		pairs, err = packed.AppendVerified(nil, batch)
	} else {
		var ps []packed.Pair
		ps, err = openPairBatch(batch)
		pairs = make([]packed.Verified, len(ps))
		for i, p := range ps {
			pairs[i].Pair = p
		}
	}
	if err != nil {
		return err
	}
	links := bundleBatcher(&f.links, ctx, "links", f.Partitions, emitLinks)
	var rows []tables.Pair
	var nLinks, nUncertain int64
	for _, v := range pairs {
		p := v.Pair
		res, aInB, bInA := clusters.Estimate(p, f.Linking.Sketch)
		e := policy.Estimates{Shared: int(p.Count), Resemblance: res, AInB: aInB, BInA: bInA}
		row := tables.Pair{
			DocA: int64(p.A), DocB: int64(p.B), Shared: int32(p.Count),
			SketchSizeA: int32(p.SizeA), SketchSizeB: int32(p.SizeB),
			Resemblance: res, ContainmentAInB: aInB, ContainmentBInA: bInA,
		}
		var linked, keep bool
		verified := f.Linking.verifies(p.Count, p.SizeA, p.SizeB, res)
		if !verified {
			// Super-shingle candidates link as Broder's shortcut has it,
			// unless the sketch estimate must confirm them.
			linked = f.Linking.Policy.Links(e) || f.Linking.LinksAll
			keep = policy.Keep(e, linked)
		} else {
			ve := verifiedEstimates(v, f.Linking.Verification, aInB, bInA)
			linked = f.Linking.Policy.Links(ve)
			keep = policy.Keep(e, linked) || (v.Checked && policy.Keep(ve, linked))
			row.SetVerified(string(f.Linking.Verification), v.Checked, v.Resemblance, v.AInB, v.BInA)
			if f.Linking.Exact {
				// The exact join has no sketch estimates: its figures
				// are exact, and a pair proved below them is no row.
				row.Resemblance, row.ContainmentAInB, row.ContainmentBInA = v.Resemblance, ve.AInB, ve.BInA
				keep = v.Checked && policy.Keep(ve, linked)
			}
		}
		row.Linked = linked
		if linked {
			links.add(packed.Partition(p.A, f.Partitions), packed.Edge{A: p.A, B: p.B, Resemblance: linkResemblance(res, v)})
			nLinks++
			if !verified && clusters.Uncertain(f.Linking.Sketch, f.Linking.Policy, int(p.Count), int(p.SizeA), int(p.SizeB), res) {
				nUncertain++
			}
		}
		if linked || (!f.Linking.LinkedOnly && keep) {
			rows = append(rows, row)
		}
	}
	for k, v := range countLinks(ctx, nLinks, nUncertain, int64(len(rows))) {
		tally(k, v)
	}
	emitPairRows(ctx, part, rows, emitRows)
	return nil
}

var (
	pairRowsElements = beam.NewCounter(Namespace, "shuffled_pair_rows_elements")
	pairRowsBytes    = beam.NewCounter(Namespace, "shuffled_pair_rows_bytes")
)

// pairRowsPerBatch is how many pairs-table rows go in one element: about
// 1 MiB encoded (gob takes some 53 bytes a row), 0.3 MiB sealed.
const pairRowsPerBatch = 20_000

// emitPairRows sends pairs-table rows to WritePairs in sealed batches of
// at most pairRowsPerBatch. They were the biggest stream left unsealed:
// on the pair-heavy grown gigabyte 8.6M rows, 455 MB as gob and 160 MB
// sealed, shuffled as the run's last peak of memory.
func emitPairRows(ctx context.Context, part int, rows []tables.Pair, emit func(int, []byte)) {
	for len(rows) > 0 {
		n := min(len(rows), pairRowsPerBatch)
		b := sealRows(rows[:n])
		pairRowsElements.Inc(ctx, 1)
		pairRowsBytes.Inc(ctx, int64(len(b)))
		emit(part, b)
		rows = rows[n:]
	}
}

// countLinks counts what one key of phase 4's linking found as runner
// metrics, and returns the counts for its tally (writeKeyTally), which
// the manifest takes.
func countLinks(ctx context.Context, links, uncertain, rows int64) map[string]int64 {
	pairsLinked.Inc(ctx, links)
	linksUncertain.Inc(ctx, uncertain)
	pairsReported.Inc(ctx, rows)
	return map[string]int64{"links": links, "links_uncertain": uncertain, "pairs_reported": rows}
}
