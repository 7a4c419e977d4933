package query

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/sketch"
)

// loaded is an output without the lookup tables, its docs, clusters and
// sketches loaded whole: about 2 KB of memory a document.
type loaded struct {
	rows      []tables.Doc // the docs table, by doc ID
	byURL     map[string][]int32
	byCluster map[int64][]int32
	clusters  map[int64]tables.Cluster

	// The representatives' sketches, one after another: sketch i is
	// values[off[i]:off[i+1]] of document repDoc[i].
	repDoc []int64
	off    []int
	values []uint64
	repOf  map[int64]int32 // doc ID → sketch index

	sortOnce sync.Once
	bySize   []tables.Cluster // the clusters, largest first
}

// load reads the output's docs, clusters and sketches tables whole.
func load(ctx context.Context, dir string, m *output.Manifest) (*loaded, error) {
	ix := &loaded{byURL: map[string][]int32{}, byCluster: map[int64][]int32{}, clusters: map[int64]tables.Cluster{}, repOf: map[int64]int32{}}
	for _, f := range m.Tables[tables.DocsTable] {
		rows, err := tables.ReadDocs(ctx, store.Join(dir, f))
		if err != nil {
			return nil, err
		}
		ix.rows = append(ix.rows, rows...)
	}
	slices.SortFunc(ix.rows, func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	for i, d := range ix.rows {
		if d.URL != nil {
			ix.byURL[*d.URL] = append(ix.byURL[*d.URL], int32(i))
		}
		if d.ClusterID != nil {
			ix.byCluster[*d.ClusterID] = append(ix.byCluster[*d.ClusterID], int32(i))
		}
	}
	for _, f := range m.Tables[tables.ClustersTable] {
		rows, err := tables.Read[tables.Cluster](ctx, store.Join(dir, f))
		if err != nil {
			return nil, err
		}
		for _, c := range rows {
			ix.clusters[c.ClusterID] = c
		}
	}
	var reps []tables.Sketch
	for _, f := range m.Tables[tables.SketchesTable] {
		rows, err := tables.ReadSketches(ctx, store.Join(dir, f))
		if err != nil {
			return nil, err
		}
		reps = append(reps, rows...)
	}
	slices.SortFunc(reps, func(a, b tables.Sketch) int { return cmp.Compare(a.DocID, b.DocID) })
	ix.off = append(make([]int, 0, len(reps)+1), 0)
	for i, r := range reps {
		ix.repDoc = append(ix.repDoc, r.DocID)
		for _, v := range r.Sketch {
			ix.values = append(ix.values, uint64(v))
		}
		ix.off = append(ix.off, len(ix.values))
		ix.repOf[r.DocID] = int32(i)
	}
	return ix, nil
}

func (ix *loaded) urlDocs(_ context.Context, url string) ([]tables.Doc, error) {
	var out []tables.Doc
	for _, i := range ix.byURL[url] {
		out = append(out, ix.rows[i])
	}
	return out, nil
}

func (ix *loaded) doc(_ context.Context, id int64) (*tables.Doc, error) {
	i, ok := slices.BinarySearchFunc(ix.rows, id, func(d tables.Doc, id int64) int { return cmp.Compare(d.DocID, id) })
	if !ok {
		return nil, nil
	}
	d := ix.rows[i]
	return &d, nil
}

func (ix *loaded) docs(ctx context.Context, ids []int64) ([]tables.Doc, error) {
	var out []tables.Doc
	for _, id := range ids {
		if d, _ := ix.doc(ctx, id); d != nil {
			out = append(out, *d)
		}
	}
	return out, nil
}

func (ix *loaded) members(ctx context.Context, clusters ...int64) ([]tables.Member, error) {
	var out []tables.Member
	for _, c := range clusters {
		for _, i := range ix.byCluster[c] {
			d := &ix.rows[i]
			out = append(out, tables.MemberOf(d, ix.own(d.DocID)))
		}
	}
	return out, nil
}

func (ix *loaded) membersFrom(ctx context.Context, cluster int64, offset, n int) ([]tables.Member, int, error) {
	all, _ := ix.members(ctx, cluster)
	tables.SortMembers(all)
	if offset >= len(all) {
		return nil, len(all), nil
	}
	return all[offset:min(offset+n, len(all))], len(all), nil
}

func (ix *loaded) cluster(_ context.Context, id, _ int64) (*tables.Cluster, error) {
	if c, ok := ix.clusters[id]; ok {
		return &c, nil
	}
	return nil, nil
}

// own is a representative's sketch, or nil.
func (ix *loaded) own(id int64) []uint64 {
	r, ok := ix.repOf[id]
	if !ok {
		return nil
	}
	return ix.values[ix.off[r]:ix.off[r+1]]
}

func (ix *loaded) sketch(_ context.Context, rep int64) ([]uint64, error) { return ix.own(rep), nil }

func (ix *loaded) sketches(_ context.Context, reps []int64) (map[int64][]uint64, error) {
	out := map[int64][]uint64{}
	for _, r := range reps {
		if s := ix.own(r); s != nil {
			out[r] = s
		}
	}
	return out, nil
}

func (ix *loaded) largest(context.Context) ([]tables.Cluster, int, error) {
	ix.sortOnce.Do(func() {
		for _, c := range ix.clusters {
			ix.bySize = append(ix.bySize, c)
		}
		tables.SortLargest(ix.bySize)
	})
	return ix.bySize, len(ix.bySize), nil
}

func (ix *loaded) numDocs() int { return len(ix.rows) }

// candidates scans every representative's sketch: 389,000 pages' sketches
// in tens of milliseconds (BenchmarkText).
func (ix *loaded) candidates(_ context.Context, q []uint64) ([]candidate, error) {
	var out []candidate
	for r, id := range ix.repDoc {
		m := ix.values[ix.off[r]:ix.off[r+1]]
		if sketch.IntersectCount(q, m) > 0 {
			out = append(out, candidate{doc: id, sketch: m})
		}
	}
	return out, nil
}
