package main

// The floor: the same job as the pipeline in one plain Go process, no Beam.
// It reads the same Parquet row groups with io/crawl, sketches every row
// with the pipeline's own transforms.RowSketcher (one per worker), takes the same identical shortcut, builds the shingle lists and
// counts pairs by sorting, links with the same policy, clusters with the
// same union-find and writes the same tables with io/tables. What the
// pipeline costs beyond it is the price of Beam and Prism.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// floorPhases are the floor's phases, in order, named as the bench prints
// the pipeline's.
var floorPhases = []string{"sketch", "ident", "merge", "pairs", "cluster", "out"}

// floorResult is what the floor reports, written as floor.json next to its
// tables. Counts use the pipeline's counter names.
type floorResult struct {
	TextBytes    int64            `json:"text_bytes"`
	PhaseMS      map[string]int64 `json:"phase_ms"`
	Counts       map[string]int64 `json:"counts"`
	UFBytesPerID float64          `json:"uf_bytes_per_id"`
	WallSeconds  float64          `json:"wall_seconds"`
}

const floorResultFile = "floor.json"

// defaultConfig is cmd/runner's defaults, unverified.
func defaultConfig() transforms.Config {
	c := transforms.Config{Config: settings.Default()}
	// The floor does not verify; the runner's default settles its
	// uncertain pairs on dense samples at every size since issue 39, so
	// the measured runs carry that cost and the floor does not (the
	// in-process profiles and the tests' small inputs follow the floor).
	c.Verify = settings.VerifyNone
	return c
}

// columnConfig is cmd/runner's defaults with the given content columns.
func columnConfig(text, html string) transforms.Config {
	cfg := defaultConfig()
	cfg.Columns.Text, cfg.Columns.HTML = text, html
	return cfg
}

// sketchRec is one document's entry to the identical shortcut.
type sketchRec struct {
	key, doc uint64
	values   []uint64
}

// posting is <shingle, doc> with the doc as its dense representative index.
type posting struct {
	shingle uint64
	doc     uint32
}

// gatherBucket concatenates one bucket of every worker (at(w) points to
// worker w's), releasing each as it goes.
func gatherBucket[E any](workers int, at func(w int) *[]E) []E {
	var n int
	for w := range workers {
		n += len(*at(w))
	}
	all := make([]E, 0, n)
	for w := range workers {
		all = append(all, *at(w)...)
		*at(w) = nil
	}
	return all
}

