// Package transforms holds neardup's Beam composite transforms, one per
// phase of Broder et al.'s clustering: Sketch (phase 1), Identical (the
// identical-document shortcut), ShingleMerge (phase 2), PairCount (phase 3)
// and Cluster (phase 4), plus ReadSplits before them and Assemble after.
// The algorithms live in plain Go packages (canon, shingle, sketch,
// unionfind, clusters); these transforms only move their inputs and
// outputs.
//
// Each composite takes only the settings it reads: the algorithm's values
// (a sketch.Spec, a policy.Policy, or one of the small structs below) and,
// of the run's plumbing, what its DoFns need to place their work
// (Placement) and, in an update, to read the index (Update). They travel
// inside the DoFns, so all their fields are exported and plain.
//
// Every shuffle carries packed batches keyed by a hash partition, never one
// element per shingle or per pair: see package packed.
package transforms

import (
	"math"
	"slices"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
)

// Config is a run as the launcher hands it around: the user's settings
// (see package settings) and the run's plumbing. No composite takes it
// whole: the pipelines give each the parts it reads (Candidates, Linking,
// Clustering, and Plumbing's parts).
type Config struct {
	settings.Config
	Plumbing
	// SourcePolicy, in a recluster of a --verify=uncertain run, is the
	// source's policy, at which its uncertain pairs were verified
	// (Linking.VerifiedAt); the zero Policy elsewhere.
	SourcePolicy policy.Policy
}

// Plumbing is what the launcher works out for a run, beside the user's
// settings: where shards go, how the work is cut, in an update what the
// index holds, the sweeps, and which tables are written. None of it
// changes the rows of a table.
type Plumbing struct {
	Placement
	Update
	SweepSpan
	// CarryPairs, in an update under the index's policy, carries over the
	// index's pairs shards whose rows all stay (see IndexPairs).
	CarryPairs bool
}

// Placement is what a composite's DoFns need to place their work: the
// partitions they key records by, the folder their shards go to and how
// many elements of a bundle they work on at once.
type Placement struct {
	Partitions int // hash partitions of every shuffle
	// TempDir is where table shards are written before the launcher
	// publishes them ("": nowhere, in the transforms' tests).
	TempDir string
	// Lanes is how many elements of a bundle a keyed step works on at
	// once (see lanes): the cores, where the launcher runs the workers
	// itself on the embedded runner; 1 elsewhere. It never changes what
	// is written.
	Lanes int
	// Waves is how many waves the biggest shuffles' partitions are
	// grouped in, one after another (see groupInWaves): more than one
	// where the launcher runs the workers on the embedded runner, which
	// builds a keyed stage as one bundle; 1 elsewhere. It never changes
	// what is written.
	Waves int
	// Write is the tables whose shards the run writes (--tables; nil:
	// all). The steps that only make a table left out are not built; the
	// others skip its writing.
	Write tables.Selection
}

// shards is where the shards of table go: TempDir, or "" (nowhere, as in
// the transforms' tests) when the run leaves the table out.
func (p Placement) shards(table string) string {
	if !p.Write.Has(table) {
		return ""
	}
	return p.TempDir
}

// Update is what an update's keyed steps know of its index. The zero
// Update is a full run's and a recluster's: no index.
type Update struct {
	// FirstNewDoc is the first doc ID of the new input: documents below
	// it are the index's, and phase 3 leaves their pairs among
	// themselves to the index's pairs table.
	FirstNewDoc uint64
	// Index names the index's table shards by partition, which the keyed
	// steps read beside the new documents' records of the same partition.
	Index IndexTables
}

// on reports whether there is an index: an update.
func (u Update) on() bool { return u.Index.Partitions > 0 }

// SweepSpan is the sweeps the output's documents come from: the latest
// of them (an update's index may hold earlier ones), and whether there is
// more than one, when Sweeps lists the lost URLs.
type SweepSpan struct {
	LatestSweep string
	MultiSweep  bool
}

// Candidates is how candidate pairs are found (settings.Config.Mode): what
// Identical posts of each representative, which shingles (or
// super-shingles) phase 2 drops as too common, and how SiteTemplates makes
// a sketch's super-shingles again.
type Candidates struct {
	Mode settings.Mode
	// Sketch is what the postings are values of: MIN_s postings carry
	// their ranks, and super-shingle candidates are counted on it.
	Sketch  sketch.Spec
	ListCap // a shingle in more documents than the cap (see maxShingleDocs) is dropped or anchored
	// SuperSize and Seed make a super-shingle of every SuperSize sketch
	// values (Broder's, fingerprinted with Seed), in super-shingle mode.
	SuperSize int
	Seed      uint64
}

// Candidates is c's Candidates.
func (c Config) Candidates() Candidates {
	return Candidates{Mode: c.Mode, Sketch: c.Sketch, ListCap: c.listCap(), SuperSize: c.SuperSize, Seed: c.Seed}
}

