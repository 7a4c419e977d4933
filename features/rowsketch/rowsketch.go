// Package rowsketch is phase 1 for one row at a time: a row's text (or the
// text of its HTML) to canonical token hashes, features (w-word shingles
// or content-defined chunks), the sketch, super-shingles or the exact
// join's prefix, and the fingerprints of Broder's three equivalence
// levels, with the row's docs-table row. transforms.Sketch runs it in the
// pipeline, and query and cmd/bench's plain-Go floor call it directly, so
// all do the same work.
package rowsketch

import (
	"fmt"

	"github.com/neardup/neardup/features/chunk"
	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/similarity/supershingle"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/text/htmltext"
	"github.com/neardup/neardup/text/stopword"
)

// Sketcher is phase 1 for one row at a time, as a plain function of
// the row and the configuration: transforms.Sketch and cmd/bench's
// plain-Go floor both call it, so they do the same work. It keeps the
// buffers it reuses from row to row, so one Sketcher serves one
// goroutine.
type Sketcher struct {
	cfg                                      settings.Config
	h                                        fingerprint.Hasher
	hashes, shingles, values, minima, supers []uint64
	chunker                                  *chunk.Chunker // under Config.Chunks
	stop                                     stopword.Set   // under Config.Stopwords
	tokens                                   []string
	canonical                                []byte
	kept                                     []uint64 // the token hashes without stop words
	dense                                    []uint32 // the last dense sample (Verifiable)
}

// New returns a Sketcher for cfg, or an error for a chunk size chunk.New
// refuses or a stop-word language stopword has no list for.
func New(cfg settings.Config) (*Sketcher, error) {
	rs := &Sketcher{cfg: cfg, h: fingerprint.New(cfg.Seed)}
	if cfg.Chunks > 0 {
		c, err := chunk.New(cfg.Chunks)
		if err != nil {
			return nil, err
		}
		rs.chunker = c
	}
	if cfg.Stopwords != "" {
		set, err := stopword.Hashes(cfg.Stopwords, rs.h)
		if err != nil {
			return nil, err
		}
		rs.stop = set
	}
	return rs, nil
}

// Verifiable is the record transforms.Verify checks the document's pairs
// with: its whole feature set, its Bloom filter or its dense sample
// (Config.Verification), from the last Sketch; false when that document
// had no features. Its values may be the Sketcher's buffer: valid until
// the next call.
func (rs *Sketcher) Verifiable(doc uint64) (packed.Features, bool) {
	if len(rs.shingles) == 0 {
		return packed.Features{}, false
	}
	switch rs.cfg.Verification() {
	case settings.VerifyBloom:
		f := bloom.New(rs.shingles, rs.cfg.BloomBitsPerFeature())
		return packed.Features{Doc: doc, N: f.N, K: uint32(f.K), Values: f.Bits}, true
	case settings.VerifyDense:
		n, sample, _ := rs.DenseSelection()
		return packed.DenseFeatures(doc, n, sample), true
	}
	return packed.Features{Doc: doc, N: uint32(len(rs.shingles)), Values: rs.shingles}, true
}

// FeaturesKind names what Verifiable's records hold under cfg, for a
// later run to tell whether it may verify on records an earlier one
// wrote (the settings that make the features themselves, such as
// shingles and seed, an update shares with its index anyway): "bloom:B"
// (B bits a feature), "dense:K" (K values kept), "exact", or "" when cfg
// verifies nothing.
func FeaturesKind(cfg settings.Config) string {
	switch v := cfg.Verification(); v {
	case "":
		return ""
	case settings.VerifyBloom:
		return fmt.Sprintf("bloom:%d", cfg.BloomBitsPerFeature())
	case settings.VerifyDense:
		return fmt.Sprintf("dense:%d", sketch.DefaultDense.K)
	default:
		return string(v)
	}
}

// AppendVerifiable appends to b the encoding of Verifiable(doc) (what
// phase 1 writes for Verify), without making the record of a dense
// sample; false, and b as it was, when that document had no features.
func (rs *Sketcher) AppendVerifiable(b []byte, doc uint64) ([]byte, bool) {
	if rs.cfg.Verification() == settings.VerifyDense {
		n, sample, ok := rs.DenseSelection()
		if !ok {
			return b, false
		}
		return packed.AppendDense(b, doc, n, sample), true
	}
	x, ok := rs.Verifiable(doc)
	if !ok {
		return b, false
	}
	return x.Append(b), true
}

