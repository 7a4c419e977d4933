package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// PartName is the name of a crawl's i-th Parquet file.
func PartName(i int) string { return fmt.Sprintf("part-%05d.parquet", i) }

// NewWriter is a Parquet writer of T rows to w as the crawls are written:
// zstd at level, pages buffered up to 1 MiB, row groups of at most
// rowsPerGroup rows, and the file's created_by made of app, version and
// build.
func NewWriter[T any](w io.Writer, level zstd.Level, rowsPerGroup int64, app, version, build string) *parquet.GenericWriter[T] {
	return parquet.NewGenericWriter[T](w,
		parquet.Compression(&zstd.Codec{Level: level}),
		parquet.PageBufferSize(1<<20),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
		parquet.CreatedBy(app, version, build),
	)
}

// WriteJSON writes v to path as JSON indented by two spaces, with a final
// newline.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
