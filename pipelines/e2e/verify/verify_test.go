package verify

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
)

// --mode=exact links exactly the pairs of representatives that the exact
// join finds, with its figures to the last bit.
func TestExactMode(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Mode = settings.ModeExact
	r := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
	pipelinetest.CheckInvariants(t, r, 3000)
	if m := r.Manifest.Settings["mode"]; m != "exact" {
		t.Errorf("mode setting %q", m)
	}
	reps := pipelinetest.Representatives(t, r, cfg)
	var recs []simjoin.Record
	for id, s := range reps {
		recs = append(recs, simjoin.Record{ID: uint64(id), Tokens: s})
	}
	want, _, err := simjoin.Join(recs, cfg.Policy.Resemblance)
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]int64]tables.Pair{}
	for _, p := range r.Pairs {
		if p.Linked {
			got[[2]int64{p.DocA, p.DocB}] = p
		}
	}
	for _, w := range want {
		p, ok := got[[2]int64{int64(w.A), int64(w.B)}]
		if !ok {
			t.Errorf("exact pair %d-%d (J=%.3f) not linked", w.A, w.B, w.Jaccard)
			continue
		}
		if p.ExactResemblance == nil || *p.ExactResemblance != w.Jaccard || p.Resemblance != w.Jaccard {
			t.Errorf("pair %d-%d: resemblance %v (exact %v), want %v", w.A, w.B, p.Resemblance, p.ExactResemblance, w.Jaccard)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d pairs linked, the exact join has %d", len(got), len(want))
	}
	if len(want) < 50 {
		t.Fatalf("only %d exact pairs in the sample: the test proves little", len(want))
	}
}

// --verify=exact: every checked pair's figures are exact, and a pair is
// linked exactly when they meet the policy. --verify=uncertain: the same
// for the pairs whose estimates are within 2.5 standard errors of the
// threshold (uncertainByRule), and no figures for the others.
func TestVerifyExact(t *testing.T) {
	for _, v := range []settings.Verify{settings.VerifyExact, settings.VerifyUncertain} {
		t.Run(string(v), func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			cfg.Verify = v
			r := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
			pipelinetest.CheckInvariants(t, r, 3000)
			reps := pipelinetest.Representatives(t, r, cfg)
			checked, onEstimate := 0, 0
			for _, p := range r.Pairs {
				if v == settings.VerifyUncertain && !pipelinetest.UncertainByRule(cfg.Sketch, cfg.Policy, p) {
					onEstimate++
					if p.ExactResemblance != nil {
						t.Errorf("pair %d-%d at estimate %.3f of %d samples verified, though certain", p.DocA, p.DocB, p.Resemblance, p.SketchSizeA+p.SketchSizeB-p.Shared)
					}
					continue
				}
				a, b := reps[p.DocA], reps[p.DocB]
				o := 0
				for _, x := range a {
					if _, found := slices.BinarySearch(b, x); found {
						o++
					}
				}
				res := float64(o) / float64(len(a)+len(b)-o)
				if p.ExactResemblance == nil {
					if res >= 0.2 || float64(o) >= 0.5*float64(min(len(a), len(b))) {
						t.Errorf("pair %d-%d: unchecked at exact resemblance %.3f, overlap %d of %d and %d", p.DocA, p.DocB, res, o, len(a), len(b))
					}
					continue
				}
				checked++
				if *p.ExactResemblance != res || *p.ExactContainmentAInB != float64(o)/float64(len(a)) || *p.ExactContainmentBInA != float64(o)/float64(len(b)) {
					t.Errorf("pair %d-%d: exact figures %v %v %v, want resemblance %v of overlap %d", p.DocA, p.DocB, *p.ExactResemblance, *p.ExactContainmentAInB, *p.ExactContainmentBInA, res, o)
				}
				if p.BloomResemblance != nil {
					t.Errorf("pair %d-%d has Bloom figures under --verify=exact", p.DocA, p.DocB)
				}
			}
			if checked < 50 {
				t.Fatalf("only %d pairs checked", checked)
			}
			if n := r.Manifest.Counts["verify_docs_reread"]; n != 0 {
				t.Errorf("%d documents read from the input again: phase 1's features files should hold every one", n)
			}
			if v == settings.VerifyUncertain {
				if want := "uncertain:resemblance:0.5"; r.Manifest.Settings["verify"] != want {
					t.Errorf("verify setting %q, want %q", r.Manifest.Settings["verify"], want)
				}
				if onEstimate < checked {
					t.Errorf("%d pairs on their estimates, %d verified: the uncertain pairs should be the fewer", onEstimate, checked)
				}
				if got, want := r.Manifest.Counts["pairs_verified"]+r.Manifest.Counts["pairs_verify_pruned"], r.Manifest.Counts["pairs"]-int64(onEstimate); got > want {
					t.Errorf("%d pairs verified or pruned, more than the %d candidates not taken on their estimates", got, want)
				}
			}
			t.Logf("%d pairs checked, %d on their estimates", checked, onEstimate)
		})
	}
}

