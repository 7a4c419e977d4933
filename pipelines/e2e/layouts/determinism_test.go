package layouts

import (
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/settings"
)

// TestDeterministicAcrossPartitions runs each input with several partition
// counts: the tables must hold the same rows, every float to the last bit
// (tables.Diff). The shared Debian copyright table with the Common Crawl
// sample once gave mean resemblances that differed in the last bit, from
// sums in arrival order.
func TestDeterministicAcrossPartitions(t *testing.T) {
	inputs := []string{"../../../testdata/crawl/*.parquet"}
	a, okA := shareddata.Optional(t, "deb-copyright.parquet")
	b, okB := shareddata.Optional(t, "cc-main-2019-30-sample.parquet")
	if okA && okB {
		inputs = append(inputs, a+","+b)
	}
	for _, input := range inputs {
		t.Run(input, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			cfg.Partitions = 3
			first := pipelinetest.Run(t, input, cfg)
			if len(first.Docs) == 0 || len(first.Clusters) == 0 || len(first.Pairs) == 0 {
				t.Error("empty tables prove nothing")
			}
			// Lanes: each keyed step's partitions one at a time, and
			// four at once (see transforms' lanes).
			for _, c := range []struct{ parts, lanes int }{{8, 1}, {13, 4}} {
				cfg.Partitions, cfg.Lanes = c.parts, c.lanes
				pipelinetest.SameTables(t, first, pipelinetest.Run(t, input, cfg))
			}
		})
	}
}

// TestVerifiedDeterministic: the verification's shuffles (features to the
// pairs that want them) and the exact join give the same rows whatever
// the partitions and lanes, Bloom estimates to the last bit.
func TestVerifiedDeterministic(t *testing.T) {
	for _, mode := range []string{"bloom", "exact", "exact join"} {
		t.Run(mode, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			switch mode {
			case "bloom":
				cfg.Verify = settings.VerifyBloom
			case "exact":
				cfg.Verify = settings.VerifyExact
			default:
				cfg.Mode = settings.ModeExact
			}
			cfg.Partitions = 3
			first := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
			cfg.Partitions, cfg.Lanes = 11, 4
			pipelinetest.SameTables(t, first, pipelinetest.Run(t, pipelinetest.SampleGlob, cfg))
		})
	}
}
