package pipelines

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/gcpopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow/dataflowlib"

	"github.com/neardup/neardup/internal/jobwatch"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/transforms"
)

// remotePoll is how often a remote job's metrics are read (the tests
// shorten it).
var remotePoll = time.Second

// followRemote reports the progress of a job whose workers run
// elsewhere, from what the service running it reports
// (internal/jobwatch): a job-API runner's job service (universal, flink,
// spark, or prism given an --endpoint), or Dataflow. It gives the job a
// name of its own when --job_name is unset, so that the watch finds it
// among the service's other jobs, and returns the function that stops the
// reporting and puts the name back. Nothing is reported where the
// service cannot be reached before submission (the submission will say
// why) nor on a dry run.
func followRemote(ctx context.Context, w watch, start time.Time) (stop func()) {
	if DryRun() {
		return func() {}
	}
	named := *jobopts.JobName == ""
	if named {
		*jobopts.JobName = fmt.Sprintf("neardup-%d", time.Now().UnixNano())
	}
	unname := func() {
		if named {
			*jobopts.JobName = ""
		}
	}
	rp := &remoteProgress{}
	jw, err := watchJob(ctx, *jobopts.JobName, rp.seen)
	if err != nil {
		return unname
	}
	r := progress.StartFrom(progressOut, w.mode, start, rp.read)
	r.SetTotal(w.rows)
	return func() {
		jw.Stop(ctx)
		r.Stop()
		unname()
	}
}

// watchJob starts following the job named name where the runner sends it.
func watchJob(ctx context.Context, name string, seen func(*metrics.Results)) (*jobwatch.Watch, error) {
	switch strings.ToLower(*runners.Runner) {
	case "", "direct":
		return nil, fmt.Errorf("the embedded runner's workers run in this process")
	case "dataflow", "dataflowrunner":
		endpoint := ""
		if f := flag.Lookup("dataflow_endpoint"); f != nil {
			endpoint = f.Value.String()
		}
		client, err := dataflowlib.NewClient(ctx, endpoint)
		if err != nil {
			return nil, err
		}
		return jobwatch.Dataflow(ctx, client, gcpopts.GetProjectFromFlagOrEnvironment(ctx), gcpopts.GetRegion(ctx), name, remotePoll, seen), nil
	}
	if *jobopts.Endpoint == "" {
		return nil, fmt.Errorf("no --endpoint")
	}
	return jobwatch.JobService(ctx, *jobopts.Endpoint, name, remotePoll, seen)
}

// remoteProgress is a remote job's progress as its metrics tell it: the
// rows read (the docs counter) and their text's bytes, and each phase
// seen started, at its clock distribution's earliest time (the workers'
// clocks), with the rows read when the launcher first saw it.
type remoteProgress struct {
	mu   sync.Mutex
	snap progress.Snapshot
}

// seen takes one reading of the job's metrics: the committed values
// (finished bundles'), or the attempted where a runner reports only those
// (Flink). Prism's attempted values are one progress report's, not sums.
func (r *remoteProgress) seen(res *metrics.Results) {
	var rows, bytes int64
	starts := map[string]int64{}
	for _, c := range res.AllMetrics().Counters() {
		if c.Namespace() != transforms.Namespace {
			continue
		}
		switch c.Name() {
		case transforms.DocsCounter:
			rows += c.Result()
		case transforms.TextBytesCounter:
			bytes += c.Result()
		}
	}
	for _, d := range res.AllMetrics().Distributions() {
		phase, ok := strings.CutSuffix(d.Name(), transforms.ClockSuffix)
		v := d.Result()
		if !ok || d.Namespace() != transforms.Namespace || v.Count == 0 {
			continue
		}
		if at, ok := starts[phase]; !ok || v.Min < at {
			starts[phase] = v.Min
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap.Rows, r.snap.Bytes = max(r.snap.Rows, rows), max(r.snap.Bytes, bytes)
	for phase, ms := range starts {
		name := transforms.PhaseLabel(phase)
		i := slices.IndexFunc(r.snap.Started, func(s progress.Started) bool { return s.Name == name })
		if i < 0 {
			r.snap.Started = append(r.snap.Started, progress.Started{Name: name, At: time.UnixMilli(ms), Rows: r.snap.Rows})
		} else if at := time.UnixMilli(ms); at.Before(r.snap.Started[i].At) {
			r.snap.Started[i].At = at
		}
	}
}

// read is the progress as last seen.
func (r *remoteProgress) read() progress.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return progress.Snapshot{Rows: r.snap.Rows, Bytes: r.snap.Bytes, Started: slices.Clone(r.snap.Started)}
}
