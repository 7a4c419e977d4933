package transforms

import (
	"context"
	"maps"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
)

// What a run reads, by the kind of file. On a cluster every byte read is
// an object store's egress and every request a GET it bills, so the
// workers count them (store.OnReads) in counters named ReadsPrefix, the
// kind, then "_requests" or "_bytes", and the launcher its own (the
// input's footers it plans the splits from, the receipts it checks);
// the manifest's reads section sums the two.

// ReadsPrefix begins the reads counters' names.
const ReadsPrefix = "reads_"

// ReadKinds are the kinds the reads are counted by (store.ReadsInput…).
var ReadKinds = []string{store.ReadsInput, store.ReadsFeatures, store.ReadsTemporary, store.ReadsOutput, store.ReadsOther}

var readCounters = func() map[string][2]beam.Counter {
	m := map[string][2]beam.Counter{}
	for _, k := range ReadKinds {
		m[k] = [2]beam.Counter{beam.NewCounter(Namespace, ReadsPrefix+k+"_requests"), beam.NewCounter(Namespace, ReadsPrefix+k+"_bytes")}
	}
	return m
}()

func init() { store.OnReads(countReads) }

// readKind is the kind of the read of name under ctx: a run's temporary
// files by their folder, whatever the label; others by the label ctx
// carries (store.ReadsAs).
func readKind(ctx context.Context, name string) string {
	if i := strings.Index(name, "/"+output.TempRoot+"/"); i >= 0 {
		if strings.Contains(name[i:], "/"+FeaturesDir+"/") {
			return store.ReadsFeatures
		}
		return store.ReadsTemporary
	}
	if k := store.ReadKind(ctx); k != "" {
		return k
	}
	return store.ReadsOther
}

func countReads(ctx context.Context, name string, r store.Reads) {
	kind := readKind(ctx, name)
	if metrics.GetStore(ctx) == nil { // not a bundle's: the launcher's
		launcherReads.Lock()
		defer launcherReads.Unlock()
		if launcherReads.m == nil {
			launcherReads.m = store.ReadsByKind{}
		}
		launcherReads.m.Add(kind, r)
		return
	}
	c := readCounters[kind]
	addCount(ctx, c[0], r.Requests)
	addCount(ctx, c[1], r.Bytes)
}

var launcherReads struct {
	sync.Mutex
	m store.ReadsByKind
}

// TakeLauncherReads returns the reads this process made outside any
// bundle since it last was called, by kind, and starts them afresh: a
// launcher calls it as a run begins and again as it ends. (Two runs at
// once in one process share them.)
func TakeLauncherReads() store.ReadsByKind {
	launcherReads.Lock()
	defer launcherReads.Unlock()
	m := maps.Clone(launcherReads.m)
	launcherReads.m = nil
	return m
}
