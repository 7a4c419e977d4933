// Package report renders a finished neardup output folder as one
// self-contained HTML page: the run's accounting and settings, the
// distribution of cluster sizes, the pairs' resemblances against the
// policy's thresholds, the hosts with the most duplicates and the largest
// clusters with a few of their URLs.
//
// The page loads nothing (its styles are inline and its plots inline
// SVG), so it can be archived or mailed with the run. Every string from
// the output, crawled URLs included, goes through html/template and
// renders as text. Report reads only the columns it shows, shard by
// shard on every core, and keeps no docs row beyond its shard, so a
// million-document output reports in a few seconds; the same folder
// always gives the same page.
package report

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

// How much of the long lists the page shows.
const (
	topHosts    = 20 // hosts, by number of duplicates
	topClusters = 20 // clusters, by size
	samples     = 5  // member URLs per listed cluster
	maxInputs   = 50 // input files listed
)

// histogramBins is the number of bins of the resemblance histogram over
// [0, 1]: bins 0.02 wide, so the usual thresholds (0.5, 0.8, 0.9) fall on
// bin edges and the bars do not straddle them.
const histogramBins = 50

//go:embed report.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"n":     groupAny,
	"bytes": byteSize,
}).Parse(pageText))

// Write renders the finished output folder dir as an HTML page on w. It
// refuses a folder without _SUCCESS, whose tables may be partial, and
// writes nothing when it fails.
func Write(ctx context.Context, dir string, w io.Writer) error {
	m, err := output.ReadManifest(ctx, dir)
	if err != nil {
		return err
	}
	if err := m.Needs(dir, "report", tables.ReportNeeds); err != nil {
		return err
	}
	clusters, err := readClusters(ctx, dir)
	if err != nil {
		return err
	}
	largest := largestClusters(clusters, topClusters)
	docs, err := readDocs(ctx, dir, largest)
	if err != nil {
		return err
	}
	pairs, err := readPairs(ctx, dir)
	if err != nil {
		return err
	}

	p := newPage(dir, m)
	p.DocsRows = docs.rows
	p.Duplicates = docs.duplicates()
	p.HostsWithDuplicates, p.Hosts = docs.topHosts(topHosts)
	p.Clusters = int64(len(clusters))
	for _, c := range largest {
		p.Largest = append(p.Largest, clusterRow{Cluster: c, Samples: docs.samples[c.ClusterID]})
	}
	p.Pairs, p.Linked = pairs.total(), pairs.linkedTotal()
	p.Thresholds = thresholds(m.Settings["policy"])
	p.checkAccounting(m)
	if p.SizePlot, err = sizePlot(sizeDistribution(clusters)); err != nil {
		return err
	}
	if p.PairPlot, err = pairPlot(pairs, p.Thresholds); err != nil {
		return err
	}

	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return err
	}
	_, err = b.WriteTo(w)
	return err
}

// page is what the template shows.
type page struct {
	Dir      string
	Manifest *output.Manifest

	Documents, Dedup []count // the manifest's counts, in the order shown
	Settings, Flags  []setting
	Phases           []phase
	Inputs           []output.Input // the first maxInputs, sorted by path
	MoreInputs       int

	DocsRows int64 // rows read from the docs table
	Warnings []string

	Clusters int64
	SizePlot template.HTML
	Largest  []clusterRow

	Pairs, Linked int64
	Thresholds    []threshold
	PairPlot      template.HTML

	Duplicates          int64
	HostsWithDuplicates int
	Hosts               []hostRow
}

// count is one of the manifest's counts; Missing when an older neardup
// did not write it.
type count struct {
	Key, Label string
	Sub        bool // a part of the count above
	Value      int64
	Missing    bool
}

type setting struct{ Name, Value string }

// phase is where a phase's time went: busy and wall milliseconds, "—"
// where the manifest has no figure.
type phase struct{ Name, BusyMS, WallMS string }

type clusterRow struct {
	tables.Cluster
	Samples []tables.DocCluster
}

type hostRow struct {
	Host              string // "" for documents without a URL or a host
	Pages, Duplicates int64
}

