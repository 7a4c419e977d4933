package transforms

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

var (
	pairsVerified = beam.NewCounter(Namespace, "pairs_verified")
	pairsPruned   = beam.NewCounter(Namespace, "pairs_verify_pruned")
	verifyTime    = newPhaseTimer("verify")
)

func init() {
	register.DoFn6x1[context.Context, int, []byte, func(int, []byte), func(int, []byte), func(int, []byte), error](&routePairsFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*string) bool, func(int, []byte), error](&shipFeaturesFn{})
	register.DoFn7x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(*string) bool, func(int, []byte), func(string, int64), error](&verifySliceFn{})
	register.Iter1[string]()
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&gatherVerifiedFn{})
}

// Verify checks the candidate pairs on the two documents' whole feature
// sets (settings.Config.Verification), as clusters.VerifyPair does under
// link's policy: exactly, with ppjoin+'s verification (simjoin.Overlap,
// its suffix and positional filters), or through their Bloom filters
// (bloom.Compare). Under link.UncertainOnly it checks only the pairs
// whose sketch estimates are uncertain (clusters.Uncertain), and the
// others pass unchecked. It takes the counted pairs of PairCount or
// SuperShingles, PCollection<KV<int, []byte>> by pair partition, and
// returns PCollection<KV<int, []byte>> of packed.Verified batches by pair
// partition, one per partition, for Cluster.
//
// The features are read again from the input (files, in the order their
// doc IDs number them), for the candidates' documents only, and the
// pairs go to the features rather than the features to the pairs: each
// pair to verify goes to the input slice of one of its documents, its
// home (either, by the pair's hash, so that the work spreads), and the
// slice of the other document, when it is another, sends that
// document's features there once, however many of its pairs that slice
// verifies. Each home reads its own documents' features from the input
// and verifies its pairs, and the verified pairs go back to their pair
// partitions. So a document's features travel at most once to each
// other slice holding one of its partners, and not at all to its own:
// candidates within one slice (16,384 rows) move no features. Sending
// the features to every pair partition holding one of their pairs
// instead carried every document to every partition when documents have
// hundreds of candidates (245 MB shuffled for the 17 MB of
// multilingual-docs under --verify=exact, and 25 s of its 30).
//
// Under --verify=dense the features are the documents' dense samples
// (sketch.Dense), read from the files Sketch wrote, dense (its
// PCollection<KV<int, string>> of file names by verify slice), rather
// than from the input; a document none of them holds (an update's index
// documents) is read from the input again and sampled. The pair's
// figure is then the dense samples' resemblance estimate.
func Verify(s beam.Scope, pairs beam.PCollection, files []InputFile, dense beam.PCollection, cfg settings.Config, link Linking, place Placement) beam.PCollection {
	s = s.Scope("Verify")
	jobs, asks, passed := beam.ParDo3(s, &routePairsFn{Linking: link, Partitions: place.Partitions}, pairs)
	shipped := beam.ParDo(s, &shipFeaturesFn{Inputs: files, Settings: cfg, Lanes: place.Lanes}, beam.CoGroupByKey(s, asks, dense))
	checked, tallies := beam.ParDo2(s, &verifySliceFn{Inputs: files, Settings: cfg, Linking: link, Partitions: place.Partitions, Lanes: place.Lanes},
		beam.CoGroupByKey(s, jobs, shipped, dense))
	writeTallies(s, "verify", place.TempDir, tallies)
	// One batch per pair partition again (WritePairs writes a shard each).
	return beam.ParDo(s, &gatherVerifiedFn{}, beam.CoGroupByKey(s, passed, checked))
}

// verifySliceBits sets the slices Verify reads features in: the rows of
// a file whose numbers agree but for their low 14 bits (16,384 rows), so
// the documents of a slice have the same doc >> verifySliceBits.
const verifySliceBits = 14

// verifySlice is the key of the input slice holding doc.
func verifySlice(doc uint64) int { return int(doc >> verifySliceBits) }

