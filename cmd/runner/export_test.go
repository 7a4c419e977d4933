package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/output"
)

// readExport reads an export folder's manifest, after checking that it is
// complete.
func readExport(t *testing.T, dir string) export.Manifest {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, output.SuccessMarker)); err != nil {
		t.Fatalf("%s: no %s: %v", dir, output.SuccessMarker, err)
	}
	var m export.Manifest
	b, err := os.ReadFile(filepath.Join(dir, export.ManifestFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("%s: %v", export.ManifestFile, err)
	}
	return m
}

// TestDedupOutput: --dedup-output writes, after a run, the export runner
// export would write with the same flags (byte for byte); after an update,
// the update's sweep; the export flags without it, and a folder inside the
// run's output, are refused before anything runs.
func TestDedupOutput(t *testing.T) {
	dir := t.TempDir()
	crawl, _ := filepath.Abs("../../testdata/crawl")
	out, dedup, again := filepath.Join(dir, "out"), filepath.Join(dir, "dedup"), filepath.Join(dir, "again")
	r := runCommand(t, "", "--input", filepath.Join(crawl, "part-0000[01].parquet"), "--output", out, "--sweep-date", "2026-10-01",
		"--dedup-output", dedup, "--drop-invalid", "--add-columns", "cluster_size,doc_id")
	if r.code != 0 {
		t.Fatalf("run with --dedup-output: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m := readExport(t, dedup)
	if !strings.Contains(r.stdout, "neardup: export of "+out) || m.Columns != "doc_id,cluster_size" || !m.DropInvalid || len(m.Files) != 2 {
		t.Errorf("export %+v; the run said:\n%s", m, r.stdout)
	}
	if r := runCommand(t, "", "export", "--from", out, "--output", again, "--drop-invalid", "--add-columns", "doc_id,cluster_size"); r.code != 0 {
		t.Fatalf("runner export: exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range m.Files {
		a, _ := os.ReadFile(filepath.Join(dedup, f.Output))
		b, _ := os.ReadFile(filepath.Join(again, f.Output))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s: --dedup-output wrote %d bytes, runner export %d, not the same", f.Output, len(a), len(b))
		}
	}

	upOut, upDedup := filepath.Join(dir, "up"), filepath.Join(dir, "up-dedup")
	r = runCommand(t, "", "update", "--from", out, "--input", filepath.Join(crawl, "part-00002.parquet"), "--output", upOut,
		"--sweep-date", "2026-11-01", "--dedup-output", upDedup)
	if r.code != 0 {
		t.Fatalf("update with --dedup-output: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if m := readExport(t, upDedup); m.Sweep != "2026-11-01" || len(m.Files) != 1 || !strings.HasSuffix(m.Files[0].Input, "part-00002.parquet") {
		t.Errorf("the update's export: sweep %s, files %+v; want the new sweep's one file", m.Sweep, m.Files)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--drop", "identical"}, "give --dedup-output too"},
		{[]string{"--dedup-output", filepath.Join(dir, "fresh", "x")}, "overlap"},
		{[]string{"--dedup-output", filepath.Join(dir, "new"), "--add-columns", "size"}, "add-columns"},
	} {
		fresh := filepath.Join(dir, "fresh")
		args := append([]string{"--input", filepath.Join(crawl, "part-00000.parquet"), "--output", fresh}, c.args...)
		r := runCommand(t, "", args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want a usage error naming %q", c.args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(fresh); err == nil {
			t.Errorf("%v: the run started", c.args)
		}
	}
}
