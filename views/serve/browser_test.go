package serve

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/neardup/neardup/internal/browsertest"
	"github.com/neardup/neardup/io/crawl"
)

// TestInBrowser uses the app in a real headless browser as a person
// would: the pages load without console errors or blocked resources, a
// search by URL and one by pasted text find the planted near-copies, and
// the side-by-side view marks the text they share. Screenshots go to the
// test's temporary folder (NEARDUP_SCREENSHOTS to keep them).
func TestInBrowser(t *testing.T) {
	b := browsertest.New(t)
	srv, ix := app(t, "../../testdata/crawl/*.parquet")
	g := plantedGroup(t)

	b.Do("home", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name=url]`)))
	b.Screenshot("home")
	b.Clean("home")

	b.Do("search by URL",
		chromedp.SendKeys(chromedp.CSS(`input[name=url]`), g.Members[0].URL),
		chromedp.Submit(chromedp.CSS(`input[name=url]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.members`)))
	page := browsertest.Eval[string](b, `document.body.innerText`)
	for _, m := range g.Members {
		if !strings.Contains(page, m.URL) {
			t.Errorf("search by URL: planted copy %s not shown", m.URL)
		}
	}
	b.Screenshot("url")
	b.Clean("search by URL")

	row, err := crawl.ReadRow(context.Background(), filepath.Join("../../testdata/crawl", g.Members[1].File), g.Members[1].Row, crawl.Columns{Text: "text"})
	if err != nil {
		t.Fatal(err)
	}
	b.Do("search by text",
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`textarea`)),
		chromedp.SetValue(chromedp.CSS(`textarea`), row.Content),
		chromedp.Submit(chromedp.CSS(`textarea`)),
		chromedp.WaitVisible(chromedp.CSS(`#matches`)))
	page = browsertest.Eval[string](b, `document.body.innerText`)
	for _, m := range g.Members {
		if !strings.Contains(page, m.URL) {
			t.Errorf("search by pasted text: planted copy %s not found", m.URL)
		}
	}
	b.Clean("search by text")

	answers, err := ix.URL(context.Background(), g.Members[0].URL, false)
	if err != nil || answers[0].Cluster == nil {
		t.Fatalf("%v %+v", err, answers)
	}
	b.Do("cluster", chromedp.Navigate(fmt.Sprintf("%s/cluster/%d", srv.URL, answers[0].Cluster.ClusterID)), chromedp.WaitVisible(chromedp.CSS(`table`)))
	b.Clean("cluster")
	b.Do("side by side", chromedp.Click(chromedp.CSS(`a[href^="/compare"]`)), chromedp.WaitVisible(chromedp.CSS(`#a`)))
	marks := browsertest.Eval[int](b, `document.querySelectorAll('#a mark').length + document.querySelectorAll('#b mark').length`)
	marked := browsertest.Eval[int](b, `[...document.querySelectorAll('#a mark')].map(m => m.textContent.length).reduce((x, y) => x + y, 0)`)
	total := browsertest.Eval[int](b, `document.querySelector('#a').textContent.length`)
	if marks < 2 || marked < total/2 {
		t.Errorf("side by side of near-copies: %d marks, %d of %d characters marked", marks, marked, total)
	}
	b.Screenshot("compare")
	b.Clean("side by side")

	b.Do("clusters", chromedp.Navigate(srv.URL+"/clusters"), chromedp.WaitVisible(chromedp.CSS(`table`)))
	if n := browsertest.Eval[int](b, `document.querySelectorAll('a[href^="/cluster/"]').length`); n < 2 {
		t.Errorf("clusters page lists %d clusters", n)
	}
	b.Clean("clusters")
	b.Do("bad request", chromedp.Navigate(srv.URL+"/cluster/"+url.PathEscape("<b>x")))
	if h := browsertest.Eval[string](b, `document.querySelector('h1').textContent`); !strings.Contains(h, "400") {
		t.Errorf("a malformed cluster ID shows %q", h)
	}
	b.Problems() // the 400 itself is logged as a failed load
}