// verifyHome is the slice that verifies pair p: that of A or of B, by
// the pair's hash.
func verifyHome(p packed.Pair) int {
	if packed.PairHash(p.A, p.B)&1 == 0 {
		return verifySlice(p.A)
	}
	return verifySlice(p.B)
}

// routePairsFn sends every pair to verify (Linking.verifiesPair), with
// its pair partition, to its home slice (jobs), and asks the slice of a
// document outside the home for its features there (asks: <doc, home>
// arcs). The pairs it does not verify go on to their partition (passed).
type routePairsFn struct {
	Linking    Linking
	Partitions int
	jobs, asks *keyedBatcher // the bundle's
	passed     *batcher      // the bundle's
}

func (f *routePairsFn) StartBundle(ctx context.Context, jobs, asks, passed func(int, []byte)) {
	f.jobs, f.asks, f.passed = nil, nil, nil
}

func (f *routePairsFn) FinishBundle(ctx context.Context, jobs, asks, passed func(int, []byte)) {
	finishKeyed(&f.jobs, ctx, jobs)
	finishKeyed(&f.asks, ctx, asks)
	finishBatcher(&f.passed, ctx, passed)
}

func (f *routePairsFn) ProcessElement(ctx context.Context, part int, batch []byte, jobs, asks, passed func(int, []byte)) error {
	pairs, err := packed.AppendPairs(nil, batch)
	if err != nil {
		return err
	}
	var arcs []packed.Arc
	jobOut := bundleKeyed(&f.jobs, ctx, "verify_jobs", jobs)
	passedOut := bundleBatcher(&f.passed, ctx, "verify_passed", f.Partitions, passed)
	for _, p := range pairs {
		if !f.Linking.verifiesPair(p) {
			passedOut.add(part, p)
			continue
		}
		home := verifyHome(p)
		jobOut.add(home, packed.Job{Pair: p, Part: uint32(part)})
		for _, doc := range [2]uint64{p.A, p.B} {
			if verifySlice(doc) != home {
				arcs = append(arcs, packed.Arc{U: doc, V: uint64(home)})
			}
		}
	}
	slices.SortFunc(arcs, compareArcs)
	askOut := bundleKeyed(&f.asks, ctx, "verify_asks", asks)
	for i, a := range arcs {
		if i == 0 || a != arcs[i-1] {
			askOut.add(verifySlice(a.U), a)
		}
	}
	return nil
}

func compareArcs(x, y packed.Arc) int {
	return cmp.Or(cmp.Compare(x.U, y.U), cmp.Compare(x.V, y.V))
}

// shipFeaturesFn reads, for one input slice, the rows its asks name,
// makes their features and sends each once to each home slice that
// asked for it.
type shipFeaturesFn struct {
	Inputs   []InputFile
	Settings settings.Config // phase 1's (see rowsketch.New)
	Lanes    int
	out      *keyedBatcher // the bundle's
	lanes    lanes[func(int, []byte)]
}

func (f *shipFeaturesFn) StartBundle(ctx context.Context, emit func(int, []byte)) {
	f.lanes.reset()
	f.out = nil
}

func (f *shipFeaturesFn) FinishBundle(ctx context.Context, emit func(int, []byte)) error {
	if err := f.lanes.finish(ctx, emit); err != nil {
		return err
	}
	finishKeyed(&f.out, ctx, emit)
	return nil
}

func (f *shipFeaturesFn) ProcessElement(ctx context.Context, slice int, asksIt func(*[]byte) bool, denseIt func(*string) bool, emit func(int, []byte)) error {
	asksIt = hold(asksIt)
	denseFiles := drainStrings(denseIt)
	return f.lanes.timed(ctx, f.Lanes, emit, verifyTime, func() (laneOut[func(int, []byte)], error) {
		asks, err := decodeBatches(asksIt, packed.AppendArcs)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(asks, compareArcs)
		docs := make([]uint64, 0, len(asks))
		for i, a := range asks {
			if i == 0 || a.U != asks[i-1].U {
				docs = append(docs, a.U)
			}
		}
		fs, err := sliceFeatures(ctx, f.Inputs, f.Settings, slice, docs, denseFiles)
		return func(ctx context.Context, emit func(int, []byte)) error {
			out := bundleKeyed(&f.out, ctx, "verify_features", emit)
			for i, j := 0, 0; i < len(asks); i++ {
				for fs[j].Doc != asks[i].U {
					j++
				}
				out.add(int(asks[i].V), fs[j])
			}
			return nil
		}, err
	})
}

