package transforms

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/featurefile"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

func init() {
	register.Function2x1[[]byte, func(string), error](postingStrings)
	register.Function3x1[int, []byte, func(string), error](pairStrings)
	register.Function3x1[int, []byte, func(string), error](candidateStrings)
	register.Function3x1[int, []byte, func(string), error](assignmentStrings)
}

func postingStrings(b []byte, emit func(string)) error {
	ps, err := packed.AppendPostings(nil, b)
	for _, p := range ps {
		emit(fmt.Sprintf("%d:%d", p.Shingle, p.Doc))
	}
	return err
}

func pairStrings(_ int, b []byte, emit func(string)) error {
	ps, err := openPairBatch(b)
	for _, p := range ps {
		emit(fmt.Sprintf("%d-%d:%d/%d", p.A, p.B, p.Count, p.MinShared))
	}
	return err
}

func assignmentStrings(_ int, sealed []byte, emit func(string)) error {
	b, err := packed.Open(nil, sealed)
	if err != nil {
		return err
	}
	as, err := packed.AppendAssignments(nil, b)
	for _, a := range as {
		ident := "-"
		if a.IdenticalTo != packed.NoDoc {
			ident = fmt.Sprint(a.IdenticalTo)
		}
		emit(fmt.Sprintf("%d>%d=%s", a.Doc, a.Cluster, ident))
	}
	return err
}

// repsOf builds the representatives' sketches batches of Identical from
// sketches (doc -> sorted values), for PairCount's anchored pairs.
func repsOf(s beam.Scope, sketches map[uint64][]uint64, cfg Config) beam.PCollection {
	var out []keyed
	for _, d := range slices.Sorted(maps.Keys(sketches)) {
		sk := packed.Sketch{Doc: d, Values: sketches[d]}
		out = append(out, keyed{packed.Partition(d, cfg.Partitions), packed.Seal(nil, sk.Append(nil))})
	}
	if len(out) == 0 {
		return beam.ParDo(s, kvFromStruct, beam.CreateList(s, []keyed{{0, packed.Seal(nil, nil)}}))
	}
	return beam.ParDo(s, kvFromStruct, beam.CreateList(s, out))
}

// postingsOf builds one postings batch per doc from sketches (doc -> sorted values).
func postingsOf(sketches map[uint64][]uint64, cfg Config) []keyed {
	var docs []uint64
	for d := range sketches {
		docs = append(docs, d)
	}
	slices.Sort(docs)
	var out []keyed
	for _, d := range docs {
		for r, v := range sketches[d] {
			p := packed.Posting{Shingle: v, Doc: d, Size: uint32(len(sketches[d])), Rank: uint16(r)}
			out = append(out, keyed{packed.Partition(v, cfg.Partitions), packed.Seal(nil, p.Append(nil))})
		}
	}
	return out
}

func testConfig() Config {
	cfg := Config{Config: settings.Default()}
	cfg.MaxShingleDocs, cfg.Partitions = 3, 3
	return cfg
}

func TestShingleMergeDropsSingletonsAndCommonShingles(t *testing.T) {
	cfg := testConfig()
	cfg.AnchorDocs = 0 // dropped, as Broder did
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, postingsOf(map[uint64][]uint64{
		1: {10, 20, 30},
		2: {10, 30},
		3: {10, 30},
		4: {30},
		5: {40},
	}, cfg))
	lists, _ := ShingleMerge(s, beam.ParDo(s, kvFromStruct, in), cfg.Candidates(), cfg.Update, cfg.Placement)
	got := beam.ParDo(s, postingStrings, lists.flatten(s))
	// 20 and 40 are in one doc each; 30 is in 4 > MaxShingleDocs docs.
	passert.Equals(s, got, "10:1", "10:2", "10:3")
	ptest.RunAndValidate(t, p)
}

