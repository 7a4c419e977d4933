package transforms

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
)

// componentGraphs are the shapes the distributed components must get
// right: long chains, big stars, many small clusters with copies, one
// giant cluster. Doc IDs are spread as the pipeline's are (file<<40|row).
func componentGraphs() map[string][]packed.Edge {
	rng := rand.New(rand.NewPCG(5, 6))
	doc := func(i int) uint64 { return uint64(i%7)<<40 | uint64(i) }
	g := map[string][]packed.Edge{}
	var path, star []packed.Edge
	perm := rng.Perm(100001)
	for i := range 100000 {
		path = append(path, packed.Edge{A: doc(i), B: doc(i + 1), Resemblance: 0.5 + float64(i%50)/100})
		star = append(star, packed.Edge{A: doc(perm[100000]), B: doc(perm[i]), Resemblance: 0.9})
	}
	g["path of 100,000"] = path
	g["star of 100,000"] = star
	var small []packed.Edge
	for c := range 5000 {
		base := c * 10
		for k := 1; k < 4; k++ {
			small = append(small, packed.Edge{A: doc(base + rng.IntN(k)), B: doc(base + k), Resemblance: rng.Float64()})
		}
		if c%3 == 0 { // copies of a linked document
			small = append(small, packed.Edge{A: doc(base), B: doc(base + 5), Resemblance: 1, Copy: true})
		}
		if c%4 == 0 { // a representative with copies and no links
			small = append(small, packed.Edge{A: doc(base + 7), B: doc(base + 8), Resemblance: 1, Copy: true},
				packed.Edge{A: doc(base + 7), B: doc(base + 9), Resemblance: 1, Copy: true})
		}
	}
	g["5,000 small clusters with copies"] = small
	var giant []packed.Edge
	for range 100000 {
		a, b := rng.IntN(30000), rng.IntN(30000)
		if a != b {
			giant = append(giant, packed.Edge{A: doc(min(a, b)), B: doc(max(a, b)), Resemblance: rng.Float64()})
		}
	}
	g["one giant cluster"] = giant
	return g
}

// TestComponentsWaysMatchUnionFind runs Components both ways on Prism over
// each graph: the assignments are the plain union-find's, and the
// distributed way reports a per-worker share well under the whole.
func TestComponentsWaysMatchUnionFind(t *testing.T) {
	for name, edges := range componentGraphs() {
		assign, _, _ := clusters.Components(edges, nil, nil, clusters.Options{})
		var want []any
		for _, a := range assign {
			ident := "-"
			if a.IdenticalTo != packed.NoDoc {
				ident = fmt.Sprint(a.IdenticalTo)
			}
			want = append(want, fmt.Sprintf("%d>%d=%s", a.Doc, a.Cluster, ident))
		}
		for _, way := range []string{settings.ComponentsSingle, settings.ComponentsDistributed} {
			t.Run(name+"/"+way, func(t *testing.T) {
				cfg := testConfig()
				cfg.Partitions, cfg.Components, cfg.ComponentRounds, cfg.TempDir = 8, way, settings.DefaultComponentRounds, t.TempDir()
				links, copies := make([][]byte, cfg.Partitions), make([][]byte, cfg.Partitions)
				for _, e := range edges {
					p := packed.Partition(e.A, cfg.Partitions)
					if e.Copy {
						copies[p] = e.Append(copies[p])
					} else {
						links[p] = e.Append(links[p])
					}
				}
				var lk, ck []keyed
				for p := range cfg.Partitions {
					lk = append(lk, keyed{p, packed.Seal(nil, links[p])})
					ck = append(ck, keyed{p, packed.Seal(nil, copies[p])})
				}
				p, s := beam.NewPipelineWithRoot()
				l := beam.ParDo(s, kvFromStruct, beam.CreateList(s, lk))
				c := beam.ParDo(s, kvFromStruct, beam.CreateList(s, ck))
				noRanks := beam.ParDo(s, kvFromStruct, beam.CreateList(s, []keyed{{0, packed.Seal(nil, nil)}}))
				noReps := beam.ParDo(s, kvFromStruct, beam.CreateList(s, []keyed{{0, packed.Seal(nil, nil)}}))
				assignments, _, _ := Components(s, l, c, noRanks, noReps, cfg.Clustering(), cfg.Update, cfg.Placement)
				passert.Equals(s, beam.ParDo(s, assignmentStrings, assignments), want...)
				ptest.RunAndValidate(t, p)

				b, err := os.ReadFile(filepath.Join(cfg.TempDir, output.TalliesDir, "components.json"))
				if err != nil {
					t.Fatal(err)
				}
				var tally map[string]int64
				if err := json.Unmarshal(b, &tally); err != nil {
					t.Fatal(err)
				}
				if tally["clustered_docs"] != int64(len(assign)) {
					t.Errorf("tallies: %d clustered docs, want %d", tally["clustered_docs"], len(assign))
				}
				most, nLinks := tally["components_max_worker_records"], int64(0)
				for _, e := range edges {
					if !e.Copy {
						nLinks++
					}
				}
				t.Logf("%d links: at most %d records on one worker, residual %d edges", nLinks, most, tally["components_residual_edges"])
				if way == settings.ComponentsDistributed && name != "star of 100,000" && most > nLinks/2 {
					t.Errorf("one worker held %d records of %d links: not a bounded share", most, nLinks)
				}
			})
		}
	}
}
