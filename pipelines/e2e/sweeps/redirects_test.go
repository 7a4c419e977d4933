package sweeps

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/views/query"
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
	const input = "../../../testdata/redirects/*.parquet"
	cfg := pipelinetest.DefaultConfig()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	r := pipelinetest.Run(t, input, cfg)
	base := pipelinetest.Run(t, input, pipelinetest.DefaultConfig())
	pipelinetest.CheckInvariants(t, r, len(base.Docs))

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
		d := r.ByDocID[ids[i]]
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
		d := r.ByDocID[ids[i]]
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
			// Alone, and no document to keep: its body is a stub.
			if d.ClusterID != nil || d.Reason == nil || !strings.Contains(*d.Reason, want.why) || d.RedirectTarget != nil || d.IsRepresentative || d.KeptDocID != nil {
				t.Errorf("redirect doc %d (%s): cluster %v, reason %v; want none, %q", d.DocID, rows[i].URL, d.ClusterID, d.Reason, want.why)
			}
			continue
		}
		tg := r.ByDocID[ids[want.target]]
		joinedTargets[tg.DocID] = true
		if d.ClusterID == nil || tg.ClusterID == nil || *d.ClusterID != *tg.ClusterID || d.JoinedBy == nil || *d.JoinedBy != tables.JoinedByRedirect ||
			d.RedirectTarget == nil || *d.RedirectTarget != tg.DocID || *d.KeptDocID != *tg.KeptDocID || d.IsRepresentative {
			t.Errorf("redirect doc %d (%s -> %s): cluster %v by %v, target %v, kept %v; want the cluster %v of doc %d",
				d.DocID, rows[i].URL, rows[want.target].URL, d.ClusterID, d.JoinedBy, d.RedirectTarget, d.KeptDocID, tg.ClusterID, tg.DocID)
		}
	}
	c := r.Manifest.Counts
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
	for _, d := range r.Docs {
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
	for _, cl := range r.Clusters {
		if !byContent[cl.ClusterID] {
			t.Errorf("cluster %d is made of redirects alone", cl.ClusterID)
		}
		if m := members[cl.ClusterID]; cl.RedirectMembers != m[1] || cl.Size != m[0] {
			t.Errorf("cluster %d: size %d with %d redirects; docs say %d with %d", cl.ClusterID, cl.Size, cl.RedirectMembers, m[0], m[1])
		}
	}
	for _, d := range r.Docs {
		if d.Status == tables.StatusRedirect {
			continue
		}
		b := base.ByDocID[d.DocID]
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
	if base.Manifest.Counts["largest_cluster"] < 100 {
		t.Errorf("without --redirect-column the largest cluster has %d documents; the shared stubs should make one of hundreds", base.Manifest.Counts["largest_cluster"])
	}
	t.Logf("%d redirects: %v; %d new clusters; largest %d (without the column: %d)", c["redirects"], ended, newClusters, c["largest_cluster"], base.Manifest.Counts["largest_cluster"])

	// recluster follows the stored redirects again: under the policy of
	// a full run, its tables.
	dir := t.TempDir()
	m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: r.Dir, Output: dir, Policy: policy.Default})
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.SameTables(t, r, pipelinetest.ReadResult(t, dir, m, policy.Default))
}

