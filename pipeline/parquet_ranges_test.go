package pipeline

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// countingReaderAt counts the reads that reach the file (on a bucket, each is a ranged GET).
type countingReaderAt struct {
	r     io.ReaderAt
	reads atomic.Int32
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// TestParquetRowGroupOneRead: with rowGroupRanges (remote Parquet), a row group of 19 column chunks is
// one read instead of 19, and the batches equal those of a plain read; a row group over the limit is
// read chunk by chunk, with the same batches.
func TestParquetRowGroupOneRead(t *testing.T) {
	const rows, groupRows, batchRows = 1000, 130, 50
	want := parquetTestRecord(0, rows)
	defer want.Release()
	var file bytes.Buffer
	w, err := pqarrow.NewFileWriter(parquetTestSchema, &file,
		parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(groupRows)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "all.parquet")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := bytes.NewReader(file.Bytes())

	read := func(limit int64) (reads, footer int) {
		c := &countingReaderAt{r: data}
		g := &rowGroupRanges{r: c, limit: limit}
		src, err := NewParquetSource(g, data.Size(), path, 0, SourceOptions{BatchRows: batchRows})
		if err != nil {
			t.Fatal(err)
		}
		src.ranges, src.size = g, data.Size()
		footer = int(c.reads.Load())
		batches := parquetReadAll(t, src, groupRows, batchRows)
		n := 0
		for _, b := range batches {
			for col := 0; col < int(want.NumCols()); col++ {
				lo, hi := b.FirstRow, b.FirstRow+int64(b.NumRows)
				if !array.SliceEqual(want.Column(col), lo, hi, b.Record.Column(col), 0, int64(b.NumRows)) {
					t.Fatalf("limit %d: column %s rows %d..%d differ", limit, want.ColumnName(col), lo, hi)
				}
			}
			n += b.NumRows
			b.Release()
		}
		if n != rows {
			t.Fatalf("limit %d: read %d rows, want %d", limit, n, rows)
		}
		src.Close()
		return int(c.reads.Load()) - footer, footer
	}
	groups, cols := 8, int(want.NumCols())
	if got, _ := read(0); got != groups {
		t.Fatalf("row groups coalesced: %d reads after the footer, want %d (one per row group)", got, groups)
	}
	if got, _ := read(1); got != groups*cols {
		t.Fatalf("over the limit: %d reads after the footer, want %d (one per column chunk)", got, groups*cols)
	}
}
