package clusters

import (
	"fmt"
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
		{Doc: 10, Cluster: 10, IdenticalTo: packed.NoDoc}, {Doc: 20, Cluster: 10, IdenticalTo: 10},
		{Doc: 30, Cluster: 10, IdenticalTo: 10}, {Doc: 40, Cluster: 10, IdenticalTo: packed.NoDoc},
		{Doc: 50, Cluster: 50, IdenticalTo: packed.NoDoc}, {Doc: 60, Cluster: 50, IdenticalTo: packed.NoDoc},
	}) {
		t.Errorf("assignments %v", got)
	}
	if len(stats) != 2 || stats[0] != (packed.ClusterStat{Cluster: 10, Size: 4, Copies: 2, Links: 1, MinResemblance: 0.6, SumResemblance: 0.6}) ||
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