// DenseSelection is what phase 1 keeps of the last Sketch's document
// for its dense sample (sketch.Dense.Select, not sorted): its set's size
// and the selection, valid until the next call; false when that document
// had no features.
func (rs *Sketcher) DenseSelection() (n int, sample []uint32, ok bool) {
	if len(rs.shingles) == 0 {
		return 0, nil, false
	}
	rs.dense = sketch.DefaultDense.Select(rs.dense[:0], rs.shingles)
	return len(rs.shingles), rs.dense, true
}

// content returns the token hashes that make features: hashes without
// the stop words of Config.Stopwords, if set.
func (rs *Sketcher) content(hashes []uint64) []uint64 {
	if rs.stop == nil {
		return hashes
	}
	rs.kept = rs.stop.Drop(append(rs.kept[:0], hashes...))
	return rs.kept
}

// Features appends to dst the sorted, distinct features of a text whose
// token hashes are hashes (canon.AppendHashes): its w-word shingles, or
// under Config.Chunks the content-defined chunks of its canonical form
// (its tokens joined by single spaces, so that spacing, case and
// punctuation change no chunk). Under Config.Stopwords the tokens are
// those that are not stop words.
func (rs *Sketcher) Features(dst []uint64, text string, hashes []uint64) []uint64 {
	if rs.chunker == nil {
		return shingle.FromHashes(dst, rs.h, rs.content(hashes), rs.cfg.ShingleWords)
	}
	return rs.chunks(dst, text)
}

// chunks appends to dst the content-defined chunks of text's canonical
// form, without stop words under Config.Stopwords (see Features).
func (rs *Sketcher) chunks(dst []uint64, text string) []uint64 {
	rs.tokens = canon.AppendTokens(rs.tokens[:0], text)
	rs.canonical = rs.canonical[:0]
	n := 0
	for _, t := range rs.tokens {
		if rs.stop != nil {
			if _, stop := rs.stop[rs.h.String(t)]; stop {
				continue
			}
		}
		if n > 0 {
			rs.canonical = append(rs.canonical, ' ')
		}
		rs.canonical = append(rs.canonical, t...)
		n++
	}
	return rs.chunker.Features(dst, rs.canonical, rs.h.Bytes)
}

