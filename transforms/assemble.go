package transforms

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	docsWritten      = beam.NewCounter(Namespace, "docs_written")
	docsClustered    = beam.NewCounter(Namespace, "docs_in_clusters")
	docsAlone        = beam.NewCounter(Namespace, "docs_alone")
	docsNotSketched  = beam.NewCounter(Namespace, "docs_empty_or_rejected")
	clustersWritten  = beam.NewCounter(Namespace, "clusters_written")
	pairsWritten     = beam.NewCounter(Namespace, "pairs_written")
	containedWritten = beam.NewCounter(Namespace, "contained_written")
	outputTime       = newPhaseTimer("output")
)

func init() {
	{
		fn := &assembleFn{}
		register.Function3x0(fn.StartBundle)
		register.Function8x1(fn.ProcessElement)
		register.Function3x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &writeMembersFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	register.Function4x1(mergeLargest)
	{
		fn := &writeLargestFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &writePairsFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	register.Emitter1[string]()
	beam.RegisterType(reflect.TypeOf((*memberWire)(nil)).Elem())
}

// Assemble takes the docs-table rows of Sketch, the assignments,
// cluster stats and clustered sketches of Cluster (the sketches of the
// representatives in a cluster, the index's included), all keyed by doc
// partition, joins them and
// writes one docs shard and one clusters shard per partition under
// place.TempDir; then the lookup tables query and serve read: a members
// shard per cluster partition (every clustered document with what a query
// shows of it and a representative's sketch, sorted by cluster), and the
// largest table (the tables.LargestClusters largest clusters' rows, in
// one shard). In an update (index, an update's Index) the index's docs
// rows of each partition are read from its shards there.
func Assemble(s beam.Scope, meta, assignments, stats, clustered beam.PCollection, index IndexTables, place Placement) {
	s = s.Scope("Assemble")
	// Every partition, also one no row reaches: in an update its index
	// rows are read there, and every partition's receipt is expected.
	meta = beam.Flatten(s, meta, everyPartition(s, place.Partitions))
	joined := beam.CoGroupByKey(s, meta, assignments, stats, clustered)
	members, largest := beam.ParDo2(s, &assembleFn{Index: index.Docs, IndexSketches: index.Sketches, Partitions: place.Partitions, TempDir: place.TempDir,
		Write: place.Write, Lanes: place.Lanes}, joined)
	if !place.Write.Any(tables.MembersTable, tables.LargestTable) {
		drainKV(s, members) // none; see drain
		drainKV(s, largest)
		return
	}
	// Every cluster partition has its receipt of the members table.
	members = beam.Flatten(s, members, everyPartition(s, place.Partitions))
	drain(s, beam.ParDo(s, &writeMembersFn{TempDir: place.shards(tables.MembersTable)}, beam.GroupByKey(s, members)))
	tops := beam.ParDo(s, mergeLargest, beam.GroupByKey(s, largest))
	drain(s, beam.ParDo(s, &writeLargestFn{TempDir: place.shards(tables.LargestTable)}, beam.GroupByKey(s, tops)))
}

// largestFanIn is how many doc partitions' largest clusters each first
// merge of the largest table takes (mergeLargest): about the square
// root of the partitions, so that neither merge's group grows with them
// as one would (a partition sends up to tables.LargestClusters rows, some
// 0.6 MB: 2.8 GB for the 4,657 partitions of 10 TB of text).
func largestFanIn(partitions int) int {
	return int(math.Ceil(math.Sqrt(float64(max(partitions, 1)))))
}

// mergeLargest keeps the tables.LargestClusters largest of the clusters
// some doc partitions sent, for writeLargestFn's one merge.
func mergeLargest(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "merge_largest")
	defer g.done()
	top, err := topLargest(g.iter(batches))
	if err != nil {
		return err
	}
	emit(0, sealClusters(top))
	return nil
}

// topLargest is the tables.LargestClusters largest of the clusters in
// batches, largest first, holding no more than those and one batch.
func topLargest(batches func(*[]byte) bool) ([]tables.Cluster, error) {
	var top []tables.Cluster
	err := eachBatch(batches, func(b []byte) error {
		var err error
		if top, err = decodeClusters(top, b); err != nil {
			return err
		}
		tables.SortLargest(top)
		top = top[:min(len(top), tables.LargestClusters)]
		return nil
	})
	return top, err
}

type assembleFn struct {
	Index         []Shard // the index's docs shards, in an update
	IndexSketches []Shard // its sketches shards, when the stream is the representatives' (SketchesFor)
	Partitions    int
	TempDir       string
	Write         tables.Selection // of docs, clusters, members and largest, the tables it writes
	Lanes         int
	lanes         lanes[[2]func(int, []byte)]
}

func (f *assembleFn) StartBundle(ctx context.Context, emitMembers, emitLargest func(int, []byte)) {
	f.lanes.reset()
}

func (f *assembleFn) FinishBundle(ctx context.Context, emitMembers, emitLargest func(int, []byte)) error {
	return f.lanes.finish(ctx, [2]func(int, []byte){emitMembers, emitLargest})
}

// statusCounter names the phase 1 counter (docs_<name>) of each status.
var statusCounter = map[string]string{
	tables.StatusOK: "ok", tables.StatusEmpty: "empty", tables.StatusTooShort: "too_short", tables.StatusRejected: "rejected",
	tables.StatusRedirect: "redirect",
}

func (f *assembleFn) ProcessElement(ctx context.Context, part int, metas, assigns, statsIt, repsIt func(*[]byte) bool, emitMembers, emitLargest func(int, []byte)) error {
	g := measureGroup(ctx, "assemble")
	defer g.done()
	metas, assigns, statsIt, repsIt = g.iter(metas), g.iter(assigns), g.iter(statsIt), g.iter(repsIt)
	n := hold(f.Lanes, &metas, &assigns, &statsIt, &repsIt)
	return f.lanes.timed(ctx, n, [2]func(int, []byte){emitMembers, emitLargest}, outputTime, func(ctx context.Context) (laneOut[[2]func(int, []byte)], error) {
		out, tally, err := f.assemble(ctx, part, metas, assigns, statsIt, repsIt)
		return func(ctx context.Context, emit [2]func(int, []byte)) error {
			for p, rows := range out.members {
				if len(rows) > 0 {
					emit[0](p, sealRows(rows))
				}
			}
			// Always, so that the largest table's one writer runs;
			// keyed for largestFanIn's first merge.
			emit[1](part%largestFanIn(f.Partitions), sealClusters(out.largest))
			docsWritten.Inc(ctx, tally["docs_written"])
			docsClustered.Inc(ctx, tally["docs_in_clusters"])
			docsAlone.Inc(ctx, tally["docs_alone"])
			docsNotSketched.Inc(ctx, tally["docs_empty_or_rejected"])
			clustersWritten.Inc(ctx, tally["clusters_written"])
			return nil
		}, err
	})
}

// assembled is what one doc partition sends on: its clustered documents'
// members rows by cluster partition, and its largest clusters' rows.
type assembled struct {
	members [][]memberWire
	largest []tables.Cluster
}

// assemble joins and writes one partition's docs and clusters shards and
// its tally, and returns the rows it sends to the lookup tables and the
// tally.
func (f *assembleFn) assemble(ctx context.Context, part int, metas, assigns, statsIt, repsIt func(*[]byte) bool) (assembled, map[string]int64, error) {
	var out assembled
	docs, err := decodeBatches(metas, tables.Decode[tables.Doc])
	if err != nil {
		return out, nil, err
	}
	// The index's rows, in an update: their cluster columns unread, empty.
	if docs, err = appendIndexDocs(ctx, docs, f.Index, part, f.Partitions); err != nil {
		return out, nil, err
	}
	asg, err := decodeBatches(assigns, packed.AppendAssignments)
	if err != nil {
		return out, nil, err
	}
	sts, err := decodeBatches(statsIt, packed.AppendClusterStats)
	if err != nil {
		return out, nil, err
	}
	slices.SortFunc(docs, func(x, y tables.Doc) int { return cmp.Compare(uint64(x.DocID), uint64(y.DocID)) })
	slices.SortFunc(asg, func(x, y packed.Assignment) int { return cmp.Compare(x.Doc, y.Doc) })
	slices.SortFunc(sts, func(x, y packed.ClusterStat) int { return cmp.Compare(x.Cluster, y.Cluster) })

	n := clusters.Join(docs, asg)
	clusterRows := clusters.Rows(sts, docs)
	if f.Write.Has(tables.MembersTable) {
		if out.members, err = f.members(ctx, part, docs, repsIt); err != nil {
			return out, nil, err
		}
	}
	if f.Write.Has(tables.LargestTable) {
		out.largest = slices.Clone(clusterRows)
		tables.SortLargest(out.largest)
		out.largest = out.largest[:min(len(out.largest), tables.LargestClusters)]
	}
	var docsWritten, clustersWritten int64 // 0 for a table the run leaves out
	// Every partition has its receipts, rows or none (output.WriteShard).
	var receipts []output.Receipt
	if f.Write.Has(tables.DocsTable) {
		docsWritten = int64(len(docs))
		r, err := output.WriteShard(ctx, f.TempDir, tables.DocsTable, part, docs)
		if err != nil {
			return out, nil, err
		}
		receipts = append(receipts, r)
	}
	if f.Write.Has(tables.ClustersTable) {
		clustersWritten = int64(len(clusterRows))
		r, err := output.WriteShard(ctx, f.TempDir, tables.ClustersTable, part, clusterRows)
		if err != nil {
			return out, nil, err
		}
		receipts = append(receipts, r)
	}
	// The accounting identity also travels as data (see writeKeyTally),
	// in the partition's record, so that the manifest does not lose a
	// partition's worth of rows.
	// Every docs row passes through here, so the per-status counts of
	// phase 1 are tallied here too.
	counts := map[string]int64{
		"docs": int64(len(docs)), "docs_written": docsWritten, "docs_in_clusters": n.Clustered, "docs_alone": n.Alone,
		"docs_empty_or_rejected": n.EmptyOrRejected, "clusters_written": clustersWritten,
		"docs_ok": 0, "docs_empty": 0, "docs_too_short": 0, "docs_rejected": 0, "docs_redirect": 0,
	}
	for _, c := range clusterRows {
		// With the redirects that joined them (output.MaxTallies).
		counts["largest_cluster"] = max(counts["largest_cluster"], c.Size)
	}
	for i := range docs {
		counts["docs_"+statusCounter[docs[i].Status]]++
	}
	return out, counts, output.WriteRecord(ctx, f.TempDir, "assemble", part, counts, receipts...)
}

// members makes the members rows of one doc partition's clustered
// documents (docs, sorted by doc ID), by cluster partition: each
// representative with its sketch, read from the clustered sketches
// (Components: the index's included, in an update).
func (f *assembleFn) members(ctx context.Context, part int, docs []tables.Doc, repsIt func(*[]byte) bool) ([][]memberWire, error) {
	reps, err := partitionSketches(ctx, repsIt, f.IndexSketches, part, f.Partitions)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(reps, func(x, y packed.Sketch) int { return cmp.Compare(x.Doc, y.Doc) })
	out := make([][]memberWire, f.Partitions)
	for i := range docs {
		d := &docs[i]
		if d.ClusterID == nil {
			continue
		}
		var values []uint64
		if k, ok := slices.BinarySearchFunc(reps, uint64(d.DocID), func(r packed.Sketch, id uint64) int { return cmp.Compare(r.Doc, id) }); ok {
			values = reps[k].Values
		}
		p := packed.Partition(uint64(*d.ClusterID), f.Partitions)
		out[p] = append(out[p], toWire(tables.MemberOf(d, values)))
	}
	return out, nil
}

// writeMembersFn writes the members shard of one cluster partition,
// sorted by cluster, the kept document first, then by doc
// (tables.SortMembers).
type writeMembersFn struct {
	TempDir string // "": the run does not write the table
}

func (f *writeMembersFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "write_members")
	defer g.done()
	batches = g.iter(batches)
	defer outputTime.done(ctx, time.Now())
	rows, err := decodeBatches(batches, decodeMembers)
	if err != nil || f.TempDir == "" {
		return err
	}
	tables.SortMembers(rows)
	r, err := output.WriteShard(ctx, f.TempDir, tables.MembersTable, part, rows)
	if err != nil {
		return err
	}
	emit(r.File) // see drain
	return output.WriteRecord(ctx, f.TempDir, "members", part, nil, r)
}

