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
	"github.com/neardup/neardup/keep"
	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/unionfind"
)

// Components runs union-find over the edges. It returns one assignment per
// document in a cluster, in doc ID order, the statistics of every cluster
// in cluster ID order, and the union-find's memory per document. It is
// the single-process form of what the pipeline spreads over workers: the
// links' components, then Attach and Summarize.
func Components(edges []packed.Edge) (assign []packed.Assignment, stats []packed.ClusterStat, bytesPerID float64) {
	uf := unionfind.New(2 * len(edges))
	var links, copies []packed.Edge
	for _, e := range edges {
		if e.Copy {
			copies = append(copies, e)
			continue
		}
		uf.Union(e.A, e.B)
		links = append(links, e)
	}
	var labels []packed.Arc
	uf.Each(func(id, root uint64) { labels = append(labels, packed.Arc{U: id, V: root}) })
	members, clinks := Attach(labels, links, copies, nil, func(doc uint64) uint64 { return doc })
	assign, stats = Summarize(members, clinks)
	return assign, stats, uf.BytesPerID()
}

// Attach labels what a cluster summary needs with the component of each
// document: labels holds, for documents in links, <doc, label> (U the
// doc, V any name of its component that no other component shares); links
// and copies are edges whose A is labelled or, for a copy, is a
// representative (whose own label is own(A) when it has no links). It
// returns the members, one per document (Cluster the component's label,
// IdenticalTo set for copies), and the links with their component's
// label. ranks holds <doc, math.Float64bits(rank)> for documents ranked by
// --keep (package keep); a member without one ranks 0; a copy's rank comes
// with it (Edge.Rank), since it lives in another doc partition. The pipeline calls
// it on each doc partition, where a document's label, links from it,
// copies of it and its rank meet; the inputs are reordered.
func Attach(labels []packed.Arc, links, copies []packed.Edge, ranks []packed.Arc, own func(doc uint64) uint64) (members []packed.Assignment, clinks []packed.ClusterLink) {
	slices.SortFunc(ranks, func(x, y packed.Arc) int { return cmp.Compare(x.U, y.U) })
	rankOf := func(doc uint64) float64 {
		if k, ok := slices.BinarySearchFunc(ranks, doc, func(a packed.Arc, d uint64) int { return cmp.Compare(a.U, d) }); ok {
			return math.Float64frombits(ranks[k].V)
		}
		return 0
	}

	slices.SortFunc(labels, func(x, y packed.Arc) int { return cmp.Compare(x.U, y.U) })
	labels = slices.CompactFunc(labels, func(x, y packed.Arc) bool { return x.U == y.U })
	labelOf := func(doc uint64) (uint64, bool) {
		k, ok := slices.BinarySearchFunc(labels, doc, func(a packed.Arc, d uint64) int { return cmp.Compare(a.U, d) })
		if !ok {
			return 0, false
		}
		return labels[k].V, true
	}
	for _, l := range labels {
		members = append(members, packed.Assignment{Doc: l.U, Cluster: l.V, IdenticalTo: packed.NoDoc, Rank: rankOf(l.U)})
	}
	for _, e := range links {
		comp, _ := labelOf(e.A) // a link's documents are always labelled
		clinks = append(clinks, packed.ClusterLink{Comp: comp, A: e.A, B: e.B, Resemblance: e.Resemblance})
	}
	// A representative without links is a member once, however many
	// copies it has.
	slices.SortFunc(copies, func(x, y packed.Edge) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	for i, c := range copies {
		comp, ok := labelOf(c.A)
		if !ok {
			comp = own(c.A)
			if i == 0 || copies[i-1].A != c.A {
				members = append(members, packed.Assignment{Doc: c.A, Cluster: comp, IdenticalTo: packed.NoDoc, Rank: rankOf(c.A)})
			}
		}
		members = append(members, packed.Assignment{Doc: c.B, Cluster: comp, IdenticalTo: c.A, Rank: c.Rank})
	}
	return members, clinks
}

// Summarize turns the members and links of whole components (as Attach
// gives them; any number of components, all of each) into one assignment
// per member and one statistic per cluster. A cluster is named by its
// smallest member, whatever the components' labels, and kept by the
// member of highest Rank, ties to the smallest doc (package keep); its
// links are summed in (A, B) order, so that the mean resemblance does not
// depend on the order links arrived in. Assignments come in doc order, statistics in
// cluster order; the inputs are reordered.
func Summarize(members []packed.Assignment, links []packed.ClusterLink) (assign []packed.Assignment, stats []packed.ClusterStat) {
	slices.SortFunc(members, func(x, y packed.Assignment) int {
		return cmp.Or(cmp.Compare(x.Cluster, y.Cluster), cmp.Compare(x.Doc, y.Doc))
	})
	slices.SortFunc(links, func(x, y packed.ClusterLink) int {
		return cmp.Or(cmp.Compare(x.Comp, y.Comp), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	assign = make([]packed.Assignment, 0, len(members))
	li := 0
	for i := 0; i < len(members); {
		comp := members[i].Cluster
		j := i
		st := packed.ClusterStat{Cluster: members[i].Doc, MinResemblance: math.Inf(1)} // the smallest member
		kept := members[i]
		for ; j < len(members) && members[j].Cluster == comp; j++ {
			m := members[j]
			st.Size++
			if m.IdenticalTo != packed.NoDoc {
				st.Copies++
			}
			if keep.Better(m.Rank, m.Doc, kept.Rank, kept.Doc) {
				kept = m
			}
		}
		st.Kept = kept.Doc
		for _, m := range members[i:j] {
			assign = append(assign, packed.Assignment{Doc: m.Doc, Cluster: st.Cluster, IdenticalTo: m.IdenticalTo, Kept: kept.Doc})
		}
		for li < len(links) && links[li].Comp < comp {
			li++ // cannot happen: a link's component has members
		}
		for ; li < len(links) && links[li].Comp == comp; li++ {
			st.Links++
			st.MinResemblance = min(st.MinResemblance, links[li].Resemblance)
			st.SumResemblance += links[li].Resemblance
		}
		stats = append(stats, st)
		i = j
	}
	slices.SortFunc(assign, func(x, y packed.Assignment) int { return cmp.Compare(x.Doc, y.Doc) })
	slices.SortFunc(stats, func(x, y packed.ClusterStat) int { return cmp.Compare(x.Cluster, y.Cluster) })
	return assign, stats
}

// Counts is how Join placed the documents.
type Counts struct {
	Clustered, Alone, EmptyOrRejected int64
}

// Join fills the cluster columns of docs (sorted by doc ID) from assign
// (sorted by doc): cluster_id, identical_to, kept_doc_id (the document
// that stands for this one: its cluster's kept document, or itself when
// alone), and is_representative, true for a cluster's kept document and
// for every ok or too_short document that is alone.
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
			k := int64(assign[ai].Kept)
			d.KeptDocID = &k
			d.IsRepresentative = k == d.DocID
			n.Clustered++
		case d.Status == tables.StatusOK || d.Status == tables.StatusTooShort:
			d.IsRepresentative = true
			k := d.DocID
			d.KeptDocID = &k
			n.Alone++
		default:
			n.EmptyOrRejected++
		}
	}
	return n
}

// Rows makes the clusters-table rows of stats, in their order; docs (sorted
// by doc ID) supply the kept documents' URLs.
func Rows(stats []packed.ClusterStat, docs []tables.Doc) []tables.Cluster {
	rows := make([]tables.Cluster, 0, len(stats))
	for _, st := range stats {
		c := tables.Cluster{
			ClusterID:           int64(st.Cluster),
			Size:                int64(st.Size),
			IdenticalCopies:     int64(st.Copies),
			RepresentativeDocID: int64(st.Kept),
			LinkedPairs:         int64(st.Links),
		}
		if k, ok := slices.BinarySearchFunc(docs, st.Kept, func(d tables.Doc, id uint64) int { return cmp.Compare(uint64(d.DocID), id) }); ok {
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
