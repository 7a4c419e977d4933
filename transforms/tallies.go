package transforms

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
)

func init() {
	{
		fn := &reduceTallyFn{}
		register.Function3x0(fn.ProcessElement)
		registerDoFn(fn)
	}
	{
		fn := &writeTalliesFn{}
		register.Function4x1(fn.ProcessElement)
		registerDoFn(fn)
	}
}

// The tallies of phase 4, combined by maximum rather than summed.
var maxTallies = output.MaxTallies

// writeTallies combines figures the DoFns report as data (PCollections of
// KV<string, int64>: summed, or for maxTallies their maximum) and writes
// them to one file of the output's tallies under tempDir, which the
// launcher adds to the manifest's counts. Figures travel as data rather than runner metrics
// for the reason Assemble's do (Prism can drop a bundle's metrics), and in
// one file, not one per worker, because the rounds have many workers.
func writeTallies(s beam.Scope, name, tempDir string, tallies ...beam.PCollection) {
	if tempDir == "" {
		return // no output to publish them with (the transforms' tests)
	}
	s = s.Scope("Tallies")
	reduced := beam.ParDo(s, &reduceTallyFn{}, beam.GroupByKey(s, beam.Flatten(s, tallies...)))
	drain(s, beam.ParDo(s, &writeTalliesFn{TempDir: tempDir, Name: name}, beam.GroupByKey(s, reduced)))
}

// writeKeyTally writes the counts of one key of a keyed step (a partition,
// a shard) to the output's tallies folder, which the launcher sums and
// which override the runner's counters of the same names
// (output.Dir.Publish). Steps that see each key once write their counts
// this way rather than emitting them (writeTallies): the file's name is
// fixed by step and key, so a retried bundle rewrites the same file. Why
// not counters alone: Prism can drop the metrics of one of two bundles
// that finish together (see Assemble's), and under load it did, for a
// quarter of docs_written and for pairs_written (45 or 100 of 145 rows).
// A step whose counts have no place to go (tempDir "", the transforms'
// tests) writes nothing.
func writeKeyTally(ctx context.Context, tempDir, step string, key int, counts map[string]int64) error {
	if tempDir == "" {
		return nil
	}
	b, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	return store.WriteFile(ctx, store.Join(tempDir, output.TalliesDir, fmt.Sprintf("%s-%06d.json", step, key)), b)
}

// reduceTallyFn sums a tally, or takes its maximum (maxTallies).
type reduceTallyFn struct{}

func (f *reduceTallyFn) ProcessElement(key string, values func(*int64) bool, emit func(int, []byte)) {
	var total, v int64
	for values(&v) {
		if maxTallies[key] {
			total = max(total, v)
		} else {
			total += v
		}
	}
	b, _ := json.Marshal(map[string]int64{key: total})
	emit(0, b)
}

// writeTalliesFn writes the reduced tallies to one file of the output's
// tallies folder.
type writeTalliesFn struct {
	TempDir string
	Name    string
}

func (f *writeTalliesFn) ProcessElement(ctx context.Context, _ int, entries func(*[]byte) bool, emit func(string)) error {
	g := measureGroup(ctx, "write_tallies")
	defer g.done()
	entries = g.iter(entries)
	all := map[string]int64{}
	var b []byte
	for entries(&b) {
		var m map[string]int64
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		for k, v := range m {
			all[k] = v
		}
	}
	out, err := json.Marshal(all)
	if err != nil {
		return err
	}
	name := store.Join(f.TempDir, output.TalliesDir, strings.ReplaceAll(f.Name, "/", "_")+".json")
	emit(name) // see drain
	return store.WriteFile(ctx, name, out)
}
