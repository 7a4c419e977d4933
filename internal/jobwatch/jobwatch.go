// Package jobwatch follows a job while it runs, for a launcher whose
// workers run elsewhere and so leave its own progress counters at zero:
// on a Beam job service (Prism's job server, a Flink or Spark job server)
// through the job API, or on Dataflow through its REST API. It finds the
// job the launcher submitted by its name and reads the job's metrics at
// every poll: the job API's GetJobMetrics, or Dataflow's jobs.getMetrics.
//
// What a service reports while the job runs is its own affair: Prism
// reports each bundle's metrics as it finishes (and its progress reports'
// as it runs); Beam's Java job service, which Flink's and Spark's job
// servers are, returns the metrics of a batch job only once it has ended
// (JobInvocation.getMetrics gives the pipeline result's, which the runner
// hands back when its blocking execute returns). Dataflow reports a
// running job's metrics as tentative values, and committed ones once
// its bundles are done. The watch reports what there is, and one last
// reading when it stops.
package jobwatch

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/metricsx"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow/dataflowlib"
	df "google.golang.org/api/dataflow/v1b3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// callTimeout bounds each call to a service, so that a slow or
// unreachable service delays a reading, never the run.
const callTimeout = 5 * time.Second

// service is where a job is followed.
type service interface {
	// find returns the job's id, "" while the service does not list it.
	find(ctx context.Context) (string, error)
	// metrics reads the job's metrics.
	metrics(ctx context.Context, id string) (*metrics.Results, error)
	close()
}

// Watch follows one job. Its zero value is not usable: see JobService and
// Dataflow.
type Watch struct {
	svc   service
	seen  func(*metrics.Results)
	jobID string // the job's, once found; read and written by one poll at a time

	stop, done chan struct{}
}

func start(ctx context.Context, svc service, every time.Duration, seen func(*metrics.Results)) *Watch {
	w := &Watch{svc: svc, seen: seen, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop(ctx, every)
	return w
}

// Stop stops the polling, takes one last reading (the job has ended: a
// service that reports metrics only then reports them now) and lets the
// service go. A nil Watch does nothing.
func (w *Watch) Stop(ctx context.Context) {
	if w == nil {
		return
	}
	close(w.stop)
	<-w.done
	w.poll(ctx)
	w.svc.close()
}

func (w *Watch) loop(ctx context.Context, every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			w.poll(ctx)
		}
	}
}

// poll finds the job if it is not known yet and hands its metrics to
// seen. A failed call is skipped: the next poll tries again.
func (w *Watch) poll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if w.jobID == "" {
		id, err := w.svc.find(ctx)
		if err != nil || id == "" {
			return
		}
		w.jobID = id
	}
	if res, err := w.svc.metrics(ctx, w.jobID); err == nil {
		w.seen(res)
	}
}

// JobService begins following the job named name that endpoint's job
// service will be given after this call, calling seen with its metrics
// every every. Call it before submitting the job: the jobs the service
// already has are never taken for it, even under the same name. An error
// means the service did not answer; the run may go on without the watch.
func JobService(ctx context.Context, endpoint, name string, every time.Duration, seen func(*metrics.Results)) (*Watch, error) {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	js := &jobService{conn: conn, client: jobpb.NewJobServiceClient(conn), name: name, before: map[string]bool{}}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	jobs, err := js.jobs(cctx)
	if err != nil {
		conn.Close()
		return nil, err
	}
	for _, j := range jobs {
		js.before[j.GetJobId()] = true
	}
	return start(ctx, js, every, seen), nil
}

// jobService is a Beam job service, reached through the job API.
type jobService struct {
	conn   *grpc.ClientConn
	client jobpb.JobServiceClient
	name   string
	before map[string]bool // the service's jobs when the watch began
}

func (js *jobService) find(ctx context.Context) (string, error) {
	jobs, err := js.jobs(ctx)
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if j.GetJobName() == js.name && !js.before[j.GetJobId()] {
			return j.GetJobId(), nil
		}
	}
	return "", nil
}

func (js *jobService) jobs(ctx context.Context) ([]*jobpb.JobInfo, error) {
	resp, err := js.client.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetJobInfo(), nil
}

func (js *jobService) metrics(ctx context.Context, id string) (*metrics.Results, error) {
	resp, err := js.client.GetJobMetrics(ctx, &jobpb.GetJobMetricsRequest{JobId: id})
	if err != nil {
		return nil, err
	}
	m := resp.GetMetrics()
	// Only the user counters and distributions: the pipeline, which names
	// PCollections' metrics, is not needed for them, and metricsx logs
	// every kind it does not know at each reading.
	return metricsx.FromMonitoringInfos(&pipepb.Pipeline{}, userMetrics(m.GetAttempted()), userMetrics(m.GetCommitted())), nil
}

func (js *jobService) close() { js.conn.Close() }

// userMetrics are the user counters and distributions of ms.
func userMetrics(ms []*pipepb.MonitoringInfo) []*pipepb.MonitoringInfo {
	var out []*pipepb.MonitoringInfo
	for _, m := range ms {
		switch m.GetUrn() {
		case metricsx.UrnToString(metricsx.UrnUserSumInt64), metricsx.UrnToString(metricsx.UrnUserDistInt64):
			out = append(out, m)
		}
	}
	return out
}

// Dataflow begins following the Dataflow job named name in project and
// region, calling seen with its metrics every every. Dataflow allows one
// active job of a name in a region, so the name finds it.
func Dataflow(ctx context.Context, client *df.Service, project, region, name string, every time.Duration, seen func(*metrics.Results)) *Watch {
	return start(ctx, &dataflow{client, project, region, name}, every, seen)
}

// dataflow is the Dataflow service, reached through its REST API.
type dataflow struct {
	client                *df.Service
	project, region, name string
}

func (d *dataflow) find(ctx context.Context) (string, error) {
	call := d.client.Projects.Locations.Jobs.List(d.project, d.region).Filter("ACTIVE").Context(ctx)
	var id string
	err := call.Pages(ctx, func(r *df.ListJobsResponse) error {
		for _, j := range r.Jobs {
			if j.Name == d.name && id == "" {
				id = j.Id
			}
		}
		return nil
	})
	return id, err
}

func (d *dataflow) metrics(ctx context.Context, id string) (*metrics.Results, error) {
	resp, err := d.client.Projects.Locations.Jobs.GetMetrics(d.project, d.region, id).Context(ctx).Do()
	if err != nil {
		return nil, err
	}
	// dataflowlib names each metric's step from the pipeline; a pipeline
	// that knows every step by its own name keeps the names Dataflow gives.
	steps := &pipepb.Pipeline{Components: &pipepb.Components{Transforms: map[string]*pipepb.PTransform{}}}
	for _, m := range resp.Metrics {
		if m.Name != nil {
			if s := m.Name.Context["step"]; s != "" {
				steps.Components.Transforms[s] = &pipepb.PTransform{UniqueName: s}
			}
		}
	}
	return dataflowlib.FromMetricUpdates(resp.Metrics, steps), nil
}

func (d *dataflow) close() {}
