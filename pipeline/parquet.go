package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// ParquetSource reads a Parquet file row group by row group into Arrow records (Batch.Record), at
// most BatchRows rows per batch; a batch never spans two row groups. Only flat schemas are accepted:
// integers (signed and unsigned), floats, decimals, strings, binaries, booleans, dates, times and
// timestamps, all nullable. A nested column (list, struct, map, ...) is an error at open time.
type ParquetSource struct {
	name      string
	fileIndex int
	closer    io.Closer
	pf        *file.Reader
	fr        *pqarrow.FileReader
	schema    *arrow.Schema
	batchRows int

	rowGroup int // next row group to open
	endGroup int // row groups from here on are not read (RowGroups; 0 = read to the end)
	cur      pqarrow.RecordReader
	curGroup int
	row      int64 // rows returned so far

	ranges *rowGroupRanges // a remote file's: each row group read with one request (parquet_ranges.go)
	size   int64
}

// OpenParquet opens the Parquet file at path (see NewParquetSource).
func OpenParquet(path string, fileIndex int, opts SourceOptions) (*ParquetSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open input: %w", err)
	}
	src, err := NewParquetSource(f, st.Size(), path, fileIndex, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	src.closer = f
	return src, nil
}

// NewParquetSource reads a Parquet file of size bytes from r. name is reported in batches and errors.
// It reads the footer and checks the schema at once. Close does not close r.
func NewParquetSource(r io.ReaderAt, size int64, name string, fileIndex int, opts SourceOptions) (*ParquetSource, error) {
	pf, err := parquetOpen(r, size)
	if err != nil {
		return nil, corruptInput(name, err)
	}
	batchRows := opts.BatchRows
	if batchRows <= 0 {
		batchRows = sourceDefaultBatchRows
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batchRows)}, memory.DefaultAllocator)
	if err != nil {
		return nil, corruptInput(name, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("%s: parquet schema: %w", name, err)
	}
	for _, f := range schema.Fields() {
		if !parquetFlatType(f.Type) {
			return nil, fmt.Errorf("%s: parquet column %q has type %s: only flat columns are supported (no lists, structs or maps)", name, f.Name, f.Type)
		}
	}
	return &ParquetSource{name: name, fileIndex: fileIndex, pf: pf, fr: fr, schema: schema, batchRows: batchRows}, nil
}

// parquetOpen opens the footer, turning the library's panics on garbage input into errors.
func parquetOpen(r io.ReaderAt, size int64) (pf *file.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt file: %v", p)
		}
	}()
	return file.NewParquetReader(io.NewSectionReader(r, 0, size))
}

// parquetFlatType reports whether t is a scalar type the mapping can read.
func parquetFlatType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.NULL:
		return true
	}
	return false
}

// Schema returns the Arrow schema of the file's records.
func (s *ParquetSource) Schema() *arrow.Schema { return s.schema }

// Header returns the column names in schema order.
func (s *ParquetSource) Header() []string {
	names := make([]string, len(s.schema.Fields()))
	for i, f := range s.schema.Fields() {
		names[i] = f.Name
	}
	return names
}

// NumRows returns the row count from the footer.
func (s *ParquetSource) NumRows() int64 { return s.pf.NumRows() }

// NumRowGroups returns the number of row groups from the footer.
func (s *ParquetSource) NumRowGroups() int { return s.pf.NumRowGroups() }

// RowGroupRows returns the number of rows of every row group, from the footer.
func (s *ParquetSource) RowGroupRows() []int64 {
	out := make([]int64, s.pf.NumRowGroups())
	for i := range out {
		out[i] = s.pf.MetaData().RowGroup(i).NumRows()
	}
	return out
}

// RowGroups restricts the source to row groups [from, to): a work unit of a distributed run. Row
// ordinals stay those of the whole file (the rows of the groups before from are counted), so records'
// Seq and rejects' row numbers are what reading the whole file gives. Call it before the first Next.
func (s *ParquetSource) RowGroups(from, to int) error {
	n := s.pf.NumRowGroups()
	if s.row != 0 || s.cur != nil || s.rowGroup != 0 {
		return fmt.Errorf("%s: parquet: row groups restricted after reading began", s.name)
	}
	if from < 0 || to < from || to > n {
		return fmt.Errorf("%s: parquet: row groups [%d, %d) out of range (the file has %d)", s.name, from, to, n)
	}
	for i := 0; i < from; i++ {
		s.row += s.pf.MetaData().RowGroup(i).NumRows()
	}
	s.rowGroup = from
	s.endGroup = to
	if to == from { // nothing to read: make Next stop at once
		s.rowGroup, s.endGroup = n, 0
	}
	return nil
}

// Next returns the next record batch (Batch.Record, retained for the caller: call Batch.Release), or
// io.EOF after the last row group.
func (s *ParquetSource) Next(ctx context.Context) (*Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		if s.cur == nil {
			end := s.pf.NumRowGroups()
			if s.endGroup > 0 {
				end = s.endGroup
			}
			for s.rowGroup < end && s.pf.MetaData().RowGroup(s.rowGroup).NumRows() == 0 {
				s.rowGroup++
			}
			if s.rowGroup >= end {
				return nil, io.EOF
			}
			rr, err := s.openGroup(ctx, s.rowGroup)
			if err != nil {
				return nil, corruptInput(s.name, fmt.Errorf("parquet row group %d: %w", s.rowGroup, err))
			}
			s.cur, s.curGroup = rr, s.rowGroup
			s.rowGroup++
		}
		rec, err := s.read()
		if err != nil {
			return nil, corruptInput(s.name, fmt.Errorf("parquet row group %d: %w", s.curGroup, err))
		}
		if rec == nil || rec.NumRows() == 0 {
			s.cur.Release()
			s.cur = nil
			continue
		}
		rec.Retain()
		b := &Batch{
			Source: s.name, FileIndex: s.fileIndex, FirstRow: s.row,
			NumRows: int(rec.NumRows()), NumCols: int(rec.NumCols()),
			Record: rec, RowGroup: s.curGroup,
		}
		s.row += rec.NumRows()
		return b, nil
	}
}

func (s *ParquetSource) openGroup(ctx context.Context, rg int) (rr pqarrow.RecordReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt file: %v", p)
		}
	}()
	if s.ranges != nil {
		if err := s.ranges.load(s.pf.MetaData().RowGroup(rg), s.size); err != nil {
			return nil, err
		}
	}
	return s.fr.GetRecordReader(ctx, nil, []int{rg})
}

// read returns the next record of the current row group, or nil at its end.
func (s *ParquetSource) read() (rec arrow.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt data: %v", p)
		}
	}()
	if s.cur.Next() {
		return s.cur.Record(), nil
	}
	if err := s.cur.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return nil, nil
}

// Close releases the reader and closes the file if OpenParquet opened it.
func (s *ParquetSource) Close() error {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.ranges != nil {
		s.ranges.drop()
	}
	if s.closer != nil {
		err := s.closer.Close()
		s.closer = nil
		return err
	}
	return nil
}