// readFeatures reads the rows of docs (sorted, distinct, all in slice)
// and returns their features, in the same order, as phase 1 made them.
func readFeatures(ctx context.Context, inputs []InputFile, cfg settings.Config, slice int, docs []uint64) ([]packed.Features, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	rows := make([]int64, len(docs))
	for i, doc := range docs {
		if verifySlice(doc) != slice {
			return nil, fmt.Errorf("verify: doc %d reached the reader of slice %d", doc, slice)
		}
		rows[i] = int64(doc & (1<<40 - 1))
	}
	file := int(docs[0] >> 40)
	if file >= len(inputs) {
		return nil, fmt.Errorf("verify: doc %d names input file %d of %d", docs[0], file, len(inputs))
	}
	path := inputs[file].Path
	rs, err := rowsketch.New(cfg)
	if err != nil {
		return nil, err
	}
	fs := make([]packed.Features, 0, len(docs))
	err = crawl.ReadRows(ctx, file, path, inputs[file].Pin, rows, cfg.Columns, func(sp crawl.Split, row crawl.Row) error {
		rs.Sketch(sp, row)
		x, ok := rs.Verifiable(crawl.DocID(file, row.Index))
		if !ok {
			return fmt.Errorf("%s: row %d has no features on a second reading, though phase 1 found some: did the file change during the run?", path, row.Index)
		}
		x.Values = slices.Clone(x.Values) // the Sketcher reuses its buffers
		fs = append(fs, x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if slices.EqualFunc(fs, docs, func(x packed.Features, doc uint64) bool { return x.Doc == doc }) {
		return fs, nil
	}
	return nil, fmt.Errorf("%s: read %d rows to verify, not the %d asked for", path, len(fs), len(docs))
}

// sliceFeatures returns the features of docs (sorted, distinct, all in
// slice) as readFeatures does, but under VerifyDense from the dense
// samples files (of this slice) first: only the files whose documents
// may include one of docs are read, and a document none holds is read
// from the input.
func sliceFeatures(ctx context.Context, inputs []InputFile, cfg settings.Config, slice int, docs []uint64, files []string) ([]packed.Features, error) {
	if cfg.Verification() != settings.VerifyDense || len(files) == 0 || len(docs) == 0 {
		return readFeatures(ctx, inputs, cfg, slice, docs)
	}
	// A file holds the documents from its first (named) up to the next
	// file's first.
	type denseFile struct {
		name  string
		first uint64
	}
	fs := make([]denseFile, len(files))
	for i, name := range files {
		first, err := denseFileFirst(name)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		fs[i] = denseFile{name, first}
	}
	slices.SortFunc(fs, func(x, y denseFile) int { return cmp.Compare(x.first, y.first) })
	found := make(map[uint64]packed.Features, len(docs))
	for i, fl := range fs {
		lo := fl.first
		hi := uint64(math.MaxUint64)
		if i+1 < len(fs) {
			hi = fs[i+1].first
		}
		j, _ := slices.BinarySearch(docs, lo)
		if j == len(docs) || docs[j] >= hi {
			continue
		}
		b, err := store.ReadFile(ctx, fl.name)
		if err != nil {
			return nil, err
		}
		xs, err := packed.AppendFeatures(nil, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fl.name, err)
		}
		for _, x := range xs {
			if _, ok := slices.BinarySearch(docs, x.Doc); ok {
				found[x.Doc] = x
			}
		}
	}
	var missing []uint64
	for _, d := range docs {
		if _, ok := found[d]; !ok {
			missing = append(missing, d)
		}
	}
	more, err := readFeatures(ctx, inputs, cfg, slice, missing)
	if err != nil {
		return nil, err
	}
	out := make([]packed.Features, 0, len(docs))
	for _, d := range docs {
		if x, ok := found[d]; ok {
			out = append(out, x)
			continue
		}
		out = append(out, more[0])
		more = more[1:]
	}
	return out, nil
}

// drainStrings reads a grouped iterable of strings whole (the names of a
// slice's dense samples files: a few).
func drainStrings(it func(*string) bool) []string {
	var out []string
	var s string
	for it(&s) {
		out = append(out, s)
	}
	return out
}

// verifySliceFn meets, on one home slice, its pairs to verify and the
// features sent from other slices, reads its own documents' features,
// verifies each pair and sends it back to its pair partition.
type verifySliceFn struct {
	Inputs     []InputFile
	Settings   settings.Config
	Linking    Linking // its policy's floors the exact verification computes figures above
	Partitions int
	Lanes      int
	out        *batcher // the bundle's
	lanes      lanes[verifyEmit]
}

// verifyEmit is verifySliceFn's emitters: the verified pairs, and the
// counts as data (see writeTallies).
type verifyEmit struct {
	pairs func(int, []byte)
	tally func(string, int64)
}

func (f *verifySliceFn) StartBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) {
	f.lanes.reset()
	f.out = nil
}

func (f *verifySliceFn) FinishBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) error {
	if err := f.lanes.finish(ctx, verifyEmit{emit, tally}); err != nil {
		return err
	}
	finishBatcher(&f.out, ctx, emit)
	return nil
}

