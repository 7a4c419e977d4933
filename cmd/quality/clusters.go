package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/clustering/unionfind"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/simjoin"
)

// A clustering is another tool's answer (or a neardup output's): a label
// for each document it put in a cluster, by neardup doc ID. Documents it
// does not list are clusters of their own.
type clustering struct {
	name   string
	labels map[uint64]uint64
}

// loadClustering reads --clusters NAME=PATH: PATH is a neardup output
// folder (its docs table: cluster_id, else identical_to, else the
// document itself) or a CSV file whose header names the columns id (a
// neardup doc ID, as the shards of --shards carry it) and cluster (any
// label).
func loadClustering(ctx context.Context, spec string) (clustering, error) {
	name, path, ok := strings.Cut(spec, "=")
	if !ok || name == "" || path == "" {
		return clustering{}, usage("--clusters %q is not NAME=PATH", spec)
	}
	c := clustering{name: name, labels: map[uint64]uint64{}}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		docs, err := tables.ReadTable[tables.Doc](ctx, path, tables.DocsTable)
		if err != nil {
			return c, fmt.Errorf("--clusters %s: %w", spec, err)
		}
		for _, d := range docs {
			switch {
			case d.ClusterID != nil:
				c.labels[uint64(d.DocID)] = uint64(*d.ClusterID)
			case d.IdenticalTo != nil:
				c.labels[uint64(d.DocID)] = uint64(*d.IdenticalTo)
			}
		}
		return c, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return c, fmt.Errorf("--clusters %s: %w", spec, err)
	}
	defer f.Close()
	if c.labels, err = readClusterCSV(f); err != nil {
		return c, fmt.Errorf("--clusters %s: %w", spec, err)
	}
	return c, nil
}

// readClusterCSV reads the id and cluster columns of a CSV file; cluster
// labels are interned, so any string names a cluster.
func readClusterCSV(r io.Reader) (map[uint64]uint64, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	idCol, clusterCol := slices.Index(header, "id"), slices.Index(header, "cluster")
	if idCol < 0 || clusterCol < 0 {
		return nil, fmt.Errorf("header %v lacks the columns id and cluster", header)
	}
	labels, intern := map[uint64]uint64{}, map[string]uint64{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return labels, nil
		}
		if err != nil {
			return nil, err
		}
		id, err := strconv.ParseUint(rec[idCol], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: id %q is not a doc ID", line, rec[idCol])
		}
		l, ok := intern[rec[clusterCol]]
		if !ok {
			l = uint64(len(intern))
			intern[rec[clusterCol]] = l
		}
		labels[id] = l
	}
}

// components are the exact join's clusters: the connected components of
// its pairs, each document labelled by its component's smallest ID.
func components(pairs []simjoin.Pair) map[uint64]uint64 {
	uf := unionfind.New(2 * len(pairs))
	for _, p := range pairs {
		uf.Union(p.A, p.B)
	}
	labels := make(map[uint64]uint64, uf.Len())
	uf.Each(func(id, root uint64) { labels[id] = root })
	return labels
}

// clusterScore counts same-cluster pairs: Truth in the truth's clusters,
// Found in the clustering's, Both in both; over the documents of universe
// only. Clusters are the clustering's clusters of two or more of those
// documents, Largest the most of them in one.
type clusterScore struct {
	Truth, Found, Both int64
	Clusters, Largest  int
}

func (s clusterScore) precision() string { return ratio(s.Both, s.Found) }
func (s clusterScore) recall() string    { return ratio(s.Both, s.Truth) }

// scoreClusters compares a clustering with the truth by pair counting,
// from their contingency table (n documents in truth cluster i and found
// cluster j make n(n-1)/2 pairs in both), so that a family of 200,000
// documents costs 200,000 steps, not 2*10^10. A document of universe that
// a side does not label is alone on that side.
func scoreClusters(universe map[uint64][]uint64, truth, found map[uint64]uint64) clusterScore {
	type cell struct{ t, f uint64 }
	cells, truths, founds := map[cell]int64{}, map[uint64]int64{}, map[uint64]int64{}
	for id := range universe {
		t, inT := truth[id]
		f, inF := found[id]
		if inT {
			truths[t]++
		}
		if inF {
			founds[f]++
		}
		if inT && inF {
			cells[cell{t, f}]++
		}
	}
	pairs := func(n int64) int64 { return n * (n - 1) / 2 }
	var s clusterScore
	for _, n := range truths {
		s.Truth += pairs(n)
	}
	for _, n := range founds {
		s.Found += pairs(n)
		if n > 1 {
			s.Clusters++
		}
		s.Largest = max(s.Largest, int(n))
	}
	for _, n := range cells {
		s.Both += pairs(n)
	}
	return s
}

// exactTool names the truth's own row of the same-cluster table: its
// clusters, scored against themselves.
const exactTool = "the exact join"

// clusterRow is one line of the same-cluster table, as --scores-out
// writes it (one JSON object per line).
type clusterRow struct {
	Corpus     string  `json:"corpus"`
	Tool       string  `json:"tool"`
	Threshold  float64 `json:"threshold"`
	TruthPairs int64   `json:"truth_pairs"`
	FoundPairs int64   `json:"found_pairs"`
	BothPairs  int64   `json:"both_pairs"`
	Clusters   int     `json:"clusters"` // the clustering's clusters of 2 or more documents of the universe
	Largest    int     `json:"largest"`  // its largest cluster's documents of the universe
	// Families are the planted families of --families, each with the
	// most of its documents the clustering put in one cluster.
	Families []familyShare `json:"families,omitempty"`
}

