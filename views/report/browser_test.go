package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/neardup/neardup/internal/browsertest"
)

// TestInBrowser opens the sample's report as a file in a real headless
// browser, with nothing else to load: no console error or blocked
// resource, both plots drawn with a visible size, the largest clusters'
// table present. The screenshot goes to the test's temporary folder
// (NEARDUP_SCREENSHOTS to keep it).
func TestInBrowser(t *testing.T) {
	b := browsertest.New(t)
	dir, _ := sampleOutput(t)
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, render(t, dir), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Do("open the report", chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS(`svg`)))
	if n := browsertest.Eval[int](b, `[...document.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 200 && s.getBoundingClientRect().height > 100).length`); n != 2 {
		t.Errorf("%d plots drawn at a visible size, want 2", n)
	}
	// Every label lies inside its plot, as this browser's face draws it.
	if out := browsertest.Eval[[]string](b, `[...document.querySelectorAll('svg')].flatMap(s => {
		const r = s.getBoundingClientRect();
		return [...s.querySelectorAll('text')].filter(t => {
			const q = t.getBoundingClientRect();
			return q.left < r.left - 0.5 || q.right > r.right + 0.5 || q.top < r.top - 0.5 || q.bottom > r.bottom + 0.5;
		}).map(t => t.textContent);
	})`); len(out) > 0 {
		t.Errorf("plot labels %q lie outside their plot", out)
	}
	if n := browsertest.Eval[int](b, `performance.getEntriesByType('resource').length`); n != 0 {
		t.Errorf("the report loaded %d resources; it must need none", n)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll('table').length`); n < 3 {
		t.Errorf("%d tables, want the accounting, the hosts and the largest clusters at least", n)
	}
	b.Screenshot("report")
	b.Clean("the report")
}
