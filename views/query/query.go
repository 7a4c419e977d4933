// Package query answers Broder's queries from a finished neardup output,
// without running the pipeline: given a URL, its document's cluster and
// every member with its resemblance to it; given a page's text, the
// indexed documents it resembles or is contained in; and, over the full
// shingle sets read back from the input files, the exact resemblance and
// containment of two documents.
//
// An Index reads the few pages of the output's lookup tables each query
// needs (see tables.OpenLookup), locally or by ranged reads on an object
// store, so that its time and memory do not grow with the output; an
// output written without them is loaded whole.
package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/redirects"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
)

// ErrUnknownURL is the error of a query for a URL no document has.
var ErrUnknownURL = errors.New("no document has this URL")

// Index is a finished output opened for queries. It is safe for
// concurrent use.
type Index struct {
	Dir      string
	Manifest *output.Manifest
	// Note is what a user should know of how the output is read: set for
	// an output without the lookup tables, which is loaded whole.
	Note string
	cfg  settings.Config
	src  source
}

// source is where an Index reads an output's rows: its lookup tables, a
// few pages a query (lookups), or, for an output written before them or
// without them (--tables), the whole tables loaded at Open (loaded).
type source interface {
	// urlDocs is every document with the URL, by doc ID.
	urlDocs(ctx context.Context, url string) ([]tables.Doc, error)
	// doc is the document with the doc ID, or nil.
	doc(ctx context.Context, id int64) (*tables.Doc, error)
	// docs is the documents with the doc IDs (any order; none for an ID
	// no document has).
	docs(ctx context.Context, ids []int64) ([]tables.Doc, error)
	// members is the clusters' members (any order), a representative
	// with its sketch.
	members(ctx context.Context, clusters ...int64) ([]tables.Member, error)
	// membersFrom is n of a cluster's members from the offset-th, the
	// kept document first, then by doc ID (tables.SortMembers), and how
	// many it has.
	membersFrom(ctx context.Context, cluster int64, offset, n int) ([]tables.Member, int, error)
	// cluster is the cluster's row (kept: its kept document), or nil.
	cluster(ctx context.Context, id, kept int64) (*tables.Cluster, error)
	// sketch is a representative's sketch, or nil.
	sketch(ctx context.Context, rep int64) ([]uint64, error)
	// sketches is the representatives' sketches, by doc ID.
	sketches(ctx context.Context, reps []int64) (map[int64][]uint64, error)
	// largest is the clusters the listing shows, largest first, and how
	// many clusters there are.
	largest(ctx context.Context) ([]tables.Cluster, int, error)
	// numDocs is the number of documents.
	numDocs() int
	// candidates is every representative sharing a value with sketch q
	// (sorted), with what it shares.
	candidates(ctx context.Context, q []uint64) ([]candidate, error)
}

// candidate is a representative sharing values with a page's sketch: its
// sketch when the source holds it, else its sketch's size and the values
// it shares.
type candidate struct {
	doc    int64
	sketch []uint64
	size   int
	shared int
}

// Open opens the output in dir. It refuses a folder without _SUCCESS, an
// output written by another fingerprint version, and one without the
// tables it reads (tables.QueryNeeds: written with --tables, or before
// the sketches table existed). An output with the lookup tables
// (tables.LookupNeeds) is read a few pages a query; one without them is
// loaded whole, and Note says so.
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
	ix := &Index{Dir: dir, Manifest: m, cfg: cfg}
	if missing := tables.Selection(tableNames(m)).Missing(tables.LookupNeeds); len(missing) > 0 {
		ix.Note = fmt.Sprintf("%s has no %s tables (written before them, or with --tables), so it is loaded whole: time and memory grow with the output. "+
			"runner recluster --from %s --output NEW (under the same policy) rewrites it with them.", dir, strings.Join(missing, ", "), dir)
		ix.src, err = load(ctx, dir, m)
		return ix, err
	}
	ix.src, err = newLookups(ctx, dir, m, cfg.Seed)
	return ix, err
}

