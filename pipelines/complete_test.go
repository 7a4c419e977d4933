package pipelines

import (
	"context"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/tables"
)

// sketchesOf reads an output's sketches table: every representative's
// sketch values, by doc ID.
func sketchesOf(t *testing.T, dir string) map[int64][]uint64 {
	t.Helper()
	rows, err := tables.ReadTable[tables.Sketch](context.Background(), dir, tables.SketchesTable)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int64][]uint64, len(rows))
	for _, r := range rows {
		v := make([]uint64, len(r.Sketch))
		for i, x := range r.Sketch {
			v[i] = uint64(x)
		}
		slices.Sort(v)
		out[r.DocID] = v
	}
	return out
}

// modFigures are Broder's MOD_m estimates of a pair from its sketches'
// sizes and shared values: resemblance shared/(a+b-shared), containments
// shared/a and shared/b.
func modFigures(shared, a, b int) figures {
	ca, cb := float64(shared)/float64(a), float64(shared)/float64(b)
	return figures{float64(shared) / float64(a+b-shared), &ca, &cb}
}

// sharedValues counts the values two sorted sketches share. It is
// written here rather than calling sketch.IntersectCount, which computes
// the resemblance_to_kept these tests check.
func sharedValues(a, b []uint64) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// TestPairsTableComplete: the pairs table holds exactly the pairs that
// the representatives' sketches (the sketches table) imply, each with the
// right figures, counted here by comparing every two sketches directly
// instead of through phases 2 and 3's postings, partitions and batches.
// Several partitions, so that a pair lost at a partition's edge shows.
func TestPairsTableComplete(t *testing.T) {
	inputs := []string{sampleGlob}
	inputs = append(inputs, shareddata.Paths(t, "deb-copyright.parquet", "deb-manpages.parquet")...)
	for _, input := range inputs {
		t.Run(input, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Partitions = 5
			r := run(t, input, cfg)
			sk := sketchesOf(t, r.dir)
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
			for _, p := range r.pairs {
				got[[2]int64{p.DocA, p.DocB}] = p
			}
			var want, linked int
			for i, a := range ids {
				for _, b := range ids[i+1:] {
					n := sharedValues(sk[a], sk[b])
					if n == 0 {
						continue
					}
					f := modFigures(n, size[a], size[b])
					link := linksByRule(cfg.Policy, f)
					if !keptByRule(n, f, link) {
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
					if int(p.Shared) != n || p.Resemblance != f.res || p.Linked != link {
						t.Errorf("pair %d-%d: shared %d, resemblance %v, linked %v; the sketches give %d, %v, %v", a, b, p.Shared, p.Resemblance, p.Linked, n, f.res, link)
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
