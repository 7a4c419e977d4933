package clusters

import (
	"fmt"
	"math"
	"testing"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/packed"
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
	assign, stats, perID := Components(edges)
	if got := fmt.Sprint(assign); got != fmt.Sprint([]packed.Assignment{
		{Doc: 10, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 10}, {Doc: 20, Cluster: 10, IdenticalTo: 10, Kept: 10},
		{Doc: 30, Cluster: 10, IdenticalTo: 10, Kept: 10}, {Doc: 40, Cluster: 10, IdenticalTo: packed.NoDoc, Kept: 10},
		{Doc: 50, Cluster: 50, IdenticalTo: packed.NoDoc, Kept: 50}, {Doc: 60, Cluster: 50, IdenticalTo: packed.NoDoc, Kept: 50},
	}) {
		t.Errorf("assignments %v", got)
	}
	if len(stats) != 2 || stats[0] != (packed.ClusterStat{Cluster: 10, Size: 4, Copies: 2, Links: 1, MinResemblance: 0.6, SumResemblance: 0.6, Kept: 10}) ||
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
	_, only, _ := Components([]packed.Edge{{A: 1, B: 2, Resemblance: 1, Copy: true}})
	if r := Rows(only, nil); r[0].MinResemblance != nil || r[0].RepresentativeURL != nil {
		t.Errorf("copies-only cluster row %+v", r[0])
	}
}

// TestSummarizeKeeps: the kept document is the member of highest rank,
// copies included, ties to the smallest doc ID; the cluster ID stays the
// smallest doc; Join and Rows follow the kept document.
func TestSummarizeKeeps(t *testing.T) {
	labels := []packed.Arc{{U: 10, V: 7}, {U: 40, V: 7}, {U: 50, V: 9}, {U: 60, V: 9}}
	links := []packed.Edge{{A: 10, B: 40, Resemblance: 0.6}, {A: 50, B: 60, Resemblance: 0.9}}
	copies := []packed.Edge{{A: 10, B: 20, Resemblance: 1, Rank: 2, Copy: true}, {A: 10, B: 30, Resemblance: 1, Rank: 3, Copy: true}}
	rank := func(doc uint64, r float64) packed.Arc { return packed.Arc{U: doc, V: math.Float64bits(r)} }
	// 30, a copy, ranks highest in the first cluster; 50 and 60 tie.
	ranks := []packed.Arc{rank(10, 1), rank(40, 2.5), rank(50, 4), rank(60, 4)} // copies' ranks come with them
	members, clinks := Attach(labels, links, copies, ranks, func(d uint64) uint64 { return d })
	assign, stats := Summarize(members, clinks)
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