// Share is the host's duplicates as a percentage of its pages.
func (h hostRow) Share() string {
	return strconv.FormatFloat(100*float64(h.Duplicates)/float64(h.Pages), 'f', 1, 64) + "%"
}

// threshold is one of the policy's thresholds, marked on the
// resemblance histogram.
type threshold struct {
	Measure string // resemblance or containment
	Value   float64
}

func (t threshold) String() string {
	return t.Measure + " ≥ " + strconv.FormatFloat(t.Value, 'g', -1, 64)
}

// The counts shown, in the order of the README's accounting identity:
// docs = in clusters + alone + empty or rejected.
var (
	documentCounts = []count{
		{Key: "docs", Label: "documents"},
		{Key: "docs_ok", Label: "ok (sketched)", Sub: true},
		{Key: "docs_too_short", Label: "too short to shingle", Sub: true},
		{Key: "docs_empty", Label: "empty", Sub: true},
		{Key: "docs_rejected", Label: "rejected", Sub: true},
		{Key: "docs_in_clusters", Label: "in clusters"},
		{Key: "docs_alone", Label: "alone"},
		{Key: "docs_empty_or_rejected", Label: "empty or rejected"},
	}
	dedupCounts = []count{
		{Key: "identical_groups", Label: "identical groups"},
		{Key: "identical_skipped", Label: "identical copies (skipped phases 2–4)"},
		{Key: "pairs", Label: "pairs counted"},
		{Key: "pairs_verified", Label: "verified on the documents' whole texts, with exact or Bloom figures (--verify=uncertain: only those too near the threshold)", Sub: true},
		{Key: "pairs_verify_pruned", Label: "verified and proved below the pairs table's floors by the filters, without figures", Sub: true},
		{Key: "pairs_written", Label: "pairs in the pairs table"},
		{Key: "links", Label: "pairs linked"},
		{Key: "links_uncertain", Label: fmt.Sprintf("on an estimate within %.1f standard errors of the threshold (too few samples to tell)", clusters.UncertainZ), Sub: true},
		{Key: "clusters", Label: "clusters"},
		{Key: "largest_cluster", Label: "largest cluster"},
	}
)

func newPage(dir string, m *output.Manifest) *page {
	p := &page{Dir: dir, Manifest: m}
	fill := func(cs []count) []count {
		out := slices.Clone(cs)
		for i := range out {
			out[i].Value, out[i].Missing = m.Counts[out[i].Key], !hasKey(m.Counts, out[i].Key)
		}
		return out
	}
	p.Documents, p.Dedup = fill(documentCounts), fill(dedupCounts)
	p.Settings, p.Flags = sorted(m.Settings), sorted(m.Flags)
	for _, name := range slices.Sorted(maps.Keys(union(m.BusyMS, m.WallMS))) {
		p.Phases = append(p.Phases, phase{name, millis(m.BusyMS, name), millis(m.WallMS, name)})
	}
	inputs := slices.SortedFunc(slices.Values(m.Inputs), func(a, b output.Input) int { return strings.Compare(a.Path, b.Path) })
	if len(inputs) > maxInputs {
		p.MoreInputs = len(inputs) - maxInputs
		inputs = inputs[:maxInputs]
	}
	p.Inputs = inputs
	return p
}

// checkAccounting warns when the tables and the manifest disagree: the
// docs table must hold one row per input row, and the documents must add
// up to the README's accounting identity.
func (p *page) checkAccounting(m *output.Manifest) {
	if n, ok := m.Counts["docs_written"]; ok && n != p.DocsRows {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the docs table holds %s rows, the manifest counts %s written", group(p.DocsRows), group(n)))
	}
	docs, parts := m.Counts["docs"], m.Counts["docs_in_clusters"]+m.Counts["docs_alone"]+m.Counts["docs_empty_or_rejected"]
	if docs != parts {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s documents, but %s in clusters, alone, or empty or rejected", group(docs), group(parts)))
	}
}

func millis(m map[string]int64, name string) string {
	if ms, ok := m[name]; ok {
		return group(ms)
	}
	return "—"
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func union(a, b map[string]int64) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func sorted(m map[string]string) []setting {
	var out []setting
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, setting{k, m[k]})
	}
	return out
}

