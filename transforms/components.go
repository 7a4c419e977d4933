package transforms

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/components"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
)

func init() {
	register.Function2x2[int, []byte, int, []byte](toKeyZero)
	{
		fn := &unionFindFn{}
		register.Function5x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &starStartFn{}
		register.Function2x0(fn.StartBundle)
		register.Function3x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &starRoundFn{}
		register.Function3x0(fn.StartBundle)
		register.Function5x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &classifyFn{}
		register.Function5x0(fn.StartBundle)
		register.Function7x1(fn.ProcessElement)
		register.Function5x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &residualFn{}
		register.Function5x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &relabelFn{}
		register.Function2x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &attachFn{}
		register.Function4x0(fn.StartBundle)
		register.Function10x1(fn.ProcessElement)
		register.Function4x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &summarizeFn{}
		register.Function4x0(fn.StartBundle)
		register.Function7x1(fn.ProcessElement)
		register.Function4x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Emitter2[string, int64]()
	register.Iter1[int64]()
}

// Components is the clustering of phase 4. It takes links and copies,
// PCollection<KV<int, []byte>> of packed.Edge batches keyed by the doc
// partition of A (phase 4's links; identical copies joined to their
// representative, A), and ranks, PCollection<KV<int, []byte>> of
// packed.DocRank batches keyed by doc partition (--keep; empty for
// smallest-id), and reps, the representatives' packed.Sketch batches
// keyed by doc partition (to compare members with the kept document, and
// for --clusters=centered). It finds the connected components of the links
// (one worker's union-find, or large-star/small-star rounds over all
// workers: clu.Components), attaches the copies, and summarizes each
// cluster where its members meet (clu.Centered), writing the sketches
// table under place.TempDir on the way. In an update (up) the index's
// sketches of each doc partition are read there beside the new ones. It returns assignments,
// PCollection<KV<int, []byte>> of packed.Assignment batches keyed by doc
// partition, one for every document in a cluster, and stats,
// PCollection<KV<int, []byte>> of packed.ClusterStat batches keyed by the
// doc partition of its kept document, and clustered, the sketch stream
// (as reps, parked files or sealed batches) of the representatives in a
// component, the index's included, keyed by doc partition. Each cluster is named by its
// smallest doc ID, whatever the order of the edges or the way chosen; the
// figures of the way chosen go to the manifest.
func Components(s beam.Scope, links, copies, ranks, reps beam.PCollection, clu Clustering, up Update, place Placement) (assignments, stats, clustered beam.PCollection) {
	s = s.Scope("Components")
	parts := place.Partitions
	var labels, tallies beam.PCollection
	if clu.Components == settings.ComponentsDistributed {
		labels, tallies = starComponents(s, links, clu.ComponentRounds, parts)
	} else {
		labels, tallies = beam.ParDo2(s, &unionFindFn{Partitions: parts}, beam.GroupByKey(s, beam.ParDo(s, toKeyZero, links)))
	}
	// Every partition: in an update attachFn reads the index's sketches
	// of each beside the new ones, and every partition's receipt of the
	// sketches table is expected.
	reps = beam.Flatten(s, reps, everyPartition(s, parts))
	members, clinks, clustered := beam.ParDo3(s, &attachFn{FirstNewDoc: up.FirstNewDoc, Index: up.Index.Sketches, Partitions: parts,
		TempDir: place.shards(tables.SketchesTable), ParkDir: place.TempDir, Lanes: place.Lanes},
		beam.CoGroupByKey(s, labels, links, copies, ranks, reps))
	assignments, stats, summary := beam.ParDo3(s, &summarizeFn{Clustering: clu, Partitions: parts}, beam.CoGroupByKey(s, members, clinks))
	if place.TempDir != "" { // tests without an output folder have nowhere to put them
		writeTallies(s, "components", place.TempDir, tallies, summary)
	}
	return assignments, stats, clustered
}

// node is a document's node in the components: its doc ID mixed, so that
// the rounds meet the documents in an order unrelated to their IDs (the
// rounds shrink a chain whose IDs grow along it very slowly: a path of
// 100,000 in order is still 99,936 edges after 12 rounds, shuffled 651).
func node(doc uint64) uint64 { return fingerprint.Mix(doc) }

// toKeyZero sends a batch to the single union-find.
func toKeyZero(_ int, b []byte) (int, []byte) { return 0, b }

// unionFindFn is the single-worker way: every link in one union-find.
type unionFindFn struct{ Partitions int }

func (f *unionFindFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "union_find")
	defer g.done()
	batches = g.iter(batches)
	defer phase4Time.done(ctx, time.Now())
	var arcs []components.Edge
	err := eachBatch(batches, func(b []byte) error {
		edges, err := packed.AppendEdges(nil, b)
		for _, e := range edges {
			if a, ok := components.Of(node(e.A), node(e.B)); ok {
				arcs = append(arcs, a)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	tally("components_max_worker_records", int64(len(arcs)))
	out := newBatcher(ctx, "labels", f.Partitions, emit) // one element: no bundle batcher needed
	addLabels(out, f.Partitions, components.Residual(arcs))
	out.flush()
	return nil
}

// addLabels sends labels of nodes to the doc partitions of their
// documents, as <doc, label> arcs.
func addLabels(out *batcher, parts int, labels []components.Label) {
	for _, l := range labels {
		doc := fingerprint.UnMix(l.Node)
		out.add(packed.Partition(doc, parts), packed.Arc{U: doc, V: l.Comp})
	}
}

// starComponents is the distributed way (package components): the links
// routed to their nodes' partitions (of parts), the given number of rounds
// of large-star and small-star, each a shuffle of the edges by node
// partition, then the finish: nodes classified, the residual union-find
// on one worker, leaves relabelled by their roots. It returns the labels,
// PCollection<KV<int, []byte>> of <doc, label> packed.Arc batches keyed by
// doc partition, and the tallies of the rounds.
func starComponents(s beam.Scope, links beam.PCollection, rounds, parts int) (labels, tallies beam.PCollection) {
	s = s.Scope("StarComponents")
	edges := beam.ParDo(s, &starStartFn{Rounds: rounds, Partitions: parts}, beam.DropKey(s, links))
	var talls []beam.PCollection
	for i := range rounds {
		var t beam.PCollection
		rs := s.Scope(fmt.Sprintf("Round%02d", i))
		edges, t = beam.ParDo2(rs, &starRoundFn{Rounds: rounds, Round: i, Partitions: parts}, beam.GroupByKey(rs, edges))
		talls = append(talls, t)
	}
	roots, leaves, residual, t := beam.ParDo4(s, &classifyFn{Partitions: parts}, beam.GroupByKey(s, edges))
	resid, rt := beam.ParDo2(s, &residualFn{Partitions: parts}, beam.GroupByKey(s, residual))
	labels = beam.ParDo(s, &relabelFn{Partitions: parts}, beam.CoGroupByKey(s, roots, leaves, resid))
	return labels, beam.Flatten(s, append(talls, t, rt)...)
}

// routeEdges sends edges to the groups of a round of kind r (or of the
// classification, routed as a large-star round) as <node, neighbour> arcs
// keyed by the node's partition.
func routeEdges(out *batcher, r components.Round, edges []components.Edge, parts int) {
	for _, e := range edges {
		components.Route(r, e, func(n, v uint64) {
			out.add(packed.Partition(n, parts), packed.Arc{U: n, V: v})
		})
	}
}

// nextKind is the kind of round (or the classification's routing) that
// follows round i of rounds.
func nextKind(i, rounds int) components.Round {
	if i+1 < rounds {
		return components.Kind(i + 1)
	}
	return components.Large
}

type starStartFn struct {
	Rounds, Partitions int
	bundleOut          // its batcher, kept for the bundle (see batcher)
}

func (f *starStartFn) ProcessElement(ctx context.Context, batch []byte, emit func(int, []byte)) error {
	defer phase4Time.done(ctx, time.Now())
	b, err := packed.Open(nil, batch)
	if err != nil {
		return err
	}
	links, err := packed.AppendEdges(nil, b)
	if err != nil {
		return err
	}
	edges := make([]components.Edge, 0, len(links))
	for _, l := range links {
		if e, ok := components.Of(node(l.A), node(l.B)); ok {
			edges = append(edges, e)
		}
	}
	routeEdges(f.bundle(ctx, "component_edges", f.Partitions, emit), nextKind(-1, f.Rounds), edges, f.Partitions)
	return nil
}

// starRoundFn is round Round of Rounds on one node partition.
type starRoundFn struct {
	Rounds, Round int
	Partitions    int
	out           *batcher
}

func (f *starRoundFn) StartBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) {
	f.out = nil
}

func (f *starRoundFn) FinishBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.out, ctx, emit)
}

func (f *starRoundFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "star_round")
	defer g.done()
	batches = g.iter(batches)
	defer phase4Time.done(ctx, time.Now())
	in, err := decodeBatches(batches, packed.AppendArcs)
	if err != nil {
		return err
	}
	tally(fmt.Sprintf("components_round_%02d_records", f.Round), int64(len(in)))
	tally("components_max_worker_records", int64(len(in)))
	out := components.Step(components.Kind(f.Round), nil, in)
	routeEdges(bundleBatcher(&f.out, ctx, "component_edges", f.Partitions, emit), nextKind(f.Round, f.Rounds), out, f.Partitions)
	return nil
}