func TestPairCountSumsSharedShingles(t *testing.T) {
	cfg := testConfig()
	cfg.MaxShingleDocs = 1000
	p, s := beam.NewPipelineWithRoot()
	sketches := map[uint64][]uint64{
		1: {1, 2, 7},
		2: {1, 2, 3},
		3: {1, 3, 9},
	}
	in := beam.CreateList(s, postingsOf(sketches, cfg))
	lists, _ := ShingleMerge(s, beam.ParDo(s, kvFromStruct, in), cfg.Candidates(), cfg.Update, cfg.Placement)
	pairs := PairCount(s, lists, repsOf(s, sketches, cfg), cfg.Linking(), cfg.FirstNewDoc, cfg.Placement)
	got := beam.ParDo(s, pairStrings, pairs)
	passert.Equals(s, got, "1-2:2/0", "1-3:1/0", "2-3:2/0")
	ptest.RunAndValidate(t, p)
}

// TestPairCountAnchorsListsOverTheCap: with --anchor-docs 2 and a cap of
// 3, the list of value 10 (six documents) pairs each document with the
// list's first two only, so 3-4, 3-5, ... are never counted, and 1-2
// also counts value 20, a list under the cap.
func TestPairCountAnchorsListsOverTheCap(t *testing.T) {
	cfg := testConfig()
	cfg.AnchorDocs = 2
	p, s := beam.NewPipelineWithRoot()
	sketches := map[uint64][]uint64{
		1: {10, 20}, 2: {10, 20}, 3: {10}, 4: {10}, 5: {10}, 6: {10},
	}
	in := beam.CreateList(s, postingsOf(sketches, cfg))
	lists, _ := ShingleMerge(s, beam.ParDo(s, kvFromStruct, in), cfg.Candidates(), cfg.Update, cfg.Placement)
	pairs := PairCount(s, lists, repsOf(s, sketches, cfg), cfg.Linking(), cfg.FirstNewDoc, cfg.Placement)
	got := beam.ParDo(s, pairStrings, pairs)
	passert.Equals(s, got, "1-2:2/0", "1-3:1/0", "1-4:1/0", "1-5:1/0", "1-6:1/0",
		"2-3:1/0", "2-4:1/0", "2-5:1/0", "2-6:1/0")
	ptest.RunAndValidate(t, p)
}

// TestPairCountCompletesAnchoredPairs: a pair's anchors differ between
// two lists over the cap (2 anchors 7 on value 10's list; on value 30's,
// 1 comes first and takes its place), so the lists count 2-7 on one of
// the two values they share. Its count is completed from the sketches:
// 2, as for every anchored pair, the values their sketches share.
func TestPairCountCompletesAnchoredPairs(t *testing.T) {
	cfg := testConfig()
	cfg.AnchorDocs = 1
	sketches := map[uint64][]uint64{
		1: {30}, 2: {10, 30}, 3: {10}, 4: {10, 30}, 5: {10}, 6: {30}, 7: {10, 30},
	}
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, postingsOf(sketches, cfg))
	lists, _ := ShingleMerge(s, beam.ParDo(s, kvFromStruct, in), cfg.Candidates(), cfg.Update, cfg.Placement)
	pairs := PairCount(s, lists, repsOf(s, sketches, cfg), cfg.Linking(), cfg.FirstNewDoc, cfg.Placement)
	passert.Equals(s, beam.ParDo(s, pairStrings, pairs), "2-3:1/0", "2-4:2/0", "2-5:1/0", "2-7:2/0",
		"1-2:1/0", "1-4:1/0", "1-6:1/0", "1-7:1/0")
	ptest.RunAndValidate(t, p)
}

