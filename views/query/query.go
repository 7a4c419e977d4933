// Package query answers Broder's queries from a finished neardup output,
// without running the pipeline: given a URL, its document's cluster and
// every member with its resemblance to it; given a page's text, the
// indexed documents it resembles or is contained in; and, over the full
// shingle sets read back from the input files, the exact resemblance and
// containment of two documents.
//
// An Index loads the output's docs, clusters and sketches tables once
// (a few seconds for a million pages); each query then runs in memory.
package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/redirects"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
)

// ErrUnknownURL is the error of a query for a URL no document has.
var ErrUnknownURL = errors.New("no document has this URL")

// Index is a finished output loaded for queries. It is safe for
// concurrent use.
type Index struct {
	Dir      string
	Manifest *output.Manifest
	cfg      settings.Config

	docs      []tables.Doc // by doc ID
	byURL     map[string][]int32
	byCluster map[int64][]int32
	clusters  map[int64]tables.Cluster

	// The representatives' sketches, one after another: sketch i is
	// values[off[i]:off[i+1]] of document repDoc[i].
	repDoc []int64
	off    []int
	values []uint64
	repOf  map[int64]int32   // doc ID → sketch index
	copies map[int64][]int32 // representative's doc ID → its identical copies

	sortOnce sync.Once
	bySize   []tables.Cluster // the clusters, largest first (Clusters)
}

