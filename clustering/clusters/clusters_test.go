package clusters

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/clustering/redirects"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

func TestComponentsJoinRows(t *testing.T) {
	u := "https://a.test/"
	// 10 represents copies 20 and 30 and links to 40 at 0.6; 50-60 link at
	// 0.9; 70 is alone; 80 is empty.
	edges := []packed.Edge{
		{A: 40, B: 10, Resemblance: 0.6},
		{A: 10, B: 30, Resemblance: 1, Copy: true},
		{A: 10, B: 20, Resemblance: 1, Copy: true},
		{A: 50, B: 60, Resemblance: 0.9},
	}
	assign, stats, perID := Components(edges, nil, nil, Options{})
	if got := fmt.Sprint(assign); got != fmt.Sprint([]packed.Assignment{
		{Doc: 10, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 10, ResToKept: 1, Target: packed.NoDoc}, {Doc: 20, Cluster: 10, IdenticalTo: 10, Kept: 10, ResToKept: 1, Target: packed.NoDoc},
		{Doc: 30, Cluster: 10, IdenticalTo: 10, Kept: 10, ResToKept: 1, Target: packed.NoDoc}, {Doc: 40, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 10, ResToKept: 1, Target: packed.NoDoc},
		{Doc: 50, Cluster: 50, IdenticalTo: packed.NoDoc, Kept: 50, ResToKept: 1, Target: packed.NoDoc}, {Doc: 60, Cluster: 50, IdenticalTo: packed.NoDoc, Kept: 50, ResToKept: 1, Target: packed.NoDoc},
	}) {
		t.Errorf("assignments %v", got)
	}
	if len(stats) != 2 || stats[0] != (packed.ClusterStat{Cluster: 10, Size: 4, Copies: 2, Links: 1, MinResemblance: 0.6, SumResemblance: 0.6, Kept: 10, MinToKept: 1, SumToKept: 3}) ||
		stats[1].Cluster != 50 || stats[1].Size != 2 || stats[1].Links != 1 {
		t.Errorf("stats %+v", stats)
	}
	if perID <= 0 {
		t.Errorf("BytesPerID %v", perID)
	}
	var docs []tables.Doc
	for _, id := range []int64{10, 20, 30, 40, 50, 60, 70, 80} {
		status := tables.StatusOK
		if id == 80 {
			status = tables.StatusEmpty
		}
		url := fmt.Sprint(u, id)
		docs = append(docs, tables.Doc{DocID: id, Status: status, URL: &url})
	}
	n := Join(docs, assign)
	if n != (Counts{Clustered: 6, Alone: 1, EmptyOrRejected: 1}) {
		t.Errorf("counts %+v", n)
	}
	for _, d := range docs {
		wantRep := d.DocID == 10 || d.DocID == 50 || d.DocID == 70
		if d.IsRepresentative != wantRep {
			t.Errorf("doc %d: is_representative %v", d.DocID, d.IsRepresentative)
		}
	}
	if docs[1].IdenticalTo == nil || *docs[1].IdenticalTo != 10 || docs[6].ClusterID != nil {
		t.Errorf("join: %+v %+v", docs[1], docs[6])
	}
	rows := Rows(stats, docs)
	if len(rows) != 2 || *rows[0].RepresentativeURL != u+"10" || rows[0].IdenticalCopies != 2 || *rows[1].MeanResemblance != 0.9 {
		t.Errorf("rows %+v", rows)
	}
	// A cluster of identical copies only has no resemblance figures.
	_, only, _ := Components([]packed.Edge{{A: 1, B: 2, Resemblance: 1, Copy: true}}, nil, nil, Options{})
	if r := Rows(only, nil); r[0].MinResemblance != nil || r[0].RepresentativeURL != nil {
		t.Errorf("copies-only cluster row %+v", r[0])
	}
}

