// Command tojsonl writes Parquet crawl files as JSON lines, one object per
// row with every top-level column (strings, numbers, booleans, nulls), for
// measuring and testing the JSON lines reader on the same rows as Parquet.
//
//	go run ./scripts/tojsonl -out DIR [-ext .jsonl.zst] FILE.parquet...
//
// Each input becomes DIR/<its base name without .parquet><ext>; ext says
// the compression: .jsonl (none), .jsonl.gz or .json.gz (gzip), .jsonl.zst
// (zstd).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

func main() {
	out := flag.String("out", "", "the folder to write into")
	ext := flag.String("ext", ".jsonl.zst", "the output files' extension: .jsonl, .jsonl.gz, .json.gz or .jsonl.zst")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		log.Fatal("tojsonl: -out and at least one Parquet file are required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, in := range flag.Args() {
		name := filepath.Join(*out, strings.TrimSuffix(filepath.Base(in), ".parquet")+*ext)
		if err := convert(in, name, *ext); err != nil {
			log.Fatalf("tojsonl: %s: %v", in, err)
		}
	}
}

func convert(in, name, ext string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return err
	}
	o, err := os.Create(name)
	if err != nil {
		return err
	}
	defer o.Close()
	var w io.Writer = o
	var closer io.Closer
	switch {
	case strings.HasSuffix(ext, ".gz"):
		zw := gzip.NewWriter(o)
		w, closer = zw, zw
	case strings.HasSuffix(ext, ".zst"):
		zw, err := zstd.NewWriter(o)
		if err != nil {
			return err
		}
		w, closer = zw, zw
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	fields := pf.Schema().Fields()
	r := parquet.NewReader(pf)
	defer r.Close()
	for {
		row := map[string]any{}
		if err := r.Read(&row); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		// Every column, null ones included, as the Parquet row has them.
		for _, fl := range fields {
			if _, ok := row[fl.Name()]; !ok {
				row[fl.Name()] = nil
			}
		}
		if err := enc.Encode(row); err != nil {
			return fmt.Errorf("row: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if closer != nil {
		if err := closer.Close(); err != nil {
			return err
		}
	}
	return o.Close()
}