// classifyFn is the finish's first step on one node partition: roots go to
// their own partition, leaves to their root's, and the residual edges of
// tangled nodes to the one union-find. Like every DoFn of phase 4 that
// takes one partition per element and sends to every partition, it keeps
// its batchers for the bundle (see batcher): per element they would make
// partitions² elements.
type classifyFn struct {
	Partitions              int
	roots, leaves, residual *batcher
}

func (f *classifyFn) StartBundle(ctx context.Context, emitRoots, emitLeaves, emitResidual func(int, []byte), tally func(string, int64)) {
	f.roots, f.leaves, f.residual = nil, nil, nil
}

func (f *classifyFn) FinishBundle(ctx context.Context, emitRoots, emitLeaves, emitResidual func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.roots, ctx, emitRoots)
	finishBatcher(&f.leaves, ctx, emitLeaves)
	finishBatcher(&f.residual, ctx, emitResidual)
}

func (f *classifyFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emitRoots, emitLeaves, emitResidual func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "classify")
	defer g.done()
	batches = g.iter(batches)
	defer phase4Time.done(ctx, time.Now())
	in, err := decodeBatches(batches, packed.AppendArcs)
	if err != nil {
		return err
	}
	tally("components_max_worker_records", int64(len(in)))
	parts := f.Partitions
	roots := bundleBatcher(&f.roots, ctx, "component_roots", parts, emitRoots)
	leaves := bundleBatcher(&f.leaves, ctx, "component_leaves", parts, emitLeaves)
	residual := bundleBatcher(&f.residual, ctx, "component_residual", 1, emitResidual)
	var res []components.Edge
	components.Classify(in, func(u uint64, c components.Class, nbrs []uint64) {
		switch c {
		case components.Root:
			roots.add(packed.Partition(u, parts), packed.Arc{U: u, V: u})
		case components.Leaf:
			leaves.add(packed.Partition(nbrs[0], parts), packed.Arc{U: u, V: nbrs[0]})
		case components.Tangled:
			res = components.AppendResidual(res[:0], u, nbrs)
			for _, e := range res {
				residual.add(0, e)
			}
		}
	})
	return nil
}