// familyShare is one planted family's documents of the universe (Size)
// and the most of them in one cluster (Largest).
type familyShare struct {
	Name    string  `json:"name"`
	Size    int     `json:"size"`
	Largest int     `json:"largest"`
	Median  float64 `json:"median_resemblance"` // of familyPairs pairs of its documents, the same for every clustering
}

// familyPairs is how many random pairs of a family's documents its median
// resemblance is taken over.
const familyPairs = 400

// medianResemblance is the median exact Jaccard of familyPairs pairs of
// distinct documents of ids drawn at random (a fixed seed: the same pairs
// on every run), over their shingle sets.
func medianResemblance(ids []uint64, sets map[uint64][]uint64) float64 {
	if len(ids) < 2 {
		return 1
	}
	r := rand.New(rand.NewPCG(uint64(len(ids)), 0x6d6564)) // "med"
	js := make([]float64, familyPairs)
	for i := range js {
		a := r.IntN(len(ids))
		b := (a + 1 + r.IntN(len(ids)-1)) % len(ids)
		x, y := sets[ids[a]], sets[ids[b]]
		o, _ := simjoin.Overlap(x, y, 0)
		js[i] = float64(o) / float64(len(x)+len(y)-o)
	}
	slices.Sort(js)
	return (js[familyPairs/2-1] + js[familyPairs/2]) / 2
}

// plantedFamilies groups the documents of universe whose input id re
// matches by the match's first group (the whole match if re has no
// group), in name order.
func plantedFamilies(re *regexp.Regexp, docs []doc, universe map[uint64][]uint64) map[string][]uint64 {
	fams := map[string][]uint64{}
	if re == nil {
		return fams
	}
	for _, d := range docs {
		m := re.FindStringSubmatch(d.Name)
		if m == nil || len(universe[d.ID]) == 0 {
			continue
		}
		name := m[len(m)-1]
		fams[name] = append(fams[name], d.ID)
	}
	return fams
}

// familyShares is, for each family, the most of its documents that one
// label holds; an unlabelled document is a cluster of its own.
func familyShares(fams map[string][]uint64, labels map[uint64]uint64, median map[string]float64) []familyShare {
	var out []familyShare
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		ids := fams[name]
		count, largest := map[uint64]int{}, min(1, len(ids))
		for _, id := range ids {
			if l, ok := labels[id]; ok {
				count[l]++
				largest = max(largest, count[l])
			}
		}
		out = append(out, familyShare{Name: name, Size: len(ids), Largest: largest, Median: median[name]})
	}
	return out
}

func printFamilyRows(rows []clusterRow) {
	fmt.Printf("\n## Planted families: the most of each in one cluster\n\n")
	fmt.Println("| corpus | tool | threshold | family | documents | median resemblance | in one cluster | share |")
	fmt.Println("|---|---|---:|---|---:|---:|---:|---:|")
	for _, r := range rows {
		for _, f := range r.Families {
			fmt.Printf("| %s | %s | %g | %s | %d | %.3f | %d | %.4f |\n", r.Corpus, r.Tool, r.Threshold, f.Name, f.Size, f.Median, f.Largest, float64(f.Largest)/float64(f.Size))
		}
	}
}

func printClusterRows(rows []clusterRow) {
	fmt.Printf("\n## Same-cluster precision and recall against the exact join's clusters (w=%d)\n\n", *shingleWords)
	fmt.Println("| corpus | tool | threshold | truth pairs | same-cluster pairs | clusters | largest | precision | recall |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		s := clusterScore{Truth: r.TruthPairs, Found: r.FoundPairs, Both: r.BothPairs}
		fmt.Printf("| %s | %s | %g | %d | %d | %d | %d | %s | %s |\n", r.Corpus, r.Tool, r.Threshold, r.TruthPairs, r.FoundPairs, r.Clusters, r.Largest, s.precision(), s.recall())
	}
}

func writeClusterRows(path string, rows []clusterRow) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeShards writes the documents with shingles, the exact join's
// universe, as n JSON lines files shard-00000.jsonl... in DIR, each line
// {"id": "<doc ID>", "text": ...} (the text as the exact side read it),
// in doc ID order, so that tools outside neardup see the same documents
// and name them by the IDs --clusters reads.
func writeShards(dir string, n int, docs []doc, sets map[uint64][]uint64) error {
	if n < 1 {
		return usage("--shard-count must be at least 1")
	}
	var in []doc
	for _, d := range docs {
		if len(sets[d.ID]) > 0 {
			in = append(in, d)
		}
	}
	slices.SortFunc(in, func(a, b doc) int { return cmp.Compare(a.ID, b.ID) })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("shard-%05d.jsonl", i)))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, d := range in[i*len(in)/n : (i+1)*len(in)/n] {
			if err := enc.Encode(struct {
				ID   string `json:"id"`
				Text string `json:"text"`
			}{strconv.FormatUint(d.ID, 10), d.Text}); err != nil {
				f.Close()
				return err
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	progress("wrote %d documents with shingles to %d shards in %s", len(in), n, dir)
	return nil
}
