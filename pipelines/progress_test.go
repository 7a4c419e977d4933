package pipelines

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/progress"
)

// TestProgressPhaseLines runs the sample and a recluster with the phase
// lines of a log (stderr not a terminal): one line per phase, in order,
// with the rows read out of the total of the Parquet footers.
func TestProgressPhaseLines(t *testing.T) {
	var out bytes.Buffer
	progressOut = &out
	defer func() { progressOut = os.Stderr }()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Run(ctx, Options{Input: "../testdata/crawl/*.parquet", Output: dir, Config: testConfig(), Progress: progress.Phases}); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^neardup: (.+) started at \d+\.\ds, (\d+)/3000 rows read$`)
	var phases []string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected progress line %q in\n%s", l, out.String())
		}
		if m[1] != "phase 1 read/sketch" && m[2] != "3000" {
			t.Errorf("%s started before every row was read: %q", m[1], l)
		}
		phases = append(phases, m[1])
	}
	want := []string{"phase 1 read/sketch", "identical shortcut", "phase 2 shingle merge", "phase 3 pair counting", "phase 4 clustering", "output"}
	if strings.Join(phases, "; ") != strings.Join(want, "; ") {
		t.Errorf("phases %q, want %q", phases, want)
	}

	out.Reset()
	if _, err := Recluster(ctx, ReclusterOptions{From: dir, Output: t.TempDir(), Policy: policy.Default, Progress: progress.Phases}); err != nil {
		t.Fatal(err)
	}
	// Recluster reads no input rows; reading the stored docs counts as
	// output, so that phase may come first.
	got := strings.Split(regexp.MustCompile(`\d+\.\ds`).ReplaceAllString(out.String(), "Ts"), "\n")
	slices.Sort(got)
	if strings.Join(got, "|") != "|neardup: output started at Ts|neardup: phase 4 clustering started at Ts" {
		t.Errorf("recluster progress:\n%s", out.String())
	}
}

// TestWorkersInProcess: progress is reported only where the workers run in
// this process, the only place the progress counters move.
func TestWorkersInProcess(t *testing.T) {
	runner, env := *runners.Runner, *jobopts.EnvironmentType
	defer func() { *runners.Runner, *jobopts.EnvironmentType = runner, env }()
	for _, c := range []struct {
		runner, env string
		want        bool
	}{
		{"", "", true}, {"prism", "", true}, {"prism", "LOOPBACK", true}, {"prism", "docker", false},
		{"universal", "LOOPBACK", true}, {"universal", "", false}, {"flink", "DOCKER", false},
		{"dataflow", "", false}, {"DataflowRunner", "", false},
	} {
		*runners.Runner, *jobopts.EnvironmentType = c.runner, c.env
		if got := workersInProcess(); got != c.want {
			t.Errorf("--runner=%q --environment_type=%q: workersInProcess() = %v, want %v", c.runner, c.env, got, c.want)
		}
	}
}