// writeLargestFn merges the first merges' largest clusters (mergeLargest)
// into the largest table's one shard, keeping tables.LargestClusters rows
// as it goes: one worker, whatever the number of clusters.
type writeLargestFn struct {
	TempDir string // "": the run does not write the table
}

func (f *writeLargestFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "write_largest")
	defer g.done()
	defer outputTime.done(ctx, time.Now())
	top, err := topLargest(g.iter(batches))
	if err != nil || f.TempDir == "" {
		return err
	}
	r, err := output.WriteShard(ctx, f.TempDir, tables.LargestTable, 0, top)
	if err != nil {
		return err
	}
	emit(r.File) // see drain
	return output.WriteRecord(ctx, f.TempDir, "largest", 0, nil, r)
}

// WritePairs takes the pairs-table rows of Cluster or Relink (sealed
// batches keyed by pair partition, emitPairRows) and
// writes, per pair partition, sorted by pair, one pairs shard and one contained shard (the pairs where one
// document is contained in the other at least at the containment
// threshold of link's policy, policy.DefaultContained when it has none;
// none under --pairs=linked with a resemblance-only policy, whose pairs
// table lacks them) under place.TempDir, of the two those the run writes
// (place.Write), and the counts of both. It returns PCollection<string> of
// the shard files written.
func WritePairs(s beam.Scope, rows beam.PCollection, link Linking, place Placement) beam.PCollection {
	s = s.Scope("WritePairs")
	files := beam.ParDo(s, &writePairsFn{Linking: link, TempDir: place.TempDir, Write: place.Write}, beam.GroupByKey(s, rows))
	drain(s, files)
	return files
}

