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

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/clustering/redirects"
	"github.com/neardup/neardup/clustering/unionfind"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

// Estimator estimates a pair of documents from their two sketches (the
// pipeline's: transforms.EstimateSketches).
type Estimator func(a, b []uint64) policy.Estimates

// Options is how Summarize makes clusters: Estimate compares each member
// with its cluster's kept document (nil: every member counts as fully
// alike, for tests of the rest); Centered, when set, is the policy every
// member must meet against it (--clusters=centered).
type Options struct {
	Estimate Estimator
	Centered *policy.Policy
}

// Components runs union-find over the edges. It returns one assignment per
// document in a cluster, in doc ID order, the statistics of every cluster
// in cluster ID order, and the union-find's memory per document. It is
// the single-process form of what the pipeline spreads over workers: the
// links' components, then Attach and Summarize; sketches holds the
// representatives' sketches (<doc, values> as packed.Sketch) and ranks
// their ranks (see Attach).
func Components(edges []packed.Edge, sketches []packed.Sketch, ranks []packed.DocRank, opt Options) (assign []packed.Assignment, stats []packed.ClusterStat, bytesPerID float64) {
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
	members, clinks := Attach(labels, links, copies, ranks, sketches, func(doc uint64) uint64 { return doc })
	assign, stats = Summarize(members, clinks, opt)
	return assign, stats, uf.BytesPerID()
}

// Attach labels what a cluster summary needs with the component of each
// document: labels holds, for documents in links, <doc, label> (U the
// doc, V any name of its component that no other component shares); links
// and copies are edges whose A is labelled or, for a copy, is a
// representative (whose own label is own(A) when it has no links). It
// returns the members, one per document (Comp the component's label,
// IdenticalTo set for copies, a representative's sketch from sketches),
// and the links with their component's label. ranks holds the ranks of
// documents ranked by --keep (package keep); a member without one ranks 0
// on every rule; a copy's rank comes with it (Edge.Rank),
// since it lives in another doc partition. The pipeline calls it on each
// doc partition, where a document's label, links from it, copies of it,
// its rank and its sketch meet; the inputs are reordered.
func Attach(labels []packed.Arc, links, copies []packed.Edge, ranks []packed.DocRank, sketches []packed.Sketch, own func(doc uint64) uint64) (members []packed.Member, clinks []packed.ClusterLink) {
	byU := func(a packed.Arc, d uint64) int { return cmp.Compare(a.U, d) }
	slices.SortFunc(ranks, func(x, y packed.DocRank) int { return cmp.Compare(x.Doc, y.Doc) })
	rankOf := func(doc uint64) []float64 {
		if k, ok := slices.BinarySearchFunc(ranks, doc, func(r packed.DocRank, d uint64) int { return cmp.Compare(r.Doc, d) }); ok {
			return ranks[k].Rank
		}
		return nil
	}
	slices.SortFunc(sketches, func(x, y packed.Sketch) int { return cmp.Compare(x.Doc, y.Doc) })
	sketchOf := func(doc uint64) []uint64 {
		if k, ok := slices.BinarySearchFunc(sketches, doc, func(s packed.Sketch, d uint64) int { return cmp.Compare(s.Doc, d) }); ok {
			return sketches[k].Values
		}
		return nil
	}
	slices.SortFunc(labels, func(x, y packed.Arc) int { return cmp.Compare(x.U, y.U) })
	labels = slices.CompactFunc(labels, func(x, y packed.Arc) bool { return x.U == y.U })
	labelOf := func(doc uint64) (uint64, bool) {
		k, ok := slices.BinarySearchFunc(labels, doc, byU)
		if !ok {
			return 0, false
		}
		return labels[k].V, true
	}
	for _, l := range labels {
		members = append(members, packed.Member{Doc: l.U, Comp: l.V, IdenticalTo: packed.NoDoc, Rank: rankOf(l.U), Values: sketchOf(l.U)})
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
				members = append(members, packed.Member{Doc: c.A, Comp: comp, IdenticalTo: packed.NoDoc, Rank: rankOf(c.A), Values: sketchOf(c.A)})
			}
		}
		members = append(members, packed.Member{Doc: c.B, Comp: comp, IdenticalTo: c.A, Rank: c.Rank})
	}
	return members, clinks
}

