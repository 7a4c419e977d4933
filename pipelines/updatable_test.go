package pipelines

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// TestUpdateOfAnOutputBeforeAnchorDocs: an index whose manifest has no
// anchor_docs dropped its common shingles, so an update of it takes
// --anchor-docs 0, and the default's 4 is refused with the flag to give.
func TestUpdateOfAnOutputBeforeAnchorDocs(t *testing.T) {
	cfg := transforms.Config{Config: settings.Default()}
	old := cfg
	old.AnchorDocs = 0
	recorded := Settings(old)
	delete(recorded, "anchor_docs")
	src := &output.Manifest{Settings: recorded}
	err := updatable("idx", src, cfg)
	if err == nil || !strings.Contains(err.Error(), "give --anchor-docs 0") {
		t.Fatalf("updatable with the default --anchor-docs 4: %v; want a refusal naming --anchor-docs 0", err)
	}
	if err := updatable("idx", src, old); err != nil {
		t.Fatalf("updatable with --anchor-docs 0: %v", err)
	}
}
