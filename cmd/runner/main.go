// Command runner runs neardup: it finds near-duplicate documents in Parquet
// crawl dumps with Broder et al.'s shingling and clustering, and writes
// Parquet tables of the clusters.
//
//	go run ./cmd/runner --input 'testdata/crawl/*.parquet' --output /tmp/neardup-out
//
// It runs on the embedded Prism runner unless Beam's --runner flag says
// otherwise; every Beam flag (--runner, --endpoint, --environment_type, ...)
// passes through.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/transforms"
)

var (
	input          = flag.String("input", "", "comma-separated globs of Parquet crawl files (local, gs://, s3://)")
	outputDir      = flag.String("output", "", "output folder for the docs, clusters and pairs tables")
	textColumn     = flag.String("text-column", "text", "column holding the document text")
	htmlColumn     = flag.String("html-column", "", "column holding raw HTML; its visible text is used instead of --text-column")
	urlColumn      = flag.String("url-column", "url", "column holding the URL (empty: none)")
	idColumn       = flag.String("id-column", "id", "column holding the input's own document id (optional)")
	dateColumn     = flag.String("date-column", "date", "column holding the crawl date (optional)")
	shingleWords   = flag.Int("shingle-words", 10, "words per shingle (w)")
	sketchFlag     = flag.String("sketch", "mod:25", "sketch: mod:M keeps fingerprints that are 0 mod M (Broder's MOD_m); min:N keeps the N smallest (MIN_s)")
	equivalence    = flag.String("equivalence", "identical", "what the identical-document shortcut merges: identical (same bytes) or lexical (same canonical tokens)")
	maxShingleDocs = flag.Int("max-shingle-docs", 1000, "drop shingles found in more documents than this")
	threshold      = flag.Float64("threshold", 0.5, "resemblance at or above which two documents are linked")
	partitions     = flag.Int("partitions", 0, "hash partitions per shuffle (0: one per 8 MiB of input, at least 4)")
	seed           = flag.Uint64("seed", fingerprint.DefaultSeed, "fingerprint seed")
)

// ownFlags are neardup's flags, as opposed to Beam's.
var ownFlags = []string{"input", "output", "text-column", "html-column", "url-column", "id-column",
	"date-column", "shingle-words", "sketch", "equivalence", "max-shingle-docs", "threshold", "partitions", "seed"}

func main() {
	// Beam's worker mode re-enters main with its own flags: parse, then
	// hand over to beam.Init before anything else happens.
	flag.Parse()
	beam.Init()

	opt, err := options()
	if err != nil {
		fmt.Fprintln(os.Stderr, "neardup:", err)
		flag.Usage()
		os.Exit(2)
	}
	m, err := pipelines.Run(context.Background(), opt)
	if err != nil {
		log.Fatalf("neardup: %v", err)
	}
	c := m.Counts
	fmt.Printf("neardup: %d documents (%d ok, %d too short, %d empty) in %d files, %.1f MB\n",
		c["docs"], c["docs_ok"], c["docs_too_short"], c["docs_empty"], len(m.Inputs), float64(m.InputBytes)/1e6)
	fmt.Printf("neardup: %d identical groups (%d copies skipped), %d pairs counted, %d linked\n",
		c["identical_groups"], c["identical_skipped"], c["pairs"], c["links"])
	fmt.Printf("neardup: %d clusters holding %d documents, largest %d\n", c["clusters"], c["clustered_docs"], c["largest_cluster"])
	fmt.Printf("neardup: accounting: %d input rows = %d docs rows = %d clustered + %d alone + %d empty or rejected\n",
		c["docs"], c["docs_written"], c["docs_in_clusters"], c["docs_alone"], c["docs_empty_or_rejected"])
	fmt.Printf("neardup: %.1fs; tables in %s\n", m.WallSeconds, *outputDir)
}

func options() (pipelines.Options, error) {
	var opt pipelines.Options
	if *input == "" || *outputDir == "" {
		return opt, fmt.Errorf("--input and --output are required")
	}
	spec, err := sketch.Parse(*sketchFlag)
	if err != nil {
		return opt, fmt.Errorf("--sketch: %w", err)
	}
	if *shingleWords < 1 {
		return opt, fmt.Errorf("--shingle-words must be at least 1")
	}
	if *threshold <= 0 || *threshold > 1 {
		return opt, fmt.Errorf("--threshold must be in (0, 1]")
	}
	if *maxShingleDocs < 2 {
		return opt, fmt.Errorf("--max-shingle-docs must be at least 2")
	}
	var lexical bool
	switch *equivalence {
	case "identical":
	case "lexical":
		lexical = true
	default:
		return opt, fmt.Errorf("--equivalence must be identical or lexical, not %q", *equivalence)
	}
	// The manifest records every neardup flag, and Beam's only where set.
	set := map[string]bool{}
	flags := map[string]string{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true; flags[f.Name] = f.Value.String() })
	for _, name := range ownFlags {
		flags[name] = flag.Lookup(name).Value.String()
	}
	opt = pipelines.Options{
		Input:  *input,
		Output: *outputDir,
		Flags:  flags,
		Config: transforms.Config{
			Columns: crawl.Columns{
				Text: *textColumn, HTML: *htmlColumn, URL: *urlColumn, ID: *idColumn, Date: *dateColumn,
				URLRequired: set["url-column"], IDRequired: set["id-column"], DateRequired: set["date-column"],
			},
			ShingleWords:   *shingleWords,
			Sketch:         spec,
			Lexical:        lexical,
			MaxShingleDocs: *maxShingleDocs,
			Threshold:      *threshold,
			Partitions:     *partitions,
			Seed:           *seed,
		},
	}
	return opt, nil
}
