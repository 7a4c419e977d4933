package transforms

import (
	"context"
	"fmt"
	"path"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/featurefile"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	docsRead     = beam.NewCounter(Namespace, DocsCounter)
	textRead     = beam.NewCounter(Namespace, TextBytesCounter)
	docsOK       = beam.NewCounter(Namespace, "docs_ok")
	docsEmpty    = beam.NewCounter(Namespace, "docs_empty")
	docsTooShort = beam.NewCounter(Namespace, "docs_too_short")
	docsRejected = beam.NewCounter(Namespace, "docs_rejected")
	shinglesSeen = beam.NewCounter(Namespace, "shingles")
	sketchValues = beam.NewCounter(Namespace, "sketch_values")
	phase1Time   = newPhaseTimer("phase1_sketch")
	metaElements = beam.NewCounter(Namespace, "shuffled_docs_meta_elements")
	metaBytes    = beam.NewCounter(Namespace, "shuffled_docs_meta_bytes")
)

func init() {
	{
		fn := &sketchFn{}
		register.Function7x0(fn.StartBundle)
		register.Function9x1(fn.ProcessElement)
		register.Function7x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Emitter2[int, []byte]()
	register.Emitter2[int, string]()
}

// Sketch is phase 1. It takes PCollection<crawl.Split> and reads and sketches
// every row under cfg (package rowsketch: canonical tokens, w-word
// shingles, their fingerprints, the MOD_m or MIN_s sketch, and the content
// and lexical fingerprints). It returns meta, PCollection<KV<int, []byte>>
// of docs-table rows (status and counts, no cluster yet) keyed by doc
// partition; each document's sketch in the two streams Identical takes
// (see sendSketch): keys, PCollection<KV<int, []byte>> of packed.Sketch
// batches of identity keys, doc IDs and ranks keyed by the partition of
// the identity key, and bodies, the same documents' whole packed.Sketch
// records keyed by doc partition; equiv, the fingerprints of all three
// equivalence levels for EquivalenceCounts; ranks,
// PCollection<KV<int, []byte>> of packed.DocRank batches keyed by doc
// partition, for every sketched document when cfg.Keep ranks documents
// (empty otherwise); and sites, PCollection<KV<int, []byte>> of
// packed.SiteCount batches for SiteTemplates under cfg.Templates (empty
// otherwise). Under cfg.Templates the whole sketches go in keys instead,
// for SiteTemplates to send on (those of pages with a site keyed by the
// site's partition), and bodies is empty. Under cfg.SkipBadFiles a bad row
// group (crawl.IsBadInput) is recorded under place.TempDir; a failed read
// fails the bundle all the same.
//
// Under any --verify it also writes every sketched document's features
// for verification (rowsketch.Sketcher.Verifiable: its dense sample under
// --verify=dense, its Bloom filter under bloom, its whole feature set
// otherwise, as packed.Features records in row order) under
// place.TempDir, in files of at most one verify slice each, and returns
// their names in features, PCollection<KV<int, string>> keyed by verify
// slice, for Verify (empty otherwise). The features travel no shuffle:
// each verifying worker reads back those it needs.
func Sketch(s beam.Scope, splits beam.PCollection, cfg settings.Config, place Placement) (meta, keys, bodies, equiv, ranks, sites, features beam.PCollection) {
	s = s.Scope("Sketch")
	outs := beam.ParDoN(s, &sketchFn{Settings: cfg, Partitions: place.Partitions, TempDir: place.TempDir}, splits)
	return outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6]
}

type sketchFn struct {
	Settings   settings.Config // all of phase 1's (see rowsketch.New)
	Partitions int
	TempDir    string
	out        *sketchOut // what the current bundle has not emitted yet
	// features is the buffer of the features file being gathered, kept
	// from element to element (emptied at each): grown afresh for every
	// split, it was a third of what writing the features cost.
	features featurefile.Builder
}

