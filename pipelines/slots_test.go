package pipelines

import (
	"flag"
	"testing"
)

// TestSlots: the bundles a cluster runs at once, from its runner's flags,
// and the partitions they ask for.
func TestSlots(t *testing.T) {
	for _, c := range []struct {
		runner              string
		workers, maxWorkers int
		machine             string
		parallelism         int
		want                int
	}{
		{"dataflow", 4, 20, "n2-standard-4", -1, 80},
		{"DataflowRunner", 10, 0, "n2-highmem-16", -1, 160},
		{"dataflow", 5, 0, "", -1, 5},                   // n1-standard-1
		{"dataflow", 3, 0, "n2-custom-8-16384", -1, 24}, // custom: vCPUs first
		{"dataflow", 3, 0, "custom-6-20480", -1, 18},
		{"dataflow", 2, 0, "e2-medium", -1, 2}, // shared core
		{"dataflow", 0, 0, "n2-standard-4", -1, 0},
		{"flink", 0, 0, "", 64, 64},
		{"universal", 0, 0, "", -1, 0},
		{"", 0, 0, "", -1, 0}, // the embedded runner
	} {
		if got := slots(c.runner, c.workers, c.maxWorkers, c.machine, c.parallelism); got != c.want {
			t.Errorf("slots(%q, %d, %d, %q, %d) = %d, want %d", c.runner, c.workers, c.maxWorkers, c.machine, c.parallelism, got, c.want)
		}
	}
}

// TestPartitionsForSlots: --partitions=0 is at least twice the slots the
// flags give, and the input's own count when that is more.
func TestPartitionsForSlots(t *testing.T) {
	set := func(name, v string) {
		t.Helper()
		old := flagString(name)
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(name, old) })
	}
	set("runner", "dataflow")
	set("num_workers", "4")
	set("max_num_workers", "100")
	set("worker_machine_type", "n2-standard-4")
	const tenGiB = 10 << 30
	if got, want := AutoPartitions(tenGiB), 72; got != want {
		t.Fatalf("AutoPartitions(10 GiB) = %d, want %d", got, want)
	}
	if got := partitionsFor(tenGiB, 0, 0); got != 800 { // 100 workers x 4 cores x 2
		t.Errorf("partitionsFor(10 GiB) on 100 four-core workers = %d, want 800", got)
	}
	if got := partitionsFor(1<<50, 0, 0); got != AutoPartitions(1<<50) {
		t.Errorf("partitionsFor(1 PiB) = %d, want the input's own %d", got, AutoPartitions(1<<50))
	}
	set("runner", "")
	if got := partitionsFor(tenGiB, 0, 0); got != 72 {
		t.Errorf("partitionsFor(10 GiB) on the embedded runner = %d, want 72", got)
	}
}
