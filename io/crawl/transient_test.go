package crawl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/faultstore"
	"github.com/neardup/neardup/io/objstore"
)

// fastRetries shortens objstore's waits between tries for the test.
func fastRetries(t *testing.T) {
	was := objstore.RetryDelays
	objstore.RetryDelays = []time.Duration{time.Millisecond, time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}
	t.Cleanup(func() { objstore.RetryDelays = was; faultstore.Clear() })
}

// pages writes a file of 200 rows of varied text in row groups of 50,
// some 150 KiB: with faultstore's small blocks, its footer and each row
// group's column chunks are different requests.
func pages(t *testing.T) (path string, rows []fineweb) {
	t.Helper()
	rows = make([]fineweb, 200)
	for i := range rows {
		var b strings.Builder
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&b, "w%d ", (i*7919+j*104729)%50021)
		}
		rows[i] = fineweb{Text: str(b.String()), ID: int64(i), URL: fmt.Sprintf("https://example.test/%d", i), Date: time.Unix(int64(i), 0), Extra: "en"}
	}
	return write(t, "pages.parquet", rows, 50), rows
}

// readParquet reads the file at path whole and opens it with parquet-go,
// as a reference beside what the package reads.
func readParquet(t *testing.T, path string) ([]byte, *parquet.File) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return b, f
}

// chunk is where row group rg's text column chunk lies in the file.
func chunk(t *testing.T, path string, rg int) (from, to int64) {
	t.Helper()
	b, f := readParquet(t, path)
	md := f.Metadata().RowGroups[rg].Columns[0].MetaData
	from = md.DataPageOffset
	if d := md.DictionaryPageOffset; d > 0 && d < from {
		from = d
	}
	if to = from + md.TotalCompressedSize; to > int64(len(b))-int64(faultstore.Options.TailSize) {
		t.Fatalf("row group %d's text ends at %d of %d bytes, in the tail: make the file bigger", rg, to, len(b))
	}
	return from, to
}

// readAll reads every row of the file named name, split by split.
func readAll(name string) ([]Row, error) {
	splits, err := Splits(context.Background(), 0, name, defaults)
	if err != nil {
		return nil, err
	}
	var got []Row
	for _, sp := range splits {
		if err := ReadSplit(context.Background(), sp, defaults, func(r Row) error { got = append(got, r); return nil }); err != nil {
			return got, err
		}
	}
	return got, nil
}

// A ranged read of a row group's column data cut off (or reset, or
// refused) once or twice is retried, and the file reads whole and right.
func TestTransientReadRetried(t *testing.T) {
	fastRetries(t)
	path, rows := pages(t)
	want, err := readAll(path)
	if err != nil || len(want) != len(rows) {
		t.Fatalf("reading the local file: %d rows, %v", len(want), err)
	}
	from, to := chunk(t, path, 2)
	for _, f := range []faultstore.Fault{
		{Kind: faultstore.Cut, Times: 1},
		{Kind: faultstore.Reset, Times: 2, After: 100},
		{Kind: faultstore.Refuse, Times: 2},
		{Kind: faultstore.Cut, Times: 1, From: 0, To: 1 << 40}, // the footer's read too
	} {
		faultstore.Clear()
		f.Path = path
		if f.To == 0 {
			f.From, f.To = from, to
		}
		faultstore.Inject(f)
		got, err := readAll(faultstore.Name(path))
		if err != nil {
			t.Errorf("%v %d times: %v", f.Kind, f.Times, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v %d times: %d rows, not the %d of the file as written", f.Kind, f.Times, len(got), len(want))
		}
		if st := faultstore.StatsOf(path); st.Failed != f.Times {
			t.Errorf("%v %d times: %d requests failed (of %d), want %d", f.Kind, f.Times, st.Failed, st.Requests, f.Times)
		}
	}
}

// A read that always fails is an error naming the file and the row group,
// after every try, and not bad input: --on-bad-file=skip must not skip it.
// The failure comes up through parquet-go's page reading with its chain
// intact.
func TestFailedReadIsNotBadInput(t *testing.T) {
	fastRetries(t)
	path, _ := pages(t)
	// The middle of row group 2's text: row group 1's last block, which
	// runs on past its end, stops short of it.
	from, to := chunk(t, path, 2)
	mid := (from + to) / 2
	faultstore.Inject(faultstore.Fault{Path: path, From: mid, To: mid + 1, Kind: faultstore.Cut, Times: faultstore.Always})
	got, err := readAll(faultstore.Name(path))
	if err == nil {
		t.Fatal("a read that always fails: no error")
	}
	t.Log(err)
	if IsBadInput(err) {
		t.Errorf("a failed read is classified bad input: %v", err)
	}
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "after a failed read") {
		t.Errorf("%v: want a ReadError wrapping io.ErrUnexpectedEOF through parquet-go's errors", err)
	}
	for _, want := range []string{faultstore.Name(path), "row group 2", "reading column data failed", "5 tries failed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "unreadable") {
		t.Errorf("%v: a failed read called unreadable (the run's hint would blame the file)", err)
	}
	if len(got) != 100 {
		t.Errorf("%d rows read before the failure, want the 100 of row groups 0 and 1", len(got))
	}
	if st := faultstore.StatsOf(path); st.Failed != len(objstore.RetryDelays)+1 {
		t.Errorf("%d requests failed, want %d tries", st.Failed, len(objstore.RetryDelays)+1)
	}

	// The footer's read failing: the file cannot be split, and it is not bad either.
	faultstore.Clear()
	faultstore.Inject(faultstore.Fault{Path: path, Kind: faultstore.Refuse, Times: faultstore.Always})
	_, err = Splits(context.Background(), 0, faultstore.Name(path), defaults)
	if err == nil || IsBadInput(err) || !strings.Contains(err.Error(), faultstore.Name(path)) || strings.Contains(err.Error(), "not a readable Parquet file") {
		t.Errorf("the footer's read failing: %v; want an error naming the file, not bad input", err)
	}

	// A file that cannot be opened is not bad input.
	_, err = Splits(context.Background(), 0, filepath.Join(t.TempDir(), "gone.parquet"), defaults)
	if err == nil || IsBadInput(err) {
		t.Errorf("a missing file: %v; want an error, not bad input", err)
	}
}