type writePairsFn struct {
	Linking Linking // which contained rows there are
	TempDir string
	Write   tables.Selection // of pairs and contained, the tables it writes
}

func (f *writePairsFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "write_pairs")
	defer g.done()
	batches = g.iter(batches)
	defer outputTime.done(ctx, time.Now())
	held, err := holdSealed(batches)
	if err != nil {
		return err
	}
	keepContained := f.Linking.keepsContained() && f.Write.Has(tables.ContainedTable)
	rows, err := planPairRows(held, keepContained, f.Linking.Policy.ContainedThreshold())
	if err != nil {
		return err
	}
	counts := map[string]int64{"pairs_written": 0, "contained_written": 0}
	var receipts []output.Receipt
	if f.Write.Has(tables.PairsTable) {
		var failed error
		r, err := output.WriteShardEach(ctx, f.TempDir, tables.PairsTable, part, rows.n, func(buf []tables.Pair, from int) {
			if failed == nil {
				failed = rows.fill(buf, from)
			}
		})
		if err = cmp.Or(failed, err); err != nil {
			return err
		}
		pairsWritten.Inc(ctx, int64(rows.n))
		counts["pairs_written"] = int64(rows.n)
		if r.File != "" {
			emit(store.Join(f.TempDir, tables.PairsTable, r.File))
		}
		receipts = append(receipts, r)
	}
	if keepContained {
		if err := rows.drain(); err != nil { // the ranges no pairs shard took
			return err
		}
		r, err := output.WriteShard(ctx, f.TempDir, tables.ContainedTable, part, rows.contained)
		if err != nil {
			return err
		}
		containedWritten.Inc(ctx, int64(len(rows.contained)))
		counts["contained_written"] = int64(len(rows.contained))
		receipts = append(receipts, r)
	}
	return output.WriteRecord(ctx, f.TempDir, "pairs", part, counts, receipts...)
}

