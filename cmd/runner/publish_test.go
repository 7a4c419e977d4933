package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/sampletest"
)

// TestPublishCommand runs "runner publish" as users do: without
// --output it is a usage error (exit 2); on a finished output it says
// there is nothing to finish; on a folder no run published into it fails
// saying so. (Finishing a stopped publication: io/output's
// TestPublicationResumes, pipelines' TestPublicationResumesAfterAFailedCopy.)
func TestPublishCommand(t *testing.T) {
	dir, _ := sampletest.Run(t, "../../testdata/crawl/*.parquet")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"publish"}, 2, "publish needs --output"},
		{[]string{"publish", "--output", dir}, 0, "published already"},
		{[]string{"publish", "--output", filepath.Join(t.TempDir(), "none")}, 1, "no publication to finish"},
	}
	for _, c := range cases {
		r := runCommand(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("runner %s: exit %d, stderr %q; want exit %d saying %q", strings.Join(c.args, " "), r.code, r.stderr, c.code, c.want)
		}
	}
}