// TestJoinRedirects: a redirect that joined a cluster is in it by
// redirect, with its target and hops and no resemblance to the kept
// document; one whose chain ended without a document is alone with the
// reason, and no document to keep; the clusters row counts the redirects that joined it, and a
// cluster of a document and its redirects alone compares no members.
func TestJoinRedirects(t *testing.T) {
	nan := math.NaN()
	docs := []tables.Doc{{DocID: 10, Status: tables.StatusOK}, {DocID: 11, Status: tables.StatusRedirect}, {DocID: 12, Status: tables.StatusOK},
		{DocID: 13, Status: tables.StatusRedirect}, {DocID: 14, Status: tables.StatusOK}, {DocID: 15, Status: tables.StatusRedirect}}
	assign := []packed.Assignment{
		{Doc: 10, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 12, ResToKept: 0.8, Target: packed.NoDoc},
		{Doc: 11, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 12, ResToKept: nan, Target: 10, Hops: 2, Outcome: redirects.Joined},
		{Doc: 12, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 12, ResToKept: 1, Target: packed.NoDoc},
		{Doc: 13, Cluster: packed.NoDoc, IdenticalTo: packed.NoDoc, Kept: packed.NoDoc, ResToKept: nan, Target: packed.NoDoc, Hops: 1, Outcome: redirects.Cycle},
	}
	if n := Join(docs, assign); n != (Counts{Clustered: 3, Alone: 3}) {
		t.Errorf("counts %+v", n)
	}
	if d := docs[1]; d.ClusterID == nil || *d.ClusterID != 10 || d.JoinedBy == nil || *d.JoinedBy != tables.JoinedByRedirect || d.ResemblanceToKept != nil ||
		d.RedirectTarget == nil || *d.RedirectTarget != 10 || d.RedirectHops == nil || *d.RedirectHops != 2 || d.IsRepresentative {
		t.Errorf("joined redirect %+v", d)
	}
	if d := docs[3]; d.ClusterID != nil || d.Reason == nil || !strings.Contains(*d.Reason, "cycle") || d.RedirectTarget != nil || d.IsRepresentative || d.KeptDocID != nil {
		t.Errorf("redirect in a cycle %+v", d)
	}
	if d := docs[2]; d.JoinedBy == nil || *d.JoinedBy != tables.JoinedByContent || !d.IsRepresentative {
		t.Errorf("kept document %+v", d)
	}
	rows := Rows([]packed.ClusterStat{
		{Cluster: 10, Size: 2, Links: 1, MinResemblance: 0.8, SumResemblance: 0.8, Kept: 12, MinToKept: 0.8, SumToKept: 0.8},
		{Cluster: 10, Size: 1, Redirects: 1, Extra: true},
		{Cluster: 20, Size: 3, Redirects: 2, Kept: 20, MinResemblance: math.Inf(1), MinToKept: 1},
	}, docs)
	if len(rows) != 2 || rows[0].Size != 3 || rows[0].RedirectMembers != 1 || rows[0].RepresentativeDocID != 12 || rows[0].MeanResemblanceToKept != 0.8 ||
		rows[1].Size != 3 || rows[1].RedirectMembers != 2 || rows[1].MinResemblanceToKept != 1 || rows[1].MeanResemblanceToKept != 1 || rows[1].MinResemblance != nil {
		t.Errorf("rows %+v", rows)
	}
}

