package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/output"
)

// TestMemoryLimit runs the command over the sample with each kind of
// --memory-limit and reads the limit the Go runtime had from the
// manifest: the flag's size, GOMEMLIMIT over it, none when off, and by
// default a share of this machine's free memory.
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want int64 // -1: any limit above 0
		from string
	}{
		{"a size", []string{"--memory-limit", "3GiB"}, nil, 3 << 30, "--memory-limit=3GiB"},
		{"GOMEMLIMIT wins", []string{"--memory-limit", "3GiB"}, []string{"GOMEMLIMIT=2GiB"}, 2 << 30, "GOMEMLIMIT=2GiB"},
		{"off", []string{"--memory-limit", "off"}, nil, 0, "--memory-limit=off"},
		{"auto, the default", nil, nil, -1, "auto: 80% of the "},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			r := runCommandEnv(t, c.env, append([]string{"--input", "../../testdata/crawl/*.parquet", "--output", out}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", r.code, r.stderr)
			}
			m, err := output.ReadManifest(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			got := m.MemoryLimit
			if (c.want >= 0 && got.Bytes != c.want) || (c.want < 0 && got.Bytes <= 0) || !strings.HasPrefix(got.From, c.from) {
				t.Errorf("manifest memory_limit %+v, want %d bytes from %q", got, c.want, c.from)
			}
		})
	}
	r := runCommand(t, "", "--input", "../../testdata/crawl/*.parquet", "--output", filepath.Join(t.TempDir(), "out"), "--memory-limit", "lots")
	if r.code != 2 || !strings.Contains(r.stderr, "memory-limit") || !strings.Contains(r.stderr, `"lots"`) {
		t.Errorf("--memory-limit lots: exit code %d, stderr:\n%s\nwant 2 and the flag and value named", r.code, r.stderr)
	}
}
