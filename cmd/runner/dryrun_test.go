package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/gcstest"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/pipelines"
)

// TestDataflowDryRun launches a run, an update, a recluster and an export
// as scripts/run-dataflow.sh launches them, with Beam's --dry_run added,
// over inputs and outputs on a GCS emulator. Each must print the job
// Dataflow would receive: a batch job on Runner v2 (the experiments the
// Go SDK sets for it), the worker binary among its packages at the
// staging location the script gives, the script's worker settings, and a
// pipeline holding every step of the command's pipeline; say that it was
// a dry run; exit 0; and write nothing anywhere in the bucket (no lease,
// no temporary folder, no tables, no _SUCCESS).
func TestDataflowDryRun(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash runs scripts/run-dataflow.sh:", err)
	}
	ctx := context.Background()
	const bucket = "dry"
	srv := gcstest.Start(t, bucket)
	for src, dst := range map[string]string{
		"../../testdata/crawl/part-0000[01].parquet": "gs://dry/in",
		"../../testdata/crawl/part-0000[23].parquet": "gs://dry/new",
	} {
		if files, err := srv.Upload(ctx, src, dst); err != nil || len(files) != 2 {
			t.Fatalf("upload %s to %s: %q, %v", src, dst, files, err)
		}
	}
	// A finished output on the store, for the update, the recluster and
	// the export to start from: an embedded run, in this process.
	cfg := pipelinetest.DefaultConfig()
	cfg.Partitions = 3
	if _, err := pipelines.Run(ctx, pipelines.Options{Input: "gs://dry/in/*.parquet", Output: "gs://dry/out", Config: cfg}); err != nil {
		t.Fatal(err)
	}
	objects := func() []string {
		names, err := srv.List(ctx, "gs://dry/")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(names)
		return names
	}

	// The steps each pipeline is made of (pipelines.Build and its
	// siblings, in the paper's order): each must be in the job.
	run := []string{"ReadSplits", "Sketch", "Identical", "ShingleMerge", "PairCount", "Cluster", "WritePairs", "Assemble", "Sweeps", "EquivalenceCounts"}
	for _, c := range []struct {
		name  string
		args  []string
		steps []string
	}{
		{"run", []string{"--input", "gs://dry/new/*.parquet", "--output", "gs://dry/run"}, run},
		{"update", []string{"update", "--from", "gs://dry/out", "--input", "gs://dry/new/*.parquet", "--output", "gs://dry/up"},
			[]string{"ReadSplits", "Sketch", "IndexKeys", "ReadSketches", "Identical", "ShingleMerge", "UpdatePairs", "Cluster", "WritePairs", "Assemble", "Sweeps", "CarryShards"}},
		{"recluster", []string{"recluster", "--from", "gs://dry/out", "--policy", "containment:0.8", "--output", "gs://dry/re"},
			[]string{"ReadDocs", "ReadSketches", "Relink", "Components", "WritePairs", "Assemble", "Sweeps", "CarryShards"}},
		{"export", []string{"export", "--from", "gs://dry/out", "--output", "gs://dry/dedup"}, []string{"ExportMarks", "WriteExport"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			launch := scriptLaunch(t, bash, c.args)
			before := objects()
			r := runCommand(t, "", append(launch, "--dry_run")...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "dry run") {
				t.Errorf("stderr does not say it was a dry run:\n%s", r.stderr)
			}
			if after := objects(); !slices.Equal(before, after) {
				t.Errorf("the dry run wrote to the bucket:\nbefore %q\nafter  %q", before, after)
			}
			job := printedJob(t, r.stdout)
			if job.Type != "JOB_TYPE_BATCH" {
				t.Errorf("job type %q, want JOB_TYPE_BATCH", job.Type)
			}
			for _, e := range []string{"beam_fn_api", "use_runner_v2", "use_unified_worker", "use_portable_job_submission"} {
				if !slices.Contains(job.Environment.Experiments, e) {
					t.Errorf("experiments %q lack %s (Runner v2)", job.Environment.Experiments, e)
				}
			}
			if len(job.Environment.WorkerPools) != 1 {
				t.Fatalf("%d worker pools, want 1", len(job.Environment.WorkerPools))
			}
			pool := job.Environment.WorkerPools[0]
			if pool.NumWorkers != 4 || pool.AutoscalingSettings.MaxNumWorkers != 20 || pool.MachineType != "n2-standard-4" {
				t.Errorf("worker pool %d workers, at most %d, %s; the script sets 4, 20, n2-standard-4",
					pool.NumWorkers, pool.AutoscalingSettings.MaxNumWorkers, pool.MachineType)
			}
			if !slices.ContainsFunc(pool.Packages, func(p jobPackage) bool {
				return p.Name == "worker" && strings.HasPrefix(p.Location, "gs://dry/neardup/staging/") && strings.HasSuffix(p.Location, "/worker")
			}) {
				t.Errorf("the worker binary is not among the packages at the script's staging location: %+v", pool.Packages)
			}
			model := printedPipeline(t, r.stdout)
			names := map[string]bool{}
			for _, tr := range model.GetComponents().GetTransforms() {
				names[tr.GetUniqueName()] = true
			}
			checkURNs(t, model)
			for _, step := range c.steps {
				if !names[step] {
					t.Errorf("the job's pipeline has no step %s (%d transforms)", step, len(names))
				}
			}
		})
	}
}