// thresholds are the thresholds of a policy setting such as
// "resemblance:0.5,containment:0.8"; none when it does not parse (an
// output too old to record it).
func thresholds(pol string) []threshold {
	p, err := policy.Parse(pol)
	if err != nil {
		return nil
	}
	var out []threshold
	if p.Resemblance > 0 {
		out = append(out, threshold{"resemblance", p.Resemblance})
	}
	if p.Containment > 0 {
		out = append(out, threshold{"containment", p.Containment})
	}
	return out
}

// readClusters reads every clusters shard.
func readClusters(ctx context.Context, dir string) ([]tables.Cluster, error) {
	shards, err := listShards(ctx, dir, tables.ClustersTable)
	if err != nil {
		return nil, err
	}
	parts := make([][]tables.Cluster, len(shards))
	err = parallel(len(shards), func(i int) (err error) {
		parts[i], err = tables.ReadClusterSummaries(ctx, shards[i])
		return err
	})
	return slices.Concat(parts...), err
}

// largestClusters are the n largest clusters, ties by cluster ID.
func largestClusters(clusters []tables.Cluster, n int) []tables.Cluster {
	c := slices.Clone(clusters)
	slices.SortFunc(c, func(a, b tables.Cluster) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.ClusterID, b.ClusterID))
	})
	return c[:min(n, len(c))]
}

// sizeCount is how many clusters have one size.
type sizeCount struct{ Size, Clusters int64 }

// sizeDistribution counts the clusters of each size, by size.
func sizeDistribution(clusters []tables.Cluster) []sizeCount {
	counts := map[int64]int64{}
	for _, c := range clusters {
		counts[c.Size]++
	}
	var out []sizeCount
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, sizeCount{s, counts[s]})
	}
	return out
}

// pairTally bins the pairs table's resemblances, all pairs and linked
// ones.
type pairTally struct {
	all, linked [histogramBins]int64
}

func (t *pairTally) add(s tables.PairScore) {
	b := int(s.Resemblance * histogramBins)
	b = max(0, min(b, histogramBins-1)) // resemblance 1 in the last bin
	t.all[b]++
	if s.Linked {
		t.linked[b]++
	}
}

func (t *pairTally) merge(o *pairTally) {
	for i := range t.all {
		t.all[i] += o.all[i]
		t.linked[i] += o.linked[i]
	}
}

func (t *pairTally) total() (n int64) {
	for _, x := range t.all {
		n += x
	}
	return n
}

func (t *pairTally) linkedTotal() (n int64) {
	for _, x := range t.linked {
		n += x
	}
	return n
}

// readPairs bins the resemblances of every pairs shard.
func readPairs(ctx context.Context, dir string) (*pairTally, error) {
	shards, err := listShards(ctx, dir, tables.PairsTable)
	if err != nil {
		return nil, err
	}
	parts := make([]pairTally, len(shards))
	err = parallel(len(shards), func(i int) error {
		rows, err := tables.ReadPairScores(ctx, shards[i])
		for _, r := range rows {
			parts[i].add(r)
		}
		return err
	})
	var t pairTally
	for i := range parts {
		t.merge(&parts[i])
	}
	return &t, err
}

// docTally is what the docs table adds to the report.
type docTally struct {
	rows  int64
	hosts map[string]*hostCount
	// samples holds, for each listed cluster, its kept document and its
	// members of lowest doc IDs.
	samples map[int64][]tables.DocCluster
}

type hostCount struct{ pages, duplicates int64 }

