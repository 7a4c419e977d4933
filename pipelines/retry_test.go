package pipelines

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/extworker"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/runnerlib"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/faultstore"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
)

// withRunJob runs the test with the launcher's job runner replaced.
func withRunJob(t *testing.T, run func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error)) {
	t.Helper()
	saved := runJob
	runJob = run
	t.Cleanup(func() { runJob = saved })
}

// runOnOwnPrism runs p on a Prism job server of its own, its workers
// looped back into this process as the embedded runner's are.
func runOnOwnPrism(ctx context.Context, p *beam.Pipeline) error {
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		return err
	}
	edges, _, err := p.Build()
	if err != nil {
		return err
	}
	workers, err := extworker.StartLoopback(ctx, 0)
	if err != nil {
		return err
	}
	defer workers.Stop(ctx)
	env, err := graphx.CreateEnvironment(ctx, jobopts.GetEnvironmentUrn(ctx), workers.EnvironmentConfig)
	if err != nil {
		return err
	}
	job, err := graphx.Marshal(edges, &graphx.Options{Environment: env})
	if err != nil {
		return err
	}
	_, err = runnerlib.Execute(ctx, job, fmt.Sprintf("localhost:%d", port), &runnerlib.JobOptions{Name: jobopts.GetJobName(), Loopback: true}, false)
	return err
}

// TestBundlesRunTwice: every bundle of the job run twice, one attempt
// after the other (a runner's retry of a bundle that had written its
// files and then failed) or both at once (speculative execution), gives
// the tables a single run gives: each writer's files, tallies and
// receipts have names fixed by its key and replace each other whole. The
// same holds of an export's files and counts.
func TestBundlesRunTwice(t *testing.T) {
	ref := reference(t)
	refExport := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), ExportOptions{From: ref, Output: refExport}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"one after the other", "at once"} {
		t.Run(mode, func(t *testing.T) {
			withRunJob(t, func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
				if mode == "at once" {
					// Each copy on a job server of its own: two jobs
					// staged on one embedded Prism at once race on its
					// artifact map (jobservices' ReverseArtifactRetrievalService
					// writes it unlocked: "fatal error: concurrent map
					// writes" seen here), which is Prism's, not ours.
					var wg sync.WaitGroup
					errs := make([]error, 2)
					wg.Add(1)
					go func() { defer wg.Done(); _, errs[0] = beamx.RunWithMetrics(ctx, p) }()
					errs[1] = runOnOwnPrism(ctx, p)
					wg.Wait()
					return nil, errors.Join(errs...)
				}
				if _, err := beamx.RunWithMetrics(ctx, p); err != nil {
					return nil, err
				}
				return beamx.RunWithMetrics(ctx, p)
			})
			dir := t.TempDir()
			m, err := Run(context.Background(), Options{Input: sampleGlob, Output: dir, Config: runnerDefaults()})
			if err != nil {
				t.Fatal(err)
			}
			if err := tables.Diff(context.Background(), dir, ref); err != nil {
				t.Error(err)
			}
			if m.Counts["input_rows"] != 3000 || m.Counts["docs_written"] != 3000 {
				t.Errorf("input rows %d, docs rows %d; want 3000 each (every bundle's rows once)", m.Counts["input_rows"], m.Counts["docs_written"])
			}
			if kind, _, _ := settings.VerifiedAt(m.Settings["verify"]); kind != settings.VerifyDense || m.Counts["pairs_verified"] == 0 {
				t.Errorf("verify %q, %d pairs verified: the run wrote and read no dense samples", m.Settings["verify"], m.Counts["pairs_verified"])
			}
			exp := filepath.Join(t.TempDir(), "export")
			em, err := Export(context.Background(), ExportOptions{From: ref, Output: exp})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range em.Files {
				got, err1 := os.ReadFile(filepath.Join(exp, f.Output))
				want, err2 := os.ReadFile(filepath.Join(refExport, f.Output))
				if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
					t.Errorf("export file %s differs from a single export's (%v, %v)", f.Output, err1, err2)
				}
			}
			if em.Counts["rows_read"] != 3000 || em.Counts["rows_kept"] == 0 || len(em.Files) != 4 {
				t.Errorf("the export: %d files, counts %v; want 4 files, 3000 rows read once each", len(em.Files), em.Counts)
			}
		})
	}
}

