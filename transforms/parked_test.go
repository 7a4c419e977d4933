package transforms

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/neardup/neardup/shuffle/packed"
)

func init() {
	register.Function3x1[int, []byte, func(string), error](sealedPostingStrings)
	register.Function4x1[context.Context, int, []byte, func(string), error](repStrings)
}

// identicalDocs: 10, 20 and 30 are identical (key 7); 40 and 50 stand
// alone.
var identicalDocs = []packed.Sketch{
	{Key: 7, Doc: 30, Values: []uint64{100}},
	{Key: 7, Doc: 10, Values: []uint64{100}},
	{Key: 7, Doc: 20, Values: []uint64{100}},
	{Key: 8, Doc: 40, Values: []uint64{100, 200}},
	{Key: 9, Doc: 50, Values: []uint64{300}},
}

// identicalInput is identicalDocs as Sketch sends them: keys by the
// identity key's partition, bodies by the doc's.
func identicalInput(s beam.Scope, partitions int) (keys, bodies beam.PCollection) {
	var ks, bs []keyed
	for _, sk := range identicalDocs {
		key := packed.Sketch{Key: sk.Key, Doc: sk.Doc}
		ks = append(ks, keyed{packed.Partition(sk.Key, partitions), packed.Seal(nil, key.Append(nil))})
		bs = append(bs, keyed{packed.Partition(sk.Doc, partitions), packed.Seal(nil, sk.Append(nil))})
	}
	return beam.ParDo(s, kvFromStruct, beam.CreateList(s, ks)), beam.ParDo(s, kvFromStruct, beam.CreateList(s, bs))
}

func sealedPostingStrings(_ int, sealed []byte, emit func(string)) error {
	b, err := packed.Open(nil, sealed)
	if err != nil {
		return err
	}
	return postingStrings(b, emit)
}

// repStrings reads one element of a sketch stream (parked or sealed) as
// "doc:values".
func repStrings(ctx context.Context, _ int, elem []byte, emit func(string)) error {
	sks, err := readSketches(ctx, one(elem))
	for _, sk := range sks {
		emit(fmt.Sprintf("%d:%v", sk.Doc, sk.Values))
	}
	return err
}

// one is an iterator over elem alone.
func one(elem []byte) func(*[]byte) bool {
	done := false
	return func(b *[]byte) bool {
		if done {
			return false
		}
		*b, done = elem, true
		return true
	}
}

// TestIdenticalSendsRepresentativesOnly: of each identical group only the
// lowest doc's postings and sketch go on, whether the sketches are parked
// in files (a temporary folder) or sent as batches (none); parked, each
// partition holding a representative has its file.
func TestIdenticalSendsRepresentativesOnly(t *testing.T) {
	for _, parked := range []bool{false, true} {
		t.Run(fmt.Sprintf("parked=%v", parked), func(t *testing.T) {
			cfg := testConfig()
			if parked {
				cfg.TempDir = t.TempDir()
			}
			p, s := beam.NewPipelineWithRoot()
			keys, bodies := identicalInput(s, cfg.Partitions)
			postings, _, reps := Identical(s, keys, bodies, cfg.Candidates(), cfg.Placement)
			passert.Equals(s, beam.ParDo(s, sealedPostingStrings, postings), "100:10", "100:40", "200:40", "300:50")
			passert.Equals(s, beam.ParDo(s, repStrings, reps), "10:[100]", "40:[100 200]", "50:[300]")
			ptest.RunAndValidate(t, p)
			if !parked {
				return
			}
			var want []string
			for _, doc := range []uint64{10, 40, 50} {
				want = append(want, fmt.Sprintf("sketches-%05d", packed.Partition(doc, cfg.Partitions)))
			}
			slices.Sort(want)
			want = slices.Compact(want)
			got, err := filepath.Glob(filepath.Join(cfg.TempDir, parkedDir, "*"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = filepath.Base(got[i])
			}
			if !slices.Equal(got, want) {
				t.Errorf("parked files %v, want %v", got, want)
			}
		})
	}
}

// TestParkedSketchesRetry: a partition's sketches parked twice (a retried
// or doubled bundle) are the same file, read back whole; a parked file
// gone fails the read, naming it.
func TestParkedSketchesRetry(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Enough for several batches (random values: they do not shrink
	// sealed), so the file holds several frames.
	r := rand.New(rand.NewPCG(1, 2))
	var sks []packed.Sketch
	for d := range uint64(3000) {
		sks = append(sks, packed.Sketch{Key: r.Uint64(), Doc: d})
		for range 100 {
			sks[d].Values = append(sks[d].Values, r.Uint64())
		}
	}
	var names [][]byte
	var files [][]byte
	for range 2 {
		if err := sendSketches(ctx, dir, "sketches", 3, sks, func(p int, b []byte) {
			if p != 3 {
				t.Errorf("emitted on partition %d, want 3", p)
			}
			names = append(names, b)
		}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, parkedDir, "sketches-00003"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if len(names) != 2 || !bytes.Equal(names[0], names[1]) || !bytes.Equal(files[0], files[1]) {
		t.Fatalf("two parkings differ: %q, %d and %d bytes", names, len(files[0]), len(files[1]))
	}
	got, err := readSketches(ctx, one(names[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(files[0]) <= maxBatchBytes {
		t.Fatalf("the parked file has %d bytes: too few to test several batches", len(files[0]))
	}
	if len(got) != len(sks) {
		t.Fatalf("read back %d sketches, want %d", len(got), len(sks))
	}
	for i := range sks {
		if got[i].Key != sks[i].Key || got[i].Doc != sks[i].Doc || !slices.Equal(got[i].Values, sks[i].Values) {
			t.Fatalf("sketch %d read back as %+v, want %+v", i, got[i], sks[i])
		}
	}
	if err := os.Remove(filepath.Join(dir, parkedDir, "sketches-00003")); err != nil {
		t.Fatal(err)
	}
	if _, err := readSketches(ctx, one(names[0])); err == nil || !strings.Contains(err.Error(), "sketches-00003") {
		t.Errorf("a missing parked file read with error %v, want one naming it", err)
	}
}
