package packed

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestVerifyRecordsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var fs []Features
	var vs []Verified
	var js []Job
	var bf, bv, bj []byte
	for i := range 60 {
		f := Features{Doc: rng.Uint64(), N: rng.Uint32(), K: uint32(i % 3)}
		for range i % 7 {
			f.Values = append(f.Values, rng.Uint64())
		}
		fs, bf = append(fs, f), f.Append(bf)
		v := Verified{Pair: Pair{rng.Uint64(), rng.Uint64(), rng.Uint32(), rng.Uint32(), rng.Uint32(), 0, 0, rng.Uint32()},
			Resemblance: rng.Float64(), AInB: rng.Float64(), BInA: rng.Float64(), Checked: i%2 == 0}
		vs, bv = append(vs, v), v.Append(bv)
		j := Job{Pair: v.Pair, Part: rng.Uint32()}
		js, bj = append(js, j), j.Append(bj)
	}
	gotF, err := AppendFeatures(nil, bf)
	if err != nil || !reflect.DeepEqual(fs, gotF) {
		t.Errorf("features: round trip differs (err %v)", err)
	}
	gotV, err := AppendVerified(nil, bv)
	if err != nil || !reflect.DeepEqual(vs, gotV) {
		t.Errorf("verified pairs: round trip differs (err %v)", err)
	}
	gotJ, err := AppendJobs(nil, bj)
	if err != nil || !reflect.DeepEqual(js, gotJ) {
		t.Errorf("jobs: round trip differs (err %v)", err)
	}
	if _, err := AppendJobs(nil, bj[:len(bj)-2]); err == nil {
		t.Error("a truncated jobs batch decoded without error")
	}
	if _, err := AppendFeatures(nil, bf[:len(bf)-3]); err == nil {
		t.Error("a truncated features batch decoded without error")
	}
	if _, err := AppendVerified(nil, bv[:len(bv)-1]); err == nil {
		t.Error("a truncated verified batch decoded without error")
	}
}

// TestDenseFeaturesRoundTrip: a dense sample of any length, odd ones
// included, comes back whole through a Features record and its encoding.
func TestDenseFeaturesRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 511, 512} {
		sample := make([]uint32, n)
		for i := range sample {
			sample[i] = uint32(i)*2654435761 + 1<<31
		}
		f := DenseFeatures(42, 9000, sample)
		if a, b := f.Append(nil), AppendDense(nil, 42, 9000, sample); !slices.Equal(a, b) {
			t.Fatalf("n=%d: AppendDense encodes otherwise than the record", n)
		}
		// Into a reused buffer whose spare room holds old bytes (phase 1
		// appends every page's record to one buffer).
		dirty := bytes.Repeat([]byte{0xff}, 4096)
		if a, b := f.Append([]byte{1}), AppendDense(append(dirty[:0], 1), 42, 9000, sample); !slices.Equal(a, b) {
			t.Fatalf("n=%d: AppendDense into a used buffer encodes otherwise than the record", n)
		}
		got, err := AppendFeatures(nil, f.Append(nil))
		if err != nil || len(got) != 1 || got[0].Doc != 42 || got[0].N != 9000 {
			t.Fatalf("n=%d: %+v, %v", n, got, err)
		}
		if back := got[0].DenseSample([]uint32{7}); !slices.Equal(back[1:], sample) || back[0] != 7 || len(got[0].Values) != (n+1)/2 {
			t.Errorf("n=%d: the sample came back as %v", n, back[1:])
		}
	}
}