// maxShingleDocs is how many documents a shingle may be in before phase 2
// drops it as too common: none is dropped from the exact join.
func (c Candidates) maxShingleDocs() int {
	if c.Mode == settings.ModeExact {
		return math.MaxInt
	}
	return c.MaxShingleDocs
}

// ListCap is what becomes of a shingle's (or a super-shingle's) list of
// documents when it is longer than MaxShingleDocs: Broder dropped it, as
// pairing it whole would square its length; with AnchorDocs above 0 it is
// kept and paired through its first AnchorDocs documents (Anchors), so
// that a family larger than the cap is still found, at a cost linear in
// its size.
type ListCap struct {
	MaxShingleDocs int // settings.Config.MaxShingleDocs
	AnchorDocs     int // settings.Config.AnchorDocs (0: dropped)
}

// listCap is c's ListCap. The exact join drops nothing (maxShingleDocs),
// so it anchors nothing either.
func (c Config) listCap() ListCap {
	l := ListCap{MaxShingleDocs: c.MaxShingleDocs, AnchorDocs: c.AnchorDocs}
	if c.Mode == settings.ModeExact {
		l.AnchorDocs = 0
	}
	return l
}

// anchorFit is how different in size a document's anchors may be: their
// sketches hold at least anchorFit times as many values as its own, and
// at most 1/anchorFit times. Two documents further apart cannot resemble
// each other much (at most the ratio of their sizes), so a family's
// copies anchor on copies of their own rather than on the longer pages
// that quote them, whatever their doc IDs; the margin under the default
// threshold (0.5) is for the sketches' sampling. It is fixed, not drawn
// from the policy, so that an update under another threshold anchors as
// its index did.
const anchorFit = 0.4

// fits reports whether documents with sketches of a and b values may
// anchor each other (anchorFit).
func fits(a, b uint32) bool {
	return float64(min(a, b)) >= anchorFit*float64(max(a, b))
}

// Over reports whether a list of n documents is over the cap and kept
// for anchoring.
func (l ListCap) Over(n int) bool { return l.AnchorDocs > 0 && n > l.MaxShingleDocs }

// AnchorPairs calls pair(x, y), x < y, once for each pair of positions of
// a list over the cap that is counted: each document with its anchors,
// the first AnchorDocs documents of the list (in doc ID order) besides
// itself whose sizes fit its own (fits; size(i) is the i-th document's
// sketch size). A document's anchors are the same in every list that
// holds them, so a pair's count is over all the shingles they share, and
// the pairs grow with n, not n squared.
func (l ListCap) AnchorPairs(n int, size func(i int) uint32, pair func(x, y int)) {
	k := l.AnchorDocs
	// The candidates of each distinct size: the first k+1 positions
	// (k+1, as a document may be among its own) of the sizes that fit
	// it. Positions are taken in order and given to every size they fit
	// that still has room; skip[j] jumps over the sizes that are full.
	var sizes []uint32
	for i := range n {
		sizes = append(sizes, size(i))
	}
	sizes = slices.Compact(slices.Sorted(slices.Values(sizes)))
	cands := make([][]int, len(sizes))
	skip := make([]int, len(sizes)+1)
	for j := range skip {
		skip[j] = j
	}
	open := func(j int) int { // the first size at or after j with room
		r := j
		for skip[r] != r {
			r = skip[r]
		}
		for skip[j] != r {
			skip[j], j = r, skip[j]
		}
		return r
	}
	for i := range n {
		z := size(i)
		lo, _ := slices.BinarySearchFunc(sizes, z, func(s, z uint32) int {
			if fits(s, z) || s > z {
				return 1
			}
			return -1
		})
		for j := open(lo); j < len(sizes) && fits(sizes[j], z); j = open(j + 1) {
			if cands[j] = append(cands[j], i); len(cands[j]) > k {
				skip[j] = j + 1
			}
		}
	}
	of := func(i int, buf []int) []int { // the anchors of position i
		z, _ := slices.BinarySearch(sizes, size(i))
		buf = buf[:0]
		for _, x := range cands[z] {
			if x != i && len(buf) < k {
				buf = append(buf, x)
			}
		}
		return buf
	}
	var mine, theirs []int
	for y := range n {
		mine = of(y, mine)
		for _, x := range mine {
			// A pair that anchors both ways is counted at the turn of
			// its first position.
			if theirs = of(x, theirs); x < y && slices.Contains(theirs, y) {
				continue
			}
			pair(min(x, y), max(x, y))
		}
	}
}

