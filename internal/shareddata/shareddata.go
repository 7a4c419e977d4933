// Package shareddata finds the real corpora that live beside the
// repository, in ../shared/data (see its README), for tests and
// benchmarks.
//
// Without them a test skips and says why, so that a fresh clone's
// go test ./... stays usable; but in CI (the environment variable CI is
// set) an absent corpus fails the test: a suite that quietly shrinks
// would pass without checking what it claims to.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the folder of the shared corpora: ../shared/data beside the
// module root, found from this file's place in the module, so that any
// package's tests find it whatever their depth.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("..", "shared", "data")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(root, "..", "shared", "data")
}

// Path is the path of the shared corpus file name (such as
// "deb-copyright.parquet"). When it is absent, tb skips with a message
// naming it, or fails under CI.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(), name)
	if _, err := os.Stat(p); err != nil {
		Absent(tb, err)
	}
	return p
}

// Paths is Path for several names.
func Paths(tb testing.TB, names ...string) []string {
	tb.Helper()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Path(tb, n)
	}
	return out
}

// Absent ends tb for a missing corpus: a skip that names the cause, or,
// under CI, a failure.
func Absent(tb testing.TB, cause error) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("the shared corpora are needed in CI and are absent: %v (they live in ../shared/data beside the repository)", cause)
		return
	}
	tb.Skipf("skipping: the shared corpora are absent (%v); they live in ../shared/data beside the repository, and CI requires them", cause)
}

// InCI reports whether the tests run in CI, where nothing may skip for
// want of the corpora.
func InCI() bool { return os.Getenv("CI") != "" }

// Optional is Path for a test that still checks something without the
// corpus (the sample crawl alone): when it is absent, ok is false and the
// log says what the test leaves out, or, under CI, tb fails.
func Optional(tb testing.TB, name string) (path string, ok bool) {
	tb.Helper()
	p := filepath.Join(Dir(), name)
	if _, err := os.Stat(p); err != nil {
		if InCI() {
			Absent(tb, err)
			return "", false
		}
		tb.Logf("leaving out %s: the shared corpora are absent (%v); they live in ../shared/data beside the repository, and CI requires them", name, err)
		return "", false
	}
	return p, true
}