// --verify=bloom: the pairs table carries the Bloom estimates of the two
// documents' whole feature sets, as package bloom computes them.
func TestVerifyBloom(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Verify = settings.VerifyBloom
	r := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
	pipelinetest.CheckInvariants(t, r, 3000)
	if v := r.Manifest.Settings["verify"]; v != "bloom:8" {
		t.Errorf("verify setting %q", v)
	}
	reps := pipelinetest.Representatives(t, r, cfg)
	for _, p := range r.Pairs {
		want, err := bloom.Compare(bloom.New(reps[p.DocA], bloom.DefaultBitsPerFeature), bloom.New(reps[p.DocB], bloom.DefaultBitsPerFeature))
		if err != nil {
			t.Fatal(err)
		}
		if want.Intersection == 0 {
			// No overlap the filters can tell from chance: no figures.
			if p.BloomResemblance != nil || p.Linked {
				t.Errorf("pair %d-%d: Bloom figures given %v (resemblance %v), linked %v, where the filters tell no overlap", p.DocA, p.DocB, p.BloomResemblance != nil, pipelinetest.Deref(p.BloomResemblance), p.Linked)
			}
			continue
		}
		if p.BloomResemblance == nil || *p.BloomResemblance != want.Resemblance || *p.BloomContainmentAInB != want.AInB || *p.BloomContainmentBInA != want.BInA {
			t.Fatalf("pair %d-%d: Bloom figures %v, want %+v", p.DocA, p.DocB, p.BloomResemblance, want)
		}
	}
	if len(r.Pairs) < 50 {
		t.Fatalf("only %d pairs", len(r.Pairs))
	}
}

// --verify=auto, the default, settles the uncertain pairs on their dense
// samples under a resemblance policy, and the manifest records what it
// settled on (pipelines' TestResolveVerify has the rule at every size).
func TestVerifyAuto(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Verify = settings.Default().Verify
	if cfg.Verify != settings.VerifyAuto {
		t.Fatalf("the default --verify is %q, want auto", cfg.Verify)
	}
	r := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
	pipelinetest.CheckInvariants(t, r, 3000)
	if got, want := r.Manifest.Settings["verify"], "dense:resemblance:0.5"; got != want {
		t.Errorf("verify setting %q for %d bytes of input, want %q", got, r.Manifest.InputBytes, want)
	}
	if r.Manifest.Counts["pairs_verified"] == 0 || r.Manifest.Counts["links_uncertain"] != 0 {
		t.Errorf("%d pairs verified, %d links uncertain", r.Manifest.Counts["pairs_verified"], r.Manifest.Counts["links_uncertain"])
	}
}

// --verify=dense: exactly the pairs whose estimates are uncertain
// (uncertainByRule) have a dense_resemblance, and it is the dense
// samples' estimate over the two documents' whole shingle sets as this
// test makes them: their exact resemblance when both have at most 512
// shingles. They link on it; the others on their estimate.
func TestVerifyDense(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Verify = settings.VerifyDense
	r := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
	pipelinetest.CheckInvariants(t, r, 3000)
	reps := pipelinetest.Representatives(t, r, cfg)
	d := sketch.DefaultDense
	settled, whole, sampled := 0, 0, 0
	for _, p := range r.Pairs {
		if p.ExactResemblance != nil || p.BloomResemblance != nil {
			t.Fatalf("pair %d-%d has exact or Bloom figures under --verify=dense", p.DocA, p.DocB)
		}
		if !pipelinetest.UncertainByRule(cfg.Sketch, cfg.Policy, p) {
			if p.DenseResemblance != nil || p.Linked != (p.Resemblance >= cfg.Policy.Resemblance) {
				t.Errorf("certain pair %d-%d: dense %v, linked %v at estimate %.3f", p.DocA, p.DocB, p.DenseResemblance, p.Linked, p.Resemblance)
			}
			continue
		}
		settled++
		a, b := reps[p.DocA], reps[p.DocB]
		want := d.Estimate(d.Sample(nil, a), d.Sample(nil, b), len(a), len(b)).Resemblance
		if len(a) <= d.K && len(b) <= d.K {
			whole++
			if j := sketch.Jaccard(a, b); want != j {
				t.Fatalf("pair %d-%d of short pages: the reference dense estimate %v is not their resemblance %v", p.DocA, p.DocB, want, j)
			}
		} else {
			sampled++
		}
		if p.DenseResemblance == nil || *p.DenseResemblance != want || p.Linked != (want >= cfg.Policy.Resemblance) {
			t.Errorf("uncertain pair %d-%d: dense %v, linked %v; want %v", p.DocA, p.DocB, p.DenseResemblance, p.Linked, want)
		}
	}
	if settled < 50 || whole == 0 || sampled == 0 {
		t.Fatalf("%d pairs settled (%d of short pages, %d sampled): the sample proves little", settled, whole, sampled)
	}
	t.Logf("%d pairs settled on dense samples: %d exactly (short pages), %d on samples", settled, whole, sampled)
}