// pairRowsPassBudget bounds the pairs-table rows writePairsFn decodes at
// once: a pair partition's rows are held sealed (gob and zstd, some 15
// bytes a row) and decoded a range of doc_a at a time, each range sorted
// and written in turn, so that the rows in hand stay within it whatever
// the partition's size. A row takes some 150 bytes decoded, with its
// optional figures; on the 1 GB skewed input (BENCHMARKS.md, issue 55)
// the partitions' rows, decoded whole into slices grown by append, held
// 637 MB at once and took a run under a 2 GiB cap past it.
var pairRowsPassBudget = 1 << 17

// pairRows is one pair partition's rows, held sealed, in doc_a ranges of
// about pairRowsPassBudget rows (a range may hold more: a document's
// rows are never split between two), and one range's rows in hand.
type pairRows struct {
	held   [][]byte
	n      int     // rows in all
	bounds []int64 // each range's lowest doc_a, from the second range on
	sizes  []int   // each range's rows

	loaded int           // the ranges taken in hand so far
	rows   []tables.Pair // the last one's rows, sorted by pair
	start  int           // the partition's row that rows[0] is

	keepContained bool
	threshold     float64            // of containment, for contained
	contained     []tables.Contained // the contained rows of the ranges loaded
}

// planPairRows plans held's ranges. A partition of at most
// pairRowsPassBudget rows' worth of sealed bytes is one range, decoded
// now; a larger one's doc_a values are read first (gob decodes only that
// field) and cut into ranges.
func planPairRows(held [][]byte, keepContained bool, threshold float64) (*pairRows, error) {
	r := &pairRows{held: held, keepContained: keepContained, threshold: threshold}
	sealed := 0
	for _, b := range held {
		sealed += len(b)
	}
	if sealed <= pairRowsPassBudget*15/2 {
		if err := r.load(); err != nil {
			return nil, err
		}
		r.n = len(r.rows)
		return r, nil
	}
	var as []int64
	var buf []byte
	for _, b := range held {
		var err error
		if buf, err = packed.Open(buf[:0], b); err != nil {
			return nil, err
		}
		if as, err = tables.AppendPairDocAs(as, buf); err != nil {
			return nil, err
		}
	}
	slices.Sort(as)
	r.n = len(as)
	from := 0
	for i := range as {
		if i-from >= pairRowsPassBudget && as[i] != as[i-1] {
			r.bounds, r.sizes = append(r.bounds, as[i]), append(r.sizes, i-from)
			from = i
		}
	}
	r.sizes = append(r.sizes, len(as)-from)
	return r, nil
}

