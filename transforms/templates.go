package transforms

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/supershingle"
)

var templatesTime = newPhaseTimer("site_templates")

func init() {
	{
		fn := &countSiteValuesFn{}
		register.Function2x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &dropTemplatesFn{}
		register.Function4x0(fn.StartBundle)
		register.Function7x1(fn.ProcessElement)
		register.Function4x0(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// SiteTemplates drops each site's template shingles from its pages'
// sketches (--template-shingles; see package sitetemplate for the rule). It
// takes sites and sketches from Sketch: the packed.SiteCount batches (one
// count per page and per page's sketch value, keyed by the partition of
// the site, or of the site and value) and the whole packed.Sketch records
// of pages with a site, keyed by the site's partition (Sketch's keys). It
// returns those pages' sketches less their sites' template values
// (templates decides which they are) in the two streams Identical takes,
// keys and bodies, as Sketch gives them for pages without a site (see
// sendSketch); in super-shingle mode (cand) their super-shingles are made
// again from what is left.
//
// Two shuffles do it, neither holding a site on one worker: the counts of
// each (site, value) are summed where they meet, spread over all
// partitions, and only values common enough to be some site's template go
// on, with each site's page count, to the site's partition; there the
// site's template is decided and its pages' sketches stream past it.
func SiteTemplates(s beam.Scope, sites, sketches beam.PCollection, templates sitetemplate.Spec, cand Candidates, place Placement) (keys, bodies beam.PCollection) {
	s = s.Scope("SiteTemplates")
	facts := beam.ParDo(s, &countSiteValuesFn{Templates: templates, Partitions: place.Partitions}, beam.GroupByKey(s, sites))
	outs := beam.ParDoN(s, &dropTemplatesFn{Templates: templates, Candidates: cand, Partitions: place.Partitions}, beam.CoGroupByKey(s, facts, sketches))
	if place.TempDir != "" {
		writeTallies(s, "templates", place.TempDir, outs[2])
	}
	return outs[0], outs[1]
}

type countSiteValuesFn struct {
	Templates  sitetemplate.Spec
	Partitions int
	bundleOut  // its batcher, kept for the bundle (see batcher)
}

// ProcessElement sums the counts of one partition: the pages of each site
// whose partition this is, and the pages holding each (site, value) that
// hashed here. It passes on the page totals and the values that may be
// template, keyed by their site's partition.
func (f *countSiteValuesFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "count_site_values")
	defer g.done()
	batches = g.iter(batches)
	defer templatesTime.done(ctx, templatesTime.begin())
	all, err := decodeBatches(batches, packed.AppendSiteCounts)
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(x, y packed.SiteCount) int {
		if x.Pages != y.Pages {
			if x.Pages {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(x.Site, y.Site), cmp.Compare(x.Value, y.Value))
	})
	out := f.bundle(ctx, "site_facts", f.Partitions, emit)
	for i := 0; i < len(all); {
		c := all[i]
		j := i + 1
		for ; j < len(all) && all[j].Pages == c.Pages && all[j].Site == c.Site && (c.Pages || all[j].Value == c.Value); j++ {
			c.Docs += all[j].Docs
		}
		if c.Pages || f.Templates.MayBeTemplate(int(c.Docs)) {
			out.add(packed.Partition(c.Site, f.Partitions), c)
		}
		i = j
	}
	return nil
}

type dropTemplatesFn struct {
	Templates    sitetemplate.Spec
	Candidates   Candidates // the super-shingles' making
	Partitions   int
	keys, bodies *batcher // kept for the bundle (see batcher)
}

func (f *dropTemplatesFn) StartBundle(ctx context.Context, emitKeys, emitBodies func(int, []byte), tally func(string, int64)) {
	f.keys, f.bodies = nil, nil // a retried bundle starts afresh
}

func (f *dropTemplatesFn) FinishBundle(ctx context.Context, emitKeys, emitBodies func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.keys, ctx, emitKeys)
	finishBatcher(&f.bodies, ctx, emitBodies)
}

// ProcessElement decides the template of every site of one partition from
// its page count and its candidate values, then drops those values from
// the sketches of the site's pages as they stream past (in super-shingle
// mode the super-shingles are made again from what is left) and sends each
// sketch on to the identical shortcut.
func (f *dropTemplatesFn) ProcessElement(ctx context.Context, _ int, factsIt, sketchesIt func(*[]byte) bool, emitKeys, emitBodies func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "drop_templates")
	defer g.done()
	factsIt, sketchesIt = g.iter(factsIt), g.iter(sketchesIt)
	defer templatesTime.done(ctx, templatesTime.begin())
	facts, err := decodeBatches(factsIt, packed.AppendSiteCounts)
	if err != nil {
		return err
	}
	pages := map[uint64]int{}
	for _, c := range facts {
		if c.Pages {
			pages[c.Site] = int(c.Docs)
		}
	}
	template := map[[2]uint64]bool{}
	sites := map[uint64]bool{}
	for _, c := range facts {
		if !c.Pages && f.Templates.IsTemplate(int(c.Docs), pages[c.Site]) {
			template[[2]uint64{c.Site, c.Value}] = true
			sites[c.Site] = true
		}
	}
	tally("template_sites", int64(len(sites)))
	tally("template_shingles", int64(len(template)))
	h := fingerprint.New(f.Candidates.Seed)
	parts := f.Partitions
	keys := bundleBatcher(&f.keys, ctx, "sketch_keys", parts, emitKeys)
	bodies := bundleBatcher(&f.bodies, ctx, "sketches", parts, emitBodies)
	var touched, emptied, dropped int64
	var batch []packed.Sketch
	err = eachBatch(sketchesIt, func(b []byte) error {
		var err error
		if batch, err = packed.AppendSketches(batch[:0], b); err != nil {
			return err
		}
		for _, sk := range batch {
			if sites[sk.Site] && len(sk.Values) > 0 {
				site := sk.Site
				var n int
				sk.Values, n = sitetemplate.Drop(sk.Values, func(v uint64) bool { return template[[2]uint64{site, v}] })
				if n > 0 {
					touched++
					dropped += int64(n)
					if len(sk.Values) == 0 {
						emptied++
					}
					if f.Candidates.Mode == settings.ModeSuperShingle {
						sk.Supers = supershingle.Broder(nil, h, sk.Values, f.Candidates.SuperSize)
					}
				}
			}
			sendSketch(sk, parts, keys, bodies)
		}
		return nil
	})
	tally("template_pages", touched)
	tally("template_only_pages", emptied)
	tally("template_values_dropped", dropped)
	return err
}