// readDocs tallies every docs shard: pages and duplicates per host, and
// sample members of the clusters listed.
func readDocs(ctx context.Context, dir string, listed []tables.Cluster) (*docTally, error) {
	shards, err := listShards(ctx, dir, tables.DocsTable)
	if err != nil {
		return nil, err
	}
	kept := map[int64]int64{} // listed cluster ID -> its kept doc
	for _, c := range listed {
		kept[c.ClusterID] = c.RepresentativeDocID
	}
	parts := make([]docTally, len(shards))
	err = parallel(len(shards), func(i int) error {
		rows, err := tables.ReadDocClusters(ctx, shards[i])
		if err != nil {
			return err
		}
		t := &parts[i]
		t.rows = int64(len(rows))
		t.hosts = map[string]*hostCount{}
		t.samples = map[int64][]tables.DocCluster{}
		for _, d := range rows {
			name := sitetemplate.Site(d.URL) // the host, as the site templates group pages
			h := t.hosts[name]
			if h == nil {
				h = &hostCount{}
				t.hosts[name] = h
			}
			h.pages++
			if d.ClusterID == tables.NoDoc {
				continue
			}
			if d.KeptDocID != tables.NoDoc && d.KeptDocID != d.DocID {
				h.duplicates++
			}
			if k, ok := kept[d.ClusterID]; ok {
				t.samples[d.ClusterID] = addSample(t.samples[d.ClusterID], d, k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	all := &docTally{hosts: map[string]*hostCount{}, samples: map[int64][]tables.DocCluster{}}
	for _, t := range parts {
		all.rows += t.rows
		for name, c := range t.hosts {
			h := all.hosts[name]
			if h == nil {
				h = &hostCount{}
				all.hosts[name] = h
			}
			h.pages += c.pages
			h.duplicates += c.duplicates
		}
		for id, s := range t.samples {
			all.samples[id] = append(all.samples[id], s...)
		}
	}
	for id, s := range all.samples {
		all.samples[id] = trimSamples(s, kept[id])
	}
	return all, nil
}

// addSample adds d to the samples of a cluster whose kept document is
// kept, trimming them now and then so that a huge cluster costs no more
// than a small one.
func addSample(s []tables.DocCluster, d tables.DocCluster, kept int64) []tables.DocCluster {
	s = append(s, d)
	if len(s) >= 8*samples {
		s = trimSamples(s, kept)
	}
	return s
}

// trimSamples sorts a cluster's samples, its kept document first and
// then by doc ID, and keeps the first few.
func trimSamples(s []tables.DocCluster, kept int64) []tables.DocCluster {
	slices.SortFunc(s, func(a, b tables.DocCluster) int {
		if (a.DocID == kept) != (b.DocID == kept) {
			if a.DocID == kept {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.DocID, b.DocID)
	})
	return s[:min(len(s), samples)]
}

// duplicates counts the documents deduplication drops: those in a
// cluster that are not its kept document.
func (t *docTally) duplicates() (n int64) {
	for _, h := range t.hosts {
		n += h.duplicates
	}
	return n
}

// topHosts are the n hosts with the most duplicates, ties by host name,
// and how many hosts have any.
func (t *docTally) topHosts(n int) (withDuplicates int, top []hostRow) {
	for name, c := range t.hosts {
		if c.duplicates > 0 {
			top = append(top, hostRow{Host: name, Pages: c.pages, Duplicates: c.duplicates})
		}
	}
	slices.SortFunc(top, func(a, b hostRow) int {
		return cmp.Or(cmp.Compare(b.Duplicates, a.Duplicates), strings.Compare(a.Host, b.Host))
	})
	return len(top), top[:min(n, len(top))]
}

// listShards lists the shards of one table of the output folder dir.
func listShards(ctx context.Context, dir, table string) ([]string, error) {
	shards, err := store.List(ctx, store.Join(dir, table, "*.parquet"))
	if err != nil {
		return nil, err
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("%s: no shards of table %s", dir, table)
	}
	return shards, nil
}

// parallel calls fn(0) to fn(n-1) on as many goroutines as there are
// cores, since decompressing and decoding Parquet is CPU-bound, and
// returns the error of the lowest i that failed. After a failure it
// starts no more calls.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if errs[i] = fn(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// groupAny is group for the template, which has ints and int64s.
func groupAny(n any) (string, error) {
	switch n := n.(type) {
	case int:
		return group(int64(n)), nil
	case int64:
		return group(n), nil
	}
	return "", fmt.Errorf("report: n of %T", n)
}

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// byteSize writes n bytes in decimal units, as the command's summary does.
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n), -1
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + string("kMGTP"[i]) + "B"
}
