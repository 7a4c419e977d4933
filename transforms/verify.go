package transforms

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	pairsVerified = beam.NewCounter(Namespace, "pairs_verified")
	pairsPruned   = beam.NewCounter(Namespace, "pairs_verify_pruned")
	verifyTime    = newPhaseTimer("verify")
)

func init() {
	register.DoFn4x1[context.Context, int, []byte, func(int, []byte), error](&routePairsFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(int, []byte), error](&readFeaturesFn{})
	register.DoFn6x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), func(string, int64), error](&verifyPairsFn{})
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
// partition, for Cluster.
//
// The features are read again from the input (files, in the order their
// doc IDs number them), for the candidates' documents only: each pair
// tells the slice of the input holding each of its documents which pair
// partitions want it; one worker per slice reads those rows, makes their
// features as phase 1 did (rowsketch, under cfg) and sends each once to
// each partition that wants it, however many of its pairs are there. So
// no shuffle carries the features of documents that have no candidate
// pair (a shuffle of every document's features held 68 of the 315 MB
// shuffled verifying multilingual-docs), and no worker holds more than a
// slice's features.
func Verify(s beam.Scope, pairs beam.PCollection, files []string, cfg settings.Config, link Linking, place Placement) beam.PCollection {
	s = s.Scope("Verify")
	wanted := beam.ParDo(s, &routePairsFn{Linking: link}, pairs)
	sent := beam.ParDo(s, &readFeaturesFn{Inputs: files, Settings: cfg, Partitions: place.Partitions, Lanes: place.Lanes}, beam.GroupByKey(s, wanted))
	// Every pair meets its partition's features, checked or not, so that
	// a partition's pairs stay one batch (WritePairs writes a shard each).
	verified, tallies := beam.ParDo2(s, &verifyPairsFn{Linking: link, Lanes: place.Lanes}, beam.CoGroupByKey(s, pairs, sent))
	writeTallies(s, "verify", place.TempDir, tallies)
	return verified
}

// verifySliceBits sets the slices Verify reads features in: the rows of
// a file whose numbers agree but for their low 14 bits (16,384 rows), so
// the documents of a slice have the same doc >> verifySliceBits.
const verifySliceBits = 14

// verifySlice is the key of the input slice holding doc.
func verifySlice(doc uint64) int { return int(doc >> verifySliceBits) }

// routePairsFn sends, for every pair to verify (Linking.verifies),
// <doc, pair partition> to the input slice of each of its two documents.
type routePairsFn struct {
	Linking  Linking
	keyedOut // its batcher, kept for the bundle
}

func (f *routePairsFn) ProcessElement(ctx context.Context, part int, batch []byte, emit func(int, []byte)) error {
	pairs, err := packed.AppendPairs(nil, batch)
	if err != nil {
		return err
	}
	arcs := make([]packed.Arc, 0, 2*len(pairs))
	for _, p := range pairs {
		if f.Linking.verifiesPair(p) {
			arcs = append(arcs, packed.Arc{U: p.A, V: uint64(part)}, packed.Arc{U: p.B, V: uint64(part)})
		}
	}
	slices.SortFunc(arcs, compareArcs)
	// The keys are slices, which have no bound: a keyed batcher keeps
	// one batch per slice met.
	out := f.keyed(ctx, "verify_routes", emit)
	for i, a := range arcs {
		if i == 0 || a != arcs[i-1] {
			out.add(verifySlice(a.U), a)
		}
	}
	return nil
}

func compareArcs(x, y packed.Arc) int {
	return cmp.Or(cmp.Compare(x.U, y.U), cmp.Compare(x.V, y.V))
}

// readFeaturesFn reads, for one input slice, the rows its routes name,
// makes their features and sends each once to each pair partition that
// wants it.
type readFeaturesFn struct {
	Inputs     []string
	Settings   settings.Config // phase 1's (see rowsketch.New)
	Partitions int
	Lanes      int
	out        *batcher // the bundle's
	lanes      lanes[func(int, []byte)]
}

func (f *readFeaturesFn) StartBundle(ctx context.Context, emit func(int, []byte)) {
	f.lanes.reset()
	f.out = nil
}

func (f *readFeaturesFn) FinishBundle(ctx context.Context, emit func(int, []byte)) error {
	if err := f.lanes.finish(ctx, emit); err != nil {
		return err
	}
	finishBatcher(&f.out, ctx, emit)
	return nil
}

func (f *readFeaturesFn) ProcessElement(ctx context.Context, slice int, routesIt func(*[]byte) bool, emit func(int, []byte)) error {
	routesIt = hold(routesIt)
	return f.lanes.timed(ctx, f.Lanes, emit, verifyTime, func() (laneOut[func(int, []byte)], error) {
		sends, dests, err := f.read(ctx, slice, routesIt)
		return func(ctx context.Context, emit func(int, []byte)) error {
			out := bundleBatcher(&f.out, ctx, "verify_features", f.Partitions, emit)
			for i, x := range sends {
				out.add(dests[i], x)
			}
			return nil
		}, err
	})
}