// TestSummarizeKeeps: the kept document is the member of highest rank,
// copies included, ties to the smallest doc ID; the cluster ID stays the
// smallest doc; Join and Rows follow the kept document.
func TestSummarizeKeeps(t *testing.T) {
	labels := []packed.Arc{{U: 10, V: 7}, {U: 40, V: 7}, {U: 50, V: 9}, {U: 60, V: 9}}
	links := []packed.Edge{{A: 10, B: 40, Resemblance: 0.6}, {A: 50, B: 60, Resemblance: 0.9}}
	// Two rules: the first ties 10, 30 and 40 (20 is below), the second
	// puts the copy 30 above them; 50 and 60 tie on both.
	copies := []packed.Edge{{A: 10, B: 20, Resemblance: 1, Rank: []float64{1, 9}, Copy: true}, {A: 10, B: 30, Resemblance: 1, Rank: []float64{2, 3}, Copy: true}}
	rank := func(doc uint64, r ...float64) packed.DocRank { return packed.DocRank{Doc: doc, Rank: r} }
	ranks := []packed.DocRank{rank(10, 2, 1), rank(40, 2, 2.5), rank(50, 4, 0), rank(60, 4, 0)} // copies' ranks come with them
	members, clinks := Attach(labels, links, copies, ranks, nil, func(d uint64) uint64 { return d })
	assign, stats := Summarize(members, clinks, Options{})
	kept := map[uint64]uint64{}
	for _, a := range assign {
		kept[a.Doc] = a.Kept
	}
	for doc, want := range map[uint64]uint64{10: 30, 20: 30, 30: 30, 40: 30, 50: 50, 60: 50} {
		if kept[doc] != want {
			t.Errorf("doc %d: kept %d, want %d", doc, kept[doc], want)
		}
	}
	if stats[0].Cluster != 10 || stats[0].Kept != 30 || stats[1].Cluster != 50 || stats[1].Kept != 50 {
		t.Errorf("stats %+v", stats)
	}
	var docs []tables.Doc
	for _, id := range []int64{10, 20, 30, 40, 50, 60, 70} {
		url := fmt.Sprint("https://k.test/", id)
		docs = append(docs, tables.Doc{DocID: id, Status: tables.StatusOK, URL: &url})
	}
	Join(docs, assign)
	for _, d := range docs {
		wantKept := map[int64]int64{10: 30, 20: 30, 30: 30, 40: 30, 50: 50, 60: 50, 70: 70}[d.DocID]
		if d.KeptDocID == nil || *d.KeptDocID != wantKept || d.IsRepresentative != (wantKept == d.DocID) {
			t.Errorf("doc %d: kept_doc_id %v, is_representative %v; want %d", d.DocID, d.KeptDocID, d.IsRepresentative, wantKept)
		}
	}
	rows := Rows(stats, docs)
	if rows[0].ClusterID != 10 || rows[0].RepresentativeDocID != 30 || *rows[0].RepresentativeURL != "https://k.test/30" {
		t.Errorf("clusters row %+v", rows[0])
	}
}

