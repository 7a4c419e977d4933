package transforms

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// GroupBytesPrefix names the distributions of the keyed steps' groups:
// group_bytes_STEP is, for each element of keyed step STEP, the sealed
// bytes of all the values its grouped inputs held. Its maximum is the
// step's largest group, which one worker holds at once (the Go SDK reads
// a GroupByKey's values as an iterator, but a DoFn that sorts or joins
// them keeps them all), and which the manifest reports
// (largest_group_bytes).
const GroupBytesPrefix = "group_bytes_"

// group measures one element of a keyed step: the bytes its grouped
// iterators yield, reported when the element is done. Retried or
// duplicated bundles report their groups again; a maximum does not mind.
type group struct {
	ctx  context.Context
	dist beam.Distribution
	n    int64
}

// measureGroup starts measuring an element of keyed step step.
func measureGroup(ctx context.Context, step string) *group {
	return &group{ctx: ctx, dist: beam.NewDistribution(Namespace, GroupBytesPrefix+step)}
}

// iter is it, counting the bytes of each value it yields.
func (g *group) iter(it func(*[]byte) bool) func(*[]byte) bool {
	return func(b *[]byte) bool {
		if !it(b) {
			return false
		}
		g.n += int64(len(*b))
		return true
	}
}

// done reports the element's group.
func (g *group) done() { g.dist.Update(g.ctx, g.n) }

// SideInputBytesPrefix names the distributions of the side inputs:
// side_input_bytes_STEP is, for each bundle of step STEP, the bytes of
// the side input it read. Flink's batch runner broadcasts a side input
// to every task and Dataflow caches it on every worker, so its maximum,
// which the manifest reports (largest_side_input_bytes), is what each
// worker holds of it.
const SideInputBytesPrefix = "side_input_bytes_"

// measureSideInput reports n bytes of side input read by a bundle of
// step step.
func measureSideInput(ctx context.Context, step string, n int64) {
	beam.NewDistribution(Namespace, SideInputBytesPrefix+step).Update(ctx, n)
}

// waveSideInput reads, once per bundle (*seen), groupInWaves' after, a
// side input of marks that is empty by construction (waveMarks), and
// reports its bytes (8 per mark) as step's side input: measured rather
// than assumed, so that a mark that starts to carry data shows in the
// manifest.
func waveSideInput(ctx context.Context, step string, seen *bool, after func(*int) bool) {
	if *seen {
		return
	}
	*seen = true
	var n int64
	var mark int
	for after(&mark) {
		n += 8
	}
	measureSideInput(ctx, step, n)
}