// scriptLaunch is the runner command line scripts/run-dataflow.sh would
// launch with args (under DRY_RUN=1 it prints the worker build and the
// launch; it runs neither), less its "go run ./cmd/runner".
func scriptLaunch(t *testing.T, bash string, args []string) []string {
	t.Helper()
	cmd := exec.Command(bash, append([]string{"../../scripts/run-dataflow.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "DRY_RUN=1", "PROJECT=neardup-dry", "REGION=us-central1", "BUCKET=dry",
		"WORKER_BINARY="+filepath.Join(t.TempDir(), "neardup-worker"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/run-dataflow.sh %q: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	words := strings.Fields(lines[len(lines)-1])
	if len(words) < 3 || strings.Join(words[:3], " ") != "go run ./cmd/runner" {
		t.Fatalf("scripts/run-dataflow.sh printed %q, not a launch of ./cmd/runner", lines)
	}
	launch := words[3:]
	for i, w := range launch { // printf %q's quoting: the globs' \*
		launch[i] = strings.ReplaceAll(w, `\*`, "*")
	}
	return launch
}

// job is what the test reads of the Dataflow job the SDK prints (the
// JSON of dataflow/v1b3's Job).
type job struct {
	Type        string `json:"type"`
	Environment struct {
		Experiments []string `json:"experiments"`
		WorkerPools []struct {
			NumWorkers          int64        `json:"numWorkers"`
			MachineType         string       `json:"machineType"`
			Packages            []jobPackage `json:"packages"`
			AutoscalingSettings struct {
				MaxNumWorkers int64 `json:"maxNumWorkers"`
			} `json:"autoscalingSettings"`
		} `json:"workerPools"`
	} `json:"environment"`
}

type jobPackage struct {
	Name     string `json:"name"`
	Location string `json:"location"`
}

// printedJob finds the job's JSON in a dry run's stdout: the SDK prints
// it indented, from a line "{" to a line "}".
func printedJob(t *testing.T, stdout string) job {
	t.Helper()
	start := strings.Index(stdout, "\n{\n")
	end := strings.Index(stdout[max(start, 0):], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatalf("no job printed on stdout:\n%.2000s", stdout)
	}
	var j job
	if err := json.Unmarshal([]byte(stdout[start:start+end+2]), &j); err != nil {
		t.Fatalf("the printed job: %v", err)
	}
	return j
}
