package transforms

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/redirects"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

func init() {
	{
		fn := &claimURLsFn{}
		register.Function3x0(fn.StartBundle)
		register.Function5x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &indexClaimsFn{}
		register.Function3x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &firstHopFn{}
		register.Function6x0(fn.StartBundle)
		register.Function9x1(fn.ProcessElement)
		register.Function6x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &hopFn{}
		register.Function5x0(fn.StartBundle)
		register.Function8x1(fn.ProcessElement)
		register.Function5x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &joinRedirectsFn{}
		register.Function4x0(fn.StartBundle)
		register.Function7x1(fn.ProcessElement)
		register.Function4x0(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// ClaimURLs makes the claims Redirects follows chains over, of meta, the
// docs rows of Sketch keyed by doc partition: owners, packed.URLOwner
// batches keyed by the partition of the URL each row claims, and hops,
// packed.RedirectHop batches of each redirect row's first hop, keyed by
// the partition of the URL it points to. seed is the fingerprints' (of
// URLs).
func ClaimURLs(s beam.Scope, meta beam.PCollection, seed uint64, partitions int) (owners, hops beam.PCollection) {
	s = s.Scope("ClaimURLs")
	return beam.ParDo2(s, &claimURLsFn{claims{Seed: seed, Partitions: partitions}}, meta)
}

// IndexClaims makes, for an update, the claims of an index's rows, from
// its docs shards (five columns of them: doc_id, url, sweep, status,
// redirect_to), as ClaimURLs does of new rows.
func IndexClaims(s beam.Scope, docsShards []string, seed uint64, partitions int) (owners, hops beam.PCollection) {
	s = s.Scope("IndexClaims")
	return beam.ParDo2(s, &indexClaimsFn{claims{Seed: seed, Partitions: partitions}}, spread(s, docsShards))
}

// Redirects gives the rows of --redirect-column their clusters: Zhu et
// al.'s redirection-based duplicates (package redirects). It takes the
// rows' claims on URLs, owners and hops as ClaimURLs gives them, and the
// assignments and stats of Cluster, and follows every redirect row's
// chain to the document it ends at, one round of hops per redirect
// followed (redirects.MaxHops rounds), each redirect at the partition of
// the URL it has reached, which holds the owners of those URLs only: no
// worker holds all URLs. A redirect whose chain ends at a document joins
// that document's cluster; a document in none until then makes one with
// the redirects to it. It returns the assignments and stats with the
// redirects' added (the documents that redirects made a cluster of
// included), and notes, packed.Assignment batches keyed by doc partition,
// with Cluster NoDoc, of the redirects whose chains ended without a
// document: the docs rows say why.
func Redirects(s beam.Scope, owners, hops, assignments, stats beam.PCollection, place Placement) (withRedirects, withStats, notes beam.PCollection) {
	s = s.Scope("Redirects")
	parts := place.Partitions
	outs := beam.ParDoN(s, &firstHopFn{Partitions: parts}, beam.CoGroupByKey(s, owners, hops))
	states, joined, noted, pending := outs[0], []beam.PCollection{outs[1]}, []beam.PCollection{outs[2]}, outs[3]
	tallies := []beam.PCollection{outs[4]}
	for round := 2; round <= redirects.MaxHops; round++ {
		outs := beam.ParDoN(s.Scope(fmt.Sprintf("Hop%d", round)), &hopFn{Partitions: parts, Last: round == redirects.MaxHops}, beam.CoGroupByKey(s, states, pending))
		joined, noted, pending = append(joined, outs[0]), append(noted, outs[1]), outs[2]
		tallies = append(tallies, outs[3])
	}
	drainKV(s, pending) // empty: every chain has ended by the last round
	added, addedStats, joinTally := beam.ParDo3(s, &joinRedirectsFn{Partitions: parts}, beam.CoGroupByKey(s, beam.Flatten(s, joined...), assignments))
	writeTallies(s, "redirects", place.TempDir, append(tallies, joinTally)...)
	return beam.Flatten(s, assignments, added), beam.Flatten(s, stats, addedStats), beam.Flatten(s, noted...)
}

// claims sends docs rows' claims on their URLs, and redirect rows' first
// hops, to their partitions: the bundle handling of claimURLsFn and
// indexClaimsFn.
type claims struct {
	Seed        uint64
	Partitions  int
	owners, hop *batcher // the bundle's (see batcher)
}

func (c *claims) StartBundle(ctx context.Context, emitOwners, emitHops func(int, []byte)) {
	c.owners, c.hop = nil, nil
}

func (c *claims) FinishBundle(ctx context.Context, emitOwners, emitHops func(int, []byte)) {
	finishBatcher(&c.owners, ctx, emitOwners)
	finishBatcher(&c.hop, ctx, emitHops)
}

// claim sends each row's claim on its URL to the URL's partition, and each
// redirect row's first hop to the partition of the URL it points to.
func (c *claims) claim(ctx context.Context, docs []tables.Doc, emitOwners, emitHops func(int, []byte)) {
	h := fingerprint.New(c.Seed)
	parts := c.Partitions
	owners := bundleBatcher(&c.owners, ctx, "url_owners", parts, emitOwners)
	hops := bundleBatcher(&c.hop, ctx, "redirect_hops", parts, emitHops)
	for i := range docs {
		d := &docs[i]
		own := deref(d.URL)
		var ownKey uint64 // a redirect without a URL of its own: none to come back to
		if own != "" {
			ownKey = h.String(own)
		}
		o := redirects.Claim(d)
		o.URL = ownKey
		if o.Kind == redirects.Redirect {
			o.Next = h.String(redirects.Target(own, deref(d.RedirectTo)))
			hops.add(packed.Partition(o.Next, parts), redirects.Start(o.Doc, ownKey, o.Next))
		}
		if own != "" {
			owners.add(packed.Partition(ownKey, parts), o)
		}
	}
}

// claimURLsFn claims for the docs rows of Sketch.
type claimURLsFn struct{ claims }

func (f *claimURLsFn) ProcessElement(ctx context.Context, _ int, sealed []byte, emitOwners, emitHops func(int, []byte)) error {
	docs, err := openDocRows(sealed)
	if err != nil {
		return err
	}
	f.claim(ctx, docs, emitOwners, emitHops)
	return nil
}

// indexClaimsFn claims for the rows of an index's docs shards.
type indexClaimsFn struct{ claims }

func (f *indexClaimsFn) ProcessElement(ctx context.Context, shard string, emitOwners, emitHops func(int, []byte)) error {
	docs, err := tables.ReadClaims(ctx, shard)
	if err != nil {
		return err
	}
	f.claim(ctx, docs, emitOwners, emitHops)
	return nil
}

// hopOut is what a round of hops emits: the chains that ended at a
// document (to the document's partition), notes of those that ended
// without one (to the redirect's), the chains under way (to the partition
// of the URL they reached), and the outcomes' tallies.
type hopOut struct {
	Partitions             int
	joined, noted, pending *batcher // the bundle's (see batcher)
}

func (o *hopOut) reset() { o.joined, o.noted, o.pending = nil, nil, nil }

func (o *hopOut) finish(ctx context.Context, emitJoined, emitNoted, emitPending func(int, []byte)) {
	finishBatcher(&o.joined, ctx, emitJoined)
	finishBatcher(&o.noted, ctx, emitNoted)
	finishBatcher(&o.pending, ctx, emitPending)
}

// step takes every hop one URL on over owners (as redirects.Owners gives
// them) and sends it where it goes next. last says no hop may be under way
// after this round.
func (o *hopOut) step(ctx context.Context, hops []packed.RedirectHop, owners []packed.URLOwner, last bool, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) error {
	parts := o.Partitions
	joined := bundleBatcher(&o.joined, ctx, "redirects_joined", parts, emitJoined)
	noted := bundleBatcher(&o.noted, ctx, "redirect_notes", parts, emitNoted)
	pending := bundleBatcher(&o.pending, ctx, "redirect_hops", parts, emitPending)
	ended := map[uint8]int64{}
	for _, h := range hops {
		owner, ok := redirects.Lookup(owners, h.At)
		h = redirects.Step(h, owner, ok)
		switch h.Outcome {
		case redirects.Underway:
			if last {
				return fmt.Errorf("redirects: the chain of doc %d is under way after %d rounds", h.Source, redirects.MaxHops)
			}
			pending.add(packed.Partition(h.At, parts), h)
			continue
		case redirects.Joined:
			joined.add(packed.Partition(h.Target, parts), h)
		default:
			noted.add(packed.Partition(h.Source, parts), packed.Assignment{Doc: h.Source, Cluster: packed.NoDoc, IdenticalTo: packed.NoDoc, Kept: packed.NoDoc,
				ResToKept: math.NaN(), Target: packed.NoDoc, Hops: uint16(redirects.Hops(h)), Outcome: h.Outcome})
		}
		ended[h.Outcome]++
	}
	for outcome, n := range ended {
		tally(redirects.Tally[outcome], n)
	}
	return nil
}

// firstHopFn is the first round: at each URL partition, the winning owner
// of each URL some redirect points to (every URL a chain can reach is
// one), kept for the later rounds, and every redirect's first hop.
type firstHopFn struct {
	Partitions int
	hopOut
	states *batcher
}

func (f *firstHopFn) StartBundle(ctx context.Context, emitStates, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) {
	f.reset()
	f.states = nil
}

func (f *firstHopFn) FinishBundle(ctx context.Context, emitStates, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.states, ctx, emitStates)
	f.finish(ctx, emitJoined, emitNoted, emitPending)
}

func (f *firstHopFn) ProcessElement(ctx context.Context, part int, ownersIt, hopsIt func(*[]byte) bool, emitStates, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "first_hop")
	defer g.done()
	ownersIt, hopsIt = g.iter(ownersIt), g.iter(hopsIt)
	owners, err := decodeBatches(ownersIt, packed.AppendURLOwners)
	if err != nil {
		return err
	}
	hops, err := decodeBatches(hopsIt, packed.AppendRedirectHops)
	if err != nil {
		return err
	}
	owners = redirects.Owners(owners)
	wanted := make(map[uint64]bool, len(hops))
	for _, h := range hops {
		wanted[h.At] = true
	}
	f.hopOut.Partitions = f.Partitions
	states := bundleBatcher(&f.states, ctx, "url_states", f.Partitions, emitStates)
	for _, o := range owners {
		if wanted[o.URL] {
			states.add(part, o)
		}
	}
	tally("redirects", int64(len(hops)))
	return f.step(ctx, hops, owners, false, emitJoined, emitNoted, emitPending, tally)
}

// hopFn is a later round: the hops that reached a URL partition meet the
// owners of its URLs there.
type hopFn struct {
	Partitions int
	Last       bool // the last round: every chain ends here
	hopOut
}

func (f *hopFn) StartBundle(ctx context.Context, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) {
	f.reset()
}

func (f *hopFn) FinishBundle(ctx context.Context, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) {
	f.finish(ctx, emitJoined, emitNoted, emitPending)
}

func (f *hopFn) ProcessElement(ctx context.Context, _ int, statesIt, hopsIt func(*[]byte) bool, emitJoined, emitNoted, emitPending func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "hop")
	defer g.done()
	statesIt, hopsIt = g.iter(statesIt), g.iter(hopsIt)
	hops, err := decodeBatches(hopsIt, packed.AppendRedirectHops)
	if err != nil || len(hops) == 0 {
		return err
	}
	owners, err := decodeBatches(statesIt, packed.AppendURLOwners)
	if err != nil {
		return err
	}
	f.hopOut.Partitions = f.Partitions
	return f.step(ctx, hops, redirects.Owners(owners), f.Last, emitJoined, emitNoted, emitPending, tally)
}