// Sketch returns the row's docs-table row and, for documents that go on
// to the identical shortcut, their sketch record and the fingerprints of
// the three equivalence levels. The record's slices are the
// Sketcher's buffers: valid until the next call.
func (rs *Sketcher) Sketch(sp crawl.Split, row crawl.Row) (tables.Doc, *packed.Sketch, [3]uint64) {
	cfg := &rs.cfg
	id := crawl.DocID(sp.FileIndex, row.Index)
	doc := tables.Doc{
		DocID:      int64(id),
		ID:         optional(row.ID),
		URL:        optional(row.URL),
		Date:       optional(row.Date),
		SourceFile: sp.Path,
		SourceRow:  row.Index,
		Extraction: cfg.Extraction(),
		Sweep:      cfg.Sweep,
	}
	doc.ContentFingerprint = int64(rs.h.String(row.Content))
	if row.Redirect != "" {
		// A redirect's body is the crawler's stub ("301 Moved
		// Permanently"), shared by thousands of redirects: not sketched,
		// not an identical copy of anything. It joins its target's
		// cluster instead (transforms.Redirects).
		doc.Status, doc.RedirectTo = tables.StatusRedirect, optional(row.Redirect)
		return doc, nil, [3]uint64{}
	}
	if cfg.MaxDocBytes > 0 && len(row.Content) > cfg.MaxDocBytes {
		doc.Status = tables.StatusRejected
		doc.Reason = optional(fmt.Sprintf("%s of %d bytes exceeds --max-doc-bytes %d", cfg.Columns.ContentColumn(), len(row.Content), cfg.MaxDocBytes))
		return doc, nil, [3]uint64{}
	}
	text := row.Content
	if cfg.Columns.HTML != "" {
		text = ExtractText(text, cfg.Extract)
	}
	// The tokens are never built: their hashes are all the later steps
	// need (the lexical fingerprint is defined on them, see
	// fingerprint.Hasher.Tokens).
	rs.hashes = canon.AppendHashes(rs.hashes[:0], rs.h, text)
	doc.TokenCount = int64(len(rs.hashes))
	doc.LexicalFingerprint = int64(rs.h.Combine(rs.hashes))
	content := rs.hashes // what shingles are made of
	if cfg.Chunks == 0 {
		content = rs.content(rs.hashes)
	}
	switch {
	case row.Null:
		doc.Status, doc.Reason = tables.StatusEmpty, optional("null "+cfg.Columns.ContentColumn())
		return doc, nil, [3]uint64{}
	case len(rs.hashes) == 0:
		doc.Status, doc.Reason = tables.StatusEmpty, optional("no tokens")
		return doc, nil, [3]uint64{}
	case cfg.Chunks == 0 && len(content) < cfg.ShingleWords:
		doc.Status = tables.StatusTooShort
		doc.Reason = optional(fmt.Sprintf("%d tokens, fewer than the shingle size %d", len(rs.hashes), cfg.ShingleWords))
		if rs.stop != nil {
			doc.Reason = optional(fmt.Sprintf("%d tokens besides stop words, fewer than the shingle size %d", len(content), cfg.ShingleWords))
		}
		rs.values, rs.supers = rs.values[:0], rs.supers[:0]
	default:
		doc.Status = tables.StatusOK
		if cfg.Chunks == 0 {
			rs.shingles = shingle.FromHashes(rs.shingles[:0], rs.h, content, cfg.ShingleWords)
		} else {
			rs.shingles = rs.chunks(rs.shingles[:0], text)
		}
		switch {
		case (cfg.Mode == settings.ModeSuperShingle) && cfg.Sketch.Kind == sketch.MinHash:
			rs.minima = sketch.MinHashValues(rs.minima[:0], rs.shingles, cfg.Sketch.N)
			rs.values = sketch.TagMinHash(rs.values[:0], rs.minima)
			rs.supers = supershingle.Bands(rs.supers[:0], rs.h, rs.minima, cfg.Bands)
		case (cfg.Mode == settings.ModeSuperShingle):
			rs.values = cfg.Sketch.Select(rs.values[:0], rs.shingles)
			rs.supers = supershingle.Broder(rs.supers[:0], rs.h, rs.values, cfg.SuperSize)
		case (cfg.Mode == settings.ModeExact):
			// The ppjoin+ prefix: any document at the threshold or
			// above shares one of these features (in the order of their
			// fingerprints, one global order).
			rs.values = append(rs.values[:0], rs.shingles[:simjoin.ProbePrefix(cfg.Policy.Resemblance, len(rs.shingles))]...)
			rs.supers = rs.supers[:0]
		default:
			rs.values = cfg.Sketch.Select(rs.values[:0], rs.shingles)
			rs.supers = rs.supers[:0]
		}
		doc.ShingleCount = int64(len(rs.shingles))
		doc.SketchSize = int32(len(rs.values))
	}
	// Shingle equivalence falls back to the token stream for documents
	// with an empty sketch, which are not all alike.
	keys := [3]uint64{uint64(doc.ContentFingerprint), uint64(doc.LexicalFingerprint), uint64(doc.LexicalFingerprint)}
	if len(rs.values) > 0 {
		keys[2] = rs.h.Combine(rs.values)
	}
	rec := &packed.Sketch{Key: keys[settings.EquivalenceLevel(cfg.Equivalence)], Doc: id, Values: rs.values, Features: uint32(doc.ShingleCount)}
	if cfg.Mode == settings.ModeSuperShingle {
		rec.Supers = rs.supers
	}
	if cfg.Templates.On() {
		rec.Site = rs.site(row.URL)
	}
	return doc, rec, keys
}

// ExtractText is the text of an HTML document under an --extract mode:
// settings.ExtractVisible for all visible text, anything else (the default) the
// main content.
func ExtractText(html, mode string) string {
	if mode == settings.ExtractVisible {
		return htmltext.Extract(html)
	}
	return htmltext.ExtractMode(html, htmltext.Main)
}

// site returns the fingerprint of the site of url (never 0), or 0 for a
// page with no site.
func (rs *Sketcher) site(url string) uint64 {
	host := sitetemplate.Site(url)
	if host == "" {
		return 0
	}
	return max(rs.h.String(host), 1)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
