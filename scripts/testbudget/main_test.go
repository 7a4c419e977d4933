package main

import (
	"strings"
	"testing"
	"time"
)

// A go test run as it prints, packages with and without tests, one
// failed, one cached, test output between.
const sample = "ok  \tgithub.com/neardup/neardup/clustering/clusters\t0.138s\n" +
	"?   \tgithub.com/neardup/neardup/internal/beamtest\t[no test files]\n" +
	"--- FAIL: TestX (1.00s)\n" +
	"    x_test.go:3: ok  \tnot a package line\n" +
	"FAIL\n" +
	"FAIL\tgithub.com/neardup/neardup/pipelines\t600.191s\n" +
	"ok  \tgithub.com/neardup/neardup/transforms\t(cached)\n" +
	"ok  \tgithub.com/neardup/neardup/cmd/quality\t151.2s\n" +
	"FAIL\tgithub.com/neardup/neardup/io/crawl [build failed]\n" +
	"ok  \tgithub.com/neardup/neardup/io/tables\t0.989s\tcoverage: 80.1% of statements\n"

func TestParse(t *testing.T) {
	rs, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []result{
		{"github.com/neardup/neardup/clustering/clusters", true, 138 * time.Millisecond},
		{"github.com/neardup/neardup/pipelines", false, 600191 * time.Millisecond},
		{"github.com/neardup/neardup/transforms", true, 0},
		{"github.com/neardup/neardup/cmd/quality", true, 151200 * time.Millisecond},
		{"github.com/neardup/neardup/io/crawl", false, 0},
		{"github.com/neardup/neardup/io/tables", true, 989 * time.Millisecond},
	}
	if len(rs) != len(want) {
		t.Fatalf("parsed %d packages, want %d: %+v", len(rs), len(want), rs)
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("package %d: %+v, want %+v", i, rs[i], want[i])
		}
	}
}

func TestOver(t *testing.T) {
	rs, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	msgs := over(rs, 150*time.Second)
	if len(msgs) != 3 {
		t.Fatalf("over: %q, want the failed pipelines, the slow cmd/quality and io/crawl's failed build", msgs)
	}
	if !strings.Contains(msgs[0], "pipelines failed") || !strings.Contains(msgs[1], "cmd/quality took 151.2s, over its budget of 150s") || !strings.Contains(msgs[2], "io/crawl failed") {
		t.Errorf("over: %q", msgs)
	}
	if msgs := over(rs[2:3], 150*time.Second); len(msgs) != 0 {
		t.Errorf("a cached package is over budget: %q", msgs)
	}
}
