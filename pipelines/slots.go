package pipelines

import (
	"flag"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// partitionsFor is --partitions=0: AutoPartitions of the input, and at
// least twice the bundles the cluster runs at once when the runner's
// flags say how many (workerSlots), so that every keyed step has work for
// every worker: 10 GiB of input gives 72 partitions, which a Dataflow job
// of 100 four-core workers would run on 72 of its 400 cores.
//
// And at least enough that the estimated largest group of a run over
// textBytes of text stays within budget bytes (partitionsForGroups):
// past some 2 TB of text the square root alone would give a worker more.
func partitionsFor(inputBytes, textBytes, budget int64) int {
	return max(AutoPartitions(inputBytes), min(2*workerSlots(), 1<<16), partitionsForGroups(textBytes, budget))
}

// workerSlots is how many bundles the runner runs at once, as its flags
// say: on Dataflow its workers (--max_num_workers, else --num_workers)
// times the vCPUs of --worker_machine_type; elsewhere Flink's (or any
// portable runner's) --parallelism. 0 when they do not say (the embedded
// runner, which the lanes spread instead; a job server left at its
// default parallelism).
func workerSlots() int {
	return slots(*runners.Runner, flagInt("num_workers"), flagInt("max_num_workers"), flagString("worker_machine_type", "machine_type"), *jobopts.Parallelism)
}

// slots is workerSlots of the given flags' values.
func slots(runner string, workers, maxWorkers int, machine string, parallelism int) int {
	switch strings.ToLower(runner) {
	case "dataflow", "dataflowrunner":
		if maxWorkers > 0 {
			workers = maxWorkers
		}
		return max(workers, 0) * machineCores(machine)
	}
	return max(parallelism, 0)
}

// machineCores is the vCPUs of a Compute Engine machine type: the number
// that ends a predefined type (n2-standard-4, c3-highmem-22), or the
// first of a custom one (n2-custom-8-16384); 1 for a shared-core type
// (e2-medium, f1-micro) and for Dataflow's batch default (n1-standard-1)
// when none is given.
func machineCores(machine string) int {
	f := strings.Split(strings.TrimSpace(machine), "-")
	if len(f) >= 3 && (f[1] == "custom" || f[0] == "custom") {
		i := 2
		if f[0] == "custom" {
			i = 1
		}
		if n, err := strconv.Atoi(f[i]); err == nil && n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(f[len(f)-1]); err == nil && n > 0 {
		return n
	}
	return 1
}

// flagInt is an integer flag's value, 0 when no runner linked in
// registers it.
func flagInt(name string) int {
	if f := flag.Lookup(name); f != nil {
		n, _ := strconv.Atoi(f.Value.String())
		return n
	}
	return 0
}

// flagString is the first of names that is a set flag's value.
func flagString(names ...string) string {
	for _, name := range names {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return f.Value.String()
		}
	}
	return ""
}
