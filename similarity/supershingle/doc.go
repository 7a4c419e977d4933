// Package supershingle links similar documents without counting shared
// shingles pair by pair: Broder's super-shingles (a sketch of the sketch),
// and their modern form, the banding of MinHash sketches used for
// locality-sensitive hashing (LSH).
//
// # Super-shingles
//
// Phase 3 of Broder et al.'s clustering turns every shingle shared by two
// documents into an <ID, ID> pair and counts the pairs, and the
// <shingle, ID> pairs and <ID, ID, count> triplets need a great deal of
// disk space. Their section "Super shingles" skips that: sort a
// document's sketch and shingle it again, fingerprinting every run of a
// few consecutive sketch values (the function Broder); the set of these
// super-shingles is the document's meta-sketch. Two documents with even
// one super-shingle in common have a whole run of sketch values in common,
// which is unlikely unless they resemble each other, so documents sharing
// a super-shingle are linked straight away, from a sorted list of
// <super-shingle, ID> pairs, with no pair counting (and, if a sharper
// threshold is wanted, the linked pairs' resemblance can be computed
// afterwards from their sketches). How similar documents must be to share
// one depends on the run length and the sketch size: longer runs need
// more resemblance, longer sketches offer more runs. There is no simple
// formula (runs overlap, and which values reach a sketch depends on both
// documents); in simulation, pairs with MIN_100 sketches and runs of 5
// share a super-shingle about 4% of the time at resemblance 0.2, 65% at
// 0.4, 85% at 0.5 and always from 0.6 on (TestBroderSCurve logs this).
//
// The paper names two losses, and both follow from the construction:
//
//   - Short documents have short sketches, hence few super-shingles or,
//     with fewer sketch values than the run length, none at all, and then
//     they link to nothing. Broder returns nil for them rather than pretend.
//     (A MOD_m sketch of a document with a few hundred shingles has only a
//     handful of values; MIN_s sketches are short only for documents with
//     fewer than s shingles.)
//   - Containment is invisible. If B contains A, B's sketch holds A's
//     values plus those of B's extra material, and in sorted order the
//     extra values fall between the common ones, so the runs of B's sketch
//     are not runs of A's: a MOD_m sketch of A can lie entirely inside B's
//     and still share no super-shingle with it.
//
// # Bands
//
// Banding applies the same idea to a MinHash sketch (sketch.MinHashValues:
// the minima of K independent hash functions, in position order), whose
// positions agree independently, each with probability equal to the
// resemblance J. Cut the K positions into b bands of r rows (K = r*b) and
// fingerprint each band with its index (Bands): two documents share band
// j iff all r rows of band j agree, which happens with probability J^r,
// so they share at least one band with probability
//
//	P(link) = 1 - (1 - J^r)^b    (LinkProbability)
//
// an S-curve in J that rises most steeply at J = ((r-1)/(rb-1))^(1/r),
// near the rule of thumb (1/b)^(1/r) (Threshold). More rows per band move
// the curve right and make it steeper; more bands move it left. Unlike
// super-shingles, bands have the same number of chances for every
// document, short or long, and the probability of a link is known in
// closed form. Containment stays invisible: MinHash agreement depends on
// the resemblance alone.
//
// P(link) for three ways of spending K = 128 or 100 positions (computed by
// LinkProbability; a test keeps the numbers in step with it):
//
//	rows × bands   J=0.3   J=0.5   J=0.7   J=0.8   J=0.9   steepest at
//	   4 × 32      0.2291  0.8732  0.9998  1.0000  1.0000   0.392
//	   8 × 16      0.0010  0.0607  0.6133  0.9470  0.9999   0.696
//	   5 × 20      0.0475  0.4701  0.9748  0.9996  1.0000   0.526
//
// So 4 × 32 links nearly everything above J = 0.6 but also a fifth of the
// pairs at J = 0.3, while 8 × 16 misses two pairs in five at J = 0.7 but
// almost never links below J = 0.5. Links are candidates: as with
// super-shingles, the pipeline can estimate each linked pair's resemblance
// from the full sketches before clustering.
package supershingle