// TestSuperCandidatesAnchorListsOverTheCap: a super-shingle in more
// documents than the cap pairs its first AnchorDocs documents with all
// the others, as a shingle does in phase 3 (TestPairCountAnchorsListsOverTheCap);
// with AnchorDocs 0 it is dropped, as Broder dropped it.
func TestSuperCandidatesAnchorListsOverTheCap(t *testing.T) {
	for _, c := range []struct {
		anchors int
		want    []string
	}{
		// 1-2 once for each super-shingle: they are in partitions of
		// their own, and attachSketchAFn sums the counts.
		{2, []string{"1-2:1/0", "1-2:1/0", "1-3:1/0", "1-4:1/0", "1-5:1/0", "1-6:1/0", "2-3:1/0", "2-4:1/0", "2-5:1/0", "2-6:1/0"}},
		{0, []string{"1-2:1/0"}},
	} {
		cfg := testConfig()
		cfg.Mode, cfg.AnchorDocs = settings.ModeSuperShingle, c.anchors
		p, s := beam.NewPipelineWithRoot()
		in := beam.CreateList(s, postingsOf(map[uint64][]uint64{
			1: {10, 20}, 2: {10, 20}, 3: {10}, 4: {10}, 5: {10}, 6: {10},
		}, cfg))
		postings := beam.GroupByKey(s, beam.ParDo(s, kvFromStruct, in))
		pairs := beam.ParDo(s, &superCandidatesFn{Candidates: cfg.Candidates(), Partitions: cfg.Partitions}, postings)
		passert.Equals(s, beam.ParDo(s, candidateStrings, pairs), beam.CreateList(s, c.want))
		ptest.RunAndValidate(t, p)
	}
}

// candidateStrings is pairStrings for batches of plain packed.Pair
// records, the super-shingle candidates.
func candidateStrings(_ int, sealed []byte, emit func(string)) error {
	b, err := packed.Open(nil, sealed)
	if err != nil {
		return err
	}
	ps, err := packed.AppendPairs(nil, b)
	for _, p := range ps {
		emit(fmt.Sprintf("%d-%d:%d/%d", p.A, p.B, p.Count, p.MinShared))
	}
	return err
}

// TestPairCountMinSketchMatchesDirectEstimate checks that Broder's MIN_s
// estimate, computed in phase 3 from the ranks of shared shingles only,
// equals the estimate computed directly from both sketches.
func TestPairCountMinSketchMatchesDirectEstimate(t *testing.T) {
	const s0 = 8
	cfg := testConfig()
	cfg.Sketch = sketch.Spec{Kind: sketch.Min, N: s0}
	cfg.MaxShingleDocs = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	sketches := map[uint64][]uint64{}
	for d := uint64(1); d <= 12; d++ {
		set := map[uint64]bool{}
		for len(set) < 20 {
			set[uint64(rng.IntN(40))] = true
		}
		var all []uint64
		for v := range set {
			all = append(all, v)
		}
		slices.Sort(all)
		sketches[d] = cfg.Sketch.Select(nil, all)
	}
	var want []string
	for a := uint64(1); a <= 12; a++ {
		for b := a + 1; b <= 12; b++ {
			shared := sketch.IntersectCount(sketches[a], sketches[b])
			if shared == 0 {
				continue
			}
			r := sketch.MinResemblance(sketches[a], sketches[b], s0)
			union := min(s0, len(sketches[a])+len(sketches[b])-shared)
			want = append(want, fmt.Sprintf("%d-%d:%d/%d", a, b, shared, int(r*float64(union)+0.5)))
		}
	}
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, postingsOf(sketches, cfg))
	lists, _ := ShingleMerge(s, beam.ParDo(s, kvFromStruct, in), cfg.Candidates(), cfg.Update, cfg.Placement)
	pairs := PairCount(s, lists, repsOf(s, sketches, cfg), cfg.Linking(), cfg.FirstNewDoc, cfg.Placement)
	passert.Equals(s, beam.ParDo(s, pairStrings, pairs), beam.CreateList(s, want))
	ptest.RunAndValidate(t, p)
}

func TestIdenticalKeepsLowestDocAndClusterJoinsCopies(t *testing.T) {
	cfg := testConfig()
	p, s := beam.NewPipelineWithRoot()
	keys, bodies := identicalInput(s, cfg.Partitions)
	postings, copies, reps := Identical(s, keys, bodies, cfg.Candidates(), cfg.Placement)
	// 10 represents 10, 20, 30; it shares 1 of 1 and 2 values with 40:
	// resemblance 1/2 links them at threshold 0.5. 50 stays alone.
	lists, _ := ShingleMerge(s, postings, cfg.Candidates(), cfg.Update, cfg.Placement)
	pairs := PairCount(s, lists, reps, cfg.Linking(), cfg.FirstNewDoc, cfg.Placement)
	noRanks := beam.ParDo(s, kvFromStruct, beam.CreateList(s, []keyed{{0, packed.Seal(nil, nil)}}))
	_, assignments, _, _ := Cluster(s, pairs, beam.PCollection{}, copies, noRanks, reps, cfg.Linking(), cfg.Clustering(), cfg.Update, cfg.Placement)
	got := beam.ParDo(s, assignmentStrings, assignments)
	passert.Equals(s, got, "10>10=-", "20>10=10", "30>10=10", "40>10=-")
	ptest.RunAndValidate(t, p)
}