// TestCentered: a chain a-b-c whose ends do not resemble each other is one
// component, but centred on the kept document it splits, and the split-off
// documents are clustered again among themselves.
func TestCentered(t *testing.T) {
	// Sketches: 1 shares half its values with 2, 2 half with 3, 1 and 3
	// nothing; 4 is a copy of 3; 5 shares 3's sketch; 6 is alone in values.
	sk := func(vs ...uint64) []uint64 { return vs }
	sketches := []packed.Sketch{
		{Doc: 1, Values: sk(1, 2, 3, 4)}, {Doc: 2, Values: sk(1, 2, 3, 4, 5, 6)}, {Doc: 3, Values: sk(4, 5, 6, 7, 8)},
		{Doc: 5, Values: sk(4, 5, 6, 7, 8)}, {Doc: 6, Values: sk(9)},
	}
	edges := []packed.Edge{{A: 1, B: 2, Resemblance: 0.67}, {A: 2, B: 3, Resemblance: 0.6}, {A: 3, B: 5, Resemblance: 1},
		{A: 5, B: 6, Resemblance: 0.5}, {A: 3, B: 4, Resemblance: 1, Copy: true}}
	est := func(a, b []uint64) policy.Estimates {
		n := 0
		for _, x := range a {
			if slices.Contains(b, x) {
				n++
			}
		}
		return policy.Estimates{Shared: n, Resemblance: float64(n) / float64(len(a)+len(b)-n)}
	}
	pol := policy.Policy{Resemblance: 0.5}
	comp, compStats, _ := Components(edges, sketches, nil, Options{Estimate: est})
	if len(compStats) != 1 || compStats[0].Size != 6 {
		t.Fatalf("components: %+v", compStats)
	}
	assign, stats, _ := Components(edges, sketches, nil, Options{Estimate: est, Centered: &pol})
	// Kept 1 (smallest): 2 resembles it (4/6), 3, 4, 5, 6 do not. Among
	// those: kept 3; 4 (its copy) and 5 resemble it, 6 does not: alone.
	got := map[uint64]uint64{}
	for _, a := range assign {
		got[a.Doc] = a.Cluster
		if e := est(sketchFor(sketches, a.Doc), sketchFor(sketches, a.Kept)); a.Doc != a.Kept && !pol.Links(e) {
			t.Errorf("doc %d does not meet the policy against its kept document %d", a.Doc, a.Kept)
		}
	}
	want := map[uint64]uint64{1: 1, 2: 1, 3: 3, 4: 3, 5: 3}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(stats) != 2 {
		t.Errorf("centered clusters %v (stats %+v), want %v", got, stats, want)
	}
	if stats[0].Links != 1 || stats[1].Links != 1 || stats[1].Copies != 1 {
		t.Errorf("centered stats %+v: links are counted inside each cluster only", stats)
	}
	if len(comp) != 6 {
		t.Errorf("components mode clustered %d docs, want 6", len(comp))
	}
	for _, a := range comp {
		if a.Doc == 3 && a.ResToKept != est(sketchFor(sketches, 3), sketchFor(sketches, 1)).Resemblance {
			t.Errorf("resemblance_to_kept of 3: %g", a.ResToKept)
		}
	}
}

func sketchFor(sketches []packed.Sketch, doc uint64) []uint64 {
	if doc == 4 {
		doc = 3 // a copy has its representative's sketch
	}
	for _, s := range sketches {
		if s.Doc == doc {
			return s.Values
		}
	}
	return nil
}

// TestCopyOfKeptWithEmptySketch: a short page's sketch can be empty (no
// shingle fingerprint is 0 mod m). Its identical copies still resemble it
// wholly: resemblance_to_kept 1, and a centred cluster keeps them. (The
// estimate of two empty sketches is 0, which once split such copies off.)
func TestCopyOfKeptWithEmptySketch(t *testing.T) {
	est := jaccard
	// 1 (empty sketch) is copied by 2 and 3; 4 links to 5.
	sketches := []packed.Sketch{{Doc: 1}, {Doc: 4, Values: []uint64{7, 8}}, {Doc: 5, Values: []uint64{7, 8}}}
	edges := []packed.Edge{{A: 1, B: 2, Resemblance: 1, Copy: true}, {A: 1, B: 3, Resemblance: 1, Copy: true}, {A: 4, B: 5, Resemblance: 1}}
	ranks := []packed.DocRank{{Doc: 1, Rank: []float64{1}}, {Doc: 4, Rank: []float64{1}}, {Doc: 5, Rank: []float64{1}}}
	pol := policy.Default
	for _, opt := range []Options{{Estimate: est}, {Estimate: est, Centered: &pol}} {
		assign, stats, _ := Components(edges, sketches, ranks, opt)
		if len(assign) != 5 || len(stats) != 2 || stats[0].Size != 3 {
			t.Fatalf("centered %v: %d assignments, stats %+v; want clusters {1,2,3} and {4,5}", opt.Centered != nil, len(assign), stats)
		}
		for _, a := range assign {
			if a.ResToKept != 1 {
				t.Errorf("centered %v: doc %d (kept %d): resemblance to kept %g, want 1", opt.Centered != nil, a.Doc, a.Kept, a.ResToKept)
			}
		}
	}
}
