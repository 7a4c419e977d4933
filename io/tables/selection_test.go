package tables

import (
	"reflect"
	"testing"
)

func TestParseSelection(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Selection
		err  bool
	}{
		{"all", nil, false},
		{"docs", Selection{"docs"}, false},
		{"clusters, docs,docs", Selection{"docs", "clusters"}, false}, // Tables' order, once each
		{"docs,clusters,pairs,contained,sketches,postings,urls,lost,members,largest", nil, false},
		{"docs,clusters,pairs,contained,sketches,postings,urls,lost", Selection{"docs", "clusters", "pairs", "contained", "sketches", "postings", "urls", "lost"}, false},
		{"doc", nil, true},
		{"", nil, true},
		{"docs,", nil, true},
	} {
		got, err := ParseSelection(c.in)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSelection(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestSelection(t *testing.T) {
	var all Selection
	if !all.Has("lost") || all.String() != "all" || all.Missing(IndexNeeds) != nil {
		t.Errorf("nil selection: Has(lost) %v, String %q, Missing %v", all.Has("lost"), all, all.Missing(IndexNeeds))
	}
	s := Selection{"docs", "clusters"}
	if s.Has("pairs") || !s.Has("clusters") || s.String() != "docs,clusters" {
		t.Errorf("%v: Has(pairs) %v, Has(clusters) %v", s, s.Has("pairs"), s.Has("clusters"))
	}
	if !s.Any("lost", "docs") || s.Any("urls", "lost") {
		t.Errorf("%v: Any(lost, docs) %v, Any(urls, lost) %v", s, s.Any("lost", "docs"), s.Any("urls", "lost"))
	}
	if got := s.Missing(QueryNeeds); !reflect.DeepEqual(got, []string{"sketches"}) {
		t.Errorf("%v.Missing(QueryNeeds) = %v, want [sketches]", s, got)
	}
}
