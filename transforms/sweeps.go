package transforms

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

func init() {
	{
		fn := &urlSeenFn{}
		register.Function3x0(fn.StartBundle)
		register.Function5x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &urlsFn{}
		register.Function2x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function2x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &lostJoinFn{}
		register.Function7x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &resolveLostFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
}

// urlSeen is one document's URL and sweep, on its way to the URL's
// partition.
type urlSeen struct {
	URL   string
	Sweep string
	Doc   int64
}

// sweepRecord is what meets at a cluster's partition to find the lost
// URLs' live documents: a lost document (Lost set), a live one (a document
// of the latest sweep) or a representative's sketch (Values).
type sweepRecord struct {
	Cluster   int64 // -1: no cluster
	Doc, Rep  int64 // Rep: the representative whose sketch stands for Doc
	URL       string
	LastSweep string
	Lost      bool
	Values    []uint64
	// Redirect marks a lost redirect in a cluster (--redirect-column),
	// which has no sketch to compare; Target is the document its chain
	// ended at.
	Redirect bool
	Target   int64
}

// Sweeps is Broder's lost and found over dated sweeps. It takes meta, the
// docs rows (keyed by doc partition, as Sketch and ReadDocs give them),
// with the assignments of Components (and of Redirects: a lost redirect
// is found where its chain ended; a live one is never found, its body
// being a stub) and the clustered representatives' sketches of
// Components, and writes two tables under place.TempDir: urls,
// every URL's first and last sweep, and, when the documents come from more
// than one sweep (span.MultiSweep), lost: every URL seen in an earlier
// sweep and absent from the latest (span.LatestSweep), with the live
// documents of its cluster most like it (matches of them, the most
// resembling first; 0: all) and their resemblance estimated on their
// sketches (sk). URLs are placed by their fingerprint under seed. In an
// update (up) the index's urls rows of each partition are read from its
// urls shards and merged with the new documents'. Of the two tables it
// writes those the run does (place.Write), and nothing without either.
func Sweeps(s beam.Scope, meta, assignments, clustered beam.PCollection, span SweepSpan, seed uint64, sk sketch.Spec, matches int, up Update, place Placement) {
	if place.TempDir == "" || !place.Write.Any(tables.URLsTable, tables.LostTable) {
		return // tests without an output folder, or a run without either table
	}
	s = s.Scope("Sweeps")
	parts := place.Partitions
	seen, live := beam.ParDo2(s, &urlSeenFn{SweepSpan: span, Seed: seed, FirstNewDoc: up.FirstNewDoc, Partitions: parts}, meta)
	// Every partition: in an update the index's URLs are read there,
	// and every partition's receipt of the urls table is expected.
	seen = beam.Flatten(s, seen, everyPartition(s, parts))
	lostMarks := beam.ParDo(s, &urlsFn{SweepSpan: span, Seed: seed, Index: up.Index.URLs, Partitions: parts, TempDir: place.shards(tables.URLsTable), Lanes: place.Lanes},
		beam.GroupByKey(s, seen))
	if !span.MultiSweep || !place.Write.Has(tables.LostTable) {
		drainKV(s, lostMarks) // none; see drain
		return
	}
	records := beam.ParDo(s, &lostJoinFn{Partitions: parts}, beam.CoGroupByKey(s, live, assignments, lostMarks, clustered))
	drain(s, beam.ParDo(s, &resolveLostFn{Sketch: sk, Matches: matches, TempDir: place.TempDir}, beam.GroupByKey(s, records)))
}

type urlSeenFn struct {
	SweepSpan
	Seed uint64 // the URLs' partitions are of their fingerprints
	// FirstNewDoc, in an update: the index's documents' URLs are in its
	// urls table, which urlsFn reads.
	FirstNewDoc uint64
	Partitions  int
	seen, live  [][]urlSeen // the bundle's, by partition (see batcher on why per bundle)
	held        int
}

func (f *urlSeenFn) StartBundle(ctx context.Context, emitSeen, emitLive func(int, []byte)) {
	f.seen, f.live, f.held = nil, nil, 0 // a retried bundle starts afresh
}

func (f *urlSeenFn) FinishBundle(ctx context.Context, emitSeen, emitLive func(int, []byte)) {
	f.flush(emitSeen, emitLive)
}

// flush emits what the bundle holds, one element per partition and stream.
func (f *urlSeenFn) flush(emitSeen, emitLive func(int, []byte)) {
	for p := range f.seen {
		if len(f.seen[p]) > 0 {
			emitSeen(p, sealRows(f.seen[p]))
			f.seen[p] = nil
		}
		if len(f.live[p]) > 0 {
			emitLive(p, sealRows(f.live[p]))
			f.live[p] = nil
		}
	}
	f.held = 0
}

// ProcessElement sends each docs row's URL and sweep to the URL's
// partition, and, for the lost-and-found join, the row's doc, URL and
// sweep to its own partition (live rows only: documents of the latest
// sweep).
func (f *urlSeenFn) ProcessElement(ctx context.Context, part int, sealed []byte, emitSeen, emitLive func(int, []byte)) error {
	docs, err := openDocRows(sealed)
	if err != nil {
		return err
	}
	h := fingerprint.New(f.Seed)
	parts := f.Partitions
	if f.seen == nil {
		f.seen, f.live = make([][]urlSeen, parts), make([][]urlSeen, parts)
	}
	for _, d := range docs {
		if d.URL == nil || *d.URL == "" {
			continue
		}
		u := urlSeen{URL: *d.URL, Sweep: d.Sweep, Doc: d.DocID}
		// In an update, the index's URLs are in its urls table, which
		// urlsFn reads.
		if uint64(d.DocID) >= f.FirstNewDoc {
			p := packed.Partition(h.String(u.URL), parts)
			f.seen[p] = append(f.seen[p], u)
			f.held += 32 + len(u.URL) + len(u.Sweep)
		}
		if f.MultiSweep && d.Sweep == f.LatestSweep {
			f.live[part] = append(f.live[part], u)
			f.held += 32 + len(u.URL) + len(u.Sweep)
		}
	}
	if f.held > maxBuffered(parts) {
		f.flush(emitSeen, emitLive)
	}
	return nil
}

// sealRows encodes rows for a shuffle, sealed like every batch.
func sealRows[T any](rows []T) []byte {
	b, err := tables.Encode(rows)
	if err != nil {
		panic(err) // gob cannot fail on these plain structs
	}
	return packed.Seal(nil, b)
}

type urlsFn struct {
	SweepSpan
	Seed       uint64
	Index      []Shard // the index's urls shards, in an update
	Partitions int
	TempDir    string // where the urls shards go ("": nowhere)
	Lanes      int
	lanes      lanes[func(int, []byte)]
}

func (f *urlsFn) StartBundle(ctx context.Context, emit func(int, []byte)) { f.lanes.reset() }

func (f *urlsFn) FinishBundle(ctx context.Context, emit func(int, []byte)) error {
	return f.lanes.finish(ctx, emit)
}

// ProcessElement writes the urls shard of one URL partition and sends each
// lost URL's document of its last sweep to that document's partition.
func (f *urlsFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "urls")
	defer g.done()
	batches = g.iter(batches)
	n := hold(f.Lanes, &batches)
	return f.lanes.do(ctx, n, emit, func(ctx context.Context) (laneOut[func(int, []byte)], error) {
		lost, err := f.urls(ctx, part, batches)
		return func(ctx context.Context, emit func(int, []byte)) error {
			for p, l := range lost {
				if len(l) > 0 {
					emit(p, sealRows(l))
				}
			}
			return nil
		}, err
	})
}