// load takes the next range's rows in hand, sorted, and keeps their
// contained rows.
func (r *pairRows) load() error {
	if r.loaded > len(r.bounds) {
		return fmt.Errorf("pairs: a partition's rows ran out before the %d counted", r.n)
	}
	pass := r.loaded
	var rows, batch []tables.Pair
	if pass < len(r.sizes) {
		rows = make([]tables.Pair, 0, r.sizes[pass]) // held once, not grown by append
	}
	var buf []byte
	for _, b := range r.held {
		var err error
		if buf, err = packed.Open(buf[:0], b); err != nil {
			return err
		}
		if batch, err = tables.Decode(batch[:0], buf); err != nil {
			return err
		}
		for _, p := range batch {
			if i, _ := slices.BinarySearch(r.bounds, p.DocA+1); i == pass { // bounds[i-1] <= DocA < bounds[i]
				rows = append(rows, p)
			}
		}
	}
	slices.SortFunc(rows, func(x, y tables.Pair) int { return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB)) })
	r.start += len(r.rows)
	r.rows = rows
	r.loaded++
	if r.keepContained {
		r.contained = append(r.contained, tables.ContainedRows(rows, r.threshold)...)
	}
	return nil
}

// fill puts rows from, from+1, ... (called in order, from 0) into buf,
// taking the next range in hand when those in hand run out.
func (r *pairRows) fill(buf []tables.Pair, from int) error {
	for len(buf) > 0 {
		if from >= r.start+len(r.rows) {
			if err := r.load(); err != nil {
				return err
			}
			continue
		}
		n := copy(buf, r.rows[from-r.start:])
		buf, from = buf[n:], from+n
	}
	return nil
}

// drain loads the ranges not loaded yet, for their contained rows.
func (r *pairRows) drain() error {
	for r.loaded <= len(r.bounds) {
		if err := r.load(); err != nil {
			return err
		}
	}
	return nil
}

// clearClusterColumns empties the columns clusters.Join fills, on a docs
// row of an earlier run that is clustered again.
func clearClusterColumns(d *tables.Doc) {
	d.ClusterID, d.IdenticalTo, d.IsRepresentative, d.KeptDocID, d.ResemblanceToKept = nil, nil, false, nil, nil
	d.JoinedBy, d.RedirectTarget, d.RedirectHops = nil, nil, nil
	if d.Status == tables.StatusRedirect {
		d.Reason = nil // how its chain ended, which Join sets again
	}
}