// keyed is a KV<int, []byte> that beam.CreateList can encode.
type keyed struct {
	K int
	V []byte
}

func kvFromStruct(kv keyed, emit func(int, []byte)) { emit(kv.K, kv.V) }

func init() {
	beam.RegisterType(reflect.TypeOf((*keyed)(nil)).Elem())
	register.Function2x0[keyed, func(int, []byte)](kvFromStruct)
}

// TestSizesMayLinkNeverSkipsALink: a pair phase 3 skips by its sketch
// sizes cannot reach the threshold whatever it shares, and the skip is
// made only where it may be (LinkedOnly, MOD_m, resemblance only).
func TestSizesMayLinkNeverSkipsALink(t *testing.T) {
	for _, th := range []float64{0.2, 0.5, 0.8, 0.9, 1} {
		link := Linking{Sketch: sketch.Spec{Kind: sketch.Mod, N: 25}, Policy: policy.Policy{Resemblance: th}, LinkedOnly: true}
		var skips int
		for a := uint32(1); a <= 60; a++ {
			for b := uint32(1); b <= 60; b++ {
				if link.sizesMayLink(a, b) {
					continue
				}
				skips++
				for shared := 1; shared <= int(min(a, b)); shared++ {
					if r := sketch.ModResemblance(shared, int(a), int(b)); r >= th {
						t.Fatalf("threshold %g: sizes %d, %d skipped, but %d shared gives resemblance %g", th, a, b, shared, r)
					}
				}
			}
		}
		if th < 1 && skips == 0 {
			t.Errorf("threshold %g: no sizes skipped", th)
		}
	}
	for _, sc := range []settings.Config{
		{Sketch: sketch.Spec{Kind: sketch.Mod, N: 25}, Policy: policy.Policy{Resemblance: 0.5}},
		{Sketch: sketch.Spec{Kind: sketch.Mod, N: 25}, Policy: policy.Policy{Resemblance: 0.5, Containment: 0.8}, LinkedOnly: true},
		{Sketch: sketch.Spec{Kind: sketch.Min, N: 100}, Policy: policy.Policy{Resemblance: 0.5}, LinkedOnly: true},
	} {
		link := Config{Config: sc}.Linking()
		if !link.sizesMayLink(1, 100) {
			t.Errorf("%+v: skipped a pair it must count", link)
		}
	}
}

// TestFeaturesFileNames: Verify finds where a features file begins, and
// how many records it holds, from the name phase 1 gave it, on any store.
func TestFeaturesFileNames(t *testing.T) {
	for i, doc := range []uint64{0, crawl.DocID(0, 16383), crawl.DocID(7, 1<<39), crawl.DocID(999999, 123456789012)} {
		ext := featurefile.Extent{First: doc, Count: []int{1, 16384, 7, 2049}[i], Span: []uint64{1, 16384, 9, 16000}[i]}
		for _, dir := range []string{"/tmp/out/_temporary/r/features", "s3://bucket/a b/_temporary/r/features"} {
			got, err := featuresFileExtent(dir + "/" + featuresFileName(ext))
			if err != nil || got != ext {
				t.Errorf("%+v in %s: read back as %+v, %v", ext, dir, got, err)
			}
		}
	}
	for _, name := range []string{"/tmp/x/part-0.parquet", "/tmp/x/000001-000000000002.features", "/tmp/x/000001-000000000002-0-0.features", "/tmp/x/000001-000000000002-5-4.features"} {
		if _, err := featuresFileExtent(name); err == nil {
			t.Errorf("%s read as a features file", name)
		}
	}
}
