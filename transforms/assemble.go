package transforms

import (
	"cmp"
	"context"
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
	register.DoFn6x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(*[]byte) bool, func(string), error](&assembleFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(string), error](&writePairsFn{})
	register.Emitter1[string]()
}

// Assemble takes the docs-table rows of Sketch and the assignments and
// cluster stats of Cluster, all keyed by doc partition, joins them and
// writes one docs shard and one clusters shard per partition under
// place.TempDir. In an update (index, an update's Index) the index's docs
// rows of each partition are read from its docs shard there. It returns
// PCollection<string> of the shard files written.
func Assemble(s beam.Scope, meta, assignments, stats beam.PCollection, index IndexTables, place Placement) beam.PCollection {
	s = s.Scope("Assemble")
	// Every partition, also one no row reaches: in an update its index
	// rows are read there, and every partition's receipt is expected.
	meta = beam.Flatten(s, meta, everyPartition(s, place.Partitions))
	joined := beam.CoGroupByKey(s, meta, assignments, stats)
	files := beam.ParDo(s, &assembleFn{Index: index.Docs, Partitions: place.Partitions, TempDir: place.TempDir, Write: place.Write, Lanes: place.Lanes}, joined)
	drain(s, files)
	return files
}

type assembleFn struct {
	Index      []Shard // the index's docs shards, in an update
	Partitions int
	TempDir    string
	Write      tables.Selection // of docs and clusters, the tables it writes
	Lanes      int
	lanes      lanes[func(string)]
}

func (f *assembleFn) StartBundle(ctx context.Context, emit func(string)) { f.lanes.reset() }

func (f *assembleFn) FinishBundle(ctx context.Context, emit func(string)) error {
	return f.lanes.finish(ctx, emit)
}

// statusCounter names the phase 1 counter (docs_<name>) of each status.
var statusCounter = map[string]string{
	tables.StatusOK: "ok", tables.StatusEmpty: "empty", tables.StatusTooShort: "too_short", tables.StatusRejected: "rejected",
	tables.StatusRedirect: "redirect",
}

func (f *assembleFn) ProcessElement(ctx context.Context, part int, metas, assigns, statsIt func(*[]byte) bool, emit func(string)) error {
	n := hold(f.Lanes, &metas, &assigns, &statsIt)
	return f.lanes.timed(ctx, n, emit, outputTime, func() (laneOut[func(string)], error) {
		files, tally, err := f.assemble(ctx, part, metas, assigns, statsIt)
		return func(ctx context.Context, emit func(string)) error {
			for _, name := range files {
				emit(name)
			}
			docsWritten.Inc(ctx, tally["docs_written"])
			docsClustered.Inc(ctx, tally["docs_in_clusters"])
			docsAlone.Inc(ctx, tally["docs_alone"])
			docsNotSketched.Inc(ctx, tally["docs_empty_or_rejected"])
			clustersWritten.Inc(ctx, tally["clusters_written"])
			return nil
		}, err
	})
}

// assemble joins and writes one partition's docs and clusters shards and
// its tally, and returns the shards' names and the tally.
func (f *assembleFn) assemble(ctx context.Context, part int, metas, assigns, statsIt func(*[]byte) bool) ([]string, map[string]int64, error) {
	docs, err := decodeBatches(metas, tables.Decode[tables.Doc])
	if err != nil {
		return nil, nil, err
	}
	// The index's rows, in an update: their cluster columns unread, empty.
	if docs, err = appendIndexDocs(ctx, docs, f.Index, part, f.Partitions); err != nil {
		return nil, nil, err
	}
	asg, err := decodeBatches(assigns, packed.AppendAssignments)
	if err != nil {
		return nil, nil, err
	}
	sts, err := decodeBatches(statsIt, packed.AppendClusterStats)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(docs, func(x, y tables.Doc) int { return cmp.Compare(uint64(x.DocID), uint64(y.DocID)) })
	slices.SortFunc(asg, func(x, y packed.Assignment) int { return cmp.Compare(x.Doc, y.Doc) })
	slices.SortFunc(sts, func(x, y packed.ClusterStat) int { return cmp.Compare(x.Cluster, y.Cluster) })

	n := clusters.Join(docs, asg)
	clusterRows := clusters.Rows(sts, docs)
	var files []string
	var docsWritten, clustersWritten int64 // 0 for a table the run leaves out
	// Every partition has its receipts, rows or none (output.WriteShard).
	var receipts []output.Receipt
	if f.Write.Has(tables.DocsTable) {
		docsWritten = int64(len(docs))
		r, err := output.WriteShard(ctx, f.TempDir, tables.DocsTable, part, docs)
		if err != nil {
			return nil, nil, err
		}
		if r.File != "" {
			files = append(files, store.Join(f.TempDir, tables.DocsTable, r.File))
		}
		receipts = append(receipts, r)
	}
	if f.Write.Has(tables.ClustersTable) {
		clustersWritten = int64(len(clusterRows))
		r, err := output.WriteShard(ctx, f.TempDir, tables.ClustersTable, part, clusterRows)
		if err != nil {
			return nil, nil, err
		}
		if r.File != "" {
			files = append(files, store.Join(f.TempDir, tables.ClustersTable, r.File))
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
	return files, counts, output.WriteRecord(ctx, f.TempDir, "assemble", part, counts, receipts...)
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
	defer outputTime.done(ctx, time.Now())
	rows, err := decodeBatches(batches, tables.Decode[tables.Pair])
	if err != nil {
		return err
	}
	slices.SortFunc(rows, func(x, y tables.Pair) int { return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB)) })
	counts := map[string]int64{"pairs_written": 0, "contained_written": 0}
	var receipts []output.Receipt
	if f.Write.Has(tables.PairsTable) {
		r, err := output.WriteShard(ctx, f.TempDir, tables.PairsTable, part, rows)
		if err != nil {
			return err
		}
		pairsWritten.Inc(ctx, int64(len(rows)))
		counts["pairs_written"] = int64(len(rows))
		if r.File != "" {
			emit(store.Join(f.TempDir, tables.PairsTable, r.File))
		}
		receipts = append(receipts, r)
	}
	if f.Linking.keepsContained() && f.Write.Has(tables.ContainedTable) {
		contained := tables.ContainedRows(rows, f.Linking.Policy.ContainedThreshold())
		r, err := output.WriteShard(ctx, f.TempDir, tables.ContainedTable, part, contained)
		if err != nil {
			return err
		}
		containedWritten.Inc(ctx, int64(len(contained)))
		counts["contained_written"] = int64(len(contained))
		receipts = append(receipts, r)
	}
	return output.WriteRecord(ctx, f.TempDir, "pairs", part, counts, receipts...)
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
