// Package clusters turns phase 4's links into clusters and clusters into
// table rows: the connected components of the links and identical copies
// (each named by its smallest doc ID), their statistics, and the docs and
// clusters rows that record them. The pipeline's union-find and assembly
// steps and the bench's plain-Go reference both call it, so they cannot
// drift apart.
package clusters

import (
	"cmp"
	"math"
	"slices"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/unionfind"
)

// Components runs union-find over the edges. It returns one assignment per
// document in a cluster, in doc ID order, the statistics of every cluster
// in cluster ID order, and the union-find's memory per document.
func Components(edges []packed.Edge) (assign []packed.Assignment, stats []packed.ClusterStat, bytesPerID float64) {
	uf := unionfind.New(2 * len(edges))
	copyOf := make(map[uint64]uint64)
	for _, e := range edges {
		uf.Union(e.A, e.B)
		if e.Copy {
			copyOf[e.B] = e.A
		}
	}
	byRoot := map[uint64]*packed.ClusterStat{}
	stat := func(root uint64) *packed.ClusterStat {
		st := byRoot[root]
		if st == nil {
			st = &packed.ClusterStat{Cluster: root, MinResemblance: math.Inf(1)}
			byRoot[root] = st
		}
		return st
	}
	for _, e := range edges {
		st := stat(uf.Find(e.A))
		if e.Copy {
			st.Copies++
			continue
		}
		st.Links++
		st.MinResemblance = min(st.MinResemblance, e.Resemblance)
		st.SumResemblance += e.Resemblance
	}
	assign = make([]packed.Assignment, 0, uf.Len())
	uf.Each(func(id, root uint64) {
		stat(root).Size++
		a := packed.Assignment{Doc: id, Cluster: root, IdenticalTo: packed.NoDoc}
		if rep, ok := copyOf[id]; ok {
			a.IdenticalTo = rep
		}
		assign = append(assign, a)
	})
	stats = make([]packed.ClusterStat, 0, len(byRoot))
	for _, st := range byRoot {
		stats = append(stats, *st)
	}
	slices.SortFunc(stats, func(x, y packed.ClusterStat) int { return cmp.Compare(x.Cluster, y.Cluster) })
	return assign, stats, uf.BytesPerID()
}

// Counts is how Join placed the documents.
type Counts struct {
	Clustered, Alone, EmptyOrRejected int64
}

// Join fills the cluster columns of docs (sorted by doc ID) from assign
// (sorted by doc): cluster_id, identical_to, and is_representative, true
// for a cluster's smallest doc ID and for every ok or too_short document
// that is alone.
func Join(docs []tables.Doc, assign []packed.Assignment) Counts {
	var n Counts
	ai := 0
	for i := range docs {
		d := &docs[i]
		id := uint64(d.DocID)
		for ai < len(assign) && assign[ai].Doc < id {
			ai++ // an assignment for a doc not given cannot happen; skip defensively
		}
		switch {
		case ai < len(assign) && assign[ai].Doc == id:
			c := int64(assign[ai].Cluster)
			d.ClusterID = &c
			if assign[ai].IdenticalTo != packed.NoDoc {
				r := int64(assign[ai].IdenticalTo)
				d.IdenticalTo = &r
			}
			d.IsRepresentative = c == d.DocID
			n.Clustered++
		case d.Status == tables.StatusOK || d.Status == tables.StatusTooShort:
			d.IsRepresentative = true
			n.Alone++
		default:
			n.EmptyOrRejected++
		}
	}
	return n
}

// Rows makes the clusters-table rows of stats, in their order; docs (sorted
// by doc ID) supply the representatives' URLs.
func Rows(stats []packed.ClusterStat, docs []tables.Doc) []tables.Cluster {
	rows := make([]tables.Cluster, 0, len(stats))
	for _, st := range stats {
		c := tables.Cluster{
			ClusterID:           int64(st.Cluster),
			Size:                int64(st.Size),
			IdenticalCopies:     int64(st.Copies),
			RepresentativeDocID: int64(st.Cluster),
			LinkedPairs:         int64(st.Links),
		}
		if k, ok := slices.BinarySearchFunc(docs, st.Cluster, func(d tables.Doc, id uint64) int { return cmp.Compare(uint64(d.DocID), id) }); ok {
			c.RepresentativeURL = docs[k].URL
		}
		if st.Links > 0 {
			mn, mean := st.MinResemblance, st.SumResemblance/float64(st.Links)
			c.MinResemblance, c.MeanResemblance = &mn, &mean
		}
		rows = append(rows, c)
	}
	return rows
}