// sketchOut is what sketchFn gathers over a bundle: its docs rows and the
// batchers of its sketches and equivalence keys (see batcher on why per
// bundle, not per element).
type sketchOut struct {
	metas                             [][]tables.Doc
	metaBytes                         int
	keys, bodies, equiv, ranks, sites *batcher
	// ctx is the bundle's, from its elements, for FinishBundle: with
	// seven emitters it cannot take a context too (register's wrappers
	// stop at seven parameters), and the counters it adds to need the
	// bundle's.
	ctx context.Context
}

// StartBundle and FinishBundle take no context: see sketchOut.ctx.
func (f *sketchFn) StartBundle(emitMeta, emitKeys, emitBodies, emitEquiv, emitRanks, emitSites func(int, []byte), emitFeatures func(int, string)) {
	f.out = nil // a retried bundle starts afresh
}

func (f *sketchFn) FinishBundle(emitMeta, emitKeys, emitBodies, emitEquiv, emitRanks, emitSites func(int, []byte), emitFeatures func(int, string)) error {
	out := f.out
	f.out = nil
	if out == nil {
		return nil
	}
	return out.flush(out.ctx, emitMeta, emitKeys, emitBodies, emitEquiv, emitRanks, emitSites)
}

// flush emits everything gathered so far.
func (o *sketchOut) flush(ctx context.Context, emitMeta, emitKeys, emitBodies, emitEquiv, emitRanks, emitSites func(int, []byte)) error {
	o.sites.bind(ctx, emitSites)
	o.sites.flush()
	o.keys.bind(ctx, emitKeys)
	o.keys.flush()
	o.bodies.bind(ctx, emitBodies)
	o.bodies.flush()
	o.equiv.bind(ctx, emitEquiv)
	o.equiv.flush()
	o.ranks.bind(ctx, emitRanks)
	o.ranks.flush()
	err := emitDocRows(ctx, o.metas, emitMeta)
	clear(o.metas)
	o.metaBytes = 0
	return err
}