// Summarize turns the members and links of whole components (as Attach
// gives them; any number of components, all of each) into one assignment
// per member and one statistic per cluster. Each cluster keeps its member
// of highest Rank, ties to the smallest doc (package keep), and every
// member is compared with the kept one by opt.Estimate (a copy through its
// representative's sketch). With opt.Centered, the clusters are centred
// on their kept documents instead (see centre): each member is in the
// cluster of a document it is linked to and meets that policy against,
// or of its identical copies; a document left alone is in no cluster. A
// cluster is named by its smallest member; its links
// (those between its members) are summed in (A, B) order and its
// resemblances to the kept document in doc order, so the floats do not
// depend on the order anything arrived in. Assignments come in doc order,
// statistics in cluster order; the inputs are reordered.
func Summarize(members []packed.Member, links []packed.ClusterLink, opt Options) (assign []packed.Assignment, stats []packed.ClusterStat) {
	slices.SortFunc(members, func(x, y packed.Member) int {
		return cmp.Or(cmp.Compare(x.Comp, y.Comp), cmp.Compare(x.Doc, y.Doc))
	})
	slices.SortFunc(links, func(x, y packed.ClusterLink) int {
		return cmp.Or(cmp.Compare(x.Comp, y.Comp), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	assign = make([]packed.Assignment, 0, len(members))
	li := 0
	for i := 0; i < len(members); {
		comp := members[i].Comp
		j := i
		for j < len(members) && members[j].Comp == comp {
			j++
		}
		for li < len(links) && links[li].Comp < comp {
			li++ // cannot happen: a link's component has members
		}
		lj := li
		for lj < len(links) && links[lj].Comp == comp {
			lj++
		}
		assign, stats = summarizeComponent(assign, stats, members[i:j], links[li:lj], opt)
		i, li = j, lj
	}
	slices.SortFunc(assign, func(x, y packed.Assignment) int { return cmp.Compare(x.Doc, y.Doc) })
	slices.SortFunc(stats, func(x, y packed.ClusterStat) int { return cmp.Compare(x.Cluster, y.Cluster) })
	return assign, stats
}

// summarizeComponent is Summarize for one component: members sorted by
// doc, links by (A, B).
func summarizeComponent(assign []packed.Assignment, stats []packed.ClusterStat, members []packed.Member, links []packed.ClusterLink, opt Options) ([]packed.Assignment, []packed.ClusterStat) {
	index := make(map[uint64]int, len(members)) // doc -> position in members
	for k, m := range members {
		index[m.Doc] = k
	}
	var clusters [][]int // positions in members, one slice per cluster
	var kepts []int      // each cluster's kept document
	res := make([]float64, len(members))
	if opt.Centered != nil && opt.Estimate != nil {
		clusters, kepts = centre(members, links, index, res, opt)
	} else {
		clusters, kepts = whole(members, res, opt.Estimate, index)
	}
	group := make([]int, len(members))                // the cluster (index in clusters) each member ends in
	sts := make([]*packed.ClusterStat, len(clusters)) // nil for a document left alone
	for c, g := range clusters {
		for _, k := range g {
			group[k] = c
		}
		if len(g) < 2 {
			continue // a document left alone is in no cluster
		}
		slices.Sort(g) // doc order: members are sorted by doc
		kept := members[kepts[c]]
		st := &packed.ClusterStat{Cluster: members[g[0]].Doc, MinResemblance: math.Inf(1), Kept: kept.Doc, MinToKept: math.Inf(1)}
		for _, k := range g {
			m := members[k]
			st.Size++
			if m.IdenticalTo != packed.NoDoc {
				st.Copies++
			}
			if k != kepts[c] {
				st.MinToKept = min(st.MinToKept, res[k])
				st.SumToKept += res[k]
			}
			assign = append(assign, packed.Assignment{Doc: m.Doc, Cluster: st.Cluster, IdenticalTo: m.IdenticalTo, Kept: kept.Doc, ResToKept: res[k], Target: packed.NoDoc})
		}
		sts[c] = st
	}
	// One pass over the links, in (A, B) order: each cluster sums its own
	// links in that order.
	for _, l := range links {
		if a, b := group[index[l.A]], group[index[l.B]]; a == b && sts[a] != nil {
			sts[a].Links++
			sts[a].MinResemblance = min(sts[a].MinResemblance, l.Resemblance)
			sts[a].SumResemblance += l.Resemblance
		}
	}
	for _, st := range sts {
		if st != nil {
			stats = append(stats, *st)
		}
	}
	return assign, stats
}

// Counts is how Join placed the documents.
type Counts struct {
	Clustered, Alone, EmptyOrRejected int64
}

// Join fills the cluster columns of docs (sorted by doc ID) from assign
// (sorted by doc): cluster_id, identical_to, kept_doc_id (the document
// that stands for this one: its cluster's kept document, or itself when
// alone), resemblance_to_kept (1 for the kept and the alone; none for a
// redirect, whose body is not compared), joined_by, is_representative,
// true for a cluster's kept document and for every ok or too_short
// document that is alone, and the redirect columns of a redirect (its
// target and hops, or, when its chain ended without a document, the
// reason, from an assignment with Cluster NoDoc). A redirect alone is
// counted alone but stands for nothing: its body is a crawler's stub, not
// a document to keep (WHERE is_representative is the deduplicated crawl),
// so it has no kept_doc_id.
func Join(docs []tables.Doc, assign []packed.Assignment) Counts {
	var n Counts
	ai := 0
	for i := range docs {
		d := &docs[i]
		id := uint64(d.DocID)
		for ai < len(assign) && assign[ai].Doc < id {
			ai++ // an assignment for a doc not given cannot happen; skip defensively
		}
		var a *packed.Assignment
		if ai < len(assign) && assign[ai].Doc == id {
			a = &assign[ai]
		}
		if a != nil && a.Hops > 0 {
			hops := int32(a.Hops)
			d.RedirectHops = &hops
			if a.Outcome == redirects.Joined {
				// The chain's end: the cluster's member it joins by.
				t := int64(a.Target)
				d.RedirectTarget = &t
			} else {
				d.Reason = ptr(redirects.Reason(a.Outcome, int(a.Hops)))
			}
		}
		switch {
		case a != nil && a.Cluster != packed.NoDoc:
			c := int64(a.Cluster)
			d.ClusterID = &c
			how := tables.JoinedByContent
			switch {
			case a.IdenticalTo != packed.NoDoc:
				r := int64(a.IdenticalTo)
				d.IdenticalTo, how = &r, tables.JoinedByIdentical
			case a.Outcome == redirects.Joined:
				how = tables.JoinedByRedirect
			}
			d.JoinedBy = &how
			k := int64(a.Kept)
			d.KeptDocID = &k
			if r := a.ResToKept; !math.IsNaN(r) {
				d.ResemblanceToKept = &r
			}
			d.IsRepresentative = k == d.DocID
			n.Clustered++
		case d.Status == tables.StatusOK || d.Status == tables.StatusTooShort:
			d.IsRepresentative = true
			k, r := d.DocID, 1.0
			d.KeptDocID, d.ResemblanceToKept = &k, &r
			n.Alone++
		case d.Status == tables.StatusRedirect:
			n.Alone++
		default:
			n.EmptyOrRejected++
		}
	}
	return n
}

func ptr[T any](v T) *T { return &v }

// Rows makes the clusters-table rows of stats, in their order (of cluster
// ID; a cluster's Extra stats, the redirects that joined it, are added to
// its own); docs (sorted by doc ID) supply the kept documents' URLs.
func Rows(stats []packed.ClusterStat, docs []tables.Doc) []tables.Cluster {
	rows := make([]tables.Cluster, 0, len(stats))
	for i := 0; i < len(stats); {
		st := stats[i]
		var size, redirected uint32
		j := i
		for ; j < len(stats) && stats[j].Cluster == st.Cluster; j++ {
			if !stats[j].Extra {
				st = stats[j]
			}
			size += stats[j].Size
			redirected += stats[j].Redirects
		}
		i = j
		c := tables.Cluster{
			ClusterID:           int64(st.Cluster),
			Size:                int64(size),
			IdenticalCopies:     int64(st.Copies),
			RepresentativeDocID: int64(st.Kept),
			LinkedPairs:         int64(st.Links),
			RedirectMembers:     int64(redirected),
			// A cluster of a document and the redirects to it alone has
			// no other member to compare: 1, as the redirects' pages
			// are the same page (Zhu et al.).
			MinResemblanceToKept:  1,
			MeanResemblanceToKept: 1,
		}
		if others := size - redirected - 1; others > 0 {
			c.MinResemblanceToKept, c.MeanResemblanceToKept = st.MinToKept, st.SumToKept/float64(others)
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

// EstimateSketches is Estimate for two documents' whole sketches (sorted
// sets, as Select makes them): the shared values, the resemblance and,
// for MOD_m, the containments of a in b and of b in a.
func EstimateSketches(a, b []uint64, spec sketch.Spec) policy.Estimates {
	shared := sketch.IntersectCount(a, b)
	e := policy.Estimates{Shared: shared}
	switch spec.Kind {
	case sketch.MinHash:
		e.Resemblance = sketch.MinHashResemblance(shared, spec.N)
	case sketch.Min:
		e.Resemblance = sketch.MinResemblance(a, b, spec.N)
	default:
		e.Resemblance = sketch.ModResemblance(shared, len(a), len(b))
		aInB, bInA := sketch.Containment(shared, len(a)), sketch.Containment(shared, len(b))
		e.AInB, e.BInA = &aInB, &bInA
	}
	return e
}
