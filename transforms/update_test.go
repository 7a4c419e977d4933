package transforms

import (
	"context"
	"slices"
	"testing"

	"github.com/neardup/neardup/shuffle/packed"
)

// TestEmitPairBatches: a pair partition leaves phase 3 as sealed, packed
// batches of at most maxBatchBytes of whole pairs, all of them.
func TestEmitPairBatches(t *testing.T) {
	var want []packed.Pair
	var raw []byte
	for i := range 70000 { // 2.5 MB
		p := packed.Pair{A: uint64(i), B: uint64(i + 1), Count: uint32(i % 7), SizeA: 25, SizeB: 30}
		want, raw = append(want, p), p.Append(raw)
	}
	var got []packed.Pair
	elements := 0
	emitPairBatches(context.Background(), 5, raw, func(part int, sealed []byte) {
		elements++
		ps, err := openPairBatch(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if part != 5 || len(ps)*packed.PairSize > maxBatchBytes {
			t.Errorf("element of partition %d, %d pairs", part, len(ps))
		}
		got = append(got, ps...)
	})
	// The pairs are given sorted by A, so packing keeps their order.
	if elements != 3 || !slices.Equal(got, want) {
		t.Errorf("%d elements holding %d pairs, want 3 holding the %d given", elements, len(got), len(want))
	}
}