func (f *sketchFn) ProcessElement(ctx context.Context, sp crawl.Split, emitMeta, emitKeys, emitBodies, emitEquiv, emitRanks, emitSites func(int, []byte), emitFeatures func(int, string)) error {
	defer phase1Time.done(ctx, phase1Time.begin())
	parts := f.Partitions
	if f.out == nil {
		f.out = &sketchOut{metas: make([][]tables.Doc, parts)}
	}
	out := f.out
	out.ctx = ctx
	metas := out.metas
	keys := bundleBatcher(&out.keys, ctx, "sketch_keys", parts, emitKeys)
	bodies := bundleBatcher(&out.bodies, ctx, "sketches", parts, emitBodies)
	equiv := bundleBatcher(&out.equiv, ctx, "equivalence_keys", len(settings.Equivalences)*parts, emitEquiv)
	ranks := bundleBatcher(&out.ranks, ctx, "ranks", parts, emitRanks)
	sites := bundleBatcher(&out.sites, ctx, "site_counts", parts, emitSites)
	templates := f.Settings.Templates.On()
	ranked := f.Settings.Keep.Ranked()
	var nOK, nEmpty, nShort, nRejected, nShingles, nValues, nBytes int64
	rs, err := rowsketch.New(f.Settings)
	if err != nil {
		return err
	}
	var verifiable *featuresWriter
	if f.Settings.Verification() != "" && f.TempDir != "" {
		f.features.Reset()
		f.features.Grow(featuresFileBytes + 64<<10)
		verifiable = &featuresWriter{dir: store.Join(f.TempDir, FeaturesDir), emit: emitFeatures, file: &f.features}
	}
	next := sp.FirstRow // the first row not yet read
	keepRow := func(doc tables.Doc) {
		p := packed.Partition(uint64(doc.DocID), parts)
		metas[p] = append(metas[p], doc)
		out.metaBytes += docRowBytes(&doc)
	}
	err = crawl.ReadSplit(ctx, sp, f.Settings.Columns, func(row crawl.Row) error {
		next = row.Index + 1
		nBytes += int64(len(row.Content))
		doc, rec, levels := rs.Sketch(sp, row)
		switch doc.Status {
		case tables.StatusOK:
			nOK++
			nShingles += doc.ShingleCount
			nValues += int64(doc.SketchSize)
		case tables.StatusEmpty:
			nEmpty++
		case tables.StatusTooShort:
			nShort++
		case tables.StatusRejected:
			nRejected++
		}
		if rec != nil {
			if verifiable != nil {
				if err := verifiable.add(ctx, rec.Doc, rs); err != nil {
					return err
				}
			}
			for level, k := range levels {
				equiv.add(level*parts+packed.Partition(k, parts), packedKey(k))
			}
			if ranked {
				rec.Rank = f.Settings.Keep.Rank(keep.Doc{Tokens: doc.TokenCount, URL: row.URL, Date: row.Date, Score: row.Score, HasScore: row.HasScore})
				ranks.add(packed.Partition(rec.Doc, parts), packed.DocRank{Doc: rec.Doc, Rank: rec.Rank})
			}
			if templates && rec.Site != 0 {
				// The sketch goes to its site's partition, where
				// SiteTemplates drops the site's template values
				// before the identical shortcut; the counts it needs
				// go to the (site, value) partitions.
				if doc.Status == tables.StatusOK {
					sites.add(packed.Partition(rec.Site, parts), packed.SiteCount{Site: rec.Site, Docs: 1, Pages: true})
					for _, v := range rec.Values {
						sites.add(packed.Partition(siteValueKey(rec.Site, v), parts), packed.SiteCount{Site: rec.Site, Value: v, Docs: 1})
					}
				}
				keys.add(packed.Partition(rec.Site, parts), *rec)
			} else if templates {
				// Whole too: SiteTemplates sends every sketch on.
				keys.add(packed.Partition(rec.Key, parts), *rec)
			} else {
				sendSketch(*rec, parts, keys, bodies)
			}
		}
		keepRow(doc)
		return nil
	})
	if err != nil {
		// Only what the file holds is skipped: a read that failed (the
		// network, an object store, after its retries) or a file that
		// changed during the run fails the bundle, whose retry reads
		// the row group again. Skipping those would lose good rows.
		if !f.Settings.SkipBadFiles || !crawl.IsBadInput(err) {
			return err
		}
		// The rows of the split not read yet still get their docs rows,
		// rejected, and the manifest names the file: nothing is lost.
		if err := recordBadFile(ctx, f.TempDir, sp, err); err != nil {
			return err
		}
		for r := next; r < sp.FirstRow+sp.NumRows; r++ {
			keepRow(tables.Doc{DocID: int64(crawl.DocID(sp.FileIndex, r)), SourceFile: sp.Path, SourceRow: r, Extraction: f.Settings.Extraction(), Sweep: f.Settings.Sweep,
				Status: tables.StatusRejected, Reason: optional("row group unreadable: " + err.Error())})
			nRejected++
		}
	}
	if verifiable != nil {
		if err := verifiable.flush(ctx); err != nil {
			return err
		}
	}
	if out.metaBytes > maxBuffered(parts) {
		if err := out.flush(ctx, emitMeta, emitKeys, emitBodies, emitEquiv, emitRanks, emitSites); err != nil {
			return err
		}
	}
	docsRead.Inc(ctx, sp.NumRows)
	docsOK.Inc(ctx, nOK)
	docsEmpty.Inc(ctx, nEmpty)
	docsTooShort.Inc(ctx, nShort)
	docsRejected.Inc(ctx, nRejected)
	shinglesSeen.Inc(ctx, nShingles)
	sketchValues.Inc(ctx, nValues)
	textRead.Inc(ctx, nBytes)
	progress.AddRead(sp.NumRows, nBytes)
	return nil
}