// Linking is which counted pairs link and which the pairs table keeps:
// phase 4's estimates, the policy and the verification, and so which
// pairs phase 3 may skip as unable to link.
type Linking struct {
	Policy policy.Policy
	Sketch sketch.Spec // what the counts estimate (clusters.Estimate)
	// Verification is what every candidate is checked on besides the
	// sketch (settings.Config.Verification): VerifyBloom, VerifyExact,
	// or "" when the whole feature sets are not consulted.
	Verification settings.Verify
	// LinksAll is settings.Config.LinksAll: super-shingle candidates
	// link without any check.
	LinksAll bool
	// Exact is the exact join (settings.ModeExact): its figures are
	// exact, and its postings are prefixes phase 3 filters by position.
	Exact bool
	// LinkedOnly (--pairs=linked) narrows the pairs table to the linked
	// pairs.
	LinkedOnly bool
	// UncertainOnly (--verify=uncertain): only the candidates whose
	// estimates are uncertain at the policy VerifiedAt are verified; the
	// others link on their estimates. VerifiedAt is Policy but in
	// recluster, where it is the source run's.
	UncertainOnly bool
	VerifiedAt    policy.Policy
	// ListCap is Candidates': a list of more than MaxShingleDocs
	// documents is paired through its first AnchorDocs (Anchors), when
	// AnchorDocs is above 0.
	ListCap
}

// Linking is c's Linking.
func (c Config) Linking() Linking {
	l := Linking{Policy: c.Policy, Sketch: c.Sketch, Verification: c.Verification(), LinksAll: c.LinksAll(),
		Exact: c.Mode == settings.ModeExact, LinkedOnly: c.LinkedOnly,
		UncertainOnly: c.UncertainOnly(), VerifiedAt: c.Policy,
		ListCap: c.listCap()}
	if c.SourcePolicy != (policy.Policy{}) {
		l.VerifiedAt = c.SourcePolicy
	}
	return l
}

// verifies reports whether a candidate whose sketches share shared
// values, of sizes sizeA and sizeB, with resemblance estimate res, is (or
// was) verified: under a Verification, every candidate unless
// UncertainOnly, and then those whose sketch estimates are within
// clusters.UncertainZ standard errors of a threshold of VerifiedAt.
func (l Linking) verifies(shared, sizeA, sizeB uint32, res float64) bool {
	if l.Verification == "" || !l.UncertainOnly {
		return l.Verification != ""
	}
	return clusters.Uncertain(l.Sketch, l.VerifiedAt, int(shared), int(sizeA), int(sizeB), res)
}

// verifiesPair is verifies for a counted pair, which computes its
// estimate only when the answer depends on it (Estimate allocates its
// containments, and Verify asks of every candidate).
func (l Linking) verifiesPair(p packed.Pair) bool {
	if l.Verification == "" || !l.UncertainOnly {
		return l.Verification != ""
	}
	res, _, _ := clusters.Estimate(p, l.Sketch)
	return l.verifies(p.Count, p.SizeA, p.SizeB, res)
}

// sizesMayLink reports whether a pair of documents with these sketch sizes
// may link, so that phase 3 must count it. Only under LinkedOnly, a MOD_m
// sketch and a resemblance-only policy can it say no: the estimate
// shared/(a+b-shared) is at most min(a,b)/max(a,b), reached when the
// smaller sketch is all shared, so a pair whose sizes keep that bound under
// the threshold never links. Verified links (Verification) follow the
// whole sets, which the sketch sizes only estimate. Containment has no such bound (a small
// document may lie wholly inside a large one), nor do MIN_s and MinHash
// sketches, whose sizes do not follow the documents'.
func (l Linking) sizesMayLink(a, b uint32) bool {
	if !l.LinkedOnly || l.Sketch.Kind != sketch.Mod || l.Policy.Containment > 0 || l.Verification != "" {
		return true
	}
	lo, hi := min(a, b), max(a, b)
	return sketch.ModResemblance(int(lo), int(lo), int(hi)) >= l.Policy.Resemblance
}

// prefixesMayLink reports, under Exact, whether two documents that share
// the prefix feature of postings a and b may reach the threshold (see
// simjoin.PositionMayMatch); always true otherwise.
func (l Linking) prefixesMayLink(a, b packed.Posting) bool {
	return !l.Exact || simjoin.PositionMayMatch(l.Policy.Resemblance, int(a.Size), int(b.Size), int(a.Rank), int(b.Rank))
}

// keepsContained reports whether the contained table is written: always,
// unless LinkedOnly leaves the pairs table without the unlinked pairs a
// resemblance-only policy's contained table is made of.
func (l Linking) keepsContained() bool {
	return !l.LinkedOnly || l.Policy.Containment > 0
}

// Clustering is how phase 4 makes clusters of the links.
type Clustering struct {
	// Components is how the connected components are found:
	// settings.ComponentsSingle or ComponentsDistributed (the launcher
	// resolves ComponentsAuto), the latter in ComponentRounds rounds.
	Components      string
	ComponentRounds int
	Sketch          sketch.Spec // each member is compared with its cluster's kept document by their sketches
	// Centered (--clusters=centered) splits off the members that do not
	// meet Policy against their cluster's kept document.
	Centered bool
	Policy   policy.Policy
}

// Clustering is c's Clustering.
func (c Config) Clustering() Clustering {
	return Clustering{Components: c.Components, ComponentRounds: c.ComponentRounds, Sketch: c.Sketch, Centered: c.Centered, Policy: c.Policy}
}