func (f *verifySliceFn) ProcessElement(ctx context.Context, slice int, jobsIt, featuresIt func(*[]byte) bool, denseIt func(*string) bool, emit func(int, []byte), tally func(string, int64)) error {
	jobsIt, featuresIt = hold(jobsIt), hold(featuresIt)
	denseFiles := drainStrings(denseIt)
	return f.lanes.timed(ctx, f.Lanes, verifyEmit{emit, tally}, verifyTime, func() (laneOut[verifyEmit], error) {
		jobs, vs, err := f.verify(ctx, slice, jobsIt, featuresIt, denseFiles)
		return func(ctx context.Context, emit verifyEmit) error {
			out := bundleBatcher(&f.out, ctx, "verified", f.Partitions, emit.pairs)
			var checked, pruned int64
			for i, v := range vs {
				if v.Checked {
					checked++
				} else {
					pruned++
				}
				out.add(int(jobs[i].Part), v)
			}
			pairsVerified.Inc(ctx, checked)
			pairsPruned.Inc(ctx, pruned)
			emit.tally("pairs_verified", checked)
			emit.tally("pairs_verify_pruned", pruned)
			return nil
		}, err
	})
}

// verifyChunk is how many pairs one goroutine verifies at a time.
const verifyChunk = 4096

// verify returns the slice's jobs in a fixed order and their
// verifications: on up to Lanes goroutines, since a small crawl is one
// slice.
func (f *verifySliceFn) verify(ctx context.Context, slice int, jobsIt, featuresIt func(*[]byte) bool, denseFiles []string) ([]packed.Job, []packed.Verified, error) {
	jobs, err := decodeBatches(jobsIt, packed.AppendJobs)
	if err != nil {
		return nil, nil, err
	}
	fs, err := decodeBatches(featuresIt, packed.AppendFeatures)
	if err != nil {
		return nil, nil, err
	}
	var local []uint64
	for _, j := range jobs {
		for _, doc := range [2]uint64{j.A, j.B} {
			if verifySlice(doc) == slice {
				local = append(local, doc)
			}
		}
	}
	slices.Sort(local)
	own, err := sliceFeatures(ctx, f.Inputs, f.Settings, slice, slices.Compact(local), denseFiles)
	if err != nil {
		return nil, nil, err
	}
	byDoc := make(map[uint64]packed.Features, len(fs)+len(own))
	var samples map[uint64][]uint32 // under VerifyDense: each sample sorted once
	if f.Linking.Verification == settings.VerifyDense {
		samples = make(map[uint64][]uint32, len(fs)+len(own))
	}
	for _, x := range append(fs, own...) {
		byDoc[x.Doc] = x
		if samples != nil {
			samples[x.Doc] = sketch.Sorted(x.DenseSample(nil))
		}
	}
	// The same order whatever order the shuffle delivered them in.
	slices.SortFunc(jobs, func(x, y packed.Job) int { return packed.ComparePairs(x.Pair, y.Pair) })
	vs := make([]packed.Verified, len(jobs))
	errs := make([]error, (len(jobs)+verifyChunk-1)/verifyChunk)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(f.Lanes, 1))
	for c := range errs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for i := c * verifyChunk; i < min(len(jobs), (c+1)*verifyChunk); i++ {
				if vs[i], errs[c] = f.verifyPair(jobs[i].Pair, byDoc, samples); errs[c] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return jobs, vs, nil
}

