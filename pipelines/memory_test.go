package pipelines

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/internal/memlimit"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/settings"
)

// TestFitWarning: the launcher says nothing when the run fits, and when
// it does not, the figures (need = 400 MiB + 1.5 × text) and a slice
// that would fit ((free - 400 MiB) / 1.5).
func TestFitWarning(t *testing.T) {
	const gbytes = 1_000_000_000
	if w := fitWarning(1*gbytes, 16*gbytes); w != "" {
		t.Errorf("1 GB of text on 16 GB free: warned %q", w)
	}
	if w := fitWarning(100*gbytes, 0); w != "" {
		t.Errorf("nothing known of the machine: warned %q", w)
	}
	// 10 GB of text: 0.419 + 15 = 15.4 GB needed; 6 GB free: a slice of
	// (6 - 0.419) / 1.5 = 3.72 GB.
	w := fitWarning(10*gbytes, 6*gbytes)
	for _, want := range []string{"10.0 GB of text", "needs about 15.4 GB", "6.0 GB free", "at most about 3.7 GB of text", "cluster runner", "runner update"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning does not say %q:\n%s", want, w)
		}
	}
}

// TestFitRefusal: an embedded run that would pass its cgroup's limit is
// refused before it starts, with the figures, when --memory-limit=auto
// took that limit; it runs (warned) when the limit was set by hand, when
// the machine's free memory, not the cgroup, is what binds, and when it
// fits. The figures: 1.16 GB of text needs 0.419 + 1.5 × 1.16 = 2.16 GB.
func TestFitRefusal(t *testing.T) {
	const gbytes = 1_000_000_000
	text := int64(1.16 * gbytes)
	capped := memlimit.Machine{Available: 20 * gbytes, CgroupLimit: 2.1 * gbytes, CgroupUsed: 0.1 * gbytes}
	err := fitRefusal(text, capped, true)
	if err == nil {
		t.Fatal("1.16 GB of text under a 2.1 GB cgroup limit: not refused")
	}
	// Left: 2.1 - 0.1 = 2.0 GB; a slice of (2.0 - 0.419) / 1.5 = 1.05 GB.
	for _, want := range []string{"1.16 GB of text", "needs about 2.16 GB", "leaves it 2.00 GB", "a limit of 2.10 GB", "at most about 1.05 GB of text", "--memory-limit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if err := fitRefusal(text, capped, false); err != nil {
		t.Errorf("a limit set by hand: refused: %v", err)
	}
	if err := fitRefusal(text, memlimit.Machine{Available: 2 * gbytes}, true); err != nil {
		t.Errorf("no cgroup limit, 2 GB free: refused (it should only warn): %v", err)
	}
	if err := fitRefusal(text, memlimit.Machine{Available: 2 * gbytes, CgroupLimit: 4 * gbytes}, true); err != nil {
		t.Errorf("a cgroup limit above the machine's free memory: refused (it should only warn): %v", err)
	}
	if err := fitRefusal(text, memlimit.Machine{Available: 20 * gbytes, CgroupLimit: 2.2 * gbytes}, true); err != nil {
		t.Errorf("2.16 GB needed under a 2.2 GB limit: refused: %v", err)
	}
}

