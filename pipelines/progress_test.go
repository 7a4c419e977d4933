package pipelines

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/extworker"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/internal/s3test"
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

// lineTimes is a writer that notes when each line was written.
type lineTimes struct {
	mu    sync.Mutex
	lines []string
	at    []time.Time
}

func (l *lineTimes) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		l.lines, l.at = append(l.lines, s), append(l.at, time.Now())
	}
	return len(b), nil
}

// TestRemoteProgress runs the sample on a Prism job server of its own
// through the job API (--runner=universal), its workers an EXTERNAL
// worker pool, as a Flink job server's are: the launcher's own progress
// counters are not read there (workersInProcess is false), so every phase
// line comes from the job's metrics as the job service reports them
// (GetJobMetrics), and the first ones before the job has ended.
func TestRemoteProgress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		t.Fatal(err)
	}
	pool, err := extworker.StartLoopback(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Stop(ctx)
	runner, endpoint, env, config, bin := *runners.Runner, *jobopts.Endpoint, *jobopts.EnvironmentType, *jobopts.EnvironmentConfig, *jobopts.WorkerBinary
	defer func() {
		*runners.Runner, *jobopts.Endpoint, *jobopts.EnvironmentType, *jobopts.EnvironmentConfig, *jobopts.WorkerBinary = runner, endpoint, env, config, bin
	}()
	// The pool runs the work in this process: the binary staged is never
	// started, so the test's own saves the SDK's cross-compiling one.
	*jobopts.WorkerBinary = os.Args[0]
	*runners.Runner, *jobopts.Endpoint = "universal", fmt.Sprintf("localhost:%d", port)
	*jobopts.EnvironmentType, *jobopts.EnvironmentConfig = "EXTERNAL", pool.EnvironmentConfig(ctx)
	if workersInProcess() {
		t.Fatal("workersInProcess() with an EXTERNAL pool: the test would read the local counters")
	}
	out := &lineTimes{}
	progressOut = out
	defer func() { progressOut = os.Stderr }()
	poll := remotePoll
	remotePoll = 20 * time.Millisecond
	defer func() { remotePoll = poll }()
	var ended time.Time
	withRunJob(t, func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
		res, err := beamx.RunWithMetrics(ctx, p)
		ended = time.Now()
		return res, err
	})
	// Workers that share nothing with the launcher reach an object store,
	// not its disk (workersReach).
	s3 := s3test.Start(t, "progress")
	if _, err := s3.Upload(ctx, "../testdata/crawl", "s3://progress/crawl"); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, Options{Input: "s3://progress/crawl/*.parquet", Output: "s3://progress/out", Config: testConfig(), Progress: progress.Phases}); err != nil {
		t.Fatal(err)
	}
	if *jobopts.JobName != "" {
		t.Errorf("--job_name left set to %q", *jobopts.JobName)
	}
	line := regexp.MustCompile(`^neardup: (.+) started at (\d+\.\d)s(?:, (\d+)/3000 rows read)?$`)
	seen := map[string]int{}
	for i, l := range out.lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected progress line %q in\n%s", l, strings.Join(out.lines, "\n"))
		}
		seen[m[1]] = i
		if m[1] == "output" && m[3] != "3000" {
			t.Errorf("output started before every row was read: %q", l)
		}
	}
	order := []string{"phase 1 read/sketch", "phase 2 shingle merge", "phase 3 pair counting", "phase 4 clustering", "output"}
	for i, p := range order {
		j, ok := seen[p]
		if !ok {
			t.Fatalf("no %q line in\n%s", p, strings.Join(out.lines, "\n"))
		}
		if i > 0 && j < seen[order[i-1]] {
			t.Errorf("%q printed before %q:\n%s", p, order[i-1], strings.Join(out.lines, "\n"))
		}
	}
	t.Logf("progress:\n%s", strings.Join(out.lines, "\n"))
	if len(out.at) == 0 || !out.at[0].Before(ended) {
		t.Errorf("no phase line before the job ended: the lines came from the last reading only")
	}
}