// verifyPair checks p on its documents' features, or under VerifyDense
// on their sorted dense samples.
func (f *verifySliceFn) verifyPair(p packed.Pair, byDoc map[uint64]packed.Features, samples map[uint64][]uint32) (packed.Verified, error) {
	a, okA := byDoc[p.A]
	b, okB := byDoc[p.B]
	if !okA || !okB {
		return packed.Verified{}, fmt.Errorf("verify: the features of a document of pair (%d, %d) did not arrive", p.A, p.B)
	}
	if f.Linking.Verification == settings.VerifyDense {
		e := sketch.DefaultDense.Estimate(samples[p.A], samples[p.B], int(a.N), int(b.N))
		return packed.Verified{Pair: p, Resemblance: e.Resemblance, Checked: true}, nil
	}
	v, err := clusters.VerifyPair(a, b, f.Linking.Policy)
	if err != nil {
		return v, fmt.Errorf("verify pair (%d, %d): %w", p.A, p.B, err)
	}
	v.Pair = p
	return v, nil
}

// gatherVerifiedFn makes one batch of a pair partition's pairs again:
// those verified, and those passed unchecked (linked on their estimates).
type gatherVerifiedFn struct{}

func (f *gatherVerifiedFn) ProcessElement(ctx context.Context, part int, passedIt, checkedIt func(*[]byte) bool, emit func(int, []byte)) error {
	pairs, err := decodeBatches(passedIt, packed.AppendPairs)
	if err != nil {
		return err
	}
	vs, err := decodeBatches(checkedIt, packed.AppendVerified)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		vs = append(vs, packed.Verified{Pair: p})
	}
	slices.SortFunc(vs, func(x, y packed.Verified) int { return packed.ComparePairs(x.Pair, y.Pair) })
	out := make([]byte, 0, len(vs)*packed.VerifiedSize)
	for _, v := range vs {
		out = v.Append(out)
	}
	if len(out) > 0 {
		emit(part, out)
	}
	return nil
}

// verifiedEstimates are what a pair's verification of this kind says,
// for the policy: the zero Estimates when its filters proved it below.
// A dense sample estimates resemblance only, so under VerifyDense the
// containments are the sketch's, sketchAInB and sketchBInA.
func verifiedEstimates(v packed.Verified, kind settings.Verify, sketchAInB, sketchBInA *float64) policy.Estimates {
	if !v.Checked {
		return policy.Estimates{Shared: int(v.Count)}
	}
	if kind == settings.VerifyDense {
		return policy.Estimates{Shared: int(v.Count), Resemblance: v.Resemblance, AInB: sketchAInB, BInA: sketchBInA}
	}
	return policy.Estimates{Shared: int(v.Count), Resemblance: v.Resemblance, AInB: &v.AInB, BInA: &v.BInA}
}