// read reads the rows of the slice that routesIt names and returns the
// features to send, each with its pair partition.
func (f *readFeaturesFn) read(ctx context.Context, slice int, routesIt func(*[]byte) bool) (sends []packed.Features, dests []int, err error) {
	routes, err := decodeBatches(routesIt, packed.AppendArcs)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(routes, compareArcs)
	var rows []int64
	for i, r := range routes {
		if verifySlice(r.U) != slice {
			return nil, nil, fmt.Errorf("verify: doc %d reached the reader of slice %d", r.U, slice)
		}
		if i == 0 || r.U != routes[i-1].U {
			rows = append(rows, int64(r.U&(1<<40-1)))
		}
	}
	file := int(routes[0].U >> 40)
	if file >= len(f.Inputs) {
		return nil, nil, fmt.Errorf("verify: doc %d names input file %d of %d", routes[0].U, file, len(f.Inputs))
	}
	path := f.Inputs[file]
	rs, err := rowsketch.New(f.Settings)
	if err != nil {
		return nil, nil, err
	}
	next := 0 // the first route of the row being read
	err = crawl.ReadRows(ctx, file, path, rows, f.Settings.Columns, func(sp crawl.Split, row crawl.Row) error {
		doc := crawl.DocID(file, row.Index)
		rs.Sketch(sp, row)
		x, ok := rs.Verifiable(doc)
		if !ok {
			return fmt.Errorf("%s: row %d has no features on a second reading, though phase 1 found some: did the file change during the run?", path, row.Index)
		}
		x.Values = slices.Clone(x.Values) // the Sketcher reuses its buffers
		for ; next < len(routes) && routes[next].U == doc; next++ {
			sends, dests = append(sends, x), append(dests, int(routes[next].V))
		}
		return nil
	})
	return sends, dests, err
}

// verifyPairsFn meets, on one pair partition, its pairs and the features
// of their documents, and verifies each pair.
type verifyPairsFn struct {
	Linking Linking // which pairs to verify; its policy's floors the exact verification computes figures above
	Lanes   int
	lanes   lanes[verifyEmit]
}

// verifyEmit is verifyPairsFn's emitters: the verified pairs, and the
// counts as data (see writeTallies).
type verifyEmit struct {
	pairs func(int, []byte)
	tally func(string, int64)
}

func (f *verifyPairsFn) StartBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) {
	f.lanes.reset()
}

func (f *verifyPairsFn) FinishBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) error {
	return f.lanes.finish(ctx, verifyEmit{emit, tally})
}

func (f *verifyPairsFn) ProcessElement(ctx context.Context, part int, pairsIt, featuresIt func(*[]byte) bool, emit func(int, []byte), tally func(string, int64)) error {
	pairsIt, featuresIt = hold(pairsIt), hold(featuresIt)
	return f.lanes.timed(ctx, f.Lanes, verifyEmit{emit, tally}, verifyTime, func() (laneOut[verifyEmit], error) {
		out, checked, pruned, err := f.verify(pairsIt, featuresIt)
		return func(ctx context.Context, emit verifyEmit) error {
			pairsVerified.Inc(ctx, checked)
			pairsPruned.Inc(ctx, pruned)
			emit.tally("pairs_verified", checked)
			emit.tally("pairs_verify_pruned", pruned)
			if len(out) > 0 {
				emit.pairs(part, out)
			}
			return nil
		}, err
	})
}

func (f *verifyPairsFn) verify(pairsIt, featuresIt func(*[]byte) bool) (out []byte, checked, pruned int64, err error) {
	// Counted pairs travel unsealed (PairCount, SuperShingles).
	var pairs []packed.Pair
	var b []byte
	for pairsIt(&b) {
		if pairs, err = packed.AppendPairs(pairs, b); err != nil {
			return nil, 0, 0, err
		}
	}
	fs, err := decodeBatches(featuresIt, packed.AppendFeatures)
	if err != nil {
		return nil, 0, 0, err
	}
	byDoc := make(map[uint64]packed.Features, len(fs))
	for _, x := range fs {
		byDoc[x.Doc] = x
	}
	// The pairs in a fixed order, so the batch is the same whatever order
	// the shuffle delivered them in.
	packed.SortPairs(pairs)
	for _, p := range pairs {
		if !f.Linking.verifiesPair(p) {
			out = packed.Verified{Pair: p}.Append(out) // linked on its estimate
			continue
		}
		a, okA := byDoc[p.A]
		b, okB := byDoc[p.B]
		if !okA || !okB {
			return nil, 0, 0, fmt.Errorf("verify: the features of a document of pair (%d, %d) did not arrive", p.A, p.B)
		}
		v, err := clusters.VerifyPair(a, b, f.Linking.Policy)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("verify pair (%d, %d): %w", p.A, p.B, err)
		}
		v.Pair = p
		if v.Checked {
			checked++
		} else {
			pruned++
		}
		out = v.Append(out)
	}
	return out, checked, pruned, nil
}

// verifiedEstimates are what a pair's verification says, for the policy:
// the zero Estimates when its filters proved it below.
func verifiedEstimates(v packed.Verified) policy.Estimates {
	if !v.Checked {
		return policy.Estimates{Shared: int(v.Count)}
	}
	return policy.Estimates{Shared: int(v.Count), Resemblance: v.Resemblance, AInB: &v.AInB, BInA: &v.BInA}
}
