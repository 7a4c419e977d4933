// Package tables defines neardup's output tables as typed Parquet rows and
// writes them over any Beam filesystem. The README documents every column;
// keep the two in step.
package tables

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/neardup/neardup/io/store"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Doc statuses.
const (
	StatusOK       = "ok"        // sketched and clustered
	StatusEmpty    = "empty"     // no tokens (null, empty or only punctuation/whitespace)
	StatusTooShort = "too_short" // fewer tokens than the shingle size: identical copies only
	StatusRejected = "rejected"  // not processed; Reason says why
	StatusRedirect = "redirect"  // redirects to another URL (--redirect-column): not sketched, joins the cluster its chain ends in
)

// How a document is in its cluster (Doc.JoinedBy).
const (
	JoinedByContent   = "content"   // by its own content: linked, or the document its copies and redirects join
	JoinedByIdentical = "identical" // an identical copy of a member
	JoinedByRedirect  = "redirect"  // redirecting, directly or through a chain, to a member
)

// Doc is one row of docs/: one per input row, always.
type Doc struct {
	DocID              int64    `parquet:"doc_id"`
	ID                 *string  `parquet:"id,optional"`
	URL                *string  `parquet:"url,optional"`
	Date               *string  `parquet:"date,optional"`
	Sweep              string   `parquet:"sweep,dict"`
	SourceFile         string   `parquet:"source_file"`
	SourceRow          int64    `parquet:"source_row"`
	Status             string   `parquet:"status"`
	Reason             *string  `parquet:"reason,optional"`
	Extraction         string   `parquet:"extraction,dict"`
	TokenCount         int64    `parquet:"token_count"`
	ShingleCount       int64    `parquet:"shingle_count"`
	SketchSize         int32    `parquet:"sketch_size"`
	ContentFingerprint int64    `parquet:"content_fingerprint"`
	LexicalFingerprint int64    `parquet:"lexical_fingerprint"`
	ClusterID          *int64   `parquet:"cluster_id,optional"`
	IdenticalTo        *int64   `parquet:"identical_to,optional"`
	IsRepresentative   bool     `parquet:"is_representative"`
	KeptDocID          *int64   `parquet:"kept_doc_id,optional"`
	ResemblanceToKept  *float64 `parquet:"resemblance_to_kept,optional"`
	// JoinedBy is how the document is in its cluster (JoinedBy*); null
	// when it is in none.
	JoinedBy *string `parquet:"joined_by,optional"`
	// Under --redirect-column: the URL the row redirects to, as the
	// input has it; the document its chain of redirects ends at, in the
	// input; and the redirects followed to reach it (1: directly).
	RedirectTo     *string `parquet:"redirect_to,optional"`
	RedirectTarget *int64  `parquet:"redirect_target,optional"`
	RedirectHops   *int32  `parquet:"redirect_hops,optional"`
}

// Cluster is one row of clusters/: one per cluster of two or more documents.
type Cluster struct {
	ClusterID             int64    `parquet:"cluster_id" json:"cluster_id"`
	Size                  int64    `parquet:"size" json:"size"`
	IdenticalCopies       int64    `parquet:"identical_copies" json:"identical_copies"`
	RepresentativeDocID   int64    `parquet:"representative_doc_id" json:"representative_doc_id"`
	RepresentativeURL     *string  `parquet:"representative_url,optional" json:"representative_url"`
	LinkedPairs           int64    `parquet:"linked_pairs" json:"linked_pairs"`
	MinResemblance        *float64 `parquet:"min_resemblance,optional" json:"min_resemblance"`
	MeanResemblance       *float64 `parquet:"mean_resemblance,optional" json:"mean_resemblance"`
	MinResemblanceToKept  float64  `parquet:"min_resemblance_to_kept" json:"min_resemblance_to_kept"`
	MeanResemblanceToKept float64  `parquet:"mean_resemblance_to_kept" json:"mean_resemblance_to_kept"`
	// RedirectMembers is how many of Size are pages redirecting to
	// another member (--redirect-column).
	RedirectMembers int64 `parquet:"redirect_members" json:"redirect_members"`
}

