package packed

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDecodeAppends checks that the decoders append to what dst holds and
// leave it as it was, with the error, on a batch of the wrong length.
func TestDecodeAppends(t *testing.T) {
	a, b := Arc{1, 2}, Arc{3, 4}
	got, err := AppendArcs([]Arc{a}, b.Append(nil))
	if err != nil || !reflect.DeepEqual(got, []Arc{a, b}) {
		t.Errorf("AppendArcs([a], b) = %v, %v; want [a b]", got, err)
	}
	got, err = AppendArcs([]Arc{a}, make([]byte, 17))
	if want := "packed: arcs batch of 17 bytes is not a multiple of 16"; err == nil || err.Error() != want || !reflect.DeepEqual(got, []Arc{a}) {
		t.Errorf("AppendArcs([a], 17 bytes) = %v, %v; want [a], %q", got, err, want)
	}
	m := Member{Doc: 1, Values: []uint64{5}}
	gotM, err := AppendMembers([]Member{m}, m.Append(m.Append(nil)))
	if err != nil || !reflect.DeepEqual(gotM, []Member{m, m, m}) {
		t.Errorf("AppendMembers([m], m m) = %v, %v; want [m m m]", gotM, err)
	}
	gotM, err = AppendMembers([]Member{m}, m.Append(nil)[:36])
	if want := "packed: truncated member record: 1 values, 4 bytes left"; err == nil || err.Error() != want || !reflect.DeepEqual(gotM, []Member{m}) {
		t.Errorf("AppendMembers([m], truncated) = %v, %v; want [m], %q", gotM, err, want)
	}
}

// batchBytes is the size of the batches the decode benchmarks decode.
const batchBytes = 1 << 20

// benchDecode decodes a batch of about batchBytes of the records next
// makes, reusing the destination's memory, so that it measures the decode
// loop rather than the slice's growth.
func benchDecode[T interface{ Append([]byte) []byte }](b *testing.B, next func(r *rand.Rand) T, decode func([]T, []byte) ([]T, error)) {
	r := rand.New(rand.NewPCG(7, 8))
	var batch []byte
	for len(batch) < batchBytes {
		batch = next(r).Append(batch)
	}
	dst, err := decode(nil, batch)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if dst, err = decode(dst[:0], batch); err != nil {
			b.Fatal(err)
		}
	}
}

func uint64s(r *rand.Rand, n int) []uint64 {
	if n == 0 {
		return nil
	}
	vs := make([]uint64, n)
	for i := range vs {
		vs[i] = r.Uint64()
	}
	return vs
}

func BenchmarkDecodePosting(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Posting {
		return Posting{r.Uint64(), r.Uint64(), r.Uint32(), uint16(r.Uint32())}
	}, AppendPostings)
}

func BenchmarkDecodePair(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Pair {
		return Pair{r.Uint64(), r.Uint64(), r.Uint32(), r.Uint32(), r.Uint32(), uint16(r.Uint32()), uint16(r.Uint32()), r.Uint32()}
	}, AppendPairs)
}

func BenchmarkDecodeSketch(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Sketch {
		return Sketch{Key: r.Uint64(), Doc: r.Uint64(), Rank: []float64{r.Float64()}, Site: r.Uint64(), Features: r.Uint32(),
			Values: uint64s(r, r.IntN(64)), Supers: uint64s(r, r.IntN(8))}
	}, AppendSketches)
}

func BenchmarkDecodeSiteCount(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) SiteCount {
		return SiteCount{r.Uint64(), r.Uint64(), r.Uint32(), r.IntN(2) == 0}
	}, AppendSiteCounts)
}

func BenchmarkDecodeEdge(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Edge {
		return Edge{r.Uint64(), r.Uint64(), r.Float64(), nil, r.IntN(2) == 0}
	}, AppendEdges)
}

func BenchmarkDecodeAssignment(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Assignment {
		return Assignment{r.Uint64(), r.Uint64(), NoDoc, r.Uint64(), r.Float64(), NoDoc, 0, 0}
	}, AppendAssignments)
}

func BenchmarkDecodeMember(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Member {
		return Member{Doc: r.Uint64(), Comp: r.Uint64(), IdenticalTo: NoDoc, Rank: []float64{r.Float64()}, Values: uint64s(r, r.IntN(64))}
	}, AppendMembers)
}

func BenchmarkDecodeArc(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Arc { return Arc{r.Uint64(), r.Uint64()} }, AppendArcs)
}

func BenchmarkDecodeClusterLink(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) ClusterLink {
		return ClusterLink{r.Uint64(), r.Uint64(), r.Uint64(), r.Float64()}
	}, AppendClusterLinks)
}

func BenchmarkDecodeClusterStat(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) ClusterStat {
		return ClusterStat{r.Uint64(), r.Uint32(), r.Uint32(), r.Uint32(), r.Float64(), r.Float64(), r.Uint64(), r.Float64(), r.Float64(), 0, false}
	}, AppendClusterStats)
}

func BenchmarkDecodeFeatures(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Features {
		return Features{Doc: r.Uint64(), N: r.Uint32(), K: uint32(r.IntN(3)), Values: uint64s(r, r.IntN(128))}
	}, AppendFeatures)
}

func BenchmarkDecodeVerified(b *testing.B) {
	benchDecode(b, func(r *rand.Rand) Verified {
		return Verified{Pair: Pair{r.Uint64(), r.Uint64(), r.Uint32(), r.Uint32(), r.Uint32(), uint16(r.Uint32()), uint16(r.Uint32()), r.Uint32()},
			Resemblance: r.Float64(), AInB: r.Float64(), BInA: r.Float64(), Checked: r.IntN(2) == 0}
	}, AppendVerified)
}