// urls writes the urls shard of one URL partition and returns its lost
// URLs by their last document's partition.
func (f *urlsFn) urls(ctx context.Context, part int, batches func(*[]byte) bool) ([][]urlSeen, error) {
	all, err := decodeBatches(batches, tables.Decode[urlSeen])
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(x, y urlSeen) int {
		return cmp.Or(cmp.Compare(x.URL, y.URL), cmp.Compare(x.Sweep, y.Sweep), cmp.Compare(x.Doc, y.Doc))
	})
	var rows []tables.URL
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].URL == all[i].URL {
			j++
		}
		last := all[j-1].Sweep
		k := j - 1
		for k > i && all[k-1].Sweep == last {
			k--
		}
		ids := make([]int64, j-i)
		for x := range ids {
			ids[x] = all[i+x].Doc
		}
		slices.Sort(ids)
		rows = append(rows, tables.URL{URL: all[i].URL, FirstSweep: all[i].Sweep, LastSweep: last, Docs: int64(j - i), LastDocID: all[k].Doc, DocIDs: ids})
		i = j
	}
	if len(f.Index) > 0 {
		old, err := readIndexURLs(ctx, f.Index, part, f.Partitions, fingerprint.New(f.Seed))
		if err != nil {
			return nil, err
		}
		if rows, err = mergeURLs(old, rows); err != nil {
			return nil, err
		}
	}
	lost := make([][]urlSeen, f.Partitions)
	for _, r := range rows {
		if f.MultiSweep && r.LastSweep < f.LatestSweep {
			p := packed.Partition(uint64(r.LastDocID), f.Partitions)
			lost[p] = append(lost[p], urlSeen{URL: r.URL, Sweep: r.LastSweep, Doc: r.LastDocID})
		}
	}
	r, err := output.WriteShard(ctx, f.TempDir, tables.URLsTable, part, rows)
	if err != nil {
		return nil, err
	}
	return lost, output.WriteRecord(ctx, f.TempDir, "urls", part, nil, r)
}

