package shingle

import (
	"slices"
	"strconv"
	"testing"
)

// FuzzFingerprints compares Fingerprints with the map-based naive version
// on token sequences drawn from a small vocabulary (data[i] mod vocab), so
// that repeated shingles are common and long inputs take the bucket sort
// path (64 or more shingles). It also checks that the result is sorted and
// distinct, has at most Count(len(tokens), w) elements, and does not
// depend on what dst held.
func FuzzFingerprints(f *testing.F) {
	f.Add([]byte("abcabcabc"), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, w, vocab uint8) {
		ww := 1 + int(w%16)
		toks := make([]string, len(data))
		for i, b := range data {
			toks[i] = "t" + strconv.Itoa(int(b)%(1+int(vocab)))
		}
		got := Fingerprints(nil, h, toks, ww)
		if len(got) > Count(len(toks), ww) || Count(len(toks), ww) != max(0, len(toks)-ww+1) {
			t.Fatalf("w=%d, %d tokens: %d shingles, Count %d", ww, len(toks), len(got), Count(len(toks), ww))
		}
		for i := 1; i < len(got); i++ {
			if got[i-1] >= got[i] {
				t.Fatalf("w=%d tokens=%q: not sorted and distinct at %d: %x", ww, toks, i, got)
			}
		}
		if want := naive(toks, ww); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("w=%d tokens=%q: got %x, naive %x", ww, toks, got, want)
		}
		dst := make([]uint64, 5, 2*len(toks)+5)
		for i := range dst[:cap(dst)] {
			dst[:cap(dst)][i] = ^uint64(i)
		}
		if again := Fingerprints(dst, h, toks, ww); !slices.Equal(again, got) {
			t.Fatalf("w=%d tokens=%q: with a used dst got %x, want %x", ww, toks, again, got)
		}
	})
}
