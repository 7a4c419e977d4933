package jobwatch

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	df "google.golang.org/api/dataflow/v1b3"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
)

// fakeJobs is a job service that lists the jobs it is given and answers
// GetJobMetrics with a counter "docs" holding the job's number.
type fakeJobs struct {
	jobpb.UnimplementedJobServiceServer
	mu     sync.Mutex
	jobs   []*jobpb.JobInfo
	docs   map[string]int64
	asked  map[string]int
	events chan string
}

func (f *fakeJobs) GetJobs(context.Context, *jobpb.GetJobsRequest) (*jobpb.GetJobsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &jobpb.GetJobsResponse{JobInfo: append([]*jobpb.JobInfo(nil), f.jobs...)}, nil
}

func (f *fakeJobs) GetJobMetrics(_ context.Context, req *jobpb.GetJobMetricsRequest) (*jobpb.GetJobMetricsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[req.GetJobId()]++
	var payload bytes.Buffer
	coder.EncodeVarInt(f.docs[req.GetJobId()], &payload)
	counter := &pipepb.MonitoringInfo{
		Urn:     "beam:metric:user:sum_int64:v1",
		Type:    "beam:metrics:sum_int64:v1",
		Labels:  map[string]string{"NAMESPACE": "neardup", "NAME": "docs", "PTRANSFORM": "s1"},
		Payload: payload.Bytes(),
	}
	// A kind of metric the watch has no use for, which the SDK's
	// conversion would log at every reading.
	other := &pipepb.MonitoringInfo{Urn: "beam:metric:data_channel:read_index:v1", Labels: map[string]string{"PTRANSFORM": "s1"}, Payload: payload.Bytes()}
	return &jobpb.GetJobMetricsResponse{Metrics: &jobpb.MetricResults{Committed: []*pipepb.MonitoringInfo{counter, other}}}, nil
}

func (f *fakeJobs) add(id, name string, docs int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = append(f.jobs, &jobpb.JobInfo{JobId: id, JobName: name})
	f.docs[id] = docs
}

// docsOf is the docs counter of a reading.
func docsOf(res *metrics.Results) int64 {
	var n int64
	for _, c := range res.AllMetrics().Counters() {
		if c.Namespace() == "neardup" && c.Name() == "docs" {
			n += c.Result()
		}
	}
	return n
}

// TestJobServiceFindsTheNewJob: the watch follows the job of its name that
// the service did not have when the watch began, not an older one of the
// same name (a relaunch under the same --job_name), nor one of another
// name; and it reads once more when stopped.
func TestJobServiceFindsTheNewJob(t *testing.T) {
	f := &fakeJobs{docs: map[string]int64{}, asked: map[string]int{}}
	f.add("job-1", "crawl", 1)
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	jobpb.RegisterJobServiceServer(srv, f)
	go srv.Serve(l)
	defer srv.Stop()

	var mu sync.Mutex
	var readings []int64
	ctx := context.Background()
	w, err := JobService(ctx, l.Addr().String(), "crawl", 5*time.Millisecond, func(res *metrics.Results) {
		mu.Lock()
		readings = append(readings, docsOf(res))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	f.add("job-2", "other", 2)
	time.Sleep(50 * time.Millisecond)
	f.add("job-3", "crawl", 3)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(readings)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.Stop(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(readings) < 2 {
		t.Fatalf("readings %v: want the job's while polling and one more at Stop", readings)
	}
	for _, r := range readings {
		if r != 3 {
			t.Fatalf("readings %v: want job-3's (3) only", readings)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.asked["job-1"]+f.asked["job-2"] != 0 {
		t.Errorf("metrics asked of other jobs: %v", f.asked)
	}
}

// TestJobServiceUnreachable: a service that does not answer is an error
// at once (within the call timeout), so that the run goes on without the
// watch.
func TestJobServiceUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := JobService(context.Background(), addr, "crawl", time.Second, func(*metrics.Results) {}); err == nil {
		t.Fatal("no error from a job service that is not there")
	}
}

// TestDataflow follows a job on a fake of Dataflow's REST API, answering
// as Dataflow documents it (the v1b3 discovery document the Go client is
// generated from): jobs.list with filter ACTIVE finds the job by name,
// jobs.getMetrics gives user counters as scalars and distributions as
// count/sum/min/max, tentative (attempted) or not (committed), each with
// the step and namespace in its context.
func TestDataflow(t *testing.T) {
	var mu sync.Mutex
	listed, metricsAsked := 0, 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1b3/projects/proj/locations/europe-west4/jobs", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		listed++
		mu.Unlock()
		if r.URL.Query().Get("filter") != "ACTIVE" {
			t.Errorf("jobs.list filter %q, want ACTIVE", r.URL.Query().Get("filter"))
		}
		w.Write([]byte(`{"jobs":[{"id":"2026-12-07_01","name":"other"},{"id":"2026-12-07_02","name":"neardup-7"}]}`))
	})
	mux.HandleFunc("GET /v1b3/projects/proj/locations/europe-west4/jobs/{id}/metrics", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		metricsAsked++
		mu.Unlock()
		if id := r.PathValue("id"); id != "2026-12-07_02" {
			t.Errorf("metrics of job %q", id)
		}
		w.Write([]byte(`{"metrics":[
 {"name":{"name":"docs","origin":"user","context":{"namespace":"neardup","step":"e4","tentative":"true"}},"scalar":1500},
 {"name":{"name":"docs","origin":"user","context":{"namespace":"neardup","step":"e4"}},"scalar":1000},
 {"name":{"name":"phase1_sketch_clock_ms","origin":"user","context":{"namespace":"neardup","step":"e4"}},"distribution":{"count":8,"sum":80,"min":1796600000000,"max":1796600004000}},
 {"name":{"name":"ElementCount","origin":"dataflow/v1b3","context":{"step":"e4"}},"scalar":7}
]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	client, err := df.NewService(ctx, option.WithHTTPClient(srv.Client()), option.WithEndpoint(srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *metrics.Results, 100)
	w := Dataflow(ctx, client, "proj", "europe-west4", "neardup-7", 5*time.Millisecond, func(res *metrics.Results) { done <- res })
	var res *metrics.Results
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no reading in 10 s")
	}
	w.Stop(ctx)
	var counter *metrics.CounterResult
	for _, c := range res.AllMetrics().Counters() {
		if c.Namespace() == "neardup" && c.Name() == "docs" {
			counter = &c
		}
	}
	if counter == nil || counter.Attempted != 1500 || counter.Committed != 1000 {
		t.Fatalf("docs counter %+v, want attempted 1500, committed 1000", counter)
	}
	var dist *metrics.DistributionResult
	for _, d := range res.AllMetrics().Distributions() {
		if d.Name() == "phase1_sketch_clock_ms" {
			dist = &d
		}
	}
	if dist == nil || dist.Result().Min != 1796600000000 || dist.Result().Count != 8 {
		t.Fatalf("clock distribution %+v", dist)
	}
	mu.Lock()
	defer mu.Unlock()
	if listed != 1 || metricsAsked < 2 {
		t.Errorf("jobs.list called %d times (want 1: the id is kept), jobs.getMetrics %d (want the polls' and Stop's)", listed, metricsAsked)
	}
}