type lostJoinFn struct{ Partitions int }

// ProcessElement sends, from one doc partition, each lost URL's document
// and each live document with its cluster, and each clustered
// representative's sketch, to the cluster's partition (a lost document in
// no cluster to its own).
func (f *lostJoinFn) ProcessElement(ctx context.Context, part int, liveIt, assignIt, lostIt, repsIt func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "lost_join")
	defer g.done()
	liveIt, assignIt, lostIt, repsIt = g.iter(liveIt), g.iter(assignIt), g.iter(lostIt), g.iter(repsIt)
	live, err := decodeBatches(liveIt, tables.Decode[urlSeen])
	if err != nil {
		return err
	}
	assigns, err := decodeBatches(assignIt, packed.AppendAssignments)
	if err != nil {
		return err
	}
	lost, err := decodeBatches(lostIt, tables.Decode[urlSeen])
	if err != nil {
		return err
	}
	reps, err := readSketches(ctx, repsIt)
	if err != nil {
		return err
	}
	cluster := make(map[int64]packed.Assignment, len(assigns))
	for _, a := range assigns {
		cluster[int64(a.Doc)] = a
	}
	rep := func(a packed.Assignment) int64 {
		if a.IdenticalTo != packed.NoDoc {
			return int64(a.IdenticalTo)
		}
		return int64(a.Doc)
	}
	parts := f.Partitions
	out := make([][]sweepRecord, parts)
	add := func(r sweepRecord) {
		p := part
		if r.Cluster >= 0 {
			p = packed.Partition(uint64(r.Cluster), parts)
		}
		out[p] = append(out[p], r)
	}
	// A redirect's assignment (hops followed) is in a cluster when its
	// chain ended at a document; a note (Cluster NoDoc) is in none.
	redirect := func(a packed.Assignment) bool { return a.Hops > 0 }
	for _, l := range lost {
		r := sweepRecord{Cluster: -1, Doc: l.Doc, Rep: l.Doc, URL: l.URL, LastSweep: l.Sweep, Lost: true}
		if a, ok := cluster[l.Doc]; ok && a.Cluster != packed.NoDoc {
			r.Cluster, r.Rep = int64(a.Cluster), rep(a)
			if redirect(a) {
				r.Redirect, r.Target = true, int64(a.Target)
			}
		}
		add(r)
	}
	for _, l := range live {
		if a, ok := cluster[l.Doc]; ok && a.Cluster != packed.NoDoc && !redirect(a) {
			add(sweepRecord{Cluster: int64(a.Cluster), Doc: l.Doc, Rep: rep(a), URL: l.URL})
		}
	}
	for _, r := range reps {
		if a, ok := cluster[int64(r.Doc)]; ok {
			add(sweepRecord{Cluster: int64(a.Cluster), Doc: int64(r.Doc), Rep: int64(r.Doc), Values: r.Values})
		}
	}
	for p, rs := range out {
		if len(rs) > 0 {
			emit(p, sealRows(rs))
		}
	}
	return nil
}

type resolveLostFn struct {
	Sketch  sketch.Spec
	Matches int // the live documents listed per lost URL (0: all)
	TempDir string
}

