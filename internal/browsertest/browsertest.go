// Package browsertest drives a real headless browser (Debian's chromium)
// from Go tests through chromedp: pages load as a person's browser loads
// them, console errors and exceptions are collected, and screenshots
// land in the test's temporary folder.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browsers are the executables tried, in order.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// Find returns the path of an installed browser, or "" when none is.
func Find() string {
	if p := os.Getenv("NEARDUP_BROWSER"); p != "" {
		return p
	}
	for _, b := range browsers {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// Browser is one headless browser tab for a test.
type Browser struct {
	Ctx context.Context
	t   *testing.T

	mu       sync.Mutex
	problems []string
}

// New starts a headless browser for t, or skips t, saying why, when no
// browser is installed (.ci/run installs Debian's chromium). It stops
// with the test.
func New(t *testing.T) *Browser {
	t.Helper()
	path := Find()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("no browser installed (tried %s; set NEARDUP_BROWSER): CI runs the browser tests, and .ci/run installs Debian's chromium", strings.Join(browsers, ", "))
		}
		t.Skipf("no browser installed (tried %s; set NEARDUP_BROWSER): the browser tests need one, and .ci/run installs Debian's chromium", strings.Join(browsers, ", "))
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &Browser{Ctx: ctx, t: t}
	if err := chromedp.Do(ctx); err != nil { // opens the tab, so that Listen misses nothing of its start
		t.Fatalf("starting %s: %v", path, err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.note(fmt.Sprintf("exception: %s (%s:%d)", ev.ExceptionDetails.Text, ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				b.note("console." + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				b.note(fmt.Sprintf("log %s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatalf("starting %s: %v", path, err)
		}
	}
	return b
}

func (b *Browser) note(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, p)
}

// Problems returns and forgets the console errors, exceptions and error
// log entries (failed loads, CSP violations) seen so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// Do runs chromedp actions, failing the test on an error.
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Screenshot saves the whole page as name.png in the test's temporary
// folder and returns its path.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100)) // 100: PNG; below, JPEG
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("NEARDUP_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s (%d bytes)", path, len(png))
	return path
}

// Clean fails the test if the browser saw any problem since the last
// call.
func (b *Browser) Clean(where string) {
	b.t.Helper()
	for _, p := range b.Problems() {
		b.t.Errorf("%s: %s", where, p)
	}
}
