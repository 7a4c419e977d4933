package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.Function1x0[string](discard)
	register.Function2x0[int, []byte](discardKV)
}

// drain consumes what a sink reports (the files it wrote, PCollection<string>),
// so that no stage doing real work is left without a consumed output.
//
// Why: Prism (Beam 2.77) busy-waits on every bundle of a stage with no
// consumed output, from the bundle's start to its end (stage.Execute selects
// on a data channel that is already closed), one spinning goroutine per
// bundle. A stage of sinks writing Parquet in P bundles at once then takes
// both cores from the workers: a 200k-page run went from 11 s to 45-67 s in
// three runs of five, 80 CPU s in runtime.selectgo. With an output consumed
// here, the wait ends only when the bundle's output does; the spin is left
// to this stage, whose bundles do nothing. The reshuffle keeps the runner
// from fusing the discarding into the sink's stage, which would leave that
// stage without an output again.
func drain(s beam.Scope, cols ...beam.PCollection) {
	s = s.Scope("Drain")
	beam.ParDo0(s, discard, beam.Reshuffle(s, beam.Flatten(s, cols...)))
}

func discard(string) {}

// drainKV is drain for PCollection<KV<int, []byte>>.
func drainKV(s beam.Scope, col beam.PCollection) {
	s = s.Scope("Drain")
	beam.ParDo0(s, discardKV, beam.Reshuffle(s, col))
}

func discardKV(int, []byte) {}