// Pair is one row of pairs/: a pair of representatives that reached phase 4.
type Pair struct {
	DocA            int64    `parquet:"doc_a"`
	DocB            int64    `parquet:"doc_b"`
	Shared          int32    `parquet:"shared"`
	SketchSizeA     int32    `parquet:"sketch_size_a"`
	SketchSizeB     int32    `parquet:"sketch_size_b"`
	Resemblance     float64  `parquet:"resemblance"`
	ContainmentAInB *float64 `parquet:"containment_a_in_b,optional"`
	ContainmentBInA *float64 `parquet:"containment_b_in_a,optional"`
	Linked          bool     `parquet:"linked"`
	// Under --verify=bloom, the Bloom filters' estimates over the whole
	// feature sets (Jain et al.); under --verify=exact or --mode=exact,
	// the exact figures. Null where the run did not verify; where the
	// exact verification's filters proved the pair below every policy
	// the pairs table serves; and where the Bloom filters show no overlap
	// they can tell from chance (see clusters.VerifyPair).
	BloomResemblance     *float64 `parquet:"bloom_resemblance,optional"`
	BloomContainmentAInB *float64 `parquet:"bloom_containment_a_in_b,optional"`
	BloomContainmentBInA *float64 `parquet:"bloom_containment_b_in_a,optional"`
	ExactResemblance     *float64 `parquet:"exact_resemblance,optional"`
	ExactContainmentAInB *float64 `parquet:"exact_containment_a_in_b,optional"`
	ExactContainmentBInA *float64 `parquet:"exact_containment_b_in_a,optional"`
	// Under --verify=dense (the default), the resemblance estimated from
	// the two documents' dense samples (sketch.Dense) for the pairs
	// whose sketch estimate was too near the threshold to tell; null for
	// the others.
	DenseResemblance *float64 `parquet:"dense_resemblance,optional"`
}

// SetVerified sets the figures of the pair's verification, kind "bloom",
// "exact" or "dense" (a resemblance only), when it was checked.
func (p *Pair) SetVerified(kind string, checked bool, res, aInB, bInA float64) {
	if !checked {
		return
	}
	switch kind {
	case "dense":
		p.DenseResemblance = &res
		return
	case "bloom":
		p.BloomResemblance, p.BloomContainmentAInB, p.BloomContainmentBInA = &res, &aInB, &bInA
		return
	}
	p.ExactResemblance, p.ExactContainmentAInB, p.ExactContainmentBInA = &res, &aInB, &bInA
}

// Verified returns the figures of the pair's verification of kind "bloom",
// "exact" or "dense" (whose containments are the sketch's estimates), and
// whether it has them.
func (p *Pair) Verified(kind string) (res float64, aInB, bInA *float64, ok bool) {
	r, a, b := p.ExactResemblance, p.ExactContainmentAInB, p.ExactContainmentBInA
	switch kind {
	case "bloom":
		r, a, b = p.BloomResemblance, p.BloomContainmentAInB, p.BloomContainmentBInA
	case "dense":
		r, a, b = p.DenseResemblance, p.ContainmentAInB, p.ContainmentBInA
	}
	if r == nil {
		return 0, nil, nil, false
	}
	return *r, a, b, true
}

// LinkResemblance is the resemblance the pair's link carries to phase 4
// (which orders and scores clusters by it): its verified figure when it
// has one, its estimate otherwise.
func (p *Pair) LinkResemblance() float64 {
	switch {
	case p.ExactResemblance != nil:
		return *p.ExactResemblance
	case p.BloomResemblance != nil:
		return *p.BloomResemblance
	case p.DenseResemblance != nil:
		return *p.DenseResemblance
	}
	return p.Resemblance
}

// Contained is one row of contained/: a document roughly contained in
// another (Broder's containment estimate at or above the threshold), whether
// or not the two are clustered.
type Contained struct {
	Contained   int64   `parquet:"contained_doc"`
	Container   int64   `parquet:"container_doc"`
	Containment float64 `parquet:"containment"`
	Resemblance float64 `parquet:"resemblance"`
	Shared      int32   `parquet:"shared"`
	Linked      bool    `parquet:"linked"`
}