// What the file holds still makes bad input, locally and through an
// object store: not Parquet, cut short, a corrupt page, a column missing.
func TestCorruptFileIsBadInput(t *testing.T) {
	fastRetries(t)
	path, _ := pages(t)
	b, pf := readParquet(t, path)
	dir := t.TempDir()
	notParquet := filepath.Join(dir, "not.parquet")
	os.WriteFile(notParquet, []byte("<html>this is not a parquet file</html>"), 0o644)
	truncated := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	corrupt := filepath.Join(dir, "corrupt.parquet")
	from, to := chunk(t, path, 1)
	c := slices.Clone(b)
	for i := from + (to-from)/4; i < to-8; i++ {
		c[i] ^= 0x5a
	}
	os.WriteFile(corrupt, c, 0o644)
	// The footer points past the end: a file cut short after it was written.
	short := filepath.Join(dir, "short.parquet")
	md := pf.Metadata().RowGroups[3].Columns[0].MetaData
	s := slices.Clone(b[:md.DataPageOffset+md.TotalCompressedSize/2])
	s = append(s, b[len(b)-int(faultstore.Options.TailSize):]...) // keep a footer: a file whose chunks run past its end
	os.WriteFile(short, s, 0o644)

	for _, name := range []string{notParquet, truncated, corrupt, short} {
		for _, n := range []string{name, faultstore.Name(name)} {
			_, err := readAll(n)
			if err == nil {
				// short.parquet's footer may not parse; a corrupt page must fail.
				t.Errorf("%s: read without error", n)
				continue
			}
			if !IsBadInput(err) {
				t.Errorf("%s: %v; want bad input", n, err)
			}
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%s: %v; want it named", n, err)
			}
		}
	}
	_, err := Splits(context.Background(), 0, faultstore.Name(path), Columns{Text: "body"})
	if !IsBadInput(err) || !strings.Contains(err.Error(), `column "body" not found`) {
		t.Errorf("a missing column: %v; want bad input", err)
	}
	if st := faultstore.StatsOf(corrupt); st.Failed != 0 || st.Requests == 0 {
		t.Errorf("corrupt file: %+v requests", st)
	}
}

// A file that changes while it is read fails, saying so: not bad input,
// and not retried.
func TestChangedFile(t *testing.T) {
	fastRetries(t)
	path, _ := pages(t)
	name := faultstore.Name(path)
	splits, err := Splits(context.Background(), 0, name, defaults)
	if err != nil {
		t.Fatal(err)
	}
	from, to := chunk(t, path, 2)
	faultstore.Inject(faultstore.Fault{Path: path, From: (from + to) / 2, To: (from+to)/2 + 1, Kind: faultstore.Change})
	err = ReadSplit(context.Background(), splits[2], defaults, func(Row) error { return nil })
	t.Log(err)
	if err == nil || IsBadInput(err) || !IsChanged(err) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "changed during the run") {
		t.Fatalf("a file changed mid-read: %v; want an error naming it, saying it changed during the run, not bad input", err)
	}
	if strings.Contains(err.Error(), "tries") {
		t.Errorf("%v: a changed file was retried", err)
	}

	// A split of a version with other row groups: changed, not bad.
	sp := splits[3]
	sp.NumRows++
	err = ReadSplit(context.Background(), sp, defaults, func(Row) error { return nil })
	if err == nil || IsBadInput(err) || !IsChanged(err) {
		t.Errorf("a split whose row group has another size now: %v; want changed, not bad input", err)
	}
	sp.RowGroup = 9
	err = ReadSplit(context.Background(), sp, defaults, func(Row) error { return nil })
	if err == nil || IsBadInput(err) || !IsChanged(err) {
		t.Errorf("a split whose row group is gone: %v; want changed, not bad input", err)
	}
}