// residualFn is the finish's union-find over what the rounds left.
type residualFn struct{ Partitions int }

func (f *residualFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "residual")
	defer g.done()
	batches = g.iter(batches)
	defer phase4Time.done(ctx, time.Now())
	edges, err := decodeBatches(batches, packed.AppendArcs)
	if err != nil {
		return err
	}
	tally("components_residual_edges", int64(len(edges)))
	tally("components_max_worker_records", int64(len(edges)))
	parts := f.Partitions
	out := newBatcher(ctx, "component_residual_labels", parts, emit)
	for _, l := range components.Residual(edges) {
		out.add(packed.Partition(l.Node, parts), packed.Arc{U: l.Node, V: l.Comp})
	}
	out.flush()
	return nil
}

// relabelFn is the finish on one node partition: its roots, their leaves
// and the residual labels of its nodes become every node's label.
type relabelFn struct {
	Partitions int
	bundleOut  // its batcher, kept for the bundle (see batcher)
}

func (f *relabelFn) ProcessElement(ctx context.Context, _ int, rootsIt, leavesIt, residIt func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "relabel")
	defer g.done()
	rootsIt, leavesIt, residIt = g.iter(rootsIt), g.iter(leavesIt), g.iter(residIt)
	defer phase4Time.done(ctx, time.Now())
	rootArcs, err := decodeBatches(rootsIt, packed.AppendArcs)
	if err != nil {
		return err
	}
	leaves, err := decodeBatches(leavesIt, packed.AppendArcs)
	if err != nil {
		return err
	}
	residArcs, err := decodeBatches(residIt, packed.AppendArcs)
	if err != nil {
		return err
	}
	roots := make([]uint64, len(rootArcs))
	for i, r := range rootArcs {
		roots[i] = r.U
	}
	resid := make([]components.Label, len(residArcs))
	for i, r := range residArcs {
		resid[i] = components.Label{Node: r.U, Comp: r.V}
	}
	var labels []components.Label
	components.Relabel(roots, leaves, resid, func(l components.Label) { labels = append(labels, l) })
	addLabels(f.bundle(ctx, "labels", f.Partitions, emit), f.Partitions, labels)
	return nil
}