// TestSecondRunIntoLiveOutput is issue 38's first reproduction: while a
// run's job is still writing, a second run into the same output folder
// starts. It is refused, naming the first, and deletes none of its files,
// so the first publishes every table whole (before, both exited 0 and the
// output held the first run's manifest over a urls table of 0 rows and a
// partial postings table).
func TestSecondRunIntoLiveOutput(t *testing.T) {
	ref := reference(t)
	dir := t.TempDir()
	var second error
	withRunJob(t, func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
		res, err := beamx.RunWithMetrics(ctx, p)
		// The job has written every shard; its launcher has not yet
		// published them. Now the second run.
		runJob = beamx.RunWithMetrics
		_, second = Run(ctx, Options{Input: "../testdata/crawl/part-00000.parquet", Output: dir, Config: runnerDefaults()})
		return res, err
	})
	m, err := Run(context.Background(), Options{Input: sampleGlob, Output: dir, Config: runnerDefaults()})
	if err != nil {
		t.Fatalf("the first run: %v", err)
	}
	if !errors.Is(second, output.ErrLiveRun) {
		t.Fatalf("the second run: %v; want it refused while the first is live", second)
	}
	if err := tables.Diff(context.Background(), dir, ref); err != nil {
		t.Errorf("the first run's tables, after the second was refused: %v", err)
	}
	if m.Counts["docs_written"] != 3000 {
		t.Errorf("docs rows %d, want 3000", m.Counts["docs_written"])
	}
}

// TestRunWhoseFilesWereRemovedFails: when a run's temporary files are
// removed while its job runs (another launcher's clean-up, an operator),
// the run fails and publishes nothing, though its job succeeded: the
// earlier output stays as it was.
func TestRunWhoseFilesWereRemovedFails(t *testing.T) {
	dir := reference(t)
	withRunJob(t, func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
		res, err := beamx.RunWithMetrics(ctx, p)
		shards, _ := filepath.Glob(filepath.Join(dir, output.TempRoot, "*", tables.URLsTable, "*.parquet"))
		if len(shards) == 0 {
			t.Error("the job wrote no urls shard")
		}
		os.Remove(shards[0])
		return res, err
	})
	_, err := Run(context.Background(), Options{Input: sampleGlob, Output: dir, Config: runnerDefaults()})
	if err == nil || !strings.Contains(err.Error(), "nothing was published") {
		t.Fatalf("Run = %v; want it to fail, publishing nothing", err)
	}
	if _, err := os.Stat(filepath.Join(dir, output.SuccessMarker)); err == nil {
		t.Error("_SUCCESS written over incomplete tables")
	}
}

// TestPublicationResumesAfterAFailedCopy: a run on a store without rename
// (faulty://, as an object store: moves copy and delete) whose copies of
// one docs shard fail leaves no _SUCCESS and says how to finish;
// output.Resume (runner publish) then publishes the tables a clean run
// gives, without running the job again.
func TestPublicationResumesAfterAFailedCopy(t *testing.T) {
	ref := reference(t)
	t.Cleanup(faultstore.Clear)
	local := filepath.Join(t.TempDir(), "out")
	dir := faultstore.Name(local)
	remove := faultstore.FailCopies(filepath.Join(local, tables.DocsTable, tables.ShardName(2)), faultstore.Always)
	_, err := Run(context.Background(), Options{Input: sampleGlob, Output: dir, Config: runnerDefaults()})
	remove()
	if !errors.Is(err, output.ErrUnfinished) || !strings.Contains(err.Error(), "runner publish --output") {
		t.Fatalf("Run with a failing copy = %v; want an unfinished publication, saying how to finish it", err)
	}
	if _, err := os.Stat(filepath.Join(local, output.SuccessMarker)); err == nil {
		t.Fatal("_SUCCESS written by a publication that stopped midway")
	}
	if _, err := output.Resume(context.Background(), dir); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := tables.Diff(context.Background(), local, ref); err != nil {
		t.Errorf("the resumed output's tables: %v", err)
	}
	m, err := output.ReadManifest(context.Background(), local)
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts["input_rows"] != 3000 || m.Counts["docs_written"] != 3000 {
		t.Errorf("the resumed manifest: input_rows %d, docs_written %d; want 3000", m.Counts["input_rows"], m.Counts["docs_written"])
	}
}

// TestInputChangedDuringRunFails: the launcher pins each input file's
// version (size and store.Version: here its modification time) when the
// run starts; a file rewritten before the workers read it fails the run,
// naming the file, and publishes nothing: even with --on-bad-file=skip,
// and even when the new version has the same rows (a rewrite within a
// run would otherwise mix versions between its splits).
func TestInputChangedDuringRunFails(t *testing.T) {
	in := t.TempDir()
	for _, f := range []string{"part-00000.parquet", "part-00001.parquet"} {
		b, err := os.ReadFile(filepath.Join("../testdata/crawl", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changed := filepath.Join(in, "part-00001.parquet")
	withRunJob(t, func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(changed, later, later); err != nil {
			t.Fatal(err)
		}
		return beamx.RunWithMetrics(ctx, p)
	})
	cfg := testConfig()
	cfg.SkipBadFiles = true
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), Options{Input: filepath.Join(in, "*.parquet"), Output: out, Config: cfg})
	if err == nil || !strings.Contains(err.Error(), changed) || !strings.Contains(err.Error(), "changed during the run") {
		t.Fatalf("Run over a file changed after it started = %v; want it failed, naming %s", err, changed)
	}
	if _, err := os.Stat(filepath.Join(out, output.SuccessMarker)); err == nil {
		t.Error("_SUCCESS written over a run that read a changed file")
	}
}

