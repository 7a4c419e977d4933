package main

import (
	"strings"
	"testing"
)

// TestUncertainWarning: the summary warns when more than one link in
// twenty is uncertain, and says how many.
func TestUncertainWarning(t *testing.T) {
	for _, c := range []struct {
		uncertain, links int64
		want             string // "" for no warning
	}{
		{0, 100, ""},
		{5, 100, ""},
		{6, 100, "6 of the 100 links (6%)"},
		{47, 106, "47 of the 106 links (44%)"},
		{1, 1, "1 of the 1 links (100%)"},
	} {
		got := uncertainWarning(c.uncertain, c.links)
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) || (got != "" && !strings.HasSuffix(got, "\n")) {
			t.Errorf("uncertainWarning(%d, %d) = %q, want a line with %q", c.uncertain, c.links, got, c.want)
		}
	}
}