// writeSketches writes the sketches table's shard of one doc partition
// under tempDir: every representative's sketch, which attachFn holds
// anyway (the name is fixed by the partition, so a retried bundle
// rewrites the same file). In an update it writes the new documents' only
// (from firstNewDoc): the index's shards are carried over (CarryShards).
func writeSketches(ctx context.Context, tempDir string, firstNewDoc uint64, part int, reps []packed.Sketch) error {
	if tempDir == "" {
		return nil
	}
	var rows []tables.Sketch
	for _, r := range reps {
		if r.Doc < firstNewDoc {
			continue
		}
		row := tables.Sketch{DocID: int64(r.Doc), IdentityKey: int64(r.Key), Sketch: make([]int64, len(r.Values))}
		for k, v := range r.Values {
			row.Sketch[k] = int64(v)
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(x, y tables.Sketch) int { return cmp.Compare(x.DocID, y.DocID) })
	r, err := output.WriteShard(ctx, tempDir, tables.SketchesTable, part, rows)
	if err != nil {
		return err
	}
	return output.WriteRecord(ctx, tempDir, "sketches", part, nil, r)
}

// attachFn meets, on one doc partition, the labels of its documents, the
// links from them, the copies of them and their ranks, and sends members and links to
// their component's partition, and the sketches of the partition's
// representatives in a component to clustered (sendSketches: parked under
// ParkDir), which Assemble and Sweeps read: a fifth of the partition's
// sketches on a gigabyte of crawl, instead of all of them (and in an
// update, the index's too) read again by each.
type attachFn struct {
	FirstNewDoc    uint64
	Index          []Shard // the index's sketches shards, in an update
	Partitions     int
	TempDir        string // where the sketches shards go ("": nowhere)
	ParkDir        string // the run's temporary folder ("": clustered sketches sent as batches)
	Lanes          int
	members, links *batcher // the bundle's
	lanes          lanes[[3]func(int, []byte)]
}

func (f *attachFn) StartBundle(ctx context.Context, emitMembers, emitLinks, emitClustered func(int, []byte)) {
	f.lanes.reset()
	f.members, f.links = nil, nil
}

func (f *attachFn) FinishBundle(ctx context.Context, emitMembers, emitLinks, emitClustered func(int, []byte)) error {
	if err := f.lanes.finish(ctx, [3]func(int, []byte){emitMembers, emitLinks, emitClustered}); err != nil {
		return err
	}
	finishBatcher(&f.members, ctx, emitMembers)
	finishBatcher(&f.links, ctx, emitLinks)
	return nil
}

func (f *attachFn) ProcessElement(ctx context.Context, part int, labelsIt, linksIt, copiesIt, ranksIt, repsIt func(*[]byte) bool, emitMembers, emitLinks, emitClustered func(int, []byte)) error {
	g := measureGroup(ctx, "attach")
	defer g.done()
	labelsIt, linksIt, copiesIt, ranksIt, repsIt = g.iter(labelsIt), g.iter(linksIt), g.iter(copiesIt), g.iter(ranksIt), g.iter(repsIt)
	n := hold(f.Lanes, &labelsIt, &linksIt, &copiesIt, &ranksIt, &repsIt)
	return f.lanes.timed(ctx, n, [3]func(int, []byte){emitMembers, emitLinks, emitClustered}, phase4Time, func(ctx context.Context) (laneOut[[3]func(int, []byte)], error) {
		members, clinks, clustered, err := f.attach(ctx, part, labelsIt, linksIt, copiesIt, ranksIt, repsIt)
		return func(ctx context.Context, emit [3]func(int, []byte)) error {
			for _, b := range clustered {
				emit[2](part, b)
			}
			parts := f.Partitions
			mo := bundleBatcher(&f.members, ctx, "members", parts, emit[0])
			for _, m := range members {
				mo.add(packed.Partition(m.Comp, parts), m)
			}
			lo := bundleBatcher(&f.links, ctx, "cluster_links", parts, emit[1])
			for _, l := range clinks {
				lo.add(packed.Partition(l.Comp, parts), l)
			}
			return nil
		}, err
	})
}

// attach attaches one doc partition's documents to their components,
// after writing the partition's sketches shard, and parks the sketches of
// the representatives in a component (clustered: the elements to send).
func (f *attachFn) attach(ctx context.Context, part int, labelsIt, linksIt, copiesIt, ranksIt, repsIt func(*[]byte) bool) (members []packed.Member, clinks []packed.ClusterLink, clustered [][]byte, err error) {
	labels, err := decodeBatches(labelsIt, packed.AppendArcs)
	if err != nil {
		return nil, nil, nil, err
	}
	links, err := decodeBatches(linksIt, packed.AppendEdges)
	if err != nil {
		return nil, nil, nil, err
	}
	copies, err := decodeBatches(copiesIt, packed.AppendEdges)
	if err != nil {
		return nil, nil, nil, err
	}
	ranks, err := decodeBatches(ranksIt, packed.AppendDocRanks)
	if err != nil {
		return nil, nil, nil, err
	}
	reps, err := partitionSketches(ctx, repsIt, f.Index, part, f.Partitions)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := writeSketches(ctx, f.TempDir, f.FirstNewDoc, part, reps); err != nil {
		return nil, nil, nil, err
	}
	members, clinks = clusters.Attach(labels, links, copies, ranks, reps, node)
	inComponent := make(map[uint64]bool, len(members))
	for _, m := range members {
		inComponent[m.Doc] = true
	}
	reps = slices.DeleteFunc(reps, func(r packed.Sketch) bool { return !inComponent[r.Doc] })
	slices.SortFunc(reps, func(x, y packed.Sketch) int { return cmp.Compare(x.Doc, y.Doc) })
	err = sendSketches(ctx, f.ParkDir, "clustered", part, reps, func(_ int, b []byte) { clustered = append(clustered, b) })
	return members, clinks, clustered, err
}

// summarizeFn makes, on one component partition, the assignments and
// statistics of its clusters.
type summarizeFn struct {
	Clustering    Clustering
	Partitions    int
	assign, stats *batcher // the bundle's
}

func (f *summarizeFn) StartBundle(ctx context.Context, emitAssign, emitStats func(int, []byte), tally func(string, int64)) {
	f.assign, f.stats = nil, nil
}

func (f *summarizeFn) FinishBundle(ctx context.Context, emitAssign, emitStats func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.assign, ctx, emitAssign)
	finishBatcher(&f.stats, ctx, emitStats)
}

