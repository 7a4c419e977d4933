package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	{
		fn := &waveFn{}
		register.Function3x0(fn.ProcessElement)
		registerDoFn(fn)
	}
	register.Function2x0[[]byte, func(int)](markEach)
	register.Function3x0[int, []byte, func(int)](markEachKV)
	register.Emitter1[int]()
	register.Iter1[int]()
}

// Waves is one stream in the waves of groupInWaves: a PCollection per
// wave, or one in all. A step that reads a stream in waves element by
// element runs on each wave (eachWave), not on their flatten: Prism makes
// every consumer of a Flatten the root of a stage of its own (its
// handleFlatten), and an ordinary stage gets all its input as one bundle,
// which would bring back the bundle of a whole shuffle that the waves
// took away. A GroupByKey may read a flatten: it is that stage anyway.
type Waves []beam.PCollection

// flatten is the whole stream, for the steps that read it as one.
func (w Waves) flatten(s beam.Scope) beam.PCollection {
	if len(w) == 1 {
		return w[0]
	}
	return beam.Flatten(s, w...)
}

// eachWave applies step to each wave of w.
func eachWave(w Waves, step func(beam.PCollection) beam.PCollection) Waves {
	out := make(Waves, len(w))
	for i, c := range w {
		out[i] = step(c)
	}
	return out
}

// groupInWaves is beam.GroupByKey for the biggest shuffles (in,
// PCollection<KV<int, []byte>> keyed by partition, in waves or not), cut
// into waves whose consumers run one after another. consume builds a
// wave's step from its groups and after, PCollection<int> that the step
// must take as a side input and never read; groupInWaves returns each of
// the steps' outputs in its waves.
//
// Why: the embedded runner (Prism) gives a keyed stage all its keys in one
// bundle, and while the bundle runs it holds the bundle's input three times
// over (built as one buffer, in the data channel's receive buffers, and
// decoded by the worker): for phase 3's merge on the pair-heavy gigabyte,
// 4.3 of the run's 5.6 GB at its peak (BENCHMARKS.md, issue 40). A side
// input holds a stage back until its input is complete, so with wave i's
// step reading (as after) a PCollection that wave i-1's step makes, only
// one wave's bundle is built at a time. A partition's work and what it
// writes are the same in any wave: waves never change the output.
// Remote runners spread a stage's keys over workers and bundles on their
// own: there waves is 1 and this is one GroupByKey, its after empty.
func groupInWaves(s beam.Scope, in Waves, waves int, consume func(s beam.Scope, grouped, after beam.PCollection) []beam.PCollection) []Waves {
	waves = max(waves, 1)
	var outs []Waves
	after := beam.ParDo(s, markEach, beam.Impulse(s)) // empty: wave 0 waits for nothing
	for w := range waves {
		ws := s
		wave := in
		if waves > 1 {
			ws = s.Scope("Wave")
			wave = eachWave(in, func(c beam.PCollection) beam.PCollection {
				return beam.ParDo(ws, &waveFn{Wave: w, Waves: waves}, c)
			})
		}
		out := consume(ws, beam.GroupByKey(ws, wave.flatten(ws)), after)
		if outs == nil {
			outs = make([]Waves, len(out))
		}
		for i, c := range out {
			outs[i] = append(outs[i], c)
		}
		if w+1 < waves {
			after = waveMarks(ws, out[0])
		}
	}
	return outs
}

// waveFn passes on the elements of one wave: the partitions p with
// p mod Waves = Wave.
type waveFn struct{ Wave, Waves int }

func (f *waveFn) ProcessElement(part int, v []byte, emit func(int, []byte)) {
	if part%f.Waves == f.Wave {
		emit(part, v)
	}
}

// waveMarks is a PCollection<int> complete when out is: nothing at all
// (a mark per element would cost a side input's worth of ints for no
// reader).
func waveMarks(s beam.Scope, out beam.PCollection) beam.PCollection {
	if typex.IsKV(out.Type()) {
		return beam.ParDo(s, markEachKV, out)
	}
	return beam.ParDo(s, markEach, out)
}

func markEach([]byte, func(int))        {}
func markEachKV(int, []byte, func(int)) {}