// ContainedRows derives the contained table's rows from pairs-table rows:
// each direction whose containment is at least threshold.
func ContainedRows(pairs []Pair, threshold float64) []Contained {
	var out []Contained
	for _, p := range pairs {
		if p.ContainmentAInB != nil && *p.ContainmentAInB >= threshold {
			out = append(out, Contained{p.DocA, p.DocB, *p.ContainmentAInB, p.Resemblance, p.Shared, p.Linked})
		}
		if p.ContainmentBInA != nil && *p.ContainmentBInA >= threshold {
			out = append(out, Contained{p.DocB, p.DocA, *p.ContainmentBInA, p.Resemblance, p.Shared, p.Linked})
		}
	}
	return out
}

// Sketch is one row of sketches/: a representative's sketch (identical
// copies share their representative's), the sorted 64-bit values stored
// as INT64 with the same bits. Recluster compares members with their kept
// document by them.
type Sketch struct {
	DocID       int64   `parquet:"doc_id"`
	IdentityKey int64   `parquet:"identity_key"`
	Sketch      []int64 `parquet:"sketch,list"`
}

// Posting is one row of postings/: one value of a representative's
// sketch (Broder's <shingle, doc> pair), with the sketch's size and the
// value's rank in it. Each shard holds one shingle partition sorted by
// shingle and doc, every representative's values, those of shingles too
// common to count included: an update merges its new documents' values
// with them, so that each shingle's document count stays right.
//
// The encodings are chosen for speed at the same size (a 399k-row shard:
// 4.2 MB written in 34 ms, against 57 ms with zstd throughout): sorted
// shingles delta-encoded and not compressed further, which would not
// shrink them, doc IDs zstd-compressed, sizes dictionary-encoded.
type Posting struct {
	Shingle    int64 `parquet:"shingle,delta,uncompressed"`
	DocID      int64 `parquet:"doc_id,zstd"`
	SketchSize int32 `parquet:"sketch_size,dict,zstd"`
	Rank       int32 `parquet:"rank,delta,uncompressed"`
}

// URL is one row of urls/: a URL and the sweeps it was seen in. Each
// shard holds the URLs of one partition of their fingerprints, sorted by
// URL: a query finds a URL's documents in one shard's page.
type URL struct {
	URL        string `parquet:"url"`
	FirstSweep string `parquet:"first_sweep"`
	LastSweep  string `parquet:"last_sweep"`
	Docs       int64  `parquet:"docs"`        // documents with this URL, over all sweeps
	LastDocID  int64  `parquet:"last_doc_id"` // its document of the last sweep (the smallest doc ID if several)
	// DocIDs are the Docs documents, ascending (an output written before
	// this column lacks it).
	DocIDs []int64 `parquet:"doc_ids,list"`
}

// Member is one row of members/: a document of a cluster, with what a
// query shows of it, stored by cluster. Each shard holds the clusters of
// one partition of their IDs, sorted by cluster_id, each cluster's kept
// document first, then by doc_id (SortMembers), so that a cluster's
// members are read together, from a page or two, however their documents
// are spread over the docs shards, and a page of them as a cluster's page
// lists them is a range of rows. The columns are the
// docs table's, but for Sketch: a representative's sketch (as in the
// sketches table), empty for the members without one of their own
// (identical copies, which share their representative's, and redirects).
type Member struct {
	ClusterID         int64    `parquet:"cluster_id"`
	DocID             int64    `parquet:"doc_id"`
	URL               *string  `parquet:"url,optional"`
	Sweep             string   `parquet:"sweep,dict"`
	SourceFile        string   `parquet:"source_file,dict"`
	SourceRow         int64    `parquet:"source_row"`
	Status            string   `parquet:"status,dict"`
	Reason            *string  `parquet:"reason,optional"`
	TokenCount        int64    `parquet:"token_count"`
	IdenticalTo       *int64   `parquet:"identical_to,optional"`
	KeptDocID         *int64   `parquet:"kept_doc_id,optional"`
	ResemblanceToKept *float64 `parquet:"resemblance_to_kept,optional"`
	JoinedBy          *string  `parquet:"joined_by,optional"`
	Sketch            []int64  `parquet:"sketch,list"`
}

