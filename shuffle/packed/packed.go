// Package packed holds the fixed-width binary records that neardup carries
// through Beam shuffles in batches. A shuffled element costs microseconds and
// a kilobyte of runner memory no matter how small it is, so the pipeline
// never shuffles one element per shingle or per pair: it packs thousands of
// these records into one []byte keyed by a hash partition, and each
// partition is sorted and merged in memory (Broder's divide, compute, merge).
package packed

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/hashing/fingerprint"
)

var le = binary.LittleEndian

// NoDoc stands for "no document" where a doc ID is optional.
const NoDoc = ^uint64(0)

// Partition maps a 64-bit key to one of n partitions. The key is mixed first
// so that structured keys (doc IDs are file<<40|row) spread evenly.
func Partition(key uint64, n int) int {
	return int(fingerprint.Mix(key) % uint64(n))
}

// Decoding. Each record type's layout is written out twice, side by side:
// in its Append method, which encodes it, and in its decoder. The loop
// over a batch of fixed-width records is written once, in appendFixed:
// each Append<Type>s names only its type's size, its decode<Type> and
// what errors call a batch of it. The records of a header and uint64
// values (Sketch, Member, Features) share their framing check and value
// reading (variable.frame, readUint64s) but each keeps its own short
// loop; variable says why.

// appendFixed decodes the size-byte records in b with decode and appends
// them to dst; name is what a batch of them is called in errors. It is
// small enough to be inlined into each Append<Type>s, where decode, then
// known, is inlined in turn: the loop compiles to what a hand-written one
// would, with no call per record (see BenchmarkDecode*).
func appendFixed[T any](dst []T, b []byte, size int, name string, decode func([]byte) T) ([]T, error) {
	if len(b)%size != 0 {
		return dst, batchSizeError{name, len(b), size}
	}
	for ; len(b) > 0; b = b[size:] {
		dst = append(dst, decode(b))
	}
	return dst, nil
}

// batchSizeError is a batch of fixed-width records whose length is not a
// multiple of their size. (A struct value, not fmt.Errorf, keeps
// appendFixed within the inlining budget.)
type batchSizeError struct {
	name      string
	len, size int
}

func (e batchSizeError) Error() string {
	return fmt.Sprintf("packed: %s batch of %d bytes is not a multiple of %d", e.name, e.len, e.size)
}

// variable is the layout of a record of a header followed by 8-byte
// values: the header's size; where in it the counts of its uint64 values
// are (counts uint32s from countsAt; the values follow the header in that
// order); and, if rankAt is not 0, where the count of its rank is (a
// --keep rank's float64s, package keep, which follow the uint64 values).
// name is what errors call a record.
//
// A generic loop over such records, like appendFixed's, cannot be
// inlined with its decoder (reading the values puts it over the inlining
// budget), and every form of it measured (a decoder called per record
// returning the record, filling it in place or appending it, or a
// callback) decoded sketches 10-20% slower, and records with few values
// up to 2-3x slower, than a loop written out per type.
type variable struct {
	name                     string
	header, countsAt, counts int
	rankAt                   int
}

// frame checks the framing of the records of layout l in b and returns
// an arena for all their uint64 values and one for their ranks' values.
func (l *variable) frame(b []byte) ([]uint64, []float64, error) {
	values, ranks := 0, 0
	for len(b) > 0 {
		if len(b) < l.header {
			return nil, nil, fmt.Errorf("packed: truncated %s record (%d bytes left)", l.name, len(b))
		}
		n := 0
		for i := range l.counts {
			n += int(le.Uint32(b[l.countsAt+4*i:]))
		}
		r := 0
		if l.rankAt != 0 {
			r = int(le.Uint32(b[l.rankAt:]))
		}
		b = b[l.header:]
		if n < 0 || r < 0 || len(b)/8 < n+r {
			return nil, nil, fmt.Errorf("packed: truncated %s record: %d values, %d bytes left", l.name, n+r, len(b))
		}
		b = b[8*(n+r):]
		values += n
		ranks += r
	}
	return make([]uint64, values), make([]float64, ranks), nil
}

// readUint64s reads n values from b into the front of arena (nil for none).
func readUint64s(b []byte, n int, arena []uint64) ([]uint64, []byte, []uint64) {
	if n == 0 {
		return nil, b, arena
	}
	vs := arena[:n:n]
	for i := range vs {
		vs[i] = le.Uint64(b[8*i:])
	}
	return vs, b[8*n:], arena[n:]
}

