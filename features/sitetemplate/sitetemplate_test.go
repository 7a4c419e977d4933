package sitetemplate

import (
	"slices"
	"testing"
)

func TestSite(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"https://Docs.Python.org:443/3/library/os.html", "docs.python.org"},
		{"http://user:pw@example.com/a?b#c", "example.com"},
		{"www.example.com/page", "www.example.com"},
		{"//cdn.example.org/x", "cdn.example.org"},
		{"https://example.com./", "example.com"},
		{"http://[::1]:8080/", "::1"},
		{"", ""},
		{"   ", ""},
		{"not a url at all", ""},
	} {
		if got := Site(c.url); got != c.want {
			t.Errorf("Site(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

func TestIsTemplate(t *testing.T) {
	s := Spec{Share: 0.5, MinPages: 20}
	for _, c := range []struct {
		docs, pages int
		want        bool
	}{
		{11, 20, true},
		{10, 20, false}, // exactly half is not more than half
		{19, 19, false}, // site too small
		{501, 1000, true},
		{500, 1000, false},
	} {
		if got := s.IsTemplate(c.docs, c.pages); got != c.want {
			t.Errorf("IsTemplate(%d, %d) = %v, want %v", c.docs, c.pages, got, c.want)
		}
		// The counting step's filter must never drop a template.
		if s.IsTemplate(c.docs, c.pages) && !s.MayBeTemplate(c.docs) {
			t.Errorf("MayBeTemplate(%d) is false for a template of %d pages", c.docs, c.pages)
		}
	}
	if (Spec{}).IsTemplate(100, 100) || (Spec{}).MayBeTemplate(100) {
		t.Error("the zero Spec finds templates")
	}
	if s.MayBeTemplate(10) {
		t.Error("10 pages can never be more than half of a site of at least 20")
	}
}

func TestValidate(t *testing.T) {
	for _, s := range []Spec{{Share: 1, MinPages: 20}, {Share: -0.1, MinPages: 20}, {Share: 0.5, MinPages: 1}} {
		if s.Validate() == nil {
			t.Errorf("%+v validates", s)
		}
	}
	if err := (Spec{Share: 0.5, MinPages: 2}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestFind(t *testing.T) {
	s := Spec{Share: 0.5, MinPages: 4}
	// Site a: 4 pages, value 1 in all, value 2 in half, value 3 in three.
	// Site b: 3 pages, too small. No site: ignored.
	pages := []Page{
		{"a", []uint64{1, 2, 3, 10}},
		{"a", []uint64{1, 2, 3, 11}},
		{"a", []uint64{1, 3, 12}},
		{"a", []uint64{1, 13}},
		{"b", []uint64{1, 2}},
		{"b", []uint64{1, 2}},
		{"b", []uint64{1, 2}},
		{"", []uint64{1}},
	}
	got := s.Find(pages)
	if len(got) != 1 || !slices.Equal(got["a"], []uint64{1, 3}) {
		t.Errorf("Find = %v, want map[a:[1 3]]", got)
	}
}

func TestDrop(t *testing.T) {
	tmpl := map[uint64]bool{3: true, 7: true}
	vs, n := Drop([]uint64{1, 3, 5, 7, 9}, func(v uint64) bool { return tmpl[v] })
	if !slices.Equal(vs, []uint64{1, 5, 9}) || n != 2 {
		t.Errorf("Drop = %v, %d", vs, n)
	}
}
