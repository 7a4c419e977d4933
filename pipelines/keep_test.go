package pipelines

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/tables"
)

// duckdb runs one SQL query with DuckDB (scripts/duckdb installs it from
// npm; CI runs that before the tests) over an output folder, and returns
// the printed rows. Without DuckDB the test is skipped, except in CI.
func duckdb(t *testing.T, query string) []string {
	t.Helper()
	cache := os.Getenv("NEARDUP_DUCKDB_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "neardup-duckdb")
	}
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(cache, "node_modules", "@duckdb", "node-api")); err != nil || statErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("DuckDB is not installed in %s (node: %v): CI runs scripts/duckdb/check.sh first", cache, err)
		}
		t.Skipf("DuckDB not installed (run scripts/duckdb/check.sh once to fetch it from npm): node %v, %v", err, statErr)
	}
	sql := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(sql, []byte(query), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(cache, "query.mjs"), sql, "/unused")
	cmd.Dir = cache
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.HasPrefix(l, "--") {
			lines = append(lines, l)
		}
	}
	return lines[1:] // the header
}

// TestKeepPolicies: under every --keep policy the clusters are the same,
// and each cluster's kept document is the one DuckDB finds by ranking its
// members as the README says (ties to the smallest doc ID); is_representative
// marks exactly the kept documents and those alone.
func TestKeepPolicies(t *testing.T) {
	const input = "../testdata/crawl/*.parquet"
	in, err := filepath.Abs("../testdata/crawl")
	if err != nil {
		t.Fatal(err)
	}
	base := run(t, input, defaultConfig())
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
			cfg := defaultConfig()
			cfg.Keep, cfg.Columns.Score = p, p.NeedsColumn()
			r := run(t, input, cfg)
			checkInvariants(t, r, len(base.docs))
			if r.manifest.Settings["keep"] != spec {
				t.Errorf("manifest: keep %q", r.manifest.Settings["keep"])
			}
			moved := 0
			for _, d := range r.docs {
				b := base.byDocID[d.DocID]
				if (d.ClusterID == nil) != (b.ClusterID == nil) || (d.ClusterID != nil && *d.ClusterID != *b.ClusterID) {
					t.Fatalf("doc %d: cluster %v under %s, %v under smallest-id", d.DocID, d.ClusterID, spec, b.ClusterID)
				}
				if d.KeptDocID != nil && d.ClusterID != nil && *d.KeptDocID != *d.ClusterID {
					moved++
				}
			}
			rows := duckdb(t, fmt.Sprintf(`
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
  (SELECT count(DISTINCT cluster_id) FROM ranked);`, r.dir, in, by))
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
	violations := func(r *result) (bad, clustered int) {
		sk := sketchesOf(t, r.dir)
		rep := func(d *tables.Doc) int64 { // whose sketch stands for d
			if d.IdenticalTo != nil {
				return *d.IdenticalTo
			}
			return d.DocID
		}
		for i := range r.docs {
			d := &r.docs[i]
			if d.ClusterID == nil {
				continue
			}
			clustered++
			a, b := rep(d), rep(r.byDocID[*d.KeptDocID])
			res := 1.0
			if a != b {
				res = modFigures(sharedValues(sk[a], sk[b]), len(sk[a]), len(sk[b])).res
			}
			if d.ResemblanceToKept == nil || *d.ResemblanceToKept != res {
				t.Errorf("doc %d: resemblance_to_kept %v, the sketches give %v", d.DocID, deref(d.ResemblanceToKept), res)
			}
			if !linksByRule(r.policy, figures{res: res}) {
				bad++
			}
		}
		return bad, clustered
	}
	var chained int
	for _, input := range append([]string{sampleGlob}, shareddata.Paths(t, "deb-copyright.parquet", "multilingual-docs.parquet")...) {
		t.Run(input, func(t *testing.T) {
			cfg := defaultConfig()
			comps := run(t, input, cfg)
			cfg.Centered = true
			centered := run(t, input, cfg)
			checkInvariants(t, centered, len(comps.docs))
			if centered.manifest.Settings["clusters"] != "centered" {
				t.Errorf("manifest: clusters %q", centered.manifest.Settings["clusters"])
			}
			badComps, nComps := violations(comps)
			badCentered, nCentered := violations(centered)
			chained += badComps
			t.Logf("components: %d of %d clustered docs below 0.5 against their kept document; centered: %d of %d", badComps, nComps, badCentered, nCentered)
			if badCentered != 0 || nCentered == 0 {
				t.Errorf("centered: %d of %d clustered documents do not meet the policy against their kept document", badCentered, nCentered)
			}
			for _, c := range centered.clusters {
				// The mean is a sum divided: equal figures may come out an ulp
				// under their minimum.
				if c.MinResemblanceToKept < 0.5 || c.MeanResemblanceToKept < c.MinResemblanceToKept*(1-1e-12) {
					t.Errorf("cluster %d: resemblance to kept min %g, mean %g", c.ClusterID, c.MinResemblanceToKept, c.MeanResemblanceToKept)
				}
			}
			dir := t.TempDir()
			m, err := Recluster(context.Background(), ReclusterOptions{From: comps.dir, Output: dir, Policy: cfg.Policy, Centered: true})
			if err != nil {
				t.Fatal(err)
			}
			sameTables(t, centered, readResult(t, dir, m, cfg.Policy))
		})
	}
	if chained == 0 {
		t.Error("no chained member in any components run: the inputs do not test centering")
	}
}
