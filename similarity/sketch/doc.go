// Package sketch implements Broder's two document sketches, the MinHash
// sketch of today's locality-sensitive hashing tools, and the estimators
// of resemblance and containment computed from them.
//
// Fix a shingle size w, let S(D) be the set of shingle fingerprints of
// document D (package shingle), and treat the fingerprints as the values
// of a random permutation of the shingles (package fingerprint explains
// why a good 64-bit hash is as good as one). Broder et al. define
//
//	MIN_s(W) = the s smallest elements of W (all of W if |W| <= s)
//	MOD_m(W) = the elements of W that are 0 mod m
//
// and prove that, with F(D) = MIN_s(S(D)) and V(D) = MOD_m(S(D)),
//
//	|MIN_s(F(A) ∪ F(B)) ∩ F(A) ∩ F(B)| / |MIN_s(F(A) ∪ F(B))|
//	|V(A) ∩ V(B)| / |V(A) ∪ V(B)|
//
// are unbiased estimates of the resemblance r(A,B) = |S(A)∩S(B)| /
// |S(A)∪S(B)|, and |V(A) ∩ V(B)| / |V(A)| one of the containment
// c(A,B) = |S(A)∩S(B)| / |S(A)| of A in B. The paper's system used
// MOD_25 with w = 10.
//
// A Spec names one of the policies ("mod:25", "min:100", "minhash:128")
// and Select applies it. MIN_s sketches have a fixed size, which bounds
// the work per document, but only estimate resemblance; MOD_m sketches
// grow with the document (about |S(D)|/m elements) and also estimate
// containment, but give short documents few samples or none (a document
// with fewer than about m shingles often has an empty MOD_m sketch and
// then resembles nothing).
//
// MinHash ("minhash:128") is the sketch that later work built on Broder's
// min-wise idea: instead of the s smallest values under one permutation,
// keep the smallest value under each of K independent permutations. Each
// position agrees between two documents with probability r(A,B), so the
// fraction of agreeing positions (MinHashResemblance) is an unbiased
// estimate with standard error sqrt(r(1-r)/K), whatever the sizes of the
// documents, and the sketch has exactly K values even for a document with
// fewer than K shingles. It cannot estimate containment. Its values are
// tagged with their positions (see Select) so that counting shared values,
// as the pipeline does for every kind, counts agreeing positions; and the
// untagged per-position minima (MinHashValues) are what LSH banding
// (package supershingle) groups into bands. The cost is K hashes per
// shingle instead of one.
//
// Floor (MOD_m with a floor of k) keeps every fingerprint at or below
// max((2^64-1)/m, the document's k-th smallest): MOD_m's sample, under a
// threshold rule instead of "0 mod m", on long documents and the k
// smallest on short ones. Its resemblance estimate (Floor.Estimate) is
// exactly unbiased with a standard error at most sqrt(r(1-r)/k), and needs
// ranks only for pairs of two short documents. StdErr, Spec.Samples and
// Uncertain give any estimate's standard error from the samples it rests
// on, for deciding which pairs to verify (docs/sketches.md derives both).
//
// The estimator functions work from counts or ranks as well as from
// sketches, because at web scale the sketches of a pair of documents are
// never in one place: the pipeline inverts sketches into (shingle,
// document) pairs, and each pair of documents sees only the shingles they
// share, with the sketch sizes (and for MIN_s, ranks) carried along.
// ModResemblance and Containment take those counts; MinSharedInUnion and
// MinResemblanceFromRanks compute the MIN_s estimate from the ranks of the
// shared elements alone. MinResemblance, Jaccard and IntersectCount work
// on whole sorted sets, for tests and quality tools.
package sketch
