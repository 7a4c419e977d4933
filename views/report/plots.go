package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Colours of the plots, shared with the page's style sheet.
var (
	ink       = color.RGBA{0x1f, 0x29, 0x37, 0xff}
	accent    = color.RGBA{0x25, 0x63, 0xeb, 0xff}
	pale      = color.RGBA{0xcb, 0xd5, 0xe1, 0xff}
	markColor = []color.Color{
		color.RGBA{0xdc, 0x26, 0x26, 0xff},
		color.RGBA{0xd9, 0x77, 0x06, 0xff},
	}
)

// sizePlot draws the number of clusters of each size, log-log: cluster
// sizes of web crawls fall off roughly as a power law, a straight line
// there, and a bend or a far outlier (a site's template, a mirror) shows
// at a glance.
func sizePlot(dist []sizeCount) (template.HTML, error) {
	p := newPlot("Cluster sizes", "documents in the cluster", "clusters")
	if len(dist) == 0 {
		p.Title.Text += " (no clusters)"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 1, 10, 1, 10
	} else {
		xys := make(plotter.XYs, len(dist))
		var maxSize, maxCount float64
		for i, d := range dist {
			xys[i].X, xys[i].Y = float64(d.Size), float64(d.Clusters)
			maxSize, maxCount = max(maxSize, xys[i].X), max(maxCount, xys[i].Y)
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: accent, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(s)
		// At least a decade on each axis, so that there are labelled
		// ticks, and room above the largest values.
		p.X.Min, p.X.Max = 1, max(10, maxSize*1.3)
		p.Y.Min, p.Y.Max = 0.8, max(10, maxCount*1.3)
	}
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	return svg(p, "Cluster sizes, log-log")
}

// pairPlot draws the histogram of the pairs' resemblances, the linked
// pairs in front of all of them, with each of the policy's thresholds as
// a vertical line. A containment threshold is on another measure than
// the axis; it is drawn all the same, dashed, so that both of a policy's
// numbers are in view.
func pairPlot(t *pairTally, marks []threshold) (template.HTML, error) {
	p := newPlot("Resemblance of the pairs table's pairs", "estimated resemblance", "pairs")
	all, allMax := histogram(t.all[:], pale)
	linked, _ := histogram(t.linked[:], accent)
	p.Add(all, linked)
	p.Legend.Add("all pairs", all)
	p.Legend.Add("linked", linked)
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, max(1, allMax*1.4) // headroom for the legend
	for i, m := range marks {
		l, err := plotter.NewLine(plotter.XYs{{X: m.Value, Y: 0}, {X: m.Value, Y: p.Y.Max}})
		if err != nil {
			return "", err
		}
		l.LineStyle = draw.LineStyle{Color: markColor[i%len(markColor)], Width: vg.Points(1.5)}
		if m.Measure != "resemblance" {
			l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add("threshold: "+m.Measure+" "+strconv.FormatFloat(m.Value, 'g', -1, 64), l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.Padding = vg.Points(8), vg.Points(2)
	return svg(p, "Histogram of pair resemblance")
}

// histogram is a histogram of counts in equal bins over [0, 1], and its
// largest count. Empty bins are left out: they would draw nothing but
// a hairline.
func histogram(counts []int64, fill color.Color) (*plotter.Histogram, float64) {
	h := &plotter.Histogram{Width: 1 / float64(len(counts)), FillColor: fill}
	var top float64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		h.Bins = append(h.Bins, plotter.HistogramBin{
			Min:    float64(i) / float64(len(counts)),
			Max:    float64(i+1) / float64(len(counts)),
			Weight: float64(c),
		})
		top = max(top, float64(c))
	}
	return h, top
}

// sansFamily is the plots' type as CSS names it: Liberation Sans, whose
// metrics gonum/plot lays the text out with, then the faces that share
// them (Arimo, Arial, Helvetica), then any sans-serif face.
const sansFamily = `'Liberation Sans', Arimo, Arial, Helvetica, sans-serif`

// newPlot is a plot in the page's sans-serif type.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	sans := func(size vg.Length) font.Font {
		return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
	}
	p.Title.TextStyle.Font = sans(13)
	p.Legend.TextStyle.Font = sans(10)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Label.TextStyle.Color = ink
		a.Tick.Label.Font = sans(10)
		a.Tick.Label.Color = ink
	}
	return p
}

// margin is the blank border around a plot, room for a browser's
// rendering of a label to spill into rather than be clipped.
const margin = 6 // points

// svg renders p as an SVG element to embed in the page, without the
// XML prologue: the SVG scales to the page's width through its viewBox.
// label names it for screen readers.
//
// gonum/plot places every string by the width it measures in Liberation
// Sans, and the browser draws it in whatever face it has: a wider one
// (DejaVu Sans, where Liberation is not installed) would push a
// right-aligned tick label into its tick and the last one off the plot.
// So each string carries its measured width as its textLength, which the
// browser fits the string to, in any face; and its font-family falls back
// to the faces that share Liberation's metrics.
func svg(p *plot.Plot, label string) (template.HTML, error) {
	c := &measured{Canvas: vgsvg.New(6.5*vg.Inch, 3.6*vg.Inch)}
	p.Draw(draw.Crop(draw.New(c), margin, -margin, margin, -margin))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("report: the plot %q rendered no <svg> element", label)
	}
	s = `<svg role="img" aria-label="` + html.EscapeString(label) + `"` + s[i+len("<svg"):]
	s, err := c.fitText(s)
	if err != nil {
		return "", fmt.Errorf("report: the plot %q: %w", label, err)
	}
	// The plot is drawn from numbers and from this package's own labels
	// only, and vgsvg escapes its text.
	return template.HTML(s), nil
}

// measured is an SVG canvas that records the width gonum/plot measured
// for each string it drew, in order.
type measured struct {
	*vgsvg.Canvas
	widths []vg.Length
}

func (c *measured) FillString(f font.Face, pt vg.Point, text string) {
	c.widths = append(c.widths, f.Width(text))
	c.Canvas.FillString(f, pt, text)
}

// fitText gives the n-th <text> element of the rendered SVG s the n-th
// measured width as its textLength, and a font-family with fallbacks.
func (c *measured) fitText(s string) (string, error) {
	parts := strings.Split(s, "<text ")
	if len(parts)-1 != len(c.widths) {
		return "", fmt.Errorf("%d text elements for %d strings drawn", len(parts)-1, len(c.widths))
	}
	var b strings.Builder
	b.WriteString(parts[0])
	for i, w := range c.widths {
		fmt.Fprintf(&b, `<text textLength="%.5g" lengthAdjust="spacingAndGlyphs" `, w.Points())
		b.WriteString(parts[i+1])
	}
	return strings.ReplaceAll(b.String(), "font-family:Liberation Sans;", "font-family:"+sansFamily+";"), nil
}

// logTicks marks the integer multiples of the powers of ten on a log
// axis and labels 1, 2 and 5 times them, or only the powers when the
// axis spans more than three decades: plot.LogTicks labels only the
// powers, which leaves a range such as 2 to 5 documents unlabelled.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	few := math.Log10(hi/lo) <= 3
	for e := first; e <= last; e++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (few && (m == 2 || m == 5)) {
				t.Label = tickLabel(m, e)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes m×10^e plainly below a million and as 2e6 above.
func tickLabel(m, e int) string {
	if e >= 6 {
		return strconv.Itoa(m) + "e" + strconv.Itoa(e)
	}
	return strconv.FormatFloat(float64(m)*math.Pow10(e), 'f', -1, 64)
}