// ProcessElement writes the lost shard of one cluster partition: each lost
// URL with the live documents of its cluster most like it (f.Matches of
// them, by resemblance, then doc ID; all when 0), and the resemblance of
// the two estimated from their representatives' sketches (1 for copies of
// one representative). A cluster of many copies across sweeps would
// otherwise list lost × live rows. A lost redirect has no sketch: its
// chain's end first, then by doc ID, without a resemblance.
func (f *resolveLostFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "resolve_lost")
	defer g.done()
	batches = g.iter(batches)
	all, err := decodeBatches(batches, tables.Decode[sweepRecord])
	if err != nil {
		return err
	}
	values := map[int64][]uint64{}
	byCluster := map[int64][]sweepRecord{}
	var lost []sweepRecord
	for _, r := range all {
		switch {
		case r.Values != nil:
			values[r.Doc] = r.Values
		case r.Lost:
			lost = append(lost, r)
		default:
			byCluster[r.Cluster] = append(byCluster[r.Cluster], r)
		}
	}
	// Lost documents of one representative are alike to every live one:
	// their resemblances are estimated once.
	slices.SortFunc(lost, func(x, y sweepRecord) int {
		return cmp.Or(cmp.Compare(x.Cluster, y.Cluster), cmp.Compare(x.Rep, y.Rep))
	})
	var rows []tables.Lost
	type match struct {
		res float64
		sweepRecord
	}
	var found []match
	for i, l := range lost {
		row := tables.Lost{URL: l.URL, LastSweep: l.LastSweep, DocID: l.Doc}
		if l.Cluster < 0 {
			rows = append(rows, row)
			continue
		}
		c := l.Cluster
		row.ClusterID = &c
		live := byCluster[c]
		if len(live) == 0 {
			rows = append(rows, row)
			continue
		}
		if i == 0 || lost[i-1].Cluster != c || lost[i-1].Rep != l.Rep || l.Redirect || lost[i-1].Redirect {
			found = found[:0]
			for _, d := range live {
				res := 1.0
				switch {
				case l.Redirect:
					res = 0 // no sketch: its chain's end first (below)
					if d.Doc == l.Target {
						res = 1
					}
				case d.Rep != l.Rep:
					res = clusters.EstimateSketches(values[l.Rep], values[d.Rep], f.Sketch).Resemblance
				}
				found = append(found, match{res, d})
			}
			slices.SortFunc(found, func(x, y match) int { return cmp.Or(cmp.Compare(y.res, x.res), cmp.Compare(x.Doc, y.Doc)) })
			if f.Matches > 0 && len(found) > f.Matches {
				found = found[:f.Matches]
			}
		}
		for _, m := range found {
			r := row
			doc, url, res := m.Doc, m.URL, m.res
			r.FoundDocID, r.FoundURL = &doc, &url
			if !l.Redirect {
				r.Resemblance = &res
			}
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(x, y tables.Lost) int {
		return cmp.Or(cmp.Compare(x.URL, y.URL), cmp.Compare(optInt(x.FoundDocID), optInt(y.FoundDocID)))
	})
	r, err := output.WriteShard(ctx, f.TempDir, tables.LostTable, part, rows)
	if err != nil {
		return err
	}
	emit(store.Join(f.TempDir, tables.LostTable, r.File)) // see drain
	return output.WriteRecord(ctx, f.TempDir, "lost", part, nil, r)
}

func optInt(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// mergeURLs merges the urls rows of an index (old, any order) with those
// of an update's new documents (rows, sorted by URL), as if the rows had
// been computed over the documents of both: the new documents' IDs are
// all above the index's, so the smallest document of a last sweep both
// saw is the index's, and the index's doc IDs come first. It refuses an
// index written before the urls table had doc_ids.
func mergeURLs(old, rows []tables.URL) ([]tables.URL, error) {
	for _, o := range old {
		if int64(len(o.DocIDs)) != o.Docs {
			return nil, fmt.Errorf("the index's urls table lacks the doc_ids of %q (an output written before they were): recluster the index (runner recluster --from INDEX --output NEW, which rewrites it with them) and update that", o.URL)
		}
	}
	slices.SortFunc(old, func(x, y tables.URL) int { return cmp.Compare(x.URL, y.URL) })
	out := make([]tables.URL, 0, len(old)+len(rows))
	i, j := 0, 0
	for i < len(old) || j < len(rows) {
		switch {
		case j == len(rows) || (i < len(old) && old[i].URL < rows[j].URL):
			out = append(out, old[i])
			i++
		case i == len(old) || rows[j].URL < old[i].URL:
			out = append(out, rows[j])
			j++
		default:
			o, n := old[i], rows[j]
			m := tables.URL{URL: o.URL, FirstSweep: min(o.FirstSweep, n.FirstSweep), LastSweep: max(o.LastSweep, n.LastSweep),
				Docs: o.Docs + n.Docs, LastDocID: o.LastDocID, DocIDs: slices.Concat(o.DocIDs, n.DocIDs)}
			if n.LastSweep > o.LastSweep {
				m.LastDocID = n.LastDocID
			}
			out = append(out, m)
			i++
			j++
		}
	}
	return out, nil
}