// TestInputTextBytes: the footers' figures for the sample crawl are its
// rows and its text's bytes as read, row by row, the latter within the
// length prefixes and page headers.
func TestInputTextBytes(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob("../testdata/crawl/*.parquet")
	if err != nil || len(files) == 0 {
		t.Fatalf("the sample crawl: %v, %d files", err, len(files))
	}
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	var read, rows int64
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			if err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error { read, rows = read+int64(len(r.Content)), rows+1; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	gotRows, got := readFooters(ctx, files, cols)
	if got < read || got > read+read/10 {
		t.Errorf("readFooters: %d bytes of text, want about the %d bytes read", got, read)
	}
	if gotRows != rows {
		t.Errorf("readFooters: %d rows, want the %d read", gotRows, rows)
	}
}

// TestVerifyCostBoundsWhatIsWritten: the estimate of the features phase
// 1 writes for each verification is at least what it writes (a record of
// 20 bytes and, per feature, 8 bytes exact, a bit per bit of the Bloom
// filter, a 32-bit value of at most 512 dense), and not more than three
// times that, on the sample and on the real corpora: the pages' features
// are counted here, row by row, by rowsketch.
func TestVerifyCostBoundsWhatIsWritten(t *testing.T) {
	ctx := context.Background()
	inputs := append([]string{sampleGlob}, shareddata.Paths(t, "multilingual-docs.parquet", "deb-copyright.parquet", "deb-manpages.parquet", "cc-main-2019-30-sample.parquet")...)
	for _, input := range inputs {
		files, err := filepath.Glob(input)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v, %d files", input, err, len(files))
		}
		cfg := testConfig()
		rs, err := rowsketch.New(cfg.Config)
		if err != nil {
			t.Fatal(err)
		}
		want := map[settings.Verify]float64{}
		for i, f := range files {
			splits, err := crawl.Splits(ctx, i, f, cfg.Columns)
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range splits {
				err := crawl.ReadSplit(ctx, sp, cfg.Columns, func(r crawl.Row) error {
					doc, _, _ := rs.Sketch(sp, r)
					if n := float64(doc.ShingleCount); n > 0 {
						want[settings.VerifyExact] += 20 + 8*n
						want[settings.VerifyBloom] += 20 + 8*math.Ceil(n*8/64)
						want[settings.VerifyDense] += 20 + 8*math.Ceil(min(n, 512)/2)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		rows, text := readFooters(ctx, files, cfg.Columns)
		for kind, w := range want {
			cfg.Verify = kind
			got := float64(verifyCostOf(cfg.Config, text, rows).written)
			if got < w || got > 3*w {
				t.Errorf("%s, --verify=%s: estimated %.0f bytes of features, writes %.0f", filepath.Base(input), kind, got, w)
			}
		}
	}
}

// TestVerifyRefusal: on the embedded runner a verification that would
// not fit beside its run is refused before it, with the figures and what
// to do; one that fits, or a machine that says nothing, or a run that
// does not fit anyway (the fit warning's), is not. A dense sample's cost
// does not grow with the pages' length.
func TestVerifyRefusal(t *testing.T) {
	const gbytes = 1_000_000_000
	cfg := testConfig()
	cost := func(kind settings.Verify, text, rows int64) verifyCost {
		cfg.Verify = kind
		return verifyCostOf(cfg.Config, text, rows)
	}
	// 16 GB of 1 MB pages: a slice of 16,384 rows holds 16 GB of text,
	// whose shingles exact verification holds twice.
	long := cost(settings.VerifyExact, 16*gbytes, 16_000)
	if err := verifyRefusal(string(settings.VerifyExact), long, 2, 16*gbytes, 0); err != nil {
		t.Errorf("nothing known of the machine: refused: %v", err)
	}
	if err := verifyRefusal(string(settings.VerifyExact), long, 2, 16*gbytes, 8*gbytes); err != nil {
		t.Errorf("a run that does not fit anyway: refused by verification: %v", err)
	}
	err := verifyRefusal(string(settings.VerifyExact), long, 2, 16*gbytes, 32*gbytes)
	if err == nil {
		t.Fatalf("exact verification holding %d bytes a thread beside a 24.4 GB run on 32 GB: not refused", long.held)
	}
	for _, want := range []string{"verification (exact)", "32.0 GB free", "--verify=dense", "cluster runner"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	dense := cost(settings.VerifyDense, 16*gbytes, 16_000)
	// Dense refused (on a machine too small even for its samples) is not
	// told to verify dense.
	if err := verifyRefusal("dense:resemblance:0.5", dense, 2, 16*gbytes, 24.5*gbytes); err == nil || strings.Contains(err.Error(), "--verify=dense") || !strings.Contains(err.Error(), "--lanes=1") {
		t.Errorf("dense verification beside a 24.4 GB run on 24.5 GB: %v; want a refusal that says --lanes=1, not --verify=dense", err)
	}
	if err := verifyRefusal(string(settings.VerifyDense), dense, 2, 16*gbytes, 32*gbytes); err != nil {
		t.Errorf("dense samples of long pages: refused: %v", err)
	}
	// Dense: two slices of 16,384 pages of at most 512 values of 4 bytes
	// and a header, read and decoded: 2 x 16,384 x 2,068 x 2 bytes.
	if got, max := dense.held, int64(2*16384*2068*2); got > max || got < max/2 {
		t.Errorf("dense samples of 1 MB pages: %d bytes held a thread, want at most %d", got, max)
	}
	if short := cost(settings.VerifyExact, 1*gbytes, 300_000); verifyRefusal(string(settings.VerifyExact), short, 2, 1*gbytes, 24*gbytes) != nil {
		t.Errorf("exact verification of 1 GB of 3 KB pages on 24 GB: refused (%d bytes a thread)", short.held)
	}
}

// TestVerifyStatement: the figures read as sizes at any scale: a
// sample's in MB (never 0), a crawl's in GB.
func TestVerifyStatement(t *testing.T) {
	for _, c := range []struct {
		cost verifyCost
		want []string
	}{
		{verifyCost{written: 1_500_000, held: 300}, []string{"(exact) writes about 2 MB", "2 verifying threads holds at most about 1 MB"}},
		{verifyCost{written: 2_040_000_000, held: 400_000_000}, []string{"writes about 2.0 GB", "at most about 400 MB"}},
	} {
		got := verifyStatement("exact", c.cost, 2)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q does not say %q", c.cost, got, w)
			}
		}
	}
}