// tableNames lists the tables the manifest has.
func tableNames(m *output.Manifest) []string {
	var out []string
	for _, t := range tables.Tables {
		if _, ok := m.Tables[t]; ok {
			out = append(out, t)
		}
	}
	return out
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
func (ix *Index) docOf(ctx context.Context, d *tables.Doc) (Doc, error) {
	out := docOf(d)
	var err error
	out.Chain, err = ix.chain(ctx, d)
	return out, err
}

// chain follows d's redirects through the output's docs, URL by URL, as
// the run did (package redirects), until a document with content, a URL
// no document has, a URL passed already, or redirects.MaxHops redirects.
func (ix *Index) chain(ctx context.Context, d *tables.Doc) ([]Hop, error) {
	var hops []Hop
	seen := map[string]bool{}
	if d.URL != nil {
		seen[*d.URL] = true
	}
	for d != nil && d.Status == tables.StatusRedirect && d.RedirectTo != nil && len(hops) < redirects.MaxHops {
		u := redirects.Target(deref(d.URL), *d.RedirectTo)
		h := Hop{URL: u}
		var err error
		if d, err = ix.urlOwner(ctx, u); err != nil {
			return nil, err
		}
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
	return hops, nil
}

// urlOwner is the document that wins url in redirect resolution, or nil.
func (ix *Index) urlOwner(ctx context.Context, url string) (*tables.Doc, error) {
	docs, err := ix.src.urlDocs(ctx, url)
	if err != nil {
		return nil, err
	}
	var best *tables.Doc
	var bestOwner packed.URLOwner
	for i := range docs {
		d := &docs[i]
		o := redirects.Claim(d)
		if best == nil || redirects.Wins(o, bestOwner) {
			best, bestOwner = d, o
		}
	}
	return best, nil
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
	found, err := ix.src.urlDocs(ctx, url)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%q: %w in %s", url, ErrUnknownURL, ix.Dir)
	}
	var answers []URLAnswer
	for i := range found {
		d := &found[i]
		doc, err := ix.docOf(ctx, d)
		if err != nil {
			return nil, err
		}
		a := URLAnswer{Doc: doc}
		if d.ClusterID != nil {
			members, err := ix.src.members(ctx, *d.ClusterID)
			if err != nil {
				return nil, err
			}
			kept := int64(-1)
			if d.KeptDocID != nil {
				kept = *d.KeptDocID
			}
			if a.Cluster, err = ix.src.cluster(ctx, *d.ClusterID, kept); err != nil {
				return nil, err
			}
			sketches := ix.memberSketches(members)
			for j := range members {
				if members[j].DocID == kept {
					k := docOf(ptr(members[j].Doc()))
					a.Kept = &k
				}
			}
			q, err := ix.sketchIn(ctx, sketches, d.DocID, d.IdenticalTo)
			if err != nil {
				return nil, err
			}
			var qSet []uint64
			if exact {
				if qSet, err = ix.shinglesOf(ctx, d); err != nil {
					return nil, err
				}
			}
			for j := range members {
				m := &members[j]
				ms, err := ix.sketchIn(ctx, sketches, m.DocID, m.IdenticalTo)
				if err != nil {
					return nil, err
				}
				member := Member{Doc: docOf(ptr(m.Doc())), Similarity: ix.similarity(q, ms)}
				if exact {
					md := m.Doc()
					set, err := ix.shinglesOf(ctx, &md)
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

func ptr[T any](x T) *T { return &x }

// memberSketches are the sketches of a cluster's members that have one
// of their own, by doc ID.
func (ix *Index) memberSketches(members []tables.Member) map[int64][]uint64 {
	out := map[int64][]uint64{}
	for _, m := range members {
		if len(m.Sketch) > 0 {
			out[m.DocID] = uint64s(m.Sketch)
		}
	}
	return out
}

// uint64s is a stored sketch's values (INT64 with the same bits).
func uint64s(v []int64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = uint64(x)
	}
	return out
}

// sketchIn is a document's sketch: its own if it is a representative, its
// representative's if it is an identical copy (identical), from sketches
// when they hold it, else from the output; nil if it has none (empty, too
// short or rejected, or a redirect).
func (ix *Index) sketchIn(ctx context.Context, sketches map[int64][]uint64, id int64, identical *int64) ([]uint64, error) {
	if identical != nil {
		id = *identical
	}
	if s, ok := sketches[id]; ok {
		return s, nil
	}
	return ix.src.sketch(ctx, id)
}

// sketchOf is a document's sketch, read from the output (see sketchIn).
func (ix *Index) sketchOf(ctx context.Context, d *tables.Doc) ([]uint64, error) {
	return ix.sketchIn(ctx, nil, d.DocID, d.IdenticalTo)
}

// similarity estimates how alike m is to the query q from their sketches.
func (ix *Index) similarity(q, m []uint64) Similarity {
	if len(q) == 0 || len(m) == 0 {
		return Similarity{}
	}
	e := clusters.EstimateSketches(m, q, ix.cfg.Sketch)
	return Similarity{Shared: e.Shared, Resemblance: e.Resemblance, InQuery: e.AInB, OfQuery: e.BInA}
}

// Doc is the document with the doc ID, with its redirect chain.
func (ix *Index) Doc(ctx context.Context, id int64) (Doc, bool, error) {
	d, err := ix.src.doc(ctx, id)
	if err != nil || d == nil {
		return Doc{}, false, err
	}
	out, err := ix.docOf(ctx, d)
	return out, err == nil, err
}

// NumDocs is the number of documents in the output.
func (ix *Index) NumDocs() int { return ix.src.numDocs() }

// Clusters lists n clusters from the offset-th, largest first (ties by
// cluster ID), of those the output lists (see Listed), and how many
// clusters there are.
func (ix *Index) Clusters(ctx context.Context, offset, n int) ([]tables.Cluster, int, error) {
	list, total, err := ix.src.largest(ctx)
	if err != nil || offset < 0 || offset >= len(list) {
		return nil, total, err
	}
	return list[offset:min(offset+n, len(list))], total, nil
}

// Listed is how many clusters Clusters lists: every cluster of an output
// loaded whole, else the largest table's (tables.LargestClusters at
// most).
func (ix *Index) Listed(ctx context.Context) (int, error) {
	list, _, err := ix.src.largest(ctx)
	return len(list), err
}

// ClusterPage is a page of a cluster: its row, and n of its members from
// the offset-th, the kept document first, then by doc ID, each with its
// similarity to the cluster's representative; and how many members it
// has. ok is false when there is no such cluster.
func (ix *Index) ClusterPage(ctx context.Context, id int64, offset, n int) (c tables.Cluster, members []Member, total int, ok bool, err error) {
	rows, total, err := ix.src.membersFrom(ctx, id, offset, n)
	if err != nil || total == 0 {
		return c, nil, 0, false, err
	}
	kept := int64(-1)
	if rows[0].KeptDocID != nil {
		kept = *rows[0].KeptDocID
	}
	row, err := ix.src.cluster(ctx, id, kept)
	if err != nil || row == nil {
		return c, nil, 0, false, err
	}
	c = *row
	var docs []tables.Doc
	for _, m := range rows {
		docs = append(docs, m.Doc())
	}
	sketches := ix.memberSketches(rows)
	var repDoc *tables.Doc
	if repDoc, err = ix.src.doc(ctx, c.RepresentativeDocID); err != nil {
		return c, nil, 0, false, err
	}
	var rep []uint64
	if repDoc != nil {
		if rep, err = ix.sketchIn(ctx, sketches, repDoc.DocID, repDoc.IdenticalTo); err != nil {
			return c, nil, 0, false, err
		}
	}
	for i := range docs {
		d := &docs[i]
		ms, err := ix.sketchIn(ctx, sketches, d.DocID, d.IdenticalTo)
		if err != nil {
			return c, nil, 0, false, err
		}
		members = append(members, Member{Doc: docOf(d), Similarity: ix.similarity(rep, ms)})
	}
	return c, members, total, true, nil
}

// Similar is the estimated similarity of document b to document a.
func (ix *Index) Similar(ctx context.Context, a, b int64) (Similarity, error) {
	var sk [2][]uint64
	for i, id := range []int64{a, b} {
		d, err := ix.src.doc(ctx, id)
		if err != nil || d == nil {
			return Similarity{}, err
		}
		if sk[i], err = ix.sketchOf(ctx, d); err != nil {
			return Similarity{}, err
		}
	}
	return ix.similarity(sk[0], sk[1]), nil
}

// TextOf reads the document's text back from its input file, as the run
// read it (HTML reduced to its text).
func (ix *Index) TextOf(ctx context.Context, id int64) (string, error) {
	d, err := ix.src.doc(ctx, id)
	if err != nil {
		return "", err
	}
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
