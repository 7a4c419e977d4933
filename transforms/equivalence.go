package transforms

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/neardup/neardup/settings"
)

func init() {
	{
		fn := &equivalenceCountFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
}

// packedKey is one 8-byte fingerprint, packed for a batch.
type packedKey uint64

func (k packedKey) Append(b []byte) []byte { return binary.LittleEndian.AppendUint64(b, uint64(k)) }

// EquivalenceCounts counts, for each of Broder's equivalence levels
// (identical, lexically equivalent, shingle-equivalent), the groups of two
// or more equivalent documents and the documents beyond the first in each,
// whichever level the identical shortcut uses. It takes the equiv output of
// Sketch, keyed by level*partitions + fingerprint partition, and only
// bumps counters (equivalent_<level>_groups, equivalent_<level>_copies).
func EquivalenceCounts(s beam.Scope, equiv beam.PCollection, partitions int) {
	s = s.Scope("EquivalenceCounts")
	drain(s, beam.ParDo(s, &equivalenceCountFn{Partitions: partitions}, beam.GroupByKey(s, equiv)))
}

type equivalenceCountFn struct{ Partitions int }

func (f *equivalenceCountFn) ProcessElement(ctx context.Context, key int, batches func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "equivalence_count")
	defer g.done()
	batches = g.iter(batches)
	level := key / f.Partitions
	if level < 0 || level >= len(settings.Equivalences) {
		return fmt.Errorf("equivalence key %d out of range", key)
	}
	var keys []uint64
	if err := eachBatch(batches, func(b []byte) error {
		for ; len(b) >= 8; b = b[8:] {
			keys = append(keys, binary.LittleEndian.Uint64(b))
		}
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(keys)
	var groups, copies int64
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		if j-i > 1 {
			groups++
			copies += int64(j - i - 1)
		}
		i = j
	}
	name := settings.Equivalences[level]
	beam.NewCounter(Namespace, "equivalent_"+name+"_groups").Inc(ctx, groups)
	beam.NewCounter(Namespace, "equivalent_"+name+"_copies").Inc(ctx, copies)
	emit(name) // see drain
	return nil
}