// MemberOf is the members row of d, a document in a cluster, with its
// own sketch (nil when it has none).
func MemberOf(d *Doc, sketch []uint64) Member {
	m := Member{ClusterID: *d.ClusterID, DocID: d.DocID, URL: d.URL, Sweep: d.Sweep, SourceFile: d.SourceFile, SourceRow: d.SourceRow,
		Status: d.Status, Reason: d.Reason, TokenCount: d.TokenCount, IdenticalTo: d.IdenticalTo, KeptDocID: d.KeptDocID,
		ResemblanceToKept: d.ResemblanceToKept, JoinedBy: d.JoinedBy}
	if len(sketch) > 0 {
		m.Sketch = make([]int64, len(sketch))
		for i, v := range sketch {
			m.Sketch[i] = int64(v)
		}
	}
	return m
}

// Doc is the docs row of a members row, as far as it holds one (the
// docs columns it lacks are zero).
func (m *Member) Doc() Doc {
	c := m.ClusterID
	return Doc{DocID: m.DocID, URL: m.URL, Sweep: m.Sweep, SourceFile: m.SourceFile, SourceRow: m.SourceRow, Status: m.Status,
		Reason: m.Reason, TokenCount: m.TokenCount, ClusterID: &c, IdenticalTo: m.IdenticalTo, KeptDocID: m.KeptDocID,
		ResemblanceToKept: m.ResemblanceToKept, JoinedBy: m.JoinedBy}
}

// SortMembers sorts members rows as the members table stores them: by
// cluster, each cluster's kept document first, then by doc ID.
func SortMembers(rows []Member) {
	slices.SortFunc(rows, func(x, y Member) int {
		return cmp.Or(cmp.Compare(x.ClusterID, y.ClusterID), -cmpBool(x.kept(), y.kept()), cmp.Compare(x.DocID, y.DocID))
	})
}

func (m *Member) kept() bool { return m.KeptDocID != nil && *m.KeptDocID == m.DocID }

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// LargestClusters is how many clusters the largest table lists.
const LargestClusters = 10000

// SortLargest sorts clusters as the largest table lists them: largest
// first, ties by cluster ID.
func SortLargest(rows []Cluster) {
	slices.SortFunc(rows, func(a, b Cluster) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.ClusterID, b.ClusterID))
	})
}

// Lost is one row of lost/: a URL seen in an earlier sweep and absent from
// the latest, and one live document of its cluster (Broder's "lost and
// found"), or none (nulls) when it has no cluster or no live member.
type Lost struct {
	URL         string   `parquet:"url"`
	LastSweep   string   `parquet:"last_sweep"`
	DocID       int64    `parquet:"doc_id"` // the URL's document of its last sweep
	ClusterID   *int64   `parquet:"cluster_id,optional"`
	FoundDocID  *int64   `parquet:"found_doc_id,optional"`
	FoundURL    *string  `parquet:"found_url,optional"`
	Resemblance *float64 `parquet:"resemblance,optional"` // estimated, from the two sketches
}

// Table names, also the output sub-folders.
const (
	DocsTable      = "docs"
	ClustersTable  = "clusters"
	PairsTable     = "pairs"
	ContainedTable = "contained"
	SketchesTable  = "sketches"
	PostingsTable  = "postings"
	URLsTable      = "urls"
	LostTable      = "lost"
	// The lookup tables, which query and serve read a few pages of.
	MembersTable = "members"
	LargestTable = "largest" // the LargestClusters largest clusters' rows of clusters/, largest first, in one shard
)

// Tables lists every output table.
var Tables = []string{DocsTable, ClustersTable, PairsTable, ContainedTable, SketchesTable, PostingsTable, URLsTable, LostTable,
	MembersTable, LargestTable}

// ShardName is the file name of shard i of a table.
func ShardName(i int) string { return fmt.Sprintf("part-%05d.parquet", i) }

// codec compresses every column without a codec of its own: zstd at its
// fastest level, which wrote an update's 205k docs rows in 221 ms instead
// of 338 at the default level, and 205k urls rows in 87 instead of 138,
// at the same sizes (18.7 and 18.9 MB, 8.0 and 7.8; snappy was barely
// faster and 45% larger).
var codec = &zstd.Codec{Level: zstd.SpeedFastest}

// Write writes rows to a zstd-compressed Parquet file at name on any filesystem
// package store serves, replacing it once the file is whole (store.Writer):
// a write that fails leaves no part of a file behind. Rows go in chunks:
// parquet-go cuts a page per Write call, and one row per call makes files
// balloon.
func Write[T any](ctx context.Context, name string, rows []T) error {
	_, err := WriteSized(ctx, name, rows)
	return err
}