// sendSketch sends a document's sketch on its two ways to Identical: its
// identity key, doc ID and rank to the key's partition, where identical
// documents meet, and its whole record to its doc partition, where it
// waits for the verdict (representative or copy). The sketch's values,
// most of its bytes, so cross one shuffle, not one to the identical
// shortcut and another from there to the representative's partition.
func sendSketch(sk packed.Sketch, parts int, keys, bodies *batcher) {
	keys.add(packed.Partition(sk.Key, parts), packed.Sketch{Key: sk.Key, Doc: sk.Doc, Rank: sk.Rank})
	sk.Rank, sk.Site = nil, 0
	bodies.add(packed.Partition(sk.Doc, parts), sk)
}

// siteValueKey is the key that spreads the (site, value) counts over
// partitions: all pages' counts of one pair meet in one partition, while
// one big site's values spread over all of them.
func siteValueKey(site, value uint64) uint64 { return fingerprint.Mix(site ^ fingerprint.Mix(value)) }

// optional is s as a nullable column's value: null when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// FeaturesDir is the folder under a run's temporary folder that holds
// the features for verification phase 1 writes under any --verify (an
// output keeps them there too, output.Features).
const FeaturesDir = output.FeaturesDir

// featuresFileBytes is where a features file is cut even inside one
// verify slice, so that phase 1 holds at most that much of them and a
// verifying worker that needs a few documents reads a small file.
const featuresFileBytes = 4 << 20

// featuresWriter gathers one split's features for verification into
// files (package featurefile), each of one verify slice and at most
// featuresFileBytes, named by the file and row of their first document
// (so a retried bundle writes the same files), and emits each file's name
// keyed by its slice once it is written.
type featuresWriter struct {
	dir  string
	emit func(int, string)
	file *featurefile.Builder
}

// add adds doc's features from rs, the Sketcher that sketched it last.
func (w *featuresWriter) add(ctx context.Context, doc uint64, rs *rowsketch.Sketcher) error {
	if !w.file.Empty() && (verifySlice(doc) != verifySlice(w.file.First()) || w.file.Len() >= featuresFileBytes) {
		if err := w.flush(ctx); err != nil {
			return err
		}
	}
	return w.file.Append(doc, func(b []byte) ([]byte, bool) { return rs.AppendVerifiable(b, doc) })
}

func (w *featuresWriter) flush(ctx context.Context) error {
	if w.file.Empty() {
		return nil
	}
	first := w.file.First()
	name := store.Join(w.dir, featuresFileName(w.file.Extent()))
	if err := store.WriteFile(ctx, name, w.file.Bytes()); err != nil {
		return err
	}
	w.emit(verifySlice(first), name)
	w.file.Reset()
	return nil
}

// featuresFileName names the features file of extent ext: by the input
// file and row of its first document, so that the name says where in the
// slice the file begins, then by its count of records and the rows they
// span, so that a reader goes straight to the index entries its
// documents can have (featurefile.Read); featuresFileExtent reads them
// back.
func featuresFileName(ext featurefile.Extent) string {
	return fmt.Sprintf("%06d-%012d-%d-%d.features", ext.First>>40, ext.First&(1<<40-1), ext.Count, ext.Span)
}

// featuresFileExtent is the extent of the features file named name (a
// path ending in a featuresFileName).
func featuresFileExtent(name string) (featurefile.Extent, error) {
	var file, count int
	var row int64
	var span uint64
	if _, err := fmt.Sscanf(path.Base(name), "%06d-%012d-%d-%d.features", &file, &row, &count, &span); err != nil || count <= 0 || span < uint64(count) {
		return featurefile.Extent{}, fmt.Errorf("a features file named %q: not FILE-ROW-COUNT-SPAN.features (%v)", name, err)
	}
	return featurefile.Extent{First: crawl.DocID(file, row), Count: count, Span: span}, nil
}
