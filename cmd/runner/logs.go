package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/pipelines"
)

// runLog is where a run's Beam and Prism log records go: a file, created
// when the first record comes, or stderr under --verbose.
//
// Both write through log/slog's default logger: Beam's log package by its
// default Structural logger, or, once the in-process SDK harness has taken
// it over, through the harness's log stream to Prism, which logs every
// record with slog; beam.Init makes that logger a text handler on stderr.
// The standard log package writes through it too. On stderr those records
// bury the one line a user needs (a failed job logs its plan several
// times), so quietLogs moves them, and the progress lines (package
// internal/progress, written to stderr directly) and neardup's own
// messages stay.
type runLog struct {
	mu   sync.Mutex
	f    *os.File // nil until the first record
	err  error    // why the file could not be created: the records go to stderr
	path string
	done bool // the run succeeded: later records are dropped
}

// quietLogs sends the log records to a file unless --verbose. Call it
// after beam.Init, which sets the default logger up on stderr.
func quietLogs() *runLog {
	l := &runLog{}
	if pipelines.DryRun() {
		// The job the dry run prints is the point of it: on stdout, as
		// the SDK logs it.
		slog.SetDefault(slog.New(messages{w: os.Stdout}))
		return l
	}
	if run.Verbose {
		return l
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo})))
	return l
}

// messages is a log handler that writes each record's message alone, as
// it is, on a line of its own: a Dataflow dry run's pipeline and job.
type messages struct{ w io.Writer }

func (messages) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h messages) Handle(_ context.Context, r slog.Record) error {
	_, err := io.WriteString(h.w, r.Message+"\n")
	return err
}

func (h messages) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h messages) WithGroup(string) slog.Handler      { return h }

// Write creates the log file on the first record, in the temporary
// folder; where it cannot, the records go to stderr.
func (l *runLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return len(p), nil
	}
	if l.f == nil && l.err == nil {
		pattern := "neardup-" + time.Now().Format("20060102-150405") + "-*.log"
		if l.f, l.err = os.CreateTemp("", pattern); l.err == nil {
			l.path = l.f.Name()
		}
	}
	if l.err != nil {
		return os.Stderr.Write(p)
	}
	return l.f.Write(p)
}

// fail prints a failed run's error on stderr, each of its lines after
// "neardup:", and where its full log is, if it logged anything.
func (l *runLog) fail(err error) {
	printError(os.Stderr, err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		fmt.Fprintln(os.Stderr, "neardup: full log:", l.path)
	}
}

// succeeded removes the log of a run that succeeded, whose output says
// what came of it, and drops the records the runner still logs as it
// shuts down.
func (l *runLog) succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	if l.f != nil {
		l.f.Close()
		os.Remove(l.path)
	}
}

// printError prints err after "neardup:", one line of it at a time.
func printError(w io.Writer, err error) {
	for _, line := range strings.Split(strings.TrimRight(err.Error(), "\n"), "\n") {
		fmt.Fprintln(w, "neardup:", line)
	}
}

// shown is a local folder as an absolute path, the way the pipeline names
// it in the manifest; other paths as they are.
func shown(dir string) string {
	if a, err := store.Abs(dir); err == nil {
		return a
	}
	return dir
}