// readRank reads a rank of n values from b into the front of arena (nil
// for none).
func readRank(b []byte, n int, arena []float64) ([]float64, []byte, []float64) {
	if n == 0 {
		return nil, b, arena
	}
	vs := arena[:n:n]
	for i := range vs {
		vs[i] = math.Float64frombits(le.Uint64(b[8*i:]))
	}
	return vs, b[8*n:], arena[n:]
}

// appendRank appends the values of a rank.
func appendRank(b []byte, r []float64) []byte {
	for _, x := range r {
		b = le.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// Posting is one <shingle, doc> entry of phase 2. Size is the document's
// sketch size and Rank the shingle's position in the sorted sketch; carrying
// them here lets phase 3 estimate resemblance without a join.
type Posting struct {
	Shingle uint64
	Doc     uint64
	Size    uint32
	Rank    uint16
}

// PostingSize is the encoded size of a Posting.
const PostingSize = 22

// Append appends the encoding of p to b.
func (p Posting) Append(b []byte) []byte {
	b = le.AppendUint64(b, p.Shingle)
	b = le.AppendUint64(b, p.Doc)
	b = le.AppendUint32(b, p.Size)
	return le.AppendUint16(b, p.Rank)
}

func decodePosting(b []byte) Posting {
	return Posting{le.Uint64(b), le.Uint64(b[8:]), le.Uint32(b[16:]), le.Uint16(b[20:])}
}

// AppendPostings decodes the postings in b and appends them to dst.
func AppendPostings(dst []Posting, b []byte) ([]Posting, error) {
	return appendFixed(dst, b, PostingSize, "postings", decodePosting)
}

// Pair is one <docA, docB, count> triplet of phase 3, with A < B. Before the
// merge, Count is the number of shared shingles seen so far and RankA, RankB
// the ranks of one shared shingle (MIN_s needs them); after it, Count is the
// total and MinShared Broder's MIN_s numerator.
type Pair struct {
	A, B         uint64
	Count        uint32
	SizeA, SizeB uint32
	RankA, RankB uint16
	MinShared    uint32
}

// PairSize is the encoded size of a Pair.
const PairSize = 36

// Append appends the encoding of p to b.
func (p Pair) Append(b []byte) []byte {
	b = le.AppendUint64(b, p.A)
	b = le.AppendUint64(b, p.B)
	b = le.AppendUint32(b, p.Count)
	b = le.AppendUint32(b, p.SizeA)
	b = le.AppendUint32(b, p.SizeB)
	b = le.AppendUint16(b, p.RankA)
	b = le.AppendUint16(b, p.RankB)
	return le.AppendUint32(b, p.MinShared)
}

func decodePair(b []byte) Pair {
	return Pair{le.Uint64(b), le.Uint64(b[8:]), le.Uint32(b[16:]), le.Uint32(b[20:]), le.Uint32(b[24:]), le.Uint16(b[28:]), le.Uint16(b[30:]), le.Uint32(b[32:])}
}

// AppendPairs decodes the pairs in b and appends them to dst.
func AppendPairs(dst []Pair, b []byte) ([]Pair, error) {
	return appendFixed(dst, b, PairSize, "pairs", decodePair)
}

// Sketch is one document's entry to the identical-document shortcut: the
// fingerprint that decides identity, the doc, its sketch and, in
// super-shingle mode, its super-shingles. Docs with no shingles still take
// part (identical short pages are still copies). The super-shingle mode's
// sketch join reuses the record with Key and Doc naming a candidate pair.
// Rank is the document's rank under --keep, which the shortcut passes on
// with each copy. Site is the fingerprint of the document's site (0:
// none) under --template-shingles, where sketches travel to their site's
// partition first.
type Sketch struct {
	Key    uint64
	Doc    uint64
	Rank   []float64
	Site   uint64
	Values []uint64
	Supers []uint64
	// Features is how many features the document has, of which Values
	// are the sample (--mode=exact's filters need the whole set's size).
	Features uint32
}

// sketchHeader is the encoded size of a Sketch without its values.
const sketchHeader = 40

// sketchLayout: the counts of Values and Supers are at 24 and 28, the
// rank's at 32.
var sketchLayout = variable{"sketch", sketchHeader, 24, 2, 32}

// Append appends the encoding of s to b.
func (s Sketch) Append(b []byte) []byte {
	b = le.AppendUint64(b, s.Key)
	b = le.AppendUint64(b, s.Doc)
	b = le.AppendUint64(b, s.Site)
	b = le.AppendUint32(b, uint32(len(s.Values)))
	b = le.AppendUint32(b, uint32(len(s.Supers)))
	b = le.AppendUint32(b, uint32(len(s.Rank)))
	b = le.AppendUint32(b, s.Features)
	for _, v := range s.Values {
		b = le.AppendUint64(b, v)
	}
	for _, v := range s.Supers {
		b = le.AppendUint64(b, v)
	}
	return appendRank(b, s.Rank)
}

// AppendSketches decodes the sketches in b and appends them to dst. The
// values of all of b's sketches share one allocation.
func AppendSketches(dst []Sketch, b []byte) ([]Sketch, error) {
	arena, ranks, err := sketchLayout.frame(b)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 {
		s := Sketch{Key: le.Uint64(b), Doc: le.Uint64(b[8:]), Site: le.Uint64(b[16:]), Features: le.Uint32(b[36:])}
		n, m, r := int(le.Uint32(b[24:])), int(le.Uint32(b[28:])), int(le.Uint32(b[32:]))
		b = b[sketchHeader:]
		s.Values, b, arena = readUint64s(b, n, arena)
		s.Supers, b, arena = readUint64s(b, m, arena)
		s.Rank, b, ranks = readRank(b, r, ranks)
		dst = append(dst, s)
	}
	return dst, nil
}

// SiteCount is a count of the site-template step (--template-shingles):
// with Pages false, Docs pages of site Site hold sketch value Value; with
// Pages true, site Site has Docs pages (Value unused).
type SiteCount struct {
	Site, Value uint64
	Docs        uint32
	Pages       bool
}

// SiteCountSize is the encoded size of a SiteCount.
const SiteCountSize = 21

// Append appends the encoding of c to b.
func (c SiteCount) Append(b []byte) []byte {
	b = le.AppendUint64(b, c.Site)
	b = le.AppendUint64(b, c.Value)
	b = le.AppendUint32(b, c.Docs)
	if c.Pages {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeSiteCount(b []byte) SiteCount {
	return SiteCount{le.Uint64(b), le.Uint64(b[8:]), le.Uint32(b[16:]), b[20] != 0}
}

// AppendSiteCounts decodes the counts in b and appends them to dst.
func AppendSiteCounts(dst []SiteCount, b []byte) ([]SiteCount, error) {
	return appendFixed(dst, b, SiteCountSize, "site counts", decodeSiteCount)
}

// Edge is a union-find input: a link of phase 4 (Resemblance set, Copy
// false) or an identical copy joined to its representative (A the
// representative, B the copy, Copy true, Rank the copy's rank under
// --keep: the copy's own rank travels with it to its representative's
// partition).
type Edge struct {
	A, B        uint64
	Resemblance float64
	Rank        []float64
	Copy        bool
}

// edgeHeader is the encoded size of an Edge without its rank.
const edgeHeader = 29

// edgeLayout: no uint64 values; the rank's count is at 24.
var edgeLayout = variable{"edge", edgeHeader, 0, 0, 24}

// Append appends the encoding of e to b.
func (e Edge) Append(b []byte) []byte {
	b = le.AppendUint64(b, e.A)
	b = le.AppendUint64(b, e.B)
	b = le.AppendUint64(b, math.Float64bits(e.Resemblance))
	b = le.AppendUint32(b, uint32(len(e.Rank)))
	if e.Copy {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return appendRank(b, e.Rank)
}

// AppendEdges decodes the edges in b and appends them to dst. The ranks
// of all of b's edges share one allocation.
func AppendEdges(dst []Edge, b []byte) ([]Edge, error) {
	_, ranks, err := edgeLayout.frame(b)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 {
		e := Edge{A: le.Uint64(b), B: le.Uint64(b[8:]), Resemblance: math.Float64frombits(le.Uint64(b[16:])), Copy: b[28] == 1}
		r := int(le.Uint32(b[24:]))
		b = b[edgeHeader:]
		e.Rank, b, ranks = readRank(b, r, ranks)
		dst = append(dst, e)
	}
	return dst, nil
}

// DocRank is a document's rank under --keep (package keep), on its way to
// the document's partition in phase 4.
type DocRank struct {
	Doc  uint64
	Rank []float64
}

// docRankHeader is the encoded size of a DocRank without its rank.
const docRankHeader = 12

// docRankLayout: the rank's count is at 8.
var docRankLayout = variable{"rank", docRankHeader, 0, 0, 8}

// Append appends the encoding of r to b.
func (r DocRank) Append(b []byte) []byte {
	b = le.AppendUint64(b, r.Doc)
	b = le.AppendUint32(b, uint32(len(r.Rank)))
	return appendRank(b, r.Rank)
}

// AppendDocRanks decodes the ranks in b and appends them to dst. Their
// values share one allocation.
func AppendDocRanks(dst []DocRank, b []byte) ([]DocRank, error) {
	_, ranks, err := docRankLayout.frame(b)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 {
		d := DocRank{Doc: le.Uint64(b)}
		r := int(le.Uint32(b[8:]))
		b = b[docRankHeader:]
		d.Rank, b, ranks = readRank(b, r, ranks)
		dst = append(dst, d)
	}
	return dst, nil
}

// Assignment places one document in a cluster. IdenticalTo is NoDoc unless
// the document is an identical copy skipped by the shortcut. Kept is the
// document that stands for the cluster (--keep), ResToKept this one's
// estimated resemblance to it. Under --redirect-column, a redirecting
// document's Outcome says how its chain ended (a redirects.Outcome), Hops
// how many redirects it followed and Target the document it ended at
// (NoDoc for none); when the chain did not end at a document of the input,
// Cluster and Kept are NoDoc: the assignment only carries that outcome to
// the docs row.
type Assignment struct {
	Doc, Cluster, IdenticalTo, Kept uint64
	ResToKept                       float64
	Target                          uint64
	Hops                            uint16
	Outcome                         uint8
}

// AssignmentSize is the encoded size of an Assignment.
const AssignmentSize = 51

// Append appends the encoding of a to b.
func (a Assignment) Append(b []byte) []byte {
	b = le.AppendUint64(b, a.Doc)
	b = le.AppendUint64(b, a.Cluster)
	b = le.AppendUint64(b, a.IdenticalTo)
	b = le.AppendUint64(b, a.Kept)
	b = le.AppendUint64(b, math.Float64bits(a.ResToKept))
	b = le.AppendUint64(b, a.Target)
	b = le.AppendUint16(b, a.Hops)
	return append(b, a.Outcome)
}

func decodeAssignment(b []byte) Assignment {
	return Assignment{le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:]), math.Float64frombits(le.Uint64(b[32:])), le.Uint64(b[40:]), le.Uint16(b[48:]), b[50]}
}

// AppendAssignments decodes the assignments in b and appends them to dst.
func AppendAssignments(dst []Assignment, b []byte) ([]Assignment, error) {
	return appendFixed(dst, b, AssignmentSize, "assignments", decodeAssignment)
}

// Member is a document on its way to its cluster's summary: the
// component's label, the representative it is an identical copy of
// (NoDoc if none), its rank under --keep and, for a representative, its
// sketch (a copy's is its representative's).
type Member struct {
	Doc, Comp, IdenticalTo uint64
	Rank                   []float64
	Values                 []uint64
}

// Append appends the encoding of m to b.
func (m Member) Append(b []byte) []byte {
	b = le.AppendUint64(b, m.Doc)
	b = le.AppendUint64(b, m.Comp)
	b = le.AppendUint64(b, m.IdenticalTo)
	b = le.AppendUint32(b, uint32(len(m.Values)))
	b = le.AppendUint32(b, uint32(len(m.Rank)))
	for _, v := range m.Values {
		b = le.AppendUint64(b, v)
	}
	return appendRank(b, m.Rank)
}

// memberHeader is the encoded size of a Member without its values.
const memberHeader = 32

// memberLayout: the count of Values is at 24, the rank's at 28.
var memberLayout = variable{"member", memberHeader, 24, 1, 28}

// AppendMembers decodes the members in b and appends them to dst. The
// values of all of b's members share one allocation.
func AppendMembers(dst []Member, b []byte) ([]Member, error) {
	arena, ranks, err := memberLayout.frame(b)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 {
		m := Member{Doc: le.Uint64(b), Comp: le.Uint64(b[8:]), IdenticalTo: le.Uint64(b[16:])}
		n, r := int(le.Uint32(b[24:])), int(le.Uint32(b[28:]))
		b = b[memberHeader:]
		m.Values, b, arena = readUint64s(b, n, arena)
		m.Rank, b, ranks = readRank(b, r, ranks)
		dst = append(dst, m)
	}
	return dst, nil
}

// Arc is two 64-bit nodes: an edge of the connected-components rounds
// (components.Edge: larger node first) or a node and its component's
// label (components.Label).
type Arc struct{ U, V uint64 }

// ArcSize is the encoded size of an Arc.
const ArcSize = 16

// Append appends the encoding of a to b.
func (a Arc) Append(b []byte) []byte {
	b = le.AppendUint64(b, a.U)
	return le.AppendUint64(b, a.V)
}

func decodeArc(b []byte) Arc {
	return Arc{le.Uint64(b), le.Uint64(b[8:])}
}

// AppendArcs decodes the arcs in b and appends them to dst.
func AppendArcs(dst []Arc, b []byte) ([]Arc, error) {
	return appendFixed(dst, b, ArcSize, "arcs", decodeArc)
}

// ClusterLink is a link of phase 4 with the label of the component it
// lies in, on its way to that component's summary.
type ClusterLink struct {
	Comp, A, B  uint64
	Resemblance float64
}

// ClusterLinkSize is the encoded size of a ClusterLink.
const ClusterLinkSize = 32

// Append appends the encoding of l to b.
func (l ClusterLink) Append(b []byte) []byte {
	b = le.AppendUint64(b, l.Comp)
	b = le.AppendUint64(b, l.A)
	b = le.AppendUint64(b, l.B)
	return le.AppendUint64(b, math.Float64bits(l.Resemblance))
}

func decodeClusterLink(b []byte) ClusterLink {
	return ClusterLink{le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:]), math.Float64frombits(le.Uint64(b[24:]))}
}

// AppendClusterLinks decodes the links in b and appends them to dst.
func AppendClusterLinks(dst []ClusterLink, b []byte) ([]ClusterLink, error) {
	return appendFixed(dst, b, ClusterLinkSize, "cluster links", decodeClusterLink)
}

// ClusterStat summarizes one cluster for the clusters table. Kept is the
// document that stands for it (--keep); MinToKept and SumToKept are over
// the other members' resemblances to it, redirects aside. Redirects is how
// many of Size are pages redirecting to a member (--redirect-column). An
// Extra stat only adds members to the cluster's own stat (Size and
// Redirects; the rest unset): the redirects that join it, counted where
// their targets are.
type ClusterStat struct {
	Cluster        uint64
	Size           uint32
	Copies         uint32
	Links          uint32
	MinResemblance float64
	SumResemblance float64
	Kept           uint64
	MinToKept      float64
	SumToKept      float64
	Redirects      uint32
	Extra          bool
}

// ClusterStatSize is the encoded size of a ClusterStat.
const ClusterStatSize = 65

// Append appends the encoding of c to b.
func (c ClusterStat) Append(b []byte) []byte {
	b = le.AppendUint64(b, c.Cluster)
	b = le.AppendUint32(b, c.Size)
	b = le.AppendUint32(b, c.Copies)
	b = le.AppendUint32(b, c.Links)
	b = le.AppendUint64(b, math.Float64bits(c.MinResemblance))
	b = le.AppendUint64(b, math.Float64bits(c.SumResemblance))
	b = le.AppendUint64(b, c.Kept)
	b = le.AppendUint64(b, math.Float64bits(c.MinToKept))
	b = le.AppendUint64(b, math.Float64bits(c.SumToKept))
	b = le.AppendUint32(b, c.Redirects)
	if c.Extra {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeClusterStat(b []byte) ClusterStat {
	return ClusterStat{le.Uint64(b), le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:]),
		math.Float64frombits(le.Uint64(b[20:])), math.Float64frombits(le.Uint64(b[28:])), le.Uint64(b[36:]),
		math.Float64frombits(le.Uint64(b[44:])), math.Float64frombits(le.Uint64(b[52:])), le.Uint32(b[60:]), b[64] == 1}
}

// AppendClusterStats decodes the stats in b and appends them to dst.
func AppendClusterStats(dst []ClusterStat, b []byte) ([]ClusterStat, error) {
	return appendFixed(dst, b, ClusterStatSize, "cluster stats", decodeClusterStat)
}

// URLOwner is a row's claim on its URL, in redirect resolution
// (--redirect-column): URL is the fingerprint of the row's URL, Doc the
// row, Kind what it is (a redirects.Kind), Sweep the day of the sweep it
// came from (redirects.SweepDay) and, for a redirect, Next the
// fingerprint of the URL it redirects to.
type URLOwner struct {
	URL, Doc, Next uint64
	Sweep          uint32
	Kind           uint8
}

// URLOwnerSize is the encoded size of a URLOwner.
const URLOwnerSize = 29

// Append appends the encoding of o to b.
func (o URLOwner) Append(b []byte) []byte {
	b = le.AppendUint64(b, o.URL)
	b = le.AppendUint64(b, o.Doc)
	b = le.AppendUint64(b, o.Next)
	b = le.AppendUint32(b, o.Sweep)
	return append(b, o.Kind)
}

func decodeURLOwner(b []byte) URLOwner {
	return URLOwner{le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint32(b[24:]), b[28]}
}

// AppendURLOwners decodes the owners in b and appends them to dst.
func AppendURLOwners(dst []URLOwner, b []byte) ([]URLOwner, error) {
	return appendFixed(dst, b, URLOwnerSize, "URL owners", decodeURLOwner)
}

// RedirectHop is a redirect on its way along its chain: Source the
// redirecting row, At the fingerprint of the URL reached and to look up
// next, Visited the fingerprints of the URLs passed (the source's own
// first; as many as the redirects followed). Once the chain has ended,
// Outcome says how (a redirects.Outcome, 0 while under way) and Target is
// the document it ended at.
type RedirectHop struct {
	Source, At, Target uint64
	Outcome            uint8
	Visited            []uint64
}

// redirectHopHeader is the encoded size of a RedirectHop without its
// visited URLs.
const redirectHopHeader = 29

// redirectHopLayout: the count of Visited is at 24.
var redirectHopLayout = variable{"redirect hop", redirectHopHeader, 24, 1, 0}

// Append appends the encoding of h to b.
func (h RedirectHop) Append(b []byte) []byte {
	b = le.AppendUint64(b, h.Source)
	b = le.AppendUint64(b, h.At)
	b = le.AppendUint64(b, h.Target)
	b = le.AppendUint32(b, uint32(len(h.Visited)))
	b = append(b, h.Outcome)
	for _, v := range h.Visited {
		b = le.AppendUint64(b, v)
	}
	return b
}

// AppendRedirectHops decodes the hops in b and appends them to dst. Their
// visited URLs share one allocation.
func AppendRedirectHops(dst []RedirectHop, b []byte) ([]RedirectHop, error) {
	arena, _, err := redirectHopLayout.frame(b)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 {
		h := RedirectHop{Source: le.Uint64(b), At: le.Uint64(b[8:]), Target: le.Uint64(b[16:]), Outcome: b[28]}
		n := int(le.Uint32(b[24:]))
		b = b[redirectHopHeader:]
		h.Visited, b, arena = readUint64s(b, n, arena)
		dst = append(dst, h)
	}
	return dst, nil
}

// Shuffled batches are compressed: runners keep every shuffle in memory
// (Prism) or bill it by the byte (Dataflow), and Prism holds several copies
// of each batch while it builds, sends and the worker decodes a bundle, so
// bytes shuffled drive peak memory. zstd at its fastest level shrinks
// sorted pair batches about 4x and postings and docs rows about 2x
// (sketches, being random hashes, barely), at a few hundred MB/s per core.
// Seal and Open work on whole batches; the encoder and decoder are safe
// for concurrent use and shared by the process.
var (
	sealer = mustEncoder()
	opener = mustDecoder()
)

func mustEncoder() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err)
	}
	return e
}

func mustDecoder() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true))
	if err != nil {
		panic(err)
	}
	return d
}

// Seal compresses a batch for a shuffle, appending it to dst.
func Seal(dst, batch []byte) []byte { return sealer.EncodeAll(batch, dst) }

// Open decompresses a sealed batch, appending it to dst.
func Open(dst, sealed []byte) ([]byte, error) {
	out, err := opener.DecodeAll(sealed, dst)
	if err != nil {
		return dst, fmt.Errorf("packed: corrupt sealed batch of %d bytes: %w", len(sealed), err)
	}
	return out, nil
}