// TestLocalPathsRefusedWithRemoteWorkers: where the workers do not run
// in the launcher's process, every command refuses a local path before
// it starts anything, saying what to use instead; where they do (the
// embedded runner, LOOPBACK), local paths are fine.
func TestLocalPathsRefusedWithRemoteWorkers(t *testing.T) {
	ctx := context.Background()
	from := reference(t)
	setRunner := func(runner, env string) {
		savedR, savedE := *runners.Runner, *jobopts.EnvironmentType
		*runners.Runner, *jobopts.EnvironmentType = runner, env
		t.Cleanup(func() { *runners.Runner, *jobopts.EnvironmentType = savedR, savedE })
	}
	pol, err := policy.Parse("resemblance:0.5")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(sampleGlob)
	commands := map[string]func(out string) error{
		"run": func(out string) error {
			_, err := Run(ctx, Options{Input: abs, Output: out, Config: runnerDefaults()})
			return err
		},
		"update": func(out string) error {
			_, err := Update(ctx, UpdateOptions{From: from, Options: Options{Input: abs, Output: out, Config: runnerDefaults()}})
			return err
		},
		"recluster": func(out string) error {
			_, err := Recluster(ctx, ReclusterOptions{From: from, Output: out, Policy: pol})
			return err
		},
		"export": func(out string) error {
			_, err := Export(ctx, ExportOptions{From: from, Output: out})
			return err
		},
	}
	// The check itself first: were it broken, the commands below would
	// submit jobs to workers that cannot start (an EXTERNAL environment
	// without an address panics inside the embedded Prism).
	for _, r := range []struct{ runner, env string }{{"", ""}, {"prism", "LOOPBACK"}, {"universal", "LOOPBACK"}, {"flink", "loopback"}} {
		ok := t.Run("workers here: "+r.runner+"/"+r.env, func(t *testing.T) {
			setRunner(r.runner, r.env)
			if err := workersReach(flagPath{"output", "/tmp/x"}, flagPath{"input", "a/*.parquet,b/*.parquet"}); err != nil {
				t.Fatal(err)
			}
		})
		if !ok {
			t.FailNow()
		}
	}
	setRunner("flink", "DOCKER")
	if err := workersReach(flagPath{"input", "s3://b/in/*.parquet,gs://c/d/*.parquet"}, flagPath{"output", "s3://b/out"}); err != nil {
		t.Fatalf("object store paths refused: %v", err)
	}
	if err := workersReach(flagPath{"input", "s3://b/in/*.parquet, /local/x.parquet"}); err == nil || !strings.Contains(err.Error(), "--input /local/x.parquet") {
		t.Fatalf("a local glob among remote ones: %v; want it named", err)
	}
	setRunner("", "")
	for _, bad := range []flagPath{{"output", "s3://b/100%/out"}, {"input", "gs://b/a#1/*.parquet"}, {"from", "s3://b/out?x"}} {
		if err := workersReach(bad); err == nil || !strings.Contains(err.Error(), "cannot name") {
			t.Errorf("--%s %s: %v; want it refused as a name Beam's filesystems cannot parse", bad.flag, bad.path, err)
		}
	}
	if err := workersReach(flagPath{"input", "s3://b/in/part-0?.parquet"}, flagPath{"output", "s3://b/crawl 2024+1/out"}); err != nil {
		t.Errorf("names Beam's filesystems take refused: %v", err)
	}
	for _, r := range []struct{ runner, env string }{{"flink", "DOCKER"}, {"universal", "EXTERNAL"}, {"dataflow", ""}, {"prism", "PROCESS"}, {"spark", ""}} {
		for name, cmd := range commands {
			t.Run(r.runner+"/"+r.env+"/"+name, func(t *testing.T) {
				setRunner(r.runner, r.env)
				out := filepath.Join(t.TempDir(), "out")
				err := cmd(out)
				if err == nil || !strings.Contains(err.Error(), "s3://") || !strings.Contains(err.Error(), "cannot reach it") {
					t.Fatalf("%s with a local path and --runner=%s --environment_type=%s: %v; want it refused, saying what to use", name, r.runner, r.env, err)
				}
				if _, err := os.Stat(out); err == nil {
					t.Error("the refused command created its output folder")
				}
			})
		}
	}
}
