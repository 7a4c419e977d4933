package tmpexp

import (
	"context"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func init() { register.Function2x1[context.Context, int, int](spin) }

func spin(ctx context.Context, x int) int {
	t := time.Now()
	n := 0
	for time.Since(t) < 500*time.Millisecond {
		n++
	}
	return x + n*0
}

func TestMain(m *testing.M) { ptest.Main(m) }

func TestPar(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, []int{1, 2, 3, 4})
	out := beam.ParDo(s, spin, beam.Reshuffle(s, in))
	_ = out
	start := time.Now()
	if _, err := ptest.RunWithMetrics(p); err != nil {
		t.Fatal(err)
	}
	t.Logf("8 x 0.5 s after reshuffle: %v", time.Since(start))
}
