package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

// updateRow is a crawl row as the update bench rewrites it.
type updateRow struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Date string `parquet:"date"`
	Text string `parquet:"text"`
}

// updateMain is "bench update": the cost of an incremental run against a
// full one. It splits the rows of --input into an index (the first
// 1 - --new-share of them, in files a-*.parquet) and a new batch
// (b-new.parquet), runs cmd/runner on the index, then times `runner update`
// with the new batch against a full run over both (best of --repeat), and
// checks that their tables are equal (the new file sorts after the index's,
// so the doc IDs agree).
func updateMain(args []string) error {
	fs := flag.NewFlagSet("update", flag.ExitOnError)
	input := fs.String("input", "", "Parquet files (glob) with id, url, date and text columns")
	share := fs.Float64("new-share", 0.1, "share of the rows in the new batch")
	out := fs.String("out", "", "working folder (default: a temporary one, removed)")
	repeat := fs.Int("repeat", 2, "time each run this many times and keep the fastest")
	fs.Parse(args)
	if *input == "" || *share <= 0 || *share >= 1 {
		return fmt.Errorf("update needs --input and a --new-share in (0, 1)")
	}
	ctx := context.Background()
	dir := *out
	if dir == "" {
		tmp, err := os.MkdirTemp("", "neardup-bench-update-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	files, err := store.Match(ctx, *input)
	if err != nil {
		return err
	}
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	var rows []updateRow
	var textBytes int64
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			return err
		}
		for _, sp := range splits {
			if err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error {
				rows = append(rows, updateRow{r.ID, r.URL, r.Date, r.Content})
				textBytes += int64(len(r.Content))
				return nil
			}); err != nil {
				return err
			}
		}
	}
	cut := len(rows) - int(*share*float64(len(rows)))
	const perFile = 50000
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	write := func(name string, rows []updateRow) error {
		return parquet.WriteFile(filepath.Join(data, name), rows, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(10000))
	}
	for i := 0; i < cut; i += perFile {
		if err := write(fmt.Sprintf("a-%05d.parquet", i/perFile), rows[i:min(i+perFile, cut)]); err != nil {
			return err
		}
	}
	if err := write("b-new.parquet", rows[cut:]); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "runner")
	if err := buildRunner(root, bin); err != nil {
		return err
	}
	index, full, upd := filepath.Join(dir, "index"), filepath.Join(dir, "full"), filepath.Join(dir, "updated")
	fixed := []string{"--progress", "never", "--sweep-date", "2026-01-01"}
	if _, err := measure(bin, append([]string{"--input", filepath.Join(data, "a-*.parquet"), "--output", index}, fixed...), filepath.Join(dir, "index.log")); err != nil {
		return err
	}
	best := func(args []string, log string) (usage, error) {
		var b usage
		for i := 0; i < *repeat; i++ {
			u, err := measure(bin, args, fmt.Sprintf("%s-%d.log", log, i))
			if err != nil {
				return b, err
			}
			if i == 0 || u.wall < b.wall {
				b = u
			}
		}
		return b, nil
	}
	uu, err := best(append([]string{"update", "--from", index, "--input", filepath.Join(data, "b-new.parquet"), "--output", upd, "--overwrite"}, fixed...), filepath.Join(dir, "update"))
	if err != nil {
		return err
	}
	fu, err := best(append([]string{"--input", filepath.Join(data, "*.parquet"), "--output", full, "--overwrite"}, fixed...), filepath.Join(dir, "full"))
	if err != nil {
		return err
	}
	same := "equal"
	if err := tables.Diff(ctx, full, upd); err != nil {
		same = "DIFFERENT: " + err.Error()
	}
	fmt.Printf("## Update against a full run\n\n%d rows, %.1f MB of text; index %d rows, new batch %d (%.0f%%). Best of %d.\n\n",
		len(rows), float64(textBytes)/1e6, cut, len(rows)-cut, 100*float64(len(rows)-cut)/float64(len(rows)), *repeat)
	fmt.Println("| run | wall s | CPU s | peak RSS MB |")
	fmt.Println("|---|---:|---:|---:|")
	fmt.Printf("| full run, all rows | %.2f | %.2f | %.0f |\n", fu.wall, fu.cpu, fu.rssMB)
	fmt.Printf("| update, new batch onto the index | %.2f | %.2f | %.0f |\n", uu.wall, uu.cpu, uu.rssMB)
	fmt.Printf("\nupdate / full: %.2f of the wall time, %.2f of the CPU time; tables %s\n", uu.wall/fu.wall, uu.cpu/fu.cpu, same)
	if same != "equal" {
		return fmt.Errorf("the update's tables differ from the full run's")
	}
	return nil
}
