package pipelines

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/io/tables"
)

// redirectRow is what the reference reads of the redirect crawl.
type redirectRow struct {
	URL           string  `parquet:"url"`
	FetchRedirect *string `parquet:"fetch_redirect,optional"`
}

// TestRedirects runs the redirect crawl (testdata/redirects: the sample's
// pages and redirects to them, see scripts/gencrawl) with
// --redirect-column and checks it against a reference that walks every
// chain over the input's URL strings by hand: every redirect whose chain
// ends at a page of the crawl shares its cluster and names it with its
// hop count; no cluster is made of redirects alone, though half their
// bodies are one stub; the others (out of the crawl, cycles, too long, to
// an empty page) stay alone with their reason, each counted; no row is
// lost; pages' own clusters are those of a run without redirects, or new
// clusters of a page and the redirects to it.
func TestRedirects(t *testing.T) {
	const input = "../testdata/redirects/*.parquet"
	cfg := defaultConfig()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	r := run(t, input, cfg)
	base := run(t, input, defaultConfig())
	checkInvariants(t, r, len(base.docs))

	// The reference: the input rows by doc ID (file index << 40 | row).
	var rows []redirectRow
	var ids []int64
	files, _ := filepath.Glob(input)
	for i, f := range files {
		got, err := parquet.ReadFile[redirectRow](f)
		if err != nil {
			t.Fatal(err)
		}
		for j, row := range got {
			rows, ids = append(rows, row), append(ids, int64(i)<<40|int64(j))
		}
	}
	content := func(i int) bool {
		d := r.byDocID[ids[i]]
		return d.Status == tables.StatusOK || d.Status == tables.StatusTooShort
	}
	redirectOf := func(i int) string {
		if to := rows[i].FetchRedirect; to != nil && *to != "" {
			u, err := url.Parse(rows[i].URL)
			ref, err2 := url.Parse(*to)
			if err != nil || err2 != nil {
				return *to
			}
			return u.ResolveReference(ref).String()
		}
		return ""
	}
	// The URL's row: content first, then a redirect, then an empty page,
	// then the first.
	owner := map[string]int{}
	rank := func(i int) int {
		switch {
		case redirectOf(i) != "":
			return 2
		case content(i):
			return 1
		}
		return 3
	}
	for i, row := range rows {
		if j, ok := owner[row.URL]; !ok || rank(i) < rank(j) {
			owner[row.URL] = i
		}
	}
	type end struct {
		target, hops int
		why          string
	}
	follow := func(i int) end {
		seen := map[string]bool{rows[i].URL: true}
		at := redirectOf(i)
		for hops := 1; ; hops++ {
			j, ok := owner[at]
			switch {
			case seen[at]:
				return end{-1, hops, "cycle"}
			case !ok:
				return end{-1, hops, "not in the input"}
			case redirectOf(j) == "" && content(j):
				return end{j, hops, ""}
			case redirectOf(j) == "":
				return end{-1, hops, "no content"}
			case hops == 8:
				return end{-1, hops, "longer than 8"}
			}
			seen[at] = true
			at = redirectOf(j)
		}
	}
	ended := map[string]int64{}
	joinedTargets := map[int64]bool{}
	for i := range rows {
		d := r.byDocID[ids[i]]
		if redirectOf(i) == "" {
			if d.Status == tables.StatusRedirect || d.RedirectHops != nil {
				t.Errorf("doc %d: no redirect, status %s", d.DocID, d.Status)
			}
			continue
		}
		want := follow(i)
		ended[want.why]++
		if d.Status != tables.StatusRedirect || d.IdenticalTo != nil || d.SketchSize != 0 {
			t.Errorf("redirect doc %d: status %s, identical to %v, sketch %d", d.DocID, d.Status, d.IdenticalTo, d.SketchSize)
		}
		if d.RedirectHops == nil || int(*d.RedirectHops) != want.hops {
			t.Errorf("redirect doc %d (%s): hops %v, want %d", d.DocID, rows[i].URL, d.RedirectHops, want.hops)
		}
		if want.target < 0 {
			if d.ClusterID != nil || d.Reason == nil || !strings.Contains(*d.Reason, want.why) || d.RedirectTarget != nil {
				t.Errorf("redirect doc %d (%s): cluster %v, reason %v; want none, %q", d.DocID, rows[i].URL, d.ClusterID, d.Reason, want.why)
			}
			continue
		}
		tg := r.byDocID[ids[want.target]]
		joinedTargets[tg.DocID] = true
		if d.ClusterID == nil || tg.ClusterID == nil || *d.ClusterID != *tg.ClusterID || d.JoinedBy == nil || *d.JoinedBy != tables.JoinedByRedirect ||
			d.RedirectTarget == nil || *d.RedirectTarget != tg.DocID || *d.KeptDocID != *tg.KeptDocID || d.IsRepresentative {
			t.Errorf("redirect doc %d (%s -> %s): cluster %v by %v, target %v, kept %v; want the cluster %v of doc %d",
				d.DocID, rows[i].URL, rows[want.target].URL, d.ClusterID, d.JoinedBy, d.RedirectTarget, d.KeptDocID, tg.ClusterID, tg.DocID)
		}
	}
	c := r.manifest.Counts
	for why, key := range map[string]string{"": "redirects_joined", "cycle": "redirect_cycles", "not in the input": "redirects_outside",
		"longer than 8": "redirects_too_long", "no content": "redirects_to_empty"} {
		if ended[why] == 0 || c[key] != ended[why] {
			t.Errorf("%s: manifest %d, the reference %d (the crawl must have some)", key, c[key], ended[why])
		}
	}
	if c["docs_redirect"] != c["redirects"] || c["redirects"] != ended[""]+ended["cycle"]+ended["not in the input"]+ended["longer than 8"]+ended["no content"] {
		t.Errorf("docs_redirect %d, redirects %d", c["docs_redirect"], c["redirects"])
	}

	// Clusters: none of redirects alone; the counts of their members; the
	// pages' clusters as without redirects, or new ones around a target.
	members := map[int64][2]int64{} // all, by redirect
	byContent := map[int64]bool{}
	for _, d := range r.docs {
		if d.ClusterID == nil {
			continue
		}
		m := members[*d.ClusterID]
		m[0]++
		if d.Status == tables.StatusRedirect {
			m[1]++
			if d.IsRepresentative {
				t.Errorf("redirect doc %d is its cluster's kept document", d.DocID)
			}
		} else {
			byContent[*d.ClusterID] = true
		}
		members[*d.ClusterID] = m
	}
	newClusters := 0
	for _, cl := range r.clusters {
		if !byContent[cl.ClusterID] {
			t.Errorf("cluster %d is made of redirects alone", cl.ClusterID)
		}
		if m := members[cl.ClusterID]; cl.RedirectMembers != m[1] || cl.Size != m[0] {
			t.Errorf("cluster %d: size %d with %d redirects; docs say %d with %d", cl.ClusterID, cl.Size, cl.RedirectMembers, m[0], m[1])
		}
	}
	for _, d := range r.docs {
		if d.Status == tables.StatusRedirect {
			continue
		}
		b := base.byDocID[d.DocID]
		switch {
		case b.ClusterID != nil && (d.ClusterID == nil || *d.ClusterID != *b.ClusterID):
			t.Errorf("page %d: cluster %v with redirects, %d without", d.DocID, d.ClusterID, *b.ClusterID)
		case b.ClusterID == nil && d.ClusterID != nil:
			if !joinedTargets[d.DocID] || *d.ClusterID != d.DocID || !d.IsRepresentative {
				t.Errorf("page %d, alone without redirects: in cluster %v, kept %v", d.DocID, *d.ClusterID, d.IsRepresentative)
			}
			newClusters++
		}
	}
	if newClusters == 0 || int64(newClusters) != c["clusters_of_redirects"] {
		t.Errorf("%d pages alone without redirects make clusters with theirs; manifest says %d", newClusters, c["clusters_of_redirects"])
	}
	// Without the redirect column, the shared stub is one big cluster of
	// identical copies: what --redirect-column is for.
	if base.manifest.Counts["largest_cluster"] < 100 {
		t.Errorf("without --redirect-column the largest cluster has %d documents; the shared stubs should make one of hundreds", base.manifest.Counts["largest_cluster"])
	}
	t.Logf("%d redirects: %v; %d new clusters; largest %d (without the column: %d)", c["redirects"], ended, newClusters, c["largest_cluster"], base.manifest.Counts["largest_cluster"])

	// recluster follows the stored redirects again: under the policy of
	// a full run, its tables.
	dir := t.TempDir()
	m, err := Recluster(context.Background(), ReclusterOptions{From: r.dir, Output: dir, Policy: policy.Default})
	if err != nil {
		t.Fatal(err)
	}
	sameTables(t, r, readResult(t, dir, m, policy.Default))
	// update does not move redirect groups yet, and says so.
	_, err = Update(context.Background(), UpdateOptions{From: r.dir, Options: Options{Input: "../testdata/crawl/part-00000.parquet", Output: t.TempDir(), Config: cfg}})
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("update of an index with redirects: %v", err)
	}
}
