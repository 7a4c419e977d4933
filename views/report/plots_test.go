package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPlotText checks that every string of the plots carries the width
// gonum/plot laid it out with, so that a browser drawing it in another
// face than Liberation Sans fits it to its place instead of pushing it
// into a tick or off the plot, and a font-family that ends in a generic
// face.
func TestPlotText(t *testing.T) {
	var tally pairTally
	tally.all[3], tally.all[30], tally.linked[30] = 5, 7, 7
	size, err := sizePlot([]sizeCount{{2, 100}, {3, 20}, {12, 1}})
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := pairPlot(&tally, thresholds("resemblance:0.5,containment:0.8"))
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`<text ([^>]*)>([^<]*)</text>`)
	width := regexp.MustCompile(`textLength="([0-9.e+-]+)" lengthAdjust="spacingAndGlyphs"`)
	for name, svg := range map[string]string{"sizes": string(size), "pairs": string(pairs)} {
		all := text.FindAllStringSubmatch(svg, -1)
		if len(all) < 10 || len(all) != strings.Count(svg, "<text") {
			t.Errorf("%s: %d text elements found of %d", name, len(all), strings.Count(svg, "<text"))
		}
		for _, m := range all {
			w := width.FindStringSubmatch(m[1])
			if w == nil {
				t.Errorf("%s: %q has no textLength", name, m[2])
				continue
			}
			// Liberation Sans at 10 to 13 points: 2 to 10 points a character.
			n := float64(len([]rune(m[2])))
			if f, err := strconv.ParseFloat(w[1], 64); err != nil || f < 2*n || f > 10*n {
				t.Errorf("%s: %q has textLength %s", name, m[2], w[1])
			}
			if !strings.Contains(m[1], "font-family:'Liberation Sans', Arimo, Arial, Helvetica, sans-serif;") {
				t.Errorf("%s: %q is not in the plots' sans-serif: %s", name, m[2], m[1])
			}
		}
	}
}