// parallel runs fn(i) for i in [0, n) on workers goroutines.
func parallel(workers, n int, fn func(worker, i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || errs[w] != nil {
					return
				}
				errs[w] = fn(w, i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runFloor runs the floor over input and writes its tables and result to
// outDir. It supports the pipeline's pairs mode with a MOD_m sketch.
func runFloor(ctx context.Context, input, outDir string, cfg transforms.Config, workers int) (*floorResult, error) {
	if cfg.Sketch.Kind != sketch.Mod || cfg.Mode == settings.ModeSuperShingle {
		return nil, fmt.Errorf("floor: only pairs mode with a mod:M sketch")
	}
	link := cfg.Linking() // which lists over the cap phase 3 anchors, as the pipeline's
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	res := &floorResult{PhaseMS: map[string]int64{}, Counts: map[string]int64{}}
	phaseStart := start
	phase := func(name string) {
		now := time.Now()
		res.PhaseMS[name] = now.Sub(phaseStart).Milliseconds()
		phaseStart = now
	}
	count := func(name string, n int64) { res.Counts[name] += n }
	if err := os.RemoveAll(outDir); err != nil {
		return nil, err
	}

	// Phase 1: read and sketch the row groups in parallel.
	files, err := store.Match(ctx, input)
	if err != nil {
		return nil, err
	}
	var splits []crawl.Split
	for i, f := range files {
		sp, err := crawl.Splits(ctx, i, f, cfg.Columns)
		if err != nil {
			return nil, err
		}
		splits = append(splits, sp...)
	}
	type splitOut struct {
		docs  []tables.Doc
		recs  []sketchRec
		text  int64
		stats [6]int64 // ok, empty, too short, shingles, sketch values, rejected
	}
	outs := make([]splitOut, len(splits))
	// One RowSketcher per worker: the per-row work is the pipeline's own
	// (rowsketch.Sketcher, which the Sketch transform calls).
	sketchers := make([]*rowsketch.Sketcher, workers)
	for w := range sketchers {
		if sketchers[w], err = rowsketch.New(cfg.Config); err != nil {
			return nil, err
		}
	}
	err = parallel(workers, len(splits), func(w, i int) error {
		sp := splits[i]
		rs := sketchers[w]
		var arena []uint64
		type span struct{ off, n int }
		var spans []span
		o := &outs[i]
		o.docs = make([]tables.Doc, 0, sp.NumRows)
		err := crawl.ReadSplit(ctx, sp, cfg.Columns, func(row crawl.Row) error {
			o.text += int64(len(row.Content))
			doc, rec, _ := rs.Sketch(sp, row)
			switch doc.Status {
			case tables.StatusOK:
				o.stats[0]++
				o.stats[3] += doc.ShingleCount
				o.stats[4] += int64(doc.SketchSize)
			case tables.StatusEmpty:
				o.stats[1]++
			case tables.StatusTooShort:
				o.stats[2]++
			case tables.StatusRejected:
				o.stats[5]++
			}
			if rec != nil {
				// rec.Values is the RowSketcher's buffer: copy it.
				o.recs = append(o.recs, sketchRec{key: rec.Key, doc: rec.Doc})
				spans = append(spans, span{len(arena), len(rec.Values)})
				arena = append(arena, rec.Values...)
			}
			o.docs = append(o.docs, doc)
			return nil
		})
		for k, s := range spans {
			if s.n > 0 {
				o.recs[k].values = arena[s.off : s.off+s.n : s.off+s.n]
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var nrecs int
	for i := range outs {
		o := &outs[i]
		res.TextBytes += o.text
		count("docs", int64(len(o.docs)))
		count("docs_ok", o.stats[0])
		count("docs_empty", o.stats[1])
		count("docs_too_short", o.stats[2])
		count("shingles", o.stats[3])
		count("sketch_values", o.stats[4])
		count("docs_rejected", o.stats[5])
		nrecs += len(o.recs)
	}
	phase("sketch")

	// The identical shortcut: records bucketed by the top bits of their
	// identity key, each bucket sorted by (key, doc) in parallel; the
	// lowest doc of a key is its representative, the others are copies.
	// The records of the splits, concatenated, are in doc order (splits
	// come in file and row-group order), so the representatives are
	// gathered in doc order by marking the copies.
	recs := make([]sketchRec, 0, nrecs)
	for i := range outs {
		recs = append(recs, outs[i].recs...)
		outs[i].recs = nil
	}
	byDoc := func(x, y sketchRec) int { return cmp.Compare(x.doc, y.doc) }
	if !slices.IsSortedFunc(recs, byDoc) {
		slices.SortFunc(recs, byDoc)
	}
	const identBits = 8
	type keyed struct {
		key, doc uint64
		idx      uint32 // in recs
	}
	identChunk := (len(recs) + workers - 1) / max(workers, 1)
	identParts := make([][1 << identBits][]keyed, workers)
	err = parallel(workers, workers, func(_, w int) error {
		lo, hi := min(w*identChunk, len(recs)), min((w+1)*identChunk, len(recs))
		for k := lo; k < hi; k++ {
			r := &recs[k]
			b := fingerprint.Mix(r.key) >> (64 - identBits)
			identParts[w][b] = append(identParts[w][b], keyed{r.key, r.doc, uint32(k)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	isCopy := make([]bool, len(recs))
	copyParts := make([][]packed.Edge, 1<<identBits)
	var groups atomic.Int64
	err = parallel(workers, 1<<identBits, func(_, b int) error {
		all := gatherBucket(len(identParts), func(w int) *[]keyed { return &identParts[w][b] })
		slices.SortFunc(all, func(x, y keyed) int {
			if x.key != y.key {
				return cmp.Compare(x.key, y.key)
			}
			return cmp.Compare(x.doc, y.doc)
		})
		var ng int64
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j].key == all[i].key {
				j++
			}
			if j-i > 1 {
				ng++
				for _, c := range all[i+1 : j] {
					isCopy[c.idx] = true
					copyParts[b] = append(copyParts[b], packed.Edge{A: all[i].doc, B: c.doc, Resemblance: 1, Copy: true})
				}
			}
			i = j
		}
		groups.Add(ng)
		return nil
	})
	if err != nil {
		return nil, err
	}
	identParts = nil
	var copies []packed.Edge
	for _, c := range copyParts {
		copies = append(copies, c...)
	}
	// Dense indices in doc order, so that a < b as doc IDs too.
	reps := make([]sketchRec, 0, len(recs)-len(copies))
	for k := range recs {
		if !isCopy[k] {
			reps = append(reps, recs[k])
		}
	}
	recs, isCopy = nil, nil
	count("identical_groups", groups.Load())
	count("identical_skipped", int64(len(copies)))
	count("representatives", int64(len(reps)))
	phase("ident")

	// Phase 2: <shingle, doc> lists, by sorting postings in buckets of the
	// shingle's top bits; single-doc and too-common shingles dropped.
	const bucketBits = 8
	const buckets = 1 << bucketBits
	chunk := (len(reps) + workers - 1) / max(workers, 1)
	perWorker := make([][buckets][]posting, workers)
	err = parallel(workers, workers, func(_, w int) error {
		lo, hi := min(w*chunk, len(reps)), min((w+1)*chunk, len(reps))
		for d := lo; d < hi; d++ {
			for _, v := range reps[d].values {
				b := v >> (64 - bucketBits)
				perWorker[w][b] = append(perWorker[w][b], posting{v, uint32(d)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	lists := make([][]posting, buckets)
	var distinct, shared, dropped atomic.Int64
	err = parallel(workers, buckets, func(_, b int) error {
		all := gatherBucket(len(perWorker), func(w int) *[]posting { return &perWorker[w][b] })
		slices.SortFunc(all, func(x, y posting) int {
			if x.shingle != y.shingle {
				return cmp.Compare(x.shingle, y.shingle)
			}
			return cmp.Compare(x.doc, y.doc)
		})
		out := all[:0]
		var nd, ns, nx int64
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j].shingle == all[i].shingle {
				j++
			}
			nd++
			switch k := j - i; {
			case k > cfg.MaxShingleDocs && link.AnchorDocs == 0:
				nx++
			case k >= 2: // over the cap, anchored in phase 3
				ns++
				out = append(out, all[i:j]...) // in place: out never passes i
			}
			i = j
		}
		lists[b] = out
		distinct.Add(nd)
		shared.Add(ns)
		dropped.Add(nx)
		return nil
	})
	if err != nil {
		return nil, err
	}
	perWorker = nil
	count("distinct_shingles", distinct.Load())
	count("shared_shingles", shared.Load())
	count("common_shingles_dropped", dropped.Load())
	phase("merge")

	// Phase 3: one a<<32|b record per pair of docs on a list, partitioned
	// by a hash of the pair, then sorted and counted per partition.
	const pairBits = 8
	const pairParts = 1 << pairBits
	triplets := make([][pairParts][]uint64, workers)
	var ntrip atomic.Int64
	err = parallel(workers, buckets, func(w, b int) error {
		l := lists[b]
		var n int64
		for i := 0; i < len(l); {
			j := i + 1
			for j < len(l) && l[j].shingle == l[i].shingle {
				j++
			}
			pair := func(x, y int) {
				key := uint64(l[i+x].doc)<<32 | uint64(l[i+y].doc)
				p := fingerprint.Mix(key) >> (64 - pairBits)
				triplets[w][p] = append(triplets[w][p], key)
				n++
			}
			if link.Over(j - i) {
				// A list over the cap pairs through its anchors
				// (--anchor-docs), as phase 3 does; the floor keeps
				// no sketch sizes, so every document fits.
				link.AnchorPairs(j-i, func(int) uint32 { return 1 }, pair)
			} else {
				for x := range j - i {
					for y := x + 1; y < j-i; y++ {
						pair(x, y)
					}
				}
			}
			i = j
		}
		lists[b] = nil
		ntrip.Add(n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	count("pair_triplets", ntrip.Load())
	type counted struct {
		key   uint64
		count uint32
	}
	pairs := make([][]counted, pairParts)
	var npairs atomic.Int64
	err = parallel(workers, pairParts, func(_, p int) error {
		var n int
		for w := range triplets {
			n += len(triplets[w][p])
		}
		all := make([]uint64, 0, n)
		for w := range triplets {
			all = append(all, triplets[w][p]...)
			triplets[w][p] = nil
		}
		slices.Sort(all)
		var out []counted
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j] == all[i] {
				j++
			}
			out = append(out, counted{all[i], uint32(j - i)})
			i = j
		}
		pairs[p] = out
		npairs.Add(int64(len(out)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	triplets = nil
	count("pairs", npairs.Load())
	phase("pairs")

	// Phase 4: estimates, the policy, union-find.
	rows := make([][]tables.Pair, pairParts)
	links := make([][]packed.Edge, pairParts)
	err = parallel(workers, pairParts, func(_, p int) error {
		for _, c := range pairs[p] {
			a, b := &reps[c.key>>32], &reps[c.key&math.MaxUint32]
			sa, sb := len(a.values), len(b.values)
			r := sketch.ModResemblance(int(c.count), sa, sb)
			aInB, bInA := sketch.Containment(int(c.count), sa), sketch.Containment(int(c.count), sb)
			e := policy.Estimates{Shared: int(c.count), Resemblance: r, AInB: &aInB, BInA: &bInA}
			linked := cfg.Policy.Links(e)
			if linked {
				links[p] = append(links[p], packed.Edge{A: a.doc, B: b.doc, Resemblance: r})
			}
			if policy.Keep(e, linked) {
				rows[p] = append(rows[p], tables.Pair{DocA: int64(a.doc), DocB: int64(b.doc), Shared: int32(c.count),
					SketchSizeA: int32(sa), SketchSizeB: int32(sb), Resemblance: r,
					ContainmentAInB: &aInB, ContainmentBInA: &bInA, Linked: linked})
			}
		}
		pairs[p] = nil
		return nil
	})
	if err != nil {
		return nil, err
	}
	edges := copies
	for _, l := range links {
		count("links", int64(len(l)))
		edges = append(edges, l...)
	}
	var pairRows []tables.Pair
	for _, r := range rows {
		pairRows = append(pairRows, r...)
	}
	count("pairs_reported", int64(len(pairRows)))
	repSketches := make([]packed.Sketch, len(reps))
	for i, r := range reps {
		repSketches[i] = packed.Sketch{Doc: r.doc, Values: r.values}
	}
	spec := cfg.Sketch
	assign, stats, bytesPerID := clusters.Components(edges, repSketches, nil, clusters.Options{
		Estimate: func(a, b []uint64) policy.Estimates { return clusters.EstimateSketches(a, b, spec) }})
	res.UFBytesPerID = bytesPerID
	var largest int64
	for _, st := range stats {
		largest = max(largest, int64(st.Size))
	}
	count("clusters", int64(len(stats)))
	count("clustered_docs", int64(len(assign)))
	count("largest_cluster", largest)
	phase("cluster")

	// Output: the docs, clusters, pairs and contained tables.
	var docs []tables.Doc
	for i := range outs {
		docs = append(docs, outs[i].docs...)
		outs[i].docs = nil
	}
	byID := func(x, y tables.Doc) int { return cmp.Compare(uint64(x.DocID), uint64(y.DocID)) }
	if !slices.IsSortedFunc(docs, byID) {
		slices.SortFunc(docs, byID)
	}
	n := clusters.Join(docs, assign)
	clusterRows := clusters.Rows(stats, docs)
	contained := tables.ContainedRows(pairRows, cfg.Policy.ContainedThreshold())
	// Shards of at most 100k rows, written in parallel; each table gets at
	// least one file, as the pipeline's output does.
	type job func() error
	var jobs []job
	shard := func(table string, i int) string {
		return filepath.Join(outDir, table, tables.ShardName(i))
	}
	addJobs := func(table string, n int, write func(name string, lo, hi int) error) {
		const per = 100000
		for i, lo := 0, 0; lo < n || i == 0; i, lo = i+1, lo+per {
			name, lo, hi := shard(table, i), lo, min(lo+per, n)
			jobs = append(jobs, func() error { return write(name, lo, hi) })
		}
	}
	addJobs(tables.DocsTable, len(docs), func(name string, lo, hi int) error { return tables.Write(ctx, name, docs[lo:hi]) })
	addJobs(tables.ClustersTable, len(clusterRows), func(name string, lo, hi int) error { return tables.Write(ctx, name, clusterRows[lo:hi]) })
	addJobs(tables.PairsTable, len(pairRows), func(name string, lo, hi int) error { return tables.Write(ctx, name, pairRows[lo:hi]) })
	addJobs(tables.ContainedTable, len(contained), func(name string, lo, hi int) error { return tables.Write(ctx, name, contained[lo:hi]) })
	if err := parallel(workers, len(jobs), func(_, i int) error { return jobs[i]() }); err != nil {
		return nil, err
	}
	count("docs_written", int64(len(docs)))
	count("docs_in_clusters", n.Clustered)
	count("docs_alone", n.Alone)
	count("docs_empty_or_rejected", n.EmptyOrRejected)
	count("clusters_written", int64(len(clusterRows)))
	count("pairs_written", int64(len(pairRows)))
	count("contained_written", int64(len(contained)))
	phase("out")
	res.WallSeconds = time.Since(start).Seconds()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	return res, os.WriteFile(filepath.Join(outDir, floorResultFile), append(b, '\n'), 0o644)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
