package quality

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
)

// TestPairsTableComplete: the pairs table holds exactly the pairs that
// the representatives' sketches (the sketches table) imply, each with the
// right figures, counted here by comparing every two sketches directly
// instead of through phases 2 and 3's postings, partitions and batches.
// Several partitions, so that a pair lost at a partition's edge shows.
func TestPairsTableComplete(t *testing.T) {
	inputs := []string{pipelinetest.SampleGlob}
	inputs = append(inputs, shareddata.Paths(t, "deb-copyright.parquet", "deb-manpages.parquet")...)
	for _, input := range inputs {
		t.Run(input, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			cfg.Partitions = 5
			r := pipelinetest.Run(t, input, cfg)
			sk := pipelinetest.SketchesOf(t, r.Dir)
			// A value in more than MaxShingleDocs representatives is
			// dropped as too common before pairs are counted.
			docsOf := map[uint64]int{}
			for _, v := range sk {
				for _, x := range v {
					docsOf[x]++
				}
			}
			ids := make([]int64, 0, len(sk))
			size := map[int64]int{} // the estimates' sizes are the whole sketches'
			for id, v := range sk {
				ids = append(ids, id)
				size[id] = len(v)
				sk[id] = slices.DeleteFunc(slices.Clone(v), func(x uint64) bool { return docsOf[x] > cfg.MaxShingleDocs })
			}
			slices.Sort(ids)
			got := map[[2]int64]tables.Pair{}
			for _, p := range r.Pairs {
				got[[2]int64{p.DocA, p.DocB}] = p
			}
			var want, linked int
			for i, a := range ids {
				for _, b := range ids[i+1:] {
					n := pipelinetest.SharedValues(sk[a], sk[b])
					if n == 0 {
						continue
					}
					f := pipelinetest.ModFigures(n, size[a], size[b])
					link := pipelinetest.LinksByRule(cfg.Policy, f)
					if !pipelinetest.KeptByRule(n, f, link) {
						continue
					}
					want++
					if link {
						linked++
					}
					p, ok := got[[2]int64{a, b}]
					if !ok {
						t.Errorf("pair %d-%d (shared %d of %d and %d) missing from the pairs table", a, b, n, size[a], size[b])
						continue
					}
					delete(got, [2]int64{a, b})
					if int(p.Shared) != n || p.Resemblance != f.Res || p.Linked != link {
						t.Errorf("pair %d-%d: shared %d, resemblance %v, linked %v; the sketches give %d, %v, %v", a, b, p.Shared, p.Resemblance, p.Linked, n, f.Res, link)
					}
				}
			}
			for k := range got {
				t.Errorf("pair %d-%d is in the pairs table but not implied by the sketches", k[0], k[1])
			}
			t.Logf("%d representatives, %d pairs, %d linked", len(ids), want, linked)
			if want == 0 || linked == 0 {
				t.Error("no pairs: the input tests nothing")
			}
		})
	}
}