// joinRedirectsFn puts the redirects whose chains ended at a document of
// its doc partition into that document's cluster, or, for a document in
// none, into a new cluster named by it.
type joinRedirectsFn struct {
	Partitions      int
	assigns, extras *batcher // the bundle's (see batcher)
}

func (f *joinRedirectsFn) StartBundle(ctx context.Context, emitAssigns, emitStats func(int, []byte), tally func(string, int64)) {
	f.assigns, f.extras = nil, nil
}

func (f *joinRedirectsFn) FinishBundle(ctx context.Context, emitAssigns, emitStats func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.assigns, ctx, emitAssigns)
	finishBatcher(&f.extras, ctx, emitStats)
}

func (f *joinRedirectsFn) ProcessElement(ctx context.Context, _ int, joinedIt, assignsIt func(*[]byte) bool, emitAssigns, emitStats func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "join_redirects")
	defer g.done()
	joinedIt, assignsIt = g.iter(joinedIt), g.iter(assignsIt)
	joined, err := decodeBatches(joinedIt, packed.AppendRedirectHops)
	if err != nil || len(joined) == 0 {
		return err
	}
	assigns, err := decodeBatches(assignsIt, packed.AppendAssignments)
	if err != nil {
		return err
	}
	slices.SortFunc(assigns, func(x, y packed.Assignment) int { return cmp.Compare(x.Doc, y.Doc) })
	slices.SortFunc(joined, func(x, y packed.RedirectHop) int {
		return cmp.Or(cmp.Compare(x.Target, y.Target), cmp.Compare(x.Source, y.Source))
	})
	parts := f.Partitions
	out := bundleBatcher(&f.assigns, ctx, "redirect_assignments", parts, emitAssigns)
	extras := bundleBatcher(&f.extras, ctx, "redirect_stats", parts, emitStats)
	var made, members int64
	for i := 0; i < len(joined); {
		t := joined[i].Target
		j := i
		for j < len(joined) && joined[j].Target == t {
			j++
		}
		n := uint32(j - i)
		cluster, kept := t, t
		if k, ok := slices.BinarySearchFunc(assigns, t, func(a packed.Assignment, d uint64) int { return cmp.Compare(a.Doc, d) }); ok {
			cluster, kept = assigns[k].Cluster, assigns[k].Kept
			extras.add(packed.Partition(kept, parts), packed.ClusterStat{Cluster: cluster, Size: n, Redirects: n, Extra: true})
		} else {
			// A document in no cluster: the redirects to it make one,
			// named by it (the smallest doc ID of its members by
			// content), which it keeps.
			out.add(packed.Partition(t, parts), packed.Assignment{Doc: t, Cluster: t, IdenticalTo: packed.NoDoc, Kept: t, ResToKept: 1, Target: packed.NoDoc})
			extras.add(packed.Partition(t, parts), packed.ClusterStat{Cluster: t, Size: 1 + n, Redirects: n, Kept: t, MinResemblance: math.Inf(1), MinToKept: 1})
			made++
			members++
		}
		for _, h := range joined[i:j] {
			out.add(packed.Partition(h.Source, parts), packed.Assignment{Doc: h.Source, Cluster: cluster, IdenticalTo: packed.NoDoc, Kept: kept,
				ResToKept: math.NaN(), Target: t, Hops: uint16(redirects.Hops(h)), Outcome: redirects.Joined})
		}
		members += int64(n)
		i = j
	}
	tally("clusters", made)
	tally("clustered_docs", members)
	tally("clusters_of_redirects", made)
	return nil
}
