package transforms

import (
	"context"
	"slices"
	"testing"

	"github.com/neardup/neardup/shuffle/packed"
)

// TestCutPairs: a pair partition crosses the update's shuffle as sealed
// batches of at most maxBatchBytes of whole pairs, all of them, in order.
func TestCutPairs(t *testing.T) {
	var want []packed.Pair
	var raw []byte
	for i := range 70000 { // 2.5 MB
		p := packed.Pair{A: uint64(i), B: uint64(i + 1), Count: uint32(i % 7), SizeA: 25, SizeB: 30}
		want, raw = append(want, p), p.Append(raw)
	}
	var got []packed.Pair
	elements := 0
	err := cutPairs(context.Background(), 5, raw, func(part int, sealed []byte) {
		elements++
		b, err := packed.Open(nil, sealed)
		if err != nil {
			t.Fatal(err)
		}
		if part != 5 || len(b) > maxBatchBytes || len(b)%packed.PairSize != 0 {
			t.Errorf("element of partition %d, %d bytes", part, len(b))
		}
		if got, err = packed.AppendPairs(got, b); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if elements != 3 || !slices.Equal(got, want) {
		t.Errorf("%d elements holding %d pairs, want 3 holding the %d given", elements, len(got), len(want))
	}
	if err := cutPairs(context.Background(), 5, raw[:40], func(int, []byte) {}); err == nil {
		t.Error("a partition of 40 bytes was cut without an error")
	}
}
