// Package transforms holds neardup's Beam composite transforms, one per
// phase of Broder et al.'s clustering: Sketch (phase 1), Identical (the
// identical-document shortcut), ShingleMerge (phase 2), PairCount (phase 3)
// and Cluster (phase 4), plus ReadSplits before them and Assemble after.
// The algorithms live in plain Go packages (canon, shingle, sketch,
// unionfind); these transforms only move their inputs and outputs.
//
// Every shuffle carries packed batches keyed by a hash partition, never one
// element per shingle or per pair: see package packed.
package transforms

import (
	"math"

	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
)

// Config is what every phase needs to know: the user's settings (see
// package settings) and the run's plumbing. It travels inside the DoFns,
// so all its fields are exported and plain.
type Config struct {
	settings.Config
	Plumbing
}

// Plumbing is what the launcher works out for a run, beside the user's
// settings: where shards go, how the work is cut, and in an update what
// the index holds. None of it changes what is written.
type Plumbing struct {
	Partitions int // hash partitions of every shuffle
	// FirstNewDoc, in an update, is the first doc ID of the new input:
	// documents below it are the index's, and phase 3 leaves their pairs
	// among themselves to the index's pairs table (0: a full run).
	FirstNewDoc uint64
	// Index, in an update, names the index's table shards by partition,
	// which the keyed steps read beside the new documents' records of the
	// same partition (zero: a full run).
	Index IndexTables
	// CarryPairs, in an update under the index's policy, carries over the
	// index's pairs shards whose rows all stay (see IndexPairs).
	CarryPairs bool
	// LatestSweep is the latest sweep of all the output's documents (an
	// update's index may hold earlier ones), and MultiSweep whether they
	// come from more than one, when Sweeps lists the lost URLs.
	LatestSweep string
	MultiSweep  bool
	TempDir     string // where table shards are written before the launcher publishes them
	// Lanes is how many elements of a bundle a keyed step works on at
	// once (see lanes): the cores, where the launcher runs the workers
	// itself on the embedded runner; 1 elsewhere. It never changes what
	// is written.
	Lanes int
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
func (cfg Config) sizesMayLink(a, b uint32) bool {
	if !cfg.LinkedOnly || cfg.Sketch.Kind != sketch.Mod || cfg.Policy.Containment > 0 || cfg.Verification() != "" {
		return true
	}
	lo, hi := min(a, b), max(a, b)
	return sketch.ModResemblance(int(lo), int(lo), int(hi)) >= cfg.Policy.Resemblance
}

// prefixesMayLink reports, under Exact, whether two documents that share
// the prefix feature of postings a and b may reach the threshold (see
// simjoin.PositionMayMatch); always true otherwise.
func (cfg Config) prefixesMayLink(a, b packed.Posting) bool {
	return cfg.Mode != settings.ModeExact || simjoin.PositionMayMatch(cfg.Policy.Resemblance, int(a.Size), int(b.Size), int(a.Rank), int(b.Rank))
}

// maxShingleDocs is how many documents a shingle may be in before phase 2
// drops it as too common: none is dropped from the exact join.
func (cfg Config) maxShingleDocs() int {
	if cfg.Mode == settings.ModeExact {
		return math.MaxInt
	}
	return cfg.MaxShingleDocs
}

// keepsContained reports whether the contained table is written: always,
// unless LinkedOnly leaves the pairs table without the unlinked pairs a
// resemblance-only policy's contained table is made of.
func (cfg Config) keepsContained() bool {
	return !cfg.LinkedOnly || cfg.Policy.Containment > 0
}
