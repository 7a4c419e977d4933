// Command objcopy copies every file below one folder to another, keeping
// the paths below it, between any filesystems neardup reads and writes:
// the local disk, s3://, gs:// (io/store, with the credentials and
// endpoints the runner itself would use). scripts/flink-check.sh uses it to
// put the sample where a cluster's workers reach it and to bring the
// tables back for their digests.
//
//	go run ./scripts/objcopy testdata/crawl s3://bucket/check/testdata/crawl
//	go run ./scripts/objcopy s3://bucket/check/out /tmp/out
//	go run ./scripts/objcopy -remove s3://bucket/check   # every file below it
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/neardup/neardup/io/beamfs" // gs://, s3:// and local through Beam's filesystems
	"github.com/neardup/neardup/io/store"
)

func main() {
	remove := flag.Bool("remove", false, "remove every file below the one folder given instead of copying")
	flag.Parse()
	ctx := context.Background()
	switch {
	case *remove && flag.NArg() == 1:
		if err := store.RemoveAll(ctx, flag.Arg(0)); err != nil {
			fmt.Fprintln(os.Stderr, "objcopy:", err)
			os.Exit(1)
		}
	case !*remove && flag.NArg() == 2:
		n, err := copyAll(ctx, flag.Arg(0), flag.Arg(1))
		if err != nil {
			fmt.Fprintln(os.Stderr, "objcopy:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "objcopy: %d files from %s to %s\n", n, flag.Arg(0), flag.Arg(1))
	default:
		fmt.Fprintln(os.Stderr, "usage: objcopy FROM_FOLDER TO_FOLDER | objcopy -remove FOLDER")
		os.Exit(2)
	}
}

// copyAll copies the files below from to the same paths below to. A
// folder with nothing in it is an error: a copy of nothing is never what
// was meant.
func copyAll(ctx context.Context, from, to string) (int, error) {
	from, to = strings.TrimSuffix(from, "/"), strings.TrimSuffix(to, "/")
	if store.IsLocal(from) {
		from = filepath.Clean(from) // as ListAll's walk names the files
	}
	names, err := store.ListAll(ctx, from)
	if err != nil {
		return 0, err
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("no file below %s", from)
	}
	for _, name := range names {
		rel, ok := strings.CutPrefix(name, from+"/")
		if !ok {
			return 0, fmt.Errorf("%s is not below %s", name, from)
		}
		if err := store.Copy(ctx, name, store.Join(to, rel)); err != nil {
			return 0, fmt.Errorf("copying %s: %w", name, err)
		}
	}
	return len(names), nil
}