// memberWire is a members row as it crosses a shuffle. gob sends no zero
// value, so a pointer to one (doc 0 kept, a resemblance of 0, an empty
// reason) would arrive nil: each optional field travels as a value, with
// a bit of Set saying it is there.
type memberWire struct {
	ClusterID, DocID, SourceRow, TokenCount int64
	IdenticalTo, KeptDocID                  int64
	ResemblanceToKept                       float64
	URL, Sweep, SourceFile, Status          string
	Reason, JoinedBy                        string
	Set                                     uint8
	Sketch                                  []int64
}

// The bits of memberWire.Set.
const (
	wireURL = 1 << iota
	wireReason
	wireIdentical
	wireKept
	wireResemblance
	wireJoinedBy
)

func toWire(m tables.Member) memberWire {
	w := memberWire{ClusterID: m.ClusterID, DocID: m.DocID, SourceRow: m.SourceRow, TokenCount: m.TokenCount, Sweep: m.Sweep,
		SourceFile: m.SourceFile, Status: m.Status, Sketch: m.Sketch}
	set := func(bit uint8, ok bool) {
		if ok {
			w.Set |= bit
		}
	}
	set(wireURL, m.URL != nil)
	set(wireReason, m.Reason != nil)
	set(wireIdentical, m.IdenticalTo != nil)
	set(wireKept, m.KeptDocID != nil)
	set(wireResemblance, m.ResemblanceToKept != nil)
	set(wireJoinedBy, m.JoinedBy != nil)
	if m.URL != nil {
		w.URL = *m.URL
	}
	if m.Reason != nil {
		w.Reason = *m.Reason
	}
	if m.IdenticalTo != nil {
		w.IdenticalTo = *m.IdenticalTo
	}
	if m.KeptDocID != nil {
		w.KeptDocID = *m.KeptDocID
	}
	if m.ResemblanceToKept != nil {
		w.ResemblanceToKept = *m.ResemblanceToKept
	}
	if m.JoinedBy != nil {
		w.JoinedBy = *m.JoinedBy
	}
	return w
}

func fromWire(w memberWire) tables.Member {
	m := tables.Member{ClusterID: w.ClusterID, DocID: w.DocID, SourceRow: w.SourceRow, TokenCount: w.TokenCount, Sweep: w.Sweep,
		SourceFile: w.SourceFile, Status: w.Status, Sketch: w.Sketch}
	if w.Set&wireURL != 0 {
		m.URL = &w.URL
	}
	if w.Set&wireReason != 0 {
		m.Reason = &w.Reason
	}
	if w.Set&wireIdentical != 0 {
		m.IdenticalTo = &w.IdenticalTo
	}
	if w.Set&wireKept != 0 {
		m.KeptDocID = &w.KeptDocID
	}
	if w.Set&wireResemblance != 0 {
		m.ResemblanceToKept = &w.ResemblanceToKept
	}
	if w.Set&wireJoinedBy != 0 {
		m.JoinedBy = &w.JoinedBy
	}
	return m
}

// decodeMembers decodes a batch of memberWire rows and appends them to dst.
func decodeMembers(dst []tables.Member, b []byte) ([]tables.Member, error) {
	wire, err := tables.Decode[memberWire](nil, b)
	for _, w := range wire {
		dst = append(dst, fromWire(w))
	}
	return dst, err
}

// sealClusters encodes clusters rows for a shuffle, in JSON: gob would
// send a pointer to a zero value (a minimum resemblance of 0, an empty
// URL) as nil.
func sealClusters(rows []tables.Cluster) []byte {
	b, err := json.Marshal(rows)
	if err != nil {
		panic(err) // plain structs of numbers and strings
	}
	return packed.Seal(nil, b)
}

// decodeClusters decodes a batch of sealClusters and appends it to dst.
func decodeClusters(dst []tables.Cluster, b []byte) ([]tables.Cluster, error) {
	var rows []tables.Cluster
	err := json.Unmarshal(b, &rows)
	return append(dst, rows...), err
}

// SketchesFor is the sketch stream Assemble and Sweeps read, and the index
// tables beside it: the clustered sketches of Cluster (the index's
// included), or, when redirects join pages to clusters after phase 4
// (redirects), every representative's (reps) with the index's sketches
// shards, since a page a redirect joined was in no component.
func SketchesFor(redirects bool, clustered, reps beam.PCollection, index IndexTables) (beam.PCollection, IndexTables) {
	if redirects {
		return reps, index
	}
	index.Sketches = nil
	return clustered, index
}
