package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// The corpora's README sits in Dir whenever the corpora are present; this
// test is itself guarded the same way.
func TestDirHoldsTheCorpora(t *testing.T) {
	p := Path(t, "README.md")
	if filepath.Dir(p) != Dir() {
		t.Errorf("Path = %s, not in Dir %s", p, Dir())
	}
	if _, err := os.Stat(filepath.Join(Dir(), "deb-copyright.parquet")); err != nil {
		t.Errorf("Dir %s holds a README but not deb-copyright.parquet: %v", Dir(), err)
	}
}

// fakeTB records how a test ended.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func TestAbsentSkipsOutsideCIAndFailsInCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var f fakeTB
		Absent(&f, os.ErrNotExist)
		if wantFail := ci != ""; f.failed != wantFail || f.skipped == wantFail {
			t.Errorf("CI=%q: failed %v, skipped %v", ci, f.failed, f.skipped)
		}
	}
}
