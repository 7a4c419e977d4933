package transforms

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func init() {
	{
		fn := &waveProbeFn{}
		register.Function5x0(fn.ProcessElement)
		registerDoFn(fn)
	}
}

// TestPairCountInWaves checks phase 3 in 2, 3 and 7 waves (more waves
// than partitions too) against counts made here from the sketches.
func TestPairCountInWaves(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 0))
	sketches := map[uint64][]uint64{}
	for d := uint64(1); d <= 40; d++ {
		var vs []uint64
		for v := uint64(1); v <= 30; v++ {
			if r.IntN(3) == 0 {
				vs = append(vs, v)
			}
		}
		sketches[d] = vs
	}
	var want []any
	for a := uint64(1); a <= 40; a++ {
		for b := a + 1; b <= 40; b++ {
			n := 0
			for _, v := range sketches[a] {
				if slices.Contains(sketches[b], v) {
					n++
				}
			}
			if n > 0 {
				want = append(want, fmt.Sprintf("%d-%d:%d/0", a, b, n))
			}
		}
	}
	for _, waves := range []int{2, 3, 7} {
		t.Run(fmt.Sprint(waves), func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxShingleDocs, cfg.Partitions, cfg.Waves = 1000, 5, waves
			p, s := beam.NewPipelineWithRoot()
			in := beam.CreateList(s, postingsOf(sketches, cfg))
			lists, _ := ShingleMerge(s, beam.ParDo(s, kvFromStruct, in), cfg.Candidates(), cfg.Update, cfg.Placement)
			pairs := PairCount(s, lists, repsOf(s, sketches, cfg), cfg.Linking(), cfg.FirstNewDoc, cfg.Placement)
			passert.Equals(s, beam.ParDo(s, pairStrings, pairs), want...)
			ptest.RunAndValidate(t, p)
		})
	}
}

// probes records when each key's element ran (waveProbeFn): the test
// runs its pipeline in this process.
var probes struct {
	sync.Mutex
	ran map[int][2]time.Time
}

// waveProbeFn holds each element for a while and records when it ran.
type waveProbeFn struct{}

func (waveProbeFn) ProcessElement(ctx context.Context, key int, _ func(*[]byte) bool, _ func(*int) bool, emit func(int, []byte)) {
	start := time.Now()
	time.Sleep(150 * time.Millisecond)
	probes.Lock()
	probes.ran[key] = [2]time.Time{start, time.Now()}
	probes.Unlock()
	emit(key, nil)
}

// TestWavesOneAfterAnother checks that a wave's step starts only once the
// wave before it has finished: what keeps one wave's bundle in the
// embedded runner at a time.
func TestWavesOneAfterAnother(t *testing.T) {
	const waves, keys = 3, 6
	probes.ran = map[int][2]time.Time{}
	p, s := beam.NewPipelineWithRoot()
	var in []keyed
	for k := range keys {
		in = append(in, keyed{k, []byte{byte(k)}})
	}
	out := groupInWaves(s, Waves{beam.ParDo(s, kvFromStruct, beam.CreateList(s, in))}, waves, func(s beam.Scope, grouped, after beam.PCollection) []beam.PCollection {
		return []beam.PCollection{beam.ParDo(s, &waveProbeFn{}, grouped, beam.SideInput{Input: after})}
	})
	passert.Count(s, out[0].flatten(s), "elements", keys)
	ptest.RunAndValidate(t, p)
	if len(probes.ran) != keys {
		t.Fatalf("%d keys ran, want %d", len(probes.ran), keys)
	}
	for a, ra := range probes.ran {
		for b, rb := range probes.ran {
			if a%waves < b%waves && rb[0].Before(ra[1]) {
				t.Errorf("key %d (wave %d) started %v before key %d (wave %d) ended", b, b%waves, ra[1].Sub(rb[0]), a, a%waves)
			}
		}
	}
}
