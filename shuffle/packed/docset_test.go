package packed

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A doc set gives back its members, sorted, each once, against a map
// kept beside it; IDs far apart (other files) and zero included.
func TestDocSetRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		var docs []uint64
		want := map[uint64]bool{}
		for i := r.IntN(300); i > 0; i-- {
			d := uint64(r.IntN(4))<<40 | uint64(r.IntN(2000))
			if r.IntN(50) == 0 {
				d = 0
			}
			docs = append(docs, d)
			want[d] = true
		}
		b := AppendDocSet(nil, slices.Clone(docs))
		got, err := AppendDocs(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || !slices.IsSorted(got) {
			t.Fatalf("%d members back, want %d, sorted", len(got), len(want))
		}
		for _, d := range got {
			if !want[d] {
				t.Fatalf("%d back, never put in", d)
			}
		}
	}
}

// Rows of one file in order cost a byte or two each.
func TestDocSetSize(t *testing.T) {
	docs := make([]uint64, 1000)
	for i := range docs {
		docs[i] = 7<<40 | uint64(3*i)
	}
	if n := len(AppendDocSet(nil, docs)); n > 1006 {
		t.Errorf("1000 rows 3 apart in one file packed in %d bytes, want about 1000", n)
	}
	if _, err := AppendDocs(nil, []byte{0x80}); err == nil {
		t.Error("a cut uvarint decoded")
	}
	if _, err := AppendDocs(nil, []byte{5, 0}); err == nil {
		t.Error("a repeated member (a zero difference) decoded")
	}
}
