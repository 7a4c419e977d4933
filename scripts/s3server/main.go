// Command s3server serves an S3-compatible object store in memory on a
// loopback address until it is killed (SIGINT or SIGTERM), for the shell
// checks that run neardup with s3:// paths, such as those whose Beam
// workers run in another mount namespace and share no files with the
// launcher. It is the store of package internal/s3test (gofakes3); its
// objects go when it stops.
//
//	go run ./scripts/s3server --addr 127.0.0.1:9000 --bucket in --bucket out
//
// Once it listens it prints, on stdout, the environment the AWS SDK needs
// to reach it, as shell lines (export NAME='VALUE', or unset NAME for
// the variables that must not be set), so that
//
//	./s3server --addr 127.0.0.1:0 --bucket neardup-test > s3.env &
//	until [ -s s3.env ]; do sleep 0.1; done   # then it listens
//	. ./s3.env
//
// points every process started afterwards at it; a worker pool must be
// started with that environment too. The host must be a loopback IP
// (127.0.0.1, not localhost: the AWS SDK addresses buckets by path only
// on an IP endpoint); port 0 takes a free port, and the lines name it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/neardup/neardup/internal/s3test"
)

// buckets is the repeatable --bucket flag; a value may list several,
// comma-separated.
type buckets []string

func (b *buckets) String() string { return strings.Join(*b, ",") }

func (b *buckets) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*b = append(*b, name)
		}
	}
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "loopback IP address and port to listen on (port 0: any free port)")
	readsFile := flag.String("reads", "", "when stopped, write what was read of each object (GET requests and body bytes by bucket/key) to this file as JSON")
	var names buckets
	flag.Var(&names, "bucket", "bucket to create (repeat the flag, or separate names with commas)")
	flag.Parse()
	if flag.NArg() > 0 || len(names) == 0 {
		fmt.Fprintln(os.Stderr, "usage: s3server [--addr 127.0.0.1:PORT] --bucket NAME [--bucket NAME...]")
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	s, err := s3test.Serve(*addr, names...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "s3server:", err)
		os.Exit(1)
	}
	// One write, so that a script waiting for the file to be non-empty
	// never reads half of it.
	var lines strings.Builder
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" {
			fmt.Fprintf(&lines, "unset %s\n", k)
			continue
		}
		fmt.Fprintf(&lines, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	if _, err := os.Stdout.WriteString(lines.String()); err != nil {
		fmt.Fprintln(os.Stderr, "s3server:", err)
		s.Close()
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "s3server: serving buckets %s at %s until killed\n", strings.Join(names, ", "), s.URL)
	sig := <-stop
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "s3server:", err)
		os.Exit(1)
	}
	if *readsFile != "" {
		b, err := json.MarshalIndent(s.Reads(), "", "  ")
		if err == nil {
			err = os.WriteFile(*readsFile, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "s3server:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "s3server: stopped by %v\n", sig)
}