// WriteSized is Write, and returns the file's size in bytes.
func WriteSized[T any](ctx context.Context, name string, rows []T) (int64, error) {
	return WriteEach(ctx, name, len(rows), func(buf []T, from int) { copy(buf, rows[from:]) })
}

// WriteEach is WriteSized for n rows made a chunk at a time: fill puts
// rows from, from+1, ... into buf (called in order, from 0), so a caller
// whose rows are another type's records need not hold them all twice.
func WriteEach[T any](ctx context.Context, name string, n int, fill func(buf []T, from int)) (int64, error) {
	f, err := store.OpenWrite(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Abort() // on every error; nothing after Close
	cw := &countingWriter{w: f}
	w := parquet.NewGenericWriter[T](cw, append(writerOptions[T](), parquet.Compression(codec), parquet.MaxRowsPerRowGroup(1<<17))...)
	const chunk = 4096
	buf := make([]T, min(chunk, n))
	for i := 0; i < n; i += chunk {
		b := buf[:min(chunk, n-i)]
		fill(b, i)
		if _, err := w.Write(b); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return cw.n, nil
}

// writerOptions are a table's own Parquet writer options. Every table has
// a page index (parquet-go writes one by default): each page's bounds,
// by which a lookup (OpenLookup) reads only the pages that may hold its
// key. The urls table's page bounds keep 256 bytes of each URL rather
// than 16, which would be the scheme and host of most of a page's URLs
// and tell its pages apart no better than its row group's. A table with
// nullable integer columns says so to pandas (pandasMetadata).
func writerOptions[T any]() []parquet.WriterOption {
	var opts []parquet.WriterOption
	if _, ok := any(*new(T)).(URL); ok {
		opts = append(opts, parquet.ColumnIndexSizeLimit(func(path []string) int {
			if len(path) == 1 && path[0] == "url" {
				return 256
			}
			return parquet.DefaultColumnIndexSizeLimit
		}))
	}
	if md := pandasMetadata[T](); md != "" {
		opts = append(opts, parquet.KeyValueMetadata(PandasKey, md))
	}
	return opts
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Encode packs rows into bytes to carry them through a shuffle.
func Encode[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(rows)
	return b.Bytes(), err
}

// Decode unpacks rows packed by Encode and appends them to dst.
func Decode[T any](dst []T, b []byte) ([]T, error) {
	if len(b) == 0 {
		return dst, nil // an empty batch (see transforms.everyPartition)
	}
	var rows []T
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&rows); err != nil {
		return dst, err
	}
	return append(dst, rows...), nil
}

// AppendPairDocAs appends the doc_a of each row of a batch of pairs rows
// that Encode wrote, decoding that field only: where a reader needs the
// rows' keys before their rows (gob skips the fields its target lacks).
func AppendPairDocAs(dst []int64, b []byte) ([]int64, error) {
	if len(b) == 0 {
		return dst, nil
	}
	var rows []struct{ DocA int64 }
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&rows); err != nil {
		return dst, err
	}
	for _, r := range rows {
		dst = append(dst, r.DocA)
	}
	return dst, nil
}

// ShardPartition reads which keys a shard of a table holds from its name,
// in an output cut into partitions partitions: those of partition part of
// of (packed.Partition(key, of) == part). A run's own shards are
// part-QQQQQ.parquet, of partitions; a shard carried from an earlier
// run's output keeps the partition count it was cut by in its name,
// part-QQQQQ-of-PPPPP-nNNNNNN.parquet; carried reports which it is.
func ShardPartition(name string, partitions int) (part, of int, carried bool, err error) {
	base := path.Base(name)
	var n int
	if _, err := fmt.Sscanf(base, "part-%05d-of-%05d-n%06d.parquet", &part, &of, &n); err == nil {
		carried = true
	} else if _, err := fmt.Sscanf(base, "part-%05d.parquet", &part); err != nil {
		return 0, 0, false, fmt.Errorf("%s is not a neardup shard (part-N.parquet or part-N-of-P-nF.parquet)", name)
	} else {
		of = partitions
	}
	if of <= 0 || part < 0 || part >= of || partitions%of != 0 {
		return 0, 0, false, fmt.Errorf("%s is not a shard of an output with %d partitions", name, partitions)
	}
	return part, of, carried, nil
}
