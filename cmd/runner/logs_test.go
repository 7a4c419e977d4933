package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
)

// commandEnv, set in a child's environment, makes the test binary run
// main on its arguments instead of the tests.
const commandEnv = "NEARDUP_TEST_COMMAND"

// asCommand runs main as the runner command when runCommand started this
// binary as one, and exits; otherwise it returns at once. TestMain calls it.
func asCommand() {
	if os.Getenv(commandEnv) == "" {
		return
	}
	main()
	os.Exit(0)
}

// ran is what a run of the command printed, and how it exited.
type ran struct {
	stdout, stderr string
	code           int
	tmp            string // its temporary folder (TMPDIR)
}

// runCommand runs the runner command, as users do, in the folder dir
// (the package's folder when ""), with a temporary folder of its own.
func runCommand(t *testing.T, dir string, args ...string) ran {
	t.Helper()
	return runCommandIn(t, dir, nil, args...)
}

// runCommandEnv is runCommand in the package's folder with env added to
// the command's environment.
func runCommandEnv(t *testing.T, env []string, args ...string) ran {
	t.Helper()
	return runCommandIn(t, "", env, args...)
}

func runCommandIn(t *testing.T, dir string, env []string, args ...string) ran {
	t.Helper()
	r := ran{tmp: t.TempDir()}
	bin, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), commandEnv+"=1", "TMPDIR="+r.tmp), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
}

// lines are the lines of s.
func lines(s string) []string {
	if s = strings.TrimRight(s, "\n"); s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestFailedRunSaysOneThing runs the command over an input without the
// text column it names: stderr is the cause, naming the file, the column
// and the file's columns, what to try, and where the full log is, not the
// runner's log records; --verbose brings those back.
func TestFailedRunSaysOneThing(t *testing.T) {
	args := []string{"--input", "../../testdata/crawl/*.parquet", "--output", filepath.Join(t.TempDir(), "out"), "--text-column", "nope"}
	r := runCommand(t, "", args...)
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	got := lines(r.stderr)
	if len(got) == 0 {
		t.Fatal("a failed run printed nothing on stderr")
	}
	if len(got) > 5 {
		t.Errorf("stderr has %d lines, want at most 5:\n%s", len(got), r.stderr)
	}
	for _, want := range []string{`column "nope" not found`, "part-00000.parquet", "text, id, dump, url", "--text-column", "--html-column", "full log: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	for _, l := range got {
		if !strings.HasPrefix(l, "neardup: ") {
			t.Errorf("stderr line %q is not neardup's", l)
		}
	}
	log := strings.TrimPrefix(got[len(got)-1], "neardup: full log: ")
	if b, err := os.ReadFile(log); err != nil || !bytes.Contains(b, []byte("level=ERROR")) || filepath.Dir(log) != r.tmp {
		t.Errorf("the full log %s, in %s: %v; want the runner's error records in the temporary folder %s", log, filepath.Dir(log), err, r.tmp)
	}

	v := runCommand(t, "", append(args, "--verbose")...)
	if v.code != 1 || !strings.Contains(v.stderr, "level=ERROR") || !strings.Contains(v.stderr, `column "nope" not found`) || strings.Contains(v.stderr, "full log") {
		t.Errorf("--verbose: exit code %d, stderr:\n%s\nwant the runner's records and the error, and no log file", v.code, v.stderr)
	}
	if logs, _ := filepath.Glob(filepath.Join(v.tmp, "neardup-*.log")); len(logs) > 0 {
		t.Errorf("--verbose left a log file: %v", logs)
	}
}

// TestRunFromAnotherFolder runs the command with relative --input and
// --output: its stderr holds only the progress lines, its log file is
// gone, and the output names the input files by absolute paths, so that
// a query started in another folder reads their text.
func TestRunFromAnotherFolder(t *testing.T) {
	work := t.TempDir()
	sample, err := filepath.Abs("../../testdata/crawl")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(work, sample)
	if err != nil {
		t.Fatal(err)
	}
	r := runCommand(t, work, "--input", filepath.Join(rel, "*.parquet"), "--output", "out", "--progress", "auto")
	if r.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, l := range lines(r.stderr) {
		if !strings.HasPrefix(l, "neardup: ") || strings.Contains(l, "level=") {
			t.Errorf("stderr line %q is not neardup's progress", l)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(r.tmp, "neardup-*.log")); len(logs) > 0 {
		t.Errorf("a run that succeeded left its log %v", logs)
	}
	out := filepath.Join(work, "out")
	if !strings.Contains(r.stdout, "tables in "+out+"\n") {
		t.Errorf("stdout does not name the output folder %s:\n%s", out, r.stdout)
	}
	ctx := context.Background()
	m, err := output.ReadManifest(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range m.Inputs {
		if filepath.Dir(in.Path) != sample {
			t.Errorf("manifest input %s, want an absolute path in %s", in.Path, sample)
		}
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, out, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	var url string
	for _, d := range docs {
		if filepath.Dir(d.SourceFile) != sample {
			t.Fatalf("doc %d: source_file %s, want an absolute path in %s", d.DocID, d.SourceFile, sample)
		}
		if url == "" && d.ClusterID != nil && d.URL != nil {
			url = *d.URL
		}
	}
	// --exact reads the members' text from their source files.
	t.Chdir(t.TempDir())
	var answer bytes.Buffer
	if err := queryMain(ctx, []string{"--from", out, "--url", url, "--exact"}, &answer); err != nil || !strings.Contains(answer.String(), "exact resemblance") {
		t.Errorf("query --exact from another folder: %v\n%s", err, answer.String())
	}
}
