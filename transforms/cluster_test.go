package transforms

import (
	"context"
	"reflect"
	"testing"

	"github.com/neardup/neardup/io/tables"
)

// TestEmitPairRows checks that pairs-table rows cross to WritePairs whole,
// in order, in sealed batches of at most pairRowsPerBatch rows.
func TestEmitPairRows(t *testing.T) {
	var want []tables.Pair
	for i := range 2*pairRowsPerBatch + 1 {
		r := tables.Pair{DocA: int64(i), DocB: int64(i + 3), Shared: int32(i % 11), Resemblance: float64(i%11) / 10}
		if i%3 == 0 {
			c := 0.25
			r.ContainmentAInB = &c
		}
		want = append(want, r)
	}
	var got []tables.Pair
	elements := 0
	emitPairRows(context.Background(), 4, want, func(part int, sealed []byte) {
		elements++
		rows, err := decodeBatches(func(b *[]byte) bool {
			*b, sealed = sealed, nil
			return *b != nil
		}, tables.Decode[tables.Pair])
		if err != nil {
			t.Fatal(err)
		}
		if part != 4 || len(rows) > pairRowsPerBatch {
			t.Errorf("element of partition %d, %d rows", part, len(rows))
		}
		got = append(got, rows...)
	})
	if elements != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d elements holding %d rows, want 3 holding the %d given", elements, len(got), len(want))
	}
}