func (f *summarizeFn) ProcessElement(ctx context.Context, _ int, membersIt, linksIt func(*[]byte) bool, emitAssign, emitStats func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "summarize")
	defer g.done()
	membersIt, linksIt = g.iter(membersIt), g.iter(linksIt)
	defer phase4Time.done(ctx, time.Now())
	members, err := decodeBatches(membersIt, packed.AppendMembers)
	if err != nil {
		return err
	}
	links, err := decodeBatches(linksIt, packed.AppendClusterLinks)
	if err != nil {
		return err
	}
	assign, stats := clusters.Summarize(members, links, f.Clustering.summaryOptions())
	parts := f.Partitions
	ao := bundleBatcher(&f.assign, ctx, "assignments", parts, emitAssign)
	for _, a := range assign {
		ao.add(packed.Partition(a.Doc, parts), a)
	}
	so := bundleBatcher(&f.stats, ctx, "cluster_stats", parts, emitStats)
	var big int64
	for _, st := range stats {
		big = max(big, int64(st.Size))
		so.add(packed.Partition(st.Kept, parts), st) // where the kept document's URL is
	}
	tally("clusters", int64(len(stats)))
	tally("clustered_docs", int64(len(assign)))
	tally("largest_cluster", big)
	return nil
}

// summaryOptions is how clusters are made of components: members compared
// with the kept document by their sketches, and centred on it under
// --clusters=centered.
func (c Clustering) summaryOptions() clusters.Options {
	spec := c.Sketch
	opt := clusters.Options{Estimate: func(a, b []uint64) policy.Estimates { return clusters.EstimateSketches(a, b, spec) }}
	if c.Centered {
		pol := c.Policy
		opt.Centered = &pol
	}
	return opt
}