// Open loads the output in dir. It refuses a folder without _SUCCESS, an
// output written by another fingerprint version, and one without the
// tables it reads (tables.QueryNeeds: written with --tables, or before
// the sketches table existed).
func Open(ctx context.Context, dir string) (*Index, error) {
	m, err := output.ReadManifest(ctx, dir)
	if err != nil {
		return nil, err
	}
	cfg, err := configOf(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := m.Needs(dir, "query", tables.QueryNeeds); err != nil {
		return nil, err
	}
	ix := &Index{Dir: dir, Manifest: m, cfg: cfg, byURL: map[string][]int32{}, byCluster: map[int64][]int32{},
		clusters: map[int64]tables.Cluster{}, repOf: map[int64]int32{}, copies: map[int64][]int32{}}
	for _, f := range m.Tables[tables.DocsTable] {
		rows, err := tables.ReadDocs(ctx, store.Join(dir, f))
		if err != nil {
			return nil, err
		}
		ix.docs = append(ix.docs, rows...)
	}
	slices.SortFunc(ix.docs, func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	for i, d := range ix.docs {
		if d.URL != nil {
			ix.byURL[*d.URL] = append(ix.byURL[*d.URL], int32(i))
		}
		if d.ClusterID != nil {
			ix.byCluster[*d.ClusterID] = append(ix.byCluster[*d.ClusterID], int32(i))
		}
		if d.IdenticalTo != nil {
			ix.copies[*d.IdenticalTo] = append(ix.copies[*d.IdenticalTo], int32(i))
		}
	}
	for _, f := range m.Tables[tables.ClustersTable] {
		rows, err := tables.Read[tables.Cluster](ctx, store.Join(dir, f))
		if err != nil {
			return nil, err
		}
		for _, c := range rows {
			ix.clusters[c.ClusterID] = c
		}
	}
	var reps []tables.Sketch
	for _, f := range m.Tables[tables.SketchesTable] {
		rows, err := tables.ReadSketches(ctx, store.Join(dir, f))
		if err != nil {
			return nil, err
		}
		reps = append(reps, rows...)
	}
	slices.SortFunc(reps, func(a, b tables.Sketch) int { return cmp.Compare(a.DocID, b.DocID) })
	ix.off = append(make([]int, 0, len(reps)+1), 0)
	for i, r := range reps {
		ix.repDoc = append(ix.repDoc, r.DocID)
		for _, v := range r.Sketch {
			ix.values = append(ix.values, uint64(v))
		}
		ix.off = append(ix.off, len(ix.values))
		ix.repOf[r.DocID] = int32(i)
	}
	return ix, nil
}

// configOf is the configuration of the run that wrote m, as far as it
// sketches a page: a page's sketch is compared as a sample, whatever
// mode found the run's pairs.
func configOf(m *output.Manifest) (settings.Config, error) {
	if v := m.Settings["fingerprint_version"]; v != strconv.Itoa(fingerprint.Version) {
		return settings.Config{}, fmt.Errorf("written with fingerprint version %s, and this neardup computes version %d: rerun the pipeline to query it", v, fingerprint.Version)
	}
	cfg, err := settings.FromManifest(m.Settings, m.Flags)
	if err != nil {
		return cfg, err
	}
	cfg.Mode, cfg.Verify = settings.ModePairs, settings.VerifyNone
	return cfg, nil
}

// Doc is an indexed document as a query shows it.
type Doc struct {
	DocID      int64    `json:"doc_id"`
	URL        string   `json:"url,omitempty"`
	Sweep      string   `json:"sweep"`
	Status     string   `json:"status"`
	ClusterID  *int64   `json:"cluster_id,omitempty"`
	KeptDocID  *int64   `json:"kept_doc_id,omitempty"`
	Kept       bool     `json:"kept"`
	SourceFile string   `json:"source_file"`
	SourceRow  int64    `json:"source_row"`
	Tokens     int64    `json:"tokens"`
	Identical  *int64   `json:"identical_to,omitempty"`
	ToKept     *float64 `json:"resemblance_to_kept,omitempty"`
	JoinedBy   string   `json:"joined_by,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// Chain is a redirect's chain (--redirect-column): the URLs it leads
	// through, each with the document the index has there, to where it
	// ends.
	Chain []Hop `json:"redirect_chain,omitempty"`
}

// Hop is one URL of a redirect chain and the document the output has
// there (the one that wins the URL, as the run chose: of the latest
// sweep; with content, then redirecting, then empty; the smallest doc
// ID), if any.
type Hop struct {
	URL    string `json:"url"`
	DocID  *int64 `json:"doc_id,omitempty"`
	Status string `json:"status,omitempty"`
}

func docOf(d *tables.Doc) Doc {
	out := Doc{DocID: d.DocID, Sweep: d.Sweep, Status: d.Status, ClusterID: d.ClusterID, KeptDocID: d.KeptDocID,
		SourceFile: d.SourceFile, SourceRow: d.SourceRow, Tokens: d.TokenCount, Identical: d.IdenticalTo, ToKept: d.ResemblanceToKept}
	if d.URL != nil {
		out.URL = *d.URL
	}
	out.Kept = d.KeptDocID != nil && *d.KeptDocID == d.DocID
	if d.JoinedBy != nil {
		out.JoinedBy = *d.JoinedBy
	}
	if d.Reason != nil {
		out.Reason = *d.Reason
	}
	return out
}

// docOf is a document as queries show it, with its redirect chain.
func (ix *Index) docOf(d *tables.Doc) Doc {
	out := docOf(d)
	out.Chain = ix.chain(d)
	return out
}

// chain follows d's redirects through the output's docs, URL by URL, as
// the run did (package redirects), until a document with content, a URL
// no document has, a URL passed already, or redirects.MaxHops redirects.
func (ix *Index) chain(d *tables.Doc) []Hop {
	var hops []Hop
	seen := map[string]bool{}
	if d.URL != nil {
		seen[*d.URL] = true
	}
	for d != nil && d.Status == tables.StatusRedirect && d.RedirectTo != nil && len(hops) < redirects.MaxHops {
		u := redirects.Target(deref(d.URL), *d.RedirectTo)
		h := Hop{URL: u}
		d = ix.urlOwner(u)
		if d != nil {
			id := d.DocID
			h.DocID, h.Status = &id, d.Status
		}
		hops = append(hops, h)
		if seen[u] {
			break
		}
		seen[u] = true
	}
	return hops
}

// urlOwner is the document that wins url in redirect resolution, or nil.
func (ix *Index) urlOwner(url string) *tables.Doc {
	var best *tables.Doc
	var bestOwner packed.URLOwner
	for _, i := range ix.byURL[url] {
		d := &ix.docs[i]
		o := redirects.Claim(d)
		if best == nil || redirects.Wins(o, bestOwner) {
			best, bestOwner = d, o
		}
	}
	return best
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Similarity is how alike a document is to the query: estimated from the
// two sketches (Broder's estimators; containment only for mod:M sketches,
// which sample every shingle alike), and exact over the full shingle sets
// when asked.
type Similarity struct {
	Shared      int      `json:"shared_sketch_values"`
	Resemblance float64  `json:"resemblance"`
	InQuery     *float64 `json:"contained_in_query,omitempty"` // the share of this document in the query's
	OfQuery     *float64 `json:"contains_query,omitempty"`     // the share of the query's document in this one
	Exact       *Exact   `json:"exact,omitempty"`
}

// Exact is the resemblance and containments over the full shingle sets.
type Exact struct {
	Resemblance float64 `json:"resemblance"`
	InQuery     float64 `json:"contained_in_query"`
	OfQuery     float64 `json:"contains_query"`
}

// Member is a member of the queried document's cluster.
type Member struct {
	Doc
	Similarity
}

// URLAnswer is what the index knows of one document with the queried URL.
type URLAnswer struct {
	Doc     Doc             `json:"doc"`
	Cluster *tables.Cluster `json:"cluster,omitempty"`
	Kept    *Doc            `json:"kept,omitempty"`
	Members []Member        `json:"members,omitempty"`
}

// URL answers for every document with the URL (more than one when the
// URL was crawled in several sweeps, or appears twice in the input): its
// cluster, the cluster's kept document, and every member with its
// similarity to it, most alike first. With exact, the similarities over
// the full shingle sets too, reading the texts from the input files. The
// error wraps ErrUnknownURL when no document has the URL.
func (ix *Index) URL(ctx context.Context, url string, exact bool) ([]URLAnswer, error) {
	found := ix.byURL[url]
	if len(found) == 0 {
		return nil, fmt.Errorf("%q: %w in %s", url, ErrUnknownURL, ix.Dir)
	}
	var answers []URLAnswer
	for _, i := range found {
		d := &ix.docs[i]
		a := URLAnswer{Doc: ix.docOf(d)}
		if d.ClusterID != nil {
			if c, ok := ix.clusters[*d.ClusterID]; ok {
				a.Cluster = &c
			}
			if d.KeptDocID != nil {
				if k := ix.doc(*d.KeptDocID); k != nil {
					kept := docOf(k)
					a.Kept = &kept
				}
			}
			q := ix.sketchOf(d)
			var qSet []uint64
			if exact {
				var err error
				if qSet, err = ix.shinglesOf(ctx, d); err != nil {
					return nil, err
				}
			}
			for _, j := range ix.byCluster[*d.ClusterID] {
				m := &ix.docs[j]
				member := Member{Doc: docOf(m), Similarity: ix.similarity(q, ix.sketchOf(m))}
				if exact {
					set, err := ix.shinglesOf(ctx, m)
					if err != nil {
						return nil, err
					}
					e := exactOf(qSet, set)
					member.Exact = &e
				}
				a.Members = append(a.Members, member)
			}
			slices.SortStableFunc(a.Members, func(x, y Member) int {
				return cmp.Or(cmp.Compare(y.Resemblance, x.Resemblance), cmp.Compare(x.DocID, y.DocID))
			})
		}
		answers = append(answers, a)
	}
	return answers, nil
}

// doc is the document with the doc ID, or nil.
func (ix *Index) doc(id int64) *tables.Doc {
	i, ok := slices.BinarySearchFunc(ix.docs, id, func(d tables.Doc, id int64) int { return cmp.Compare(d.DocID, id) })
	if !ok {
		return nil
	}
	return &ix.docs[i]
}

// sketchOf is a document's sketch: its own if it is a representative,
// its representative's if it is an identical copy; nil if it has none
// (empty, too short or rejected).
func (ix *Index) sketchOf(d *tables.Doc) []uint64 {
	id := d.DocID
	if d.IdenticalTo != nil {
		id = *d.IdenticalTo
	}
	r, ok := ix.repOf[id]
	if !ok {
		return nil
	}
	return ix.values[ix.off[r]:ix.off[r+1]]
}

// similarity estimates how alike m is to the query q from their sketches.
func (ix *Index) similarity(q, m []uint64) Similarity {
	if len(q) == 0 || len(m) == 0 {
		return Similarity{}
	}
	e := clusters.EstimateSketches(m, q, ix.cfg.Sketch)
	return Similarity{Shared: e.Shared, Resemblance: e.Resemblance, InQuery: e.AInB, OfQuery: e.BInA}
}

// Doc is the document with the doc ID.
func (ix *Index) Doc(id int64) (Doc, bool) {
	d := ix.doc(id)
	if d == nil {
		return Doc{}, false
	}
	return ix.docOf(d), true
}

// NumDocs is the number of documents in the index.
func (ix *Index) NumDocs() int { return len(ix.docs) }

// Clusters lists n clusters from the offset-th, largest first (ties by
// cluster ID), and how many there are.
func (ix *Index) Clusters(offset, n int) ([]tables.Cluster, int) {
	ix.sortOnce.Do(func() {
		for _, c := range ix.clusters {
			ix.bySize = append(ix.bySize, c)
		}
		slices.SortFunc(ix.bySize, func(a, b tables.Cluster) int {
			return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.ClusterID, b.ClusterID))
		})
	})
	if offset < 0 || offset >= len(ix.bySize) {
		return nil, len(ix.bySize)
	}
	return ix.bySize[offset:min(offset+n, len(ix.bySize))], len(ix.bySize)
}

// Cluster is the cluster with the ID and its members, the kept document
// first, then by doc ID.
func (ix *Index) Cluster(id int64) (tables.Cluster, []Doc, bool) {
	c, ok := ix.clusters[id]
	if !ok {
		return c, nil, false
	}
	var members []Doc
	for _, i := range ix.byCluster[id] {
		members = append(members, docOf(&ix.docs[i]))
	}
	slices.SortStableFunc(members, func(a, b Doc) int {
		if a.Kept != b.Kept {
			if a.Kept {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.DocID, b.DocID)
	})
	return c, members, true
}

// Similar is the estimated similarity of document b to document a.
func (ix *Index) Similar(a, b int64) Similarity {
	da, db := ix.doc(a), ix.doc(b)
	if da == nil || db == nil {
		return Similarity{}
	}
	return ix.similarity(ix.sketchOf(da), ix.sketchOf(db))
}

// TextOf reads the document's text back from its input file, as the run
// read it (HTML reduced to its text).
func (ix *Index) TextOf(ctx context.Context, id int64) (string, error) {
	d := ix.doc(id)
	if d == nil {
		return "", fmt.Errorf("no document %d in %s", id, ix.Dir)
	}
	text, err := ix.textOf(ctx, d)
	if err != nil {
		return "", fmt.Errorf("doc %d: %w", id, err)
	}
	return text, nil
}

// textOf is TextOf for a document of the index.
func (ix *Index) textOf(ctx context.Context, d *tables.Doc) (string, error) {
	row, err := crawl.ReadRow(ctx, d.SourceFile, d.SourceRow, ix.cfg.Columns)
	if err != nil {
		return "", err
	}
	return ix.text(Page{Content: row.Content, HTML: ix.cfg.Columns.HTML != ""}), nil
}
