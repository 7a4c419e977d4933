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
	"github.com/neardup/neardup/io/featurefile"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

var (
	pairsVerified = beam.NewCounter(Namespace, "pairs_verified")
	pairsPruned   = beam.NewCounter(Namespace, "pairs_verify_pruned")
	verifyReread  = beam.NewCounter(Namespace, "verify_docs_reread")
	verifyTime    = newPhaseTimer("verify")
)

func init() {
	{
		fn := &routePairsFn{}
		register.Function4x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function4x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &shipNamesFn{}
		register.Function5x1(fn.ProcessElement)
		registerDoFn(fn)
	}
	register.Emitter2[int, string]()
	{
		fn := &verifySliceFn{}
		register.Function3x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function3x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Iter1[string]()
	{
		fn := &gatherVerifiedFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
}

// Verify checks the candidate pairs on the two documents' whole feature
// sets (settings.Config.Verification), as clusters.VerifyPair does under
// link's policy: exactly, with ppjoin+'s verification (simjoin.Overlap,
// its suffix and positional filters), or through their Bloom filters
// (bloom.Compare), or under --verify=dense on their dense samples
// (sketch.Dense). Under link.UncertainOnly it checks only the pairs
// whose sketch estimates are uncertain (clusters.Uncertain), and the
// others pass unchecked. It takes the counted pairs of PairCount or
// SuperShingles, PCollection<KV<int, []byte>> of packed.Pair batches by
// pair partition (emitPairBatches), and features, the names of the features files
// Sketch wrote, PCollection<KV<int, string>> by verify slice. It returns,
// for Cluster, passed, the pairs it does not check, in batches as they
// came, and checked, PCollection<KV<int, []byte>> of
// packed.Verified batches, one per partition holding any, sorted by pair.
// The passed pairs, most of a large run's, take no shuffle here.
//
// The features travel no shuffle, so that what a run holds does not
// grow with how many slices a document's pairs reach: each pair to
// verify goes to the input slice (16,384 rows) of one of its documents,
// its home (either, by the pair's hash, so that the work spreads), with
// the names of the files of every slice its home's pairs reach; the home
// reads its own documents' features, then, one partner slice at a time,
// the few records its pairs need from that slice's files (package
// featurefile: the index, then ranged reads), verifies those pairs and
// lets them go. So a home holds at most two slices' features (VerifyHeld
// says how much, before the run). Shipping the features through the
// shuffle instead held every document's once for each slice that needed
// it: 24 GB for a gigabyte under --verify=exact.
//
// A document no file holds (an update's index documents, or a run
// without a temporary folder) is read from the input again.
func Verify(s beam.Scope, pairs beam.PCollection, files []InputFile, features beam.PCollection, cfg settings.Config, link Linking, place Placement) (passed, checked beam.PCollection) {
	s = s.Scope("Verify")
	jobs, asks, passed := beam.ParDo3(s, &routePairsFn{Linking: link}, pairs)
	names := beam.ParDo(s, &shipNamesFn{}, beam.CoGroupByKey(s, asks, features))
	verified, tallies := beam.ParDo2(s, &verifySliceFn{Inputs: files, Settings: cfg, Linking: link, Partitions: place.Partitions, Lanes: place.Lanes},
		beam.CoGroupByKey(s, jobs, names))
	writeTallies(s, "verify", place.TempDir, tallies)
	// One batch per pair partition, as estimateFn takes them.
	return passed, beam.ParDo(s, &gatherVerifiedFn{}, beam.GroupByKey(s, verified))
}

// verifySliceBits sets the slices Verify reads features in: the rows of
// a file whose numbers agree but for their low 14 bits (16,384 rows), so
// the documents of a slice have the same doc >> verifySliceBits.
const verifySliceBits = 14

// VerifySliceRows is how many input rows a verify slice holds: a home
// holds the features of at most two slices' documents.
const VerifySliceRows = 1 << verifySliceBits

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

// partnerSlice is the slice of the document of p that is not in home,
// or home when both are.
func partnerSlice(p packed.Pair, home int) int {
	if s := verifySlice(p.A); s != home {
		return s
	}
	return verifySlice(p.B)
}

// routePairsFn sends every pair to verify (Linking.verifiesPair), with
// its pair partition, to its home slice (jobs), and asks each slice its
// home's pairs reach, the home's own included, for the names of its
// features files (asks: <slice, home> arcs). The pairs it does not
// verify go on as they came, one batch per batch taken (passed).
type routePairsFn struct {
	Linking    Linking
	jobs, asks *keyedBatcher // the bundle's
	asked      map[packed.Arc]bool
}

func (f *routePairsFn) StartBundle(ctx context.Context, jobs, asks, passed func(int, []byte)) {
	f.jobs, f.asks, f.asked = nil, nil, nil
}

func (f *routePairsFn) FinishBundle(ctx context.Context, jobs, asks, passed func(int, []byte)) {
	finishKeyed(&f.jobs, ctx, jobs)
	finishKeyed(&f.asks, ctx, asks)
	f.asked = nil
}

func (f *routePairsFn) ProcessElement(ctx context.Context, part int, batch []byte, jobs, asks, passed func(int, []byte)) error {
	pairs, err := openPairBatch(batch)
	if err != nil {
		return err
	}
	if f.asked == nil {
		f.asked = make(map[packed.Arc]bool)
	}
	jobOut := bundleKeyed(&f.jobs, ctx, "verify_jobs", jobs)
	askOut := bundleKeyed(&f.asks, ctx, "verify_asks", asks)
	var out []byte
	for _, p := range pairs {
		if !f.Linking.verifiesPair(p) {
			out = p.Append(out)
			continue
		}
		home := verifyHome(p)
		jobOut.add(home, packed.Job{Pair: p, Part: uint32(part)})
		for _, slice := range [2]int{home, partnerSlice(p, home)} {
			if a := (packed.Arc{U: uint64(slice), V: uint64(home)}); !f.asked[a] {
				f.asked[a] = true
				askOut.add(slice, a)
			}
		}
	}
	emitPairBatches(ctx, part, out, passed)
	return nil
}

// shipNamesFn sends the names of one slice's features files to each home
// slice that asked for them.
type shipNamesFn struct{}

func (f *shipNamesFn) ProcessElement(ctx context.Context, slice int, asksIt func(*[]byte) bool, namesIt func(*string) bool, emit func(int, string)) error {
	g := measureGroup(ctx, "ship_names")
	defer g.done()
	asksIt = g.iter(asksIt)
	asks, err := decodeBatches(asksIt, packed.AppendArcs)
	if err != nil {
		return err
	}
	names := drainStrings(namesIt)
	slices.Sort(names)
	homes := make([]uint64, 0, len(asks))
	for _, a := range asks {
		homes = append(homes, a.V)
	}
	slices.Sort(homes)
	for _, home := range slices.Compact(homes) {
		for _, name := range names {
			emit(int(home), name)
		}
	}
	return nil
}

// readFeatures reads the rows of docs (sorted, distinct, all in slice)
// and returns their features, in the same order, as phase 1 made them,
// adding their number to *reread. It runs on a lane's goroutine, so it
// touches no Beam metric: a counter's first Inc in a bundle writes a map
// of the bundle's that is not safe for concurrent use (seen: "fatal
// error: concurrent map writes" in metrics.(*Counter).Inc with 2 lanes).
func readFeatures(ctx context.Context, inputs []InputFile, cfg settings.Config, slice int, docs []uint64, reread *int64) ([]packed.Features, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	*reread += int64(len(docs))
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

// featuresFile is a features file Sketch wrote: it holds the documents
// from its first (named) up to the next file's first.
type featuresFile struct {
	name string
	featurefile.Extent
}

// featuresFilesBySlice reads the first documents of the features files
// named and returns the files by verify slice, each slice's in order.
func featuresFilesBySlice(names []string) (map[int][]featuresFile, error) {
	bySlice := make(map[int][]featuresFile)
	for _, name := range names {
		ext, err := featuresFileExtent(name)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		bySlice[verifySlice(ext.First)] = append(bySlice[verifySlice(ext.First)], featuresFile{name, ext})
	}
	for _, fs := range bySlice {
		slices.SortFunc(fs, func(x, y featuresFile) int { return cmp.Compare(x.First, y.First) })
	}
	return bySlice, nil
}

// sliceFeatures returns the features of docs (sorted, distinct, all in
// slice) as readFeatures does, but from the slice's features files fs
// (in order) first: only the files whose documents may include one of
// docs are read, and of them only those documents' records. A document
// none holds is read from the input.
func sliceFeatures(ctx context.Context, inputs []InputFile, cfg settings.Config, slice int, docs []uint64, fs []featuresFile, reread *int64) ([]packed.Features, error) {
	if len(fs) == 0 || len(docs) == 0 {
		return readFeatures(ctx, inputs, cfg, slice, docs, reread)
	}
	found := make(map[uint64]packed.Features, len(docs))
	for i, fl := range fs {
		lo := fl.First
		hi := uint64(math.MaxUint64)
		if i+1 < len(fs) {
			hi = fs[i+1].First
		}
		from, _ := slices.BinarySearch(docs, lo)
		to, _ := slices.BinarySearch(docs, hi)
		if from == to {
			continue
		}
		// An index's files are its output's (a run's own are told by
		// their temporary folder, readKind).
		xs, err := featurefile.Read(store.ReadsAs(ctx, store.ReadsOutput), fl.name, fl.Extent, docs[from:to])
		if err != nil {
			return nil, err
		}
		for _, x := range xs {
			found[x.Doc] = x
		}
	}
	var missing []uint64
	for _, d := range docs {
		if _, ok := found[d]; !ok {
			missing = append(missing, d)
		}
	}
	more, err := readFeatures(ctx, inputs, cfg, slice, missing, reread)
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

// drainStrings reads a grouped iterable of strings whole (the names of
// the features files a home reads: a few per slice).
func drainStrings(it func(*string) bool) []string {
	var out []string
	var s string
	for it(&s) {
		out = append(out, s)
	}
	return out
}

// verifySliceFn verifies one home slice's pairs: it reads its own
// documents' features, then each partner slice's in turn, from the files
// named, and sends each pair back to its pair partition.
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

func (f *verifySliceFn) ProcessElement(ctx context.Context, home int, jobsIt func(*[]byte) bool, namesIt func(*string) bool, emit func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "verify_slice")
	defer g.done()
	jobsIt = g.iter(jobsIt)
	n := hold(f.Lanes, &jobsIt)
	names := drainStrings(namesIt)
	return f.lanes.timed(ctx, n, verifyEmit{emit, tally}, verifyTime, func(ctx context.Context) (laneOut[verifyEmit], error) {
		// On a lane's goroutine: the counters are added to in the out
		// below, on the bundle's.
		jobs, vs, reread, err := f.verify(ctx, home, jobsIt, names)
		return func(ctx context.Context, emit verifyEmit) error {
			if reread > 0 {
				verifyReread.Inc(ctx, reread)
			}
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

// verify returns the home slice's jobs in a fixed order and their
// verifications: the pairs of one partner slice at a time, each on up to
// Lanes goroutines, since a small crawl is one slice.
func (f *verifySliceFn) verify(ctx context.Context, home int, jobsIt func(*[]byte) bool, names []string) (jobs []packed.Job, vs []packed.Verified, reread int64, err error) {
	jobs, err = decodeBatches(jobsIt, packed.AppendJobs)
	if err != nil {
		return nil, nil, 0, err
	}
	files, err := featuresFilesBySlice(names)
	if err != nil {
		return nil, nil, 0, err
	}
	need := make(map[int][]uint64)
	for _, j := range jobs {
		for _, doc := range [2]uint64{j.A, j.B} {
			need[verifySlice(doc)] = append(need[verifySlice(doc)], doc)
		}
	}
	for s, docs := range need {
		slices.Sort(docs)
		need[s] = slices.Compact(docs)
	}
	// The same order whatever order the shuffle delivered them in: by
	// partner slice, then pair.
	slices.SortFunc(jobs, func(x, y packed.Job) int {
		return cmp.Or(cmp.Compare(partnerSlice(x.Pair, home), partnerSlice(y.Pair, home)), packed.ComparePairs(x.Pair, y.Pair))
	})
	held := newHeldFeatures(f.Linking.Verification == settings.VerifyDense)
	own, err := sliceFeatures(ctx, f.Inputs, f.Settings, home, need[home], files[home], &reread)
	if err != nil {
		return nil, nil, 0, err
	}
	held.add(own)
	vs = make([]packed.Verified, len(jobs))
	for i := 0; i < len(jobs); {
		partner := partnerSlice(jobs[i].Pair, home)
		n := i + 1
		for n < len(jobs) && partnerSlice(jobs[n].Pair, home) == partner {
			n++
		}
		var theirs []packed.Features
		if partner != home {
			if theirs, err = sliceFeatures(ctx, f.Inputs, f.Settings, partner, need[partner], files[partner], &reread); err != nil {
				return nil, nil, 0, err
			}
			held.add(theirs)
		}
		if err := f.verifyEach(jobs[i:n], vs[i:n], held); err != nil {
			return nil, nil, 0, err
		}
		held.drop(theirs)
		i = n
	}
	return jobs, vs, reread, nil
}

// verifyEach verifies jobs into vs on up to Lanes goroutines.
func (f *verifySliceFn) verifyEach(jobs []packed.Job, vs []packed.Verified, held *heldFeatures) error {
	errs := make([]error, (len(jobs)+verifyChunk-1)/verifyChunk)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(f.Lanes, 1))
	for c := range errs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for i := c * verifyChunk; i < min(len(jobs), (c+1)*verifyChunk); i++ {
				if vs[i], errs[c] = f.verifyPair(jobs[i].Pair, held); errs[c] != nil {
					return
				}
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

// heldFeatures is what a home holds: its own documents' features and
// one partner slice's, by document, and under VerifyDense each sample
// sorted once.
type heldFeatures struct {
	byDoc   map[uint64]packed.Features
	samples map[uint64][]uint32
}

func newHeldFeatures(dense bool) *heldFeatures {
	h := &heldFeatures{byDoc: make(map[uint64]packed.Features)}
	if dense {
		h.samples = make(map[uint64][]uint32)
	}
	return h
}

func (h *heldFeatures) add(fs []packed.Features) {
	for _, x := range fs {
		h.byDoc[x.Doc] = x
		if h.samples != nil {
			h.samples[x.Doc] = sketch.Sorted(x.DenseSample(nil))
		}
	}
}

func (h *heldFeatures) drop(fs []packed.Features) {
	for _, x := range fs {
		delete(h.byDoc, x.Doc)
		delete(h.samples, x.Doc)
	}
}

// verifyPair checks p on its documents' features, or under VerifyDense
// on their sorted dense samples.
func (f *verifySliceFn) verifyPair(p packed.Pair, held *heldFeatures) (packed.Verified, error) {
	a, okA := held.byDoc[p.A]
	b, okB := held.byDoc[p.B]
	if !okA || !okB {
		return packed.Verified{}, fmt.Errorf("verify: the features of a document of pair (%d, %d) were not read", p.A, p.B)
	}
	if f.Linking.Verification == settings.VerifyDense {
		e := sketch.DefaultDense.Estimate(held.samples[p.A], held.samples[p.B], int(a.N), int(b.N))
		return packed.Verified{Pair: p, Resemblance: e.Resemblance, Checked: true}, nil
	}
	v, err := clusters.VerifyPair(a, b, f.Linking.Policy)
	if err != nil {
		return v, fmt.Errorf("verify pair (%d, %d): %w", p.A, p.B, err)
	}
	v.Pair = p
	return v, nil
}

// gatherVerifiedFn makes one batch of a pair partition's verified
// pairs, sorted by pair.
type gatherVerifiedFn struct{}

func (f *gatherVerifiedFn) ProcessElement(ctx context.Context, part int, checkedIt func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "gather_verified")
	defer g.done()
	checkedIt = g.iter(checkedIt)
	vs, err := decodeBatches(checkedIt, packed.AppendVerified)
	if err != nil {
		return err
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
