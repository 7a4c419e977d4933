package transforms

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

var (
	pairsLinked   = beam.NewCounter(Namespace, "links")
	pairsReported = beam.NewCounter(Namespace, "pairs_reported")
	phase4Time    = newPhaseTimer("phase4_cluster")
)

func init() {
	register.DoFn5x1[context.Context, int, []byte, func(int, []byte), func(int, []byte), error](&estimateFn{})
}

// Estimate computes Broder's estimates for one counted pair: the resemblance
// (MOD_m: shared/(|V(A)|+|V(B)|-shared); MIN_s: the share of the s smallest
// of F(A)∪F(B) found in both; MinHash: the share of agreeing positions)
// and, for MOD_m only, the containments of A in B and of B in A. MIN_s and
// MinHash sketches cannot estimate containment: nil then.
func Estimate(p packed.Pair, spec sketch.Spec) (res float64, aInB, bInA *float64) {
	switch spec.Kind {
	case sketch.MinHash:
		return sketch.MinHashResemblance(int(p.Count), spec.N), nil, nil
	case sketch.Min:
		union := min(spec.N, int(p.SizeA)+int(p.SizeB)-int(p.Count))
		if union > 0 {
			res = float64(p.MinShared) / float64(union)
		}
		return res, nil, nil
	}
	res = sketch.ModResemblance(int(p.Count), int(p.SizeA), int(p.SizeB))
	a := sketch.Containment(int(p.Count), int(p.SizeA))
	b := sketch.Containment(int(p.Count), int(p.SizeB))
	return res, &a, &b
}

// Cluster is phase 4. It takes the counted pairs of PairCount, the
// identical copies and representatives' sketches of Identical and the
// documents' ranks of Sketch. Each pair is estimated and Config.Policy
// decides whether it links its documents; Components then gives the
// connected components of the links, with the copies, the clusters. It returns
// pairRows, PCollection<KV<int, []byte>> of pairs-table rows per pair
// partition (see policy.Keep for which pairs), and the assignments and stats
// of Components.
//
// In an update, carried are more links: those of the index's pairs shards
// carried over as they are (IndexPairs).
func Cluster(s beam.Scope, pairs, copies, ranks, reps beam.PCollection, cfg Config, carried ...beam.PCollection) (pairRows, assignments, stats beam.PCollection) {
	s = s.Scope("Cluster")
	pairRows, links := beam.ParDo2(s, &estimateFn{Cfg: cfg}, pairs)
	if len(carried) > 0 {
		links = beam.Flatten(s, append([]beam.PCollection{links}, carried...)...)
	}
	assignments, stats = Components(s, cfg, links, copies, ranks, reps)
	return pairRows, assignments, stats
}

// linkResemblance is the resemblance a link carries to phase 4 (which
// orders and scores clusters by it): the verified one, when there is one.
func linkResemblance(sketched float64, v packed.Verified) float64 {
	if v.Checked {
		return v.Resemblance
	}
	return sketched
}

type estimateFn struct {
	Cfg   Config
	links *batcher // the bundle's (see batcher)
}

func (f *estimateFn) StartBundle(ctx context.Context, emitRows, emitLinks func(int, []byte)) {
	f.links = nil
}

func (f *estimateFn) FinishBundle(ctx context.Context, emitRows, emitLinks func(int, []byte)) {
	finishBatcher(&f.links, ctx, emitLinks)
}

func (f *estimateFn) ProcessElement(ctx context.Context, part int, batch []byte, emitRows, emitLinks func(int, []byte)) error {
	defer phase4Time.done(ctx, time.Now())
	var pairs []packed.Verified
	var err error
	if f.Cfg.Verification() != "" {
		pairs, err = packed.AppendVerified(nil, batch)
	} else {
		var ps []packed.Pair
		ps, err = packed.AppendPairs(nil, batch)
		pairs = make([]packed.Verified, len(ps))
		for i, p := range ps {
			pairs[i].Pair = p
		}
	}
	if err != nil {
		return err
	}
	links := bundleBatcher(&f.links, ctx, "links", f.Cfg.Partitions, emitLinks)
	var rows []tables.Pair
	var nLinks int64
	for _, v := range pairs {
		p := v.Pair
		res, aInB, bInA := Estimate(p, f.Cfg.Sketch)
		e := policy.Estimates{Shared: int(p.Count), Resemblance: res, AInB: aInB, BInA: bInA}
		row := tables.Pair{
			DocA: int64(p.A), DocB: int64(p.B), Shared: int32(p.Count),
			SketchSizeA: int32(p.SizeA), SketchSizeB: int32(p.SizeB),
			Resemblance: res, ContainmentAInB: aInB, ContainmentBInA: bInA,
		}
		var linked, keep bool
		switch f.Cfg.Verification() {
		case "":
			// Super-shingle candidates link as Broder's shortcut has it,
			// unless the sketch estimate must confirm them.
			linked = f.Cfg.Policy.Links(e) || f.Cfg.LinksAll()
			keep = policy.Keep(e, linked)
		default:
			ve := verifiedEstimates(v)
			linked = f.Cfg.Policy.Links(ve)
			keep = policy.Keep(e, linked) || (v.Checked && policy.Keep(ve, linked))
			row.SetVerified(string(f.Cfg.Verification()), v.Checked, v.Resemblance, v.AInB, v.BInA)
			if f.Cfg.Mode == settings.ModeExact {
				// The exact join has no sketch estimates: its figures
				// are exact, and a pair proved below them is no row.
				row.Resemblance, row.ContainmentAInB, row.ContainmentBInA = v.Resemblance, ve.AInB, ve.BInA
				keep = v.Checked && policy.Keep(ve, linked)
			}
		}
		row.Linked = linked
		if linked {
			links.add(packed.Partition(p.A, f.Cfg.Partitions), packed.Edge{A: p.A, B: p.B, Resemblance: linkResemblance(res, v)})
			nLinks++
		}
		if linked || (!f.Cfg.LinkedOnly && keep) {
			rows = append(rows, row)
		}
	}
	pairsLinked.Inc(ctx, nLinks)
	pairsReported.Inc(ctx, int64(len(rows)))
	if len(rows) > 0 {
		b, err := tables.Encode(rows)
		if err != nil {
			return err
		}
		emitRows(part, b)
	}
	return nil
}
