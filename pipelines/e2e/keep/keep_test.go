package keep

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

// TestKeepPolicies: under every --keep policy the clusters are the same,
// and each cluster's kept document is the one DuckDB finds by ranking its
// members as the README says (ties to the smallest doc ID); is_representative
// marks exactly the kept documents and those alone.
func TestKeepPolicies(t *testing.T) {
	const input = "../../../testdata/crawl/*.parquet"
	in, err := filepath.Abs("../../../testdata/crawl")
	if err != nil {
		t.Fatal(err)
	}
	base := pipelinetest.Run(t, input, pipelinetest.DefaultConfig())
	order := map[string]string{
		keep.SmallestID:      "d.doc_id",
		keep.Longest:         "d.token_count DESC, d.doc_id",
		keep.Earliest:        "d.date ASC NULLS LAST, d.doc_id",
		keep.Latest:          "d.date DESC NULLS LAST, d.doc_id",
		keep.ShortestURL:     "strlen(d.url) ASC NULLS LAST, d.doc_id",
		"max:language_score": "s.language_score DESC NULLS LAST, d.doc_id",
		"min:language_score": "s.language_score ASC NULLS LAST, d.doc_id",
		// Lists: each rule breaks the ties of the one before. A static URL
		// has no query string (before any fragment); a host ends in .uk
		// at a label boundary.
		"static-url,shortest-url":            `regexp_matches(d.url, '^[^#]*[?]') ASC NULLS LAST, strlen(d.url) ASC NULLS LAST, d.doc_id`,
		"host-suffix:.uk,max:language_score": `regexp_matches(lower(d.url), '^[a-z]+://([^/:]*[.])?uk([:/]|$)') DESC NULLS LAST, s.language_score DESC NULLS LAST, d.doc_id`,
	}
	for spec, by := range order {
		t.Run(spec, func(t *testing.T) {
			p, err := keep.Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg := pipelinetest.DefaultConfig()
			cfg.Keep, cfg.Columns.Score = p, p.NeedsColumn()
			r := pipelinetest.Run(t, input, cfg)
			pipelinetest.CheckInvariants(t, r, len(base.Docs))
			if r.Manifest.Settings["keep"] != spec {
				t.Errorf("manifest: keep %q", r.Manifest.Settings["keep"])
			}
			moved := 0
			for _, d := range r.Docs {
				b := base.ByDocID[d.DocID]
				if (d.ClusterID == nil) != (b.ClusterID == nil) || (d.ClusterID != nil && *d.ClusterID != *b.ClusterID) {
					t.Fatalf("doc %d: cluster %v under %s, %v under smallest-id", d.DocID, d.ClusterID, spec, b.ClusterID)
				}
				if d.KeptDocID != nil && d.ClusterID != nil && *d.KeptDocID != *d.ClusterID {
					moved++
				}
			}
			rows := pipelinetest.DuckDB(t, fmt.Sprintf(`
WITH docs AS (SELECT * FROM '%[1]s/docs/*.parquet'),
src AS (SELECT id, language_score FROM '%[2]s/*.parquet'),
ranked AS (
  SELECT d.cluster_id, d.doc_id, row_number() OVER (PARTITION BY d.cluster_id ORDER BY %[3]s) AS k
  FROM docs d LEFT JOIN src s ON s.id = d.id WHERE d.cluster_id IS NOT NULL)
SELECT
  (SELECT count(*) FROM ranked r JOIN docs d ON d.doc_id = r.doc_id WHERE r.k = 1 AND NOT d.is_representative),
  (SELECT count(*) FROM docs d JOIN ranked r ON r.cluster_id = d.cluster_id AND r.k = 1 WHERE d.kept_doc_id <> r.doc_id),
  (SELECT count(*) FROM '%[1]s/clusters/*.parquet' c JOIN ranked r ON r.cluster_id = c.cluster_id AND r.k = 1 WHERE c.representative_doc_id <> r.doc_id),
  (SELECT count(*) FROM docs WHERE is_representative <> (kept_doc_id IS NOT NULL AND kept_doc_id = doc_id)),
  (SELECT count(DISTINCT cluster_id) FROM ranked);`, r.Dir, in, by))
			if len(rows) != 1 {
				t.Fatalf("duckdb printed %q", rows)
			}
			var notRep, wrongKept, wrongRow, wrongFlag, clusters int
			if _, err := fmt.Sscanf(rows[0], "%d | %d | %d | %d | %d", &notRep, &wrongKept, &wrongRow, &wrongFlag, &clusters); err != nil {
				t.Fatalf("duckdb printed %q: %v", rows[0], err)
			}
			if notRep+wrongKept+wrongRow+wrongFlag > 0 || clusters == 0 {
				t.Errorf("%s: of %d clusters, %d kept documents not representative, %d docs with another kept_doc_id, %d clusters rows with another representative, %d is_representative flags wrong",
					spec, clusters, notRep, wrongKept, wrongRow, wrongFlag)
			}
			t.Logf("%s: %d clusters, %d clustered docs whose kept document is not the cluster's smallest", spec, clusters, moved)
			if spec != keep.SmallestID && moved == 0 {
				t.Errorf("%s kept the smallest doc ID everywhere: the policy changed nothing", spec)
			}
		})
	}
}