// TestUpdateRedirectsEqualsFullRun: an update of the redirect crawl, in
// one sweep, writes the tables of a full run over both parts, whichever
// part is the index: the redirects coming after the pages they lead to,
// or the pages coming after the redirects to them, which pointed outside
// the index until then (Zhu et al.'s second case, a new page, with the
// redirects to it).
func TestUpdateRedirectsEqualsFullRun(t *testing.T) {
	pages, err := filepath.Abs("../../../testdata/redirects/part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	redirects := strings.Replace(pages, "part-00000", "part-00001", 1)
	for _, order := range [][2]string{{pages, redirects}, {redirects, pages}} {
		name := map[string]string{pages: "pages", redirects: "redirects"}
		t.Run(name[order[0]]+" first", func(t *testing.T) {
			// Named so that the index's file sorts first, as in the
			// full run's doc IDs.
			dir := t.TempDir()
			first, second := filepath.Join(dir, "a-"+name[order[0]]+".parquet"), filepath.Join(dir, "b-"+name[order[1]]+".parquet")
			for i, f := range []string{first, second} {
				if err := os.Symlink(order[i], f); err != nil {
					t.Fatal(err)
				}
			}
			cfg := pipelinetest.DefaultConfig()
			cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
			cfg.Partitions = 5
			index := pipelinetest.Run(t, first, cfg)
			cfg.Partitions = 10
			up := pipelinetest.RunUpdate(t, index.Dir, second, cfg)
			full := pipelinetest.Run(t, filepath.Join(dir, "*.parquet"), cfg)
			pipelinetest.CheckInvariants(t, up, len(full.Docs))
			if err := tables.Diff(context.Background(), full.Dir, up.Dir); err != nil {
				t.Fatal(err)
			}
			ic, uc := index.Manifest.Counts, up.Manifest.Counts
			if uc["redirects_joined"] <= ic["redirects_joined"] || uc["redirects"] != full.Manifest.Counts["redirects"] {
				t.Errorf("redirects joined: index %d, update %d; redirects: update %d, full run %d",
					ic["redirects_joined"], uc["redirects_joined"], uc["redirects"], full.Manifest.Counts["redirects"])
			}
			t.Logf("index: %d of %d redirects joined; update: %d of %d", ic["redirects_joined"], ic["redirects"], uc["redirects_joined"], uc["redirects"])
		})
	}
}

// sweepRow is a row of the crawls of TestUpdateRedirectCases.
type sweepRow struct {
	URL           string  `parquet:"url"`
	Text          string  `parquet:"text"`
	FetchRedirect *string `parquet:"fetch_redirect,optional"`
}

// TestUpdateRedirectCases crawls a site twice and checks Zhu et al.'s
// three cases of an update (section 5.1), each by hand. Sweep 1: pages p1,
// p2, p3, each in a cluster with a near copy (q1, q2, q3), a page z and a
// page t alone, redirects r1 -> p1, s1 -> r1 -> p1, r2 -> p2, r3 -> p3, and
// d -> n, e -> m, whose targets are not crawled yet. Sweep 2 crawls p1
// again with z's text, p2 again with new text, p3 again redirecting to t,
// n with t's text and m with new text. Then: case 1, a page whose content
// changed moves group and takes the redirects to it along: r1 and s1 join
// z's cluster with p1's new row; r2 makes a new cluster with p2's new row.
// Case 2, a new page: n joins t's cluster, and d, which led nowhere, with
// it; m makes a cluster with e. Case 3, a page that now redirects: p3's
// new row joins t's cluster, and r3 follows it there (two redirects on).
// The rows of sweep 1 keep their own clusters (p1 with q1, ...).
func TestUpdateRedirectCases(t *testing.T) {
	dir := t.TempDir()
	page := func(u string, text string) sweepRow { return sweepRow{URL: "https://site.test/" + u, Text: text} }
	redirect := func(u, to string) sweepRow {
		to = "https://site.test/" + to
		return sweepRow{URL: "https://site.test/" + u, Text: "301 Moved Permanently", FetchRedirect: &to}
	}
	near := func(i int) string { return strings.Replace(pipelinetest.Words(i, 120), "w", "changed w", 1) }
	write := func(name string, rows ...sweepRow) string {
		path := filepath.Join(dir, name)
		if err := parquet.WriteFile(path, rows); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sweep1 := write("sweep-1.parquet",
		page("p1", pipelinetest.Words(1, 120)), page("q1", near(1)), page("p2", pipelinetest.Words(2, 120)), page("q2", near(2)),
		page("p3", pipelinetest.Words(3, 120)), page("q3", near(3)), page("z", pipelinetest.Words(4, 120)), page("t", pipelinetest.Words(5, 120)),
		redirect("r1", "p1"), redirect("s1", "r1"), redirect("r2", "p2"), redirect("r3", "p3"),
		redirect("d", "n"), redirect("e", "m"))
	sweep2 := write("sweep-2.parquet",
		page("p1", near(4)), page("p2", pipelinetest.Words(6, 120)), redirect("p3", "t"), page("n", near(5)), page("m", pipelinetest.Words(7, 120)))

	cfg := pipelinetest.DefaultConfig()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	cfg.Sweep = "2026-10-01"
	index := pipelinetest.Run(t, sweep1, cfg)
	cfg.Sweep = "2026-11-01"
	up := pipelinetest.RunUpdate(t, index.Dir, sweep2, cfg)
	pipelinetest.CheckInvariants(t, up, 19)

	// The row of a URL in a sweep.
	row := func(r *pipelinetest.Result, u, sweep string) *tables.Doc {
		for i := range r.Docs {
			if d := &r.Docs[i]; pipelinetest.Deref(d.URL) == "https://site.test/"+u && d.Sweep == sweep {
				return d
			}
		}
		t.Fatalf("no row of %s in sweep %s", u, sweep)
		return nil
	}
	old := func(r *pipelinetest.Result, u string) *tables.Doc { return row(r, u, "2026-10-01") }
	now := func(u string) *tables.Doc { return row(up, u, "2026-11-01") }
	cluster := func(d *tables.Doc) int64 {
		if d.ClusterID == nil {
			return -1
		}
		return *d.ClusterID
	}
	same := func(what string, docs ...*tables.Doc) {
		t.Helper()
		for _, d := range docs[1:] {
			if c := cluster(d); c < 0 || c != cluster(docs[0]) {
				t.Errorf("%s: doc %d (%s, %s) in cluster %d, doc %d (%s) in %d", what, d.DocID, pipelinetest.Deref(d.URL), d.Sweep, c, docs[0].DocID, pipelinetest.Deref(docs[0].URL), cluster(docs[0]))
			}
		}
	}
	apart := func(what string, a, b *tables.Doc) {
		t.Helper()
		if cluster(a) >= 0 && cluster(a) == cluster(b) {
			t.Errorf("%s: docs %d and %d share cluster %d", what, a.DocID, b.DocID, cluster(a))
		}
	}
	leadsTo := func(what string, d, target *tables.Doc, hops int32) {
		t.Helper()
		if d.RedirectTarget == nil || *d.RedirectTarget != target.DocID || d.RedirectHops == nil || *d.RedirectHops != hops ||
			pipelinetest.Deref(d.JoinedBy) != tables.JoinedByRedirect || d.KeptDocID == nil || target.KeptDocID == nil || *d.KeptDocID != *target.KeptDocID {
			t.Errorf("%s: doc %d leads to %d in %d hops, joined by %q, keeps %d; want doc %d in %d, keeping %d",
				what, d.DocID, pipelinetest.Deref(d.RedirectTarget), pipelinetest.Deref(d.RedirectHops), pipelinetest.Deref(d.JoinedBy), pipelinetest.Deref(d.KeptDocID), target.DocID, hops, pipelinetest.Deref(target.KeptDocID))
		}
	}

	// The index, before: each redirect with its page; d and e lead
	// outside the crawl.
	same("index: p1's group", old(index, "p1"), old(index, "q1"), old(index, "r1"), old(index, "s1"))
	same("index: p2's group", old(index, "p2"), old(index, "q2"), old(index, "r2"))
	same("index: p3's group", old(index, "p3"), old(index, "q3"), old(index, "r3"))
	for _, u := range []string{"d", "e"} {
		if d := old(index, u); d.ClusterID != nil || !strings.Contains(pipelinetest.Deref(d.Reason), "not in the input") {
			t.Errorf("index: %s in cluster %v, reason %q; want alone, its target not in the input", u, d.ClusterID, pipelinetest.Deref(d.Reason))
		}
	}

	// Case 1: p1 changed to z's text; p2 to a text of its own.
	same("case 1, a duplicate now: p1's redirects move with it to z's cluster", old(up, "z"), now("p1"), old(up, "r1"), old(up, "s1"))
	leadsTo("case 1: r1", old(up, "r1"), now("p1"), 1)
	leadsTo("case 1: s1", old(up, "s1"), now("p1"), 2)
	same("case 1: p1's old row stays with q1", old(up, "p1"), old(up, "q1"))
	apart("case 1: p1's old group and new", old(up, "p1"), now("p1"))
	same("case 1, unique now: p2 makes a cluster with its redirects", now("p2"), old(up, "r2"))
	if p2 := now("p2"); cluster(p2) != p2.DocID || !p2.IsRepresentative {
		t.Errorf("case 1: p2's new row in cluster %d, kept %v; want a cluster of its own, named by it", cluster(p2), p2.IsRepresentative)
	}
	leadsTo("case 1: r2", old(up, "r2"), now("p2"), 1)
	same("case 1: p2's old row stays with q2", old(up, "p2"), old(up, "q2"))
	apart("case 1: p2's old group and new", old(up, "p2"), now("p2"))

	// Case 2: n, a new page like t, and m, new and unique.
	same("case 2, a duplicate: n joins t's cluster, and d with it", old(up, "t"), now("n"), old(up, "d"))
	leadsTo("case 2: d", old(up, "d"), now("n"), 1)
	same("case 2, unique: m makes a cluster with e", now("m"), old(up, "e"))
	leadsTo("case 2: e", old(up, "e"), now("m"), 1)

	// Case 3: p3 now redirects to t.
	same("case 3: p3 and the redirects to it join t's cluster", old(up, "t"), now("p3"), old(up, "r3"))
	leadsTo("case 3: p3", now("p3"), old(up, "t"), 1)
	leadsTo("case 3: r3", old(up, "r3"), old(up, "t"), 2)
	same("case 3: p3's old row stays with q3", old(up, "p3"), old(up, "q3"))

	// query shows r3's chain through p3's new row.
	ix, err := query.Open(context.Background(), up.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := ix.Doc(context.Background(), old(up, "r3").DocID); err != nil || !ok || len(d.Chain) != 2 || pipelinetest.Deref(d.Chain[0].DocID) != now("p3").DocID || d.Chain[0].Status != tables.StatusRedirect ||
		pipelinetest.Deref(d.Chain[1].DocID) != old(up, "t").DocID {
		t.Errorf("query: r3's chain %+v; want p3's new row (doc %d, a redirect), then t (doc %d)", d.Chain, now("p3").DocID, old(up, "t").DocID)
	}
	// Lost and found: the redirects of sweep 1, absent from sweep 2, are
	// found in their clusters' live pages, their chain's end first,
	// without a resemblance (no sketch); a live redirect (p3's new row)
	// is never found.
	foundAt := map[string][]string{}
	for _, l := range lostRows(t, up) {
		if l.FoundURL != nil {
			foundAt[l.URL] = append(foundAt[l.URL], strings.TrimPrefix(*l.FoundURL, "https://site.test/"))
			if isRedirect := old(up, strings.TrimPrefix(l.URL, "https://site.test/")).Status == tables.StatusRedirect; isRedirect != (l.Resemblance == nil) {
				t.Errorf("lost %s found at %s: resemblance %v", l.URL, *l.FoundURL, l.Resemblance)
			}
		}
	}
	for u, want := range map[string]string{"r1": "p1", "s1": "p1", "r2": "p2", "d": "n", "e": "m", "r3": "n"} {
		if got := foundAt["https://site.test/"+u]; len(got) != 1 || got[0] != want {
			t.Errorf("lost and found: %s found at %v, want [%s]", u, got, want)
		}
	}
	if c := up.Manifest.Counts; c["redirects"] != 7 || c["redirects_joined"] != 7 {
		t.Errorf("update: %d redirects, %d joined; want 7 and 7", c["redirects"], c["redirects_joined"])
	}
	// recluster follows the stored redirects of both sweeps as the
	// update did.
	again := t.TempDir()
	m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: up.Dir, Output: again, Policy: cfg.Policy})
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.SameTables(t, up, pipelinetest.ReadResult(t, again, m, cfg.Policy))
}
