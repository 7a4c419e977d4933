package pipelines

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/neardup/neardup/internal/fanout"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/transforms"
)

// absolute makes each local path among paths absolute (store.Abs), so that
// the manifest and the messages name the run's folders from anywhere, as
// the input files are named in the docs table.
func absolute(paths ...*string) error {
	for _, p := range paths {
		a, err := store.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	return nil
}

// flagPath is a path given by a flag, for workersReach's message.
type flagPath struct{ flag, path string }

// workersReach refuses a local path (comma-separated globs or one path)
// when the workers do not run in this process: on Dataflow, or Flink
// with its DOCKER or PROCESS environment, or any job server with an
// EXTERNAL worker pool, the workers see their own disks, not the
// launcher's, so they would read nothing or write where no one publishes
// (issue 38: a local --output with such workers published empty tables
// under _SUCCESS). It says what to use instead.
//
// It also refuses an object store path that Beam's filesystems cannot
// name (see beamNameable), whatever the runner.
func workersReach(paths ...flagPath) error {
	for _, p := range paths {
		if err := beamNameable(p); err != nil {
			return err
		}
	}
	if workersInProcess() {
		return nil
	}
	for _, p := range paths {
		for _, one := range strings.Split(p.path, ",") {
			one = strings.TrimSpace(one)
			if one == "" || !store.IsLocal(one) {
				continue
			}
			return fmt.Errorf("--%s %s is on this machine's disk, but the workers of --runner=%s do not run in this process and cannot reach it: "+
				"name a filesystem every worker reaches (gs://BUCKET/..., s3://BUCKET/...), or run the workers here (--environment_type=LOOPBACK, or the embedded runner: no --runner)",
				p.flag, one, runnerName())
		}
	}
	return nil
}

// beamNameable refuses an object store path holding "%" or "#" (or "?",
// but in --input's globs): Beam's s3:// and gs:// filesystems parse names
// as URLs, so "%20" is read as a space, "%" before other characters fails,
// and what follows "?" or "#" is dropped; such a run would fail, or write
// elsewhere, only after its job.
func beamNameable(p flagPath) error {
	bad := "%#?"
	if p.flag == "input" {
		bad = "%#" // "?" is a glob's
	}
	for _, one := range strings.Split(p.path, ",") {
		one = strings.TrimSpace(one)
		if store.IsLocal(one) || !strings.ContainsAny(one, bad) {
			continue
		}
		return fmt.Errorf("--%s %s: Beam's filesystems read object names as URLs and cannot name one holding %q; rename the folder", p.flag, one, string(one[strings.IndexAny(one, bad)]))
	}
	return nil
}

// Reachable is workersReach for one flag's path, for the commands that
// check a path before the pipeline that uses it (--dedup-output).
func Reachable(flag, path string) error { return workersReach(flagPath{flag, path}) }

// runnerName is --runner with its environment, for messages.
func runnerName() string {
	r := *runners.Runner
	if env := *jobopts.EnvironmentType; env != "" {
		r += " --environment_type=" + env
	}
	return r
}

// inputFiles are the files of ins as the pipeline reads them: numbered
// from first (the high bits of their doc IDs), each pinned to the version
// the launcher found.
func inputFiles(ins []output.Input, first int) []transforms.InputFile {
	files := make([]transforms.InputFile, len(ins))
	for i, in := range ins {
		files[i] = transforms.InputFile{Index: first + i, Path: in.Path, Pin: crawl.Pin{Size: in.Bytes, Version: in.Version}}
	}
	return files
}

// shardRows sums the rows of table shards from their Parquet footers,
// several at once (an object store answers each in tens of milliseconds).
func shardRows(ctx context.Context, shards []string) (int64, error) {
	rows := make([]int64, len(shards))
	err := fanout.Each(len(shards), 32, func(i int) (err error) {
		rows[i], err = tables.NumRows(ctx, shards[i])
		return err
	})
	var total int64
	for _, n := range rows {
		total += n
	}
	return total, err
}