// TestCenteredClusters: under --clusters=centered every clustered document
// meets the policy against its kept document, which Broder's transitive
// components do not guarantee on the same input; recluster gives the same
// tables. The resemblance to the kept document is recomputed here from
// the sketches table (and is 1 for an identical copy), not read from the
// docs table the run wrote.
func TestCenteredClusters(t *testing.T) {
	violations := func(r *pipelinetest.Result) (bad, clustered int) {
		sk := pipelinetest.SketchesOf(t, r.Dir)
		rep := func(d *tables.Doc) int64 { // whose sketch stands for d
			if d.IdenticalTo != nil {
				return *d.IdenticalTo
			}
			return d.DocID
		}
		for i := range r.Docs {
			d := &r.Docs[i]
			if d.ClusterID == nil {
				continue
			}
			clustered++
			a, b := rep(d), rep(r.ByDocID[*d.KeptDocID])
			res := 1.0
			if a != b {
				res = pipelinetest.ModFigures(pipelinetest.SharedValues(sk[a], sk[b]), len(sk[a]), len(sk[b])).Res
			}
			if d.ResemblanceToKept == nil || *d.ResemblanceToKept != res {
				t.Errorf("doc %d: resemblance_to_kept %v, the sketches give %v", d.DocID, pipelinetest.Deref(d.ResemblanceToKept), res)
			}
			if !pipelinetest.LinksByRule(r.Policy, pipelinetest.Figures{Res: res}) {
				bad++
			}
		}
		return bad, clustered
	}
	var chained int
	for _, input := range append([]string{pipelinetest.SampleGlob}, shareddata.Paths(t, "deb-copyright.parquet", "multilingual-docs.parquet")...) {
		t.Run(input, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			comps := pipelinetest.Run(t, input, cfg)
			cfg.Centered = true
			centered := pipelinetest.Run(t, input, cfg)
			pipelinetest.CheckInvariants(t, centered, len(comps.Docs))
			if centered.Manifest.Settings["clusters"] != "centered" {
				t.Errorf("manifest: clusters %q", centered.Manifest.Settings["clusters"])
			}
			badComps, nComps := violations(comps)
			badCentered, nCentered := violations(centered)
			chained += badComps
			t.Logf("components: %d of %d clustered docs below 0.5 against their kept document; centered: %d of %d", badComps, nComps, badCentered, nCentered)
			if badCentered != 0 || nCentered == 0 {
				t.Errorf("centered: %d of %d clustered documents do not meet the policy against their kept document", badCentered, nCentered)
			}
			for _, c := range centered.Clusters {
				// The mean is a sum divided: equal figures may come out an ulp
				// under their minimum.
				if c.MinResemblanceToKept < 0.5 || c.MeanResemblanceToKept < c.MinResemblanceToKept*(1-1e-12) {
					t.Errorf("cluster %d: resemblance to kept min %g, mean %g", c.ClusterID, c.MinResemblanceToKept, c.MeanResemblanceToKept)
				}
			}
			dir := t.TempDir()
			m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: comps.Dir, Output: dir, Policy: cfg.Policy, Centered: true})
			if err != nil {
				t.Fatal(err)
			}
			pipelinetest.SameTables(t, centered, pipelinetest.ReadResult(t, dir, m, cfg.Policy))
		})
	}
	if chained == 0 {
		t.Error("no chained member in any components run: the inputs do not test centering")
	}
}
