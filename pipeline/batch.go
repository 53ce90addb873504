package pipeline

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"
)

// Batch is the unit of work between a source and the mapping workers: up to a few thousand rows of one
// input file. CSV sources fill the text fields (Data/Ends/Nulls, row-major); Parquet sources fill Record.
//
// Field j of row i (text form) is Data[start:Ends[i*NumCols+j]] where start is the previous element of
// Ends (0 for the very first field); it is NULL when Nulls[i*NumCols+j] is true.
type Batch struct {
	Source    string // the input path as given ("-" for stdin)
	FileIndex int    // position of the file in the run's expanded input list
	FirstRow  int64  // 0-based ordinal within the file of the batch's first data row (headers excluded)
	NumRows   int    // rows with fields in this batch (excludes Bad rows)
	NumCols   int

	Data  []byte
	Ends  []int32
	Nulls []bool
	// Lines[i] is the 1-based line number where row i starts (CSV), for reject messages.
	Lines []int64
	// RawEnds[i] is the end of row i's original text in RawData (start = previous end or 0), CSV only.
	RawData []byte
	RawEnds []int32

	// Record holds the rows of a Parquet batch (columns in schema order); nil for CSV.
	Record arrow.Record
	// RowGroup is the Parquet row group of the batch's first row (Parquet batches never span row groups).
	RowGroup int

	// recycle, if set, takes the batch's buffers back for reuse when it is released.
	recycle func(*Batch)

	// Bad lists rows the source could not split into fields (ragged rows, broken quoting, ...). They count
	// as read and rejected; they have no fields.
	Bad []BadRow
}

// BadRow is a row rejected by a source before mapping.
type BadRow struct {
	Line   int64  // 1-based line number where the row starts (CSV) or row ordinal in the file (Parquet)
	Reason string // e.g. "ragged row: 3 fields, want 4"
	Raw    []byte // the row's original text (CSV)
}

// Field returns field col of row i and whether it is NULL (text batches only).
func (b *Batch) Field(i, col int) ([]byte, bool) {
	k := i*b.NumCols + col
	start := int32(0)
	if k > 0 {
		start = b.Ends[k-1]
	}
	return b.Data[start:b.Ends[k]], b.Nulls[k]
}

// Raw returns the original text of row i (CSV batches), without its line terminator.
func (b *Batch) Raw(i int) []byte {
	if i >= len(b.RawEnds) {
		return nil
	}
	start := int32(0)
	if i > 0 {
		start = b.RawEnds[i-1]
	}
	return b.RawData[start:b.RawEnds[i]]
}

// Release frees the Arrow record, if any.
func (b *Batch) Release() {
	if b.Record != nil {
		b.Record.Release()
		b.Record = nil
	}
	if r := b.recycle; r != nil {
		b.recycle = nil
		r(b)
	}
}

// Source yields the batches of one input file in order.
type Source interface {
	// Next returns the next batch, or io.EOF after the last one.
	Next(ctx context.Context) (*Batch, error)
	Close() error
}

// Input is one file of a run, opened lazily so that many inputs do not hold many descriptors.
type Input struct {
	Path  string // as given or as expanded from a glob; "-" is standard input
	Index int    // position in the expanded list (Batch.FileIndex)
	Size  int64  // bytes on disk (-1 for stdin)
	Open  func() (Source, error)
}

// CellBatch is what mapping one Batch produces: KeyValue records (int32 keyLen | int32 valueLen | key |
// value; no tags, no mvcc) back to back in Buf, and one CellRef per cell in emission order.
// A CellBatch handed to a Sink is only valid during the call: the sink copies what it keeps.
type CellBatch struct {
	Buf   []byte
	Cells []CellRef
}

// CellRef locates one cell of a CellBatch.
type CellRef struct {
	Off    uint32 // offset of the KeyValue record in Buf
	Len    uint32 // length of the record
	Family uint16 // index of the cell's family in the mapping's family list
	// Seq orders cells by input position: FileIndex<<40 | row ordinal within the file. Equal keys are
	// resolved by Seq (e.g. --duplicates last keeps the highest Seq), which makes output deterministic.
	Seq uint64
}

// SeqOf builds a CellRef.Seq from a file index and a row ordinal within the file.
func SeqOf(fileIndex int, row int64) uint64 { return uint64(fileIndex)<<40 | uint64(row) }

// SeqFile and SeqRow split a Seq.
func SeqFile(seq uint64) int  { return int(seq >> 40) }
func SeqRow(seq uint64) int64 { return int64(seq & (1<<40 - 1)) }

// Sink receives the cells of each mapped batch. It is called concurrently from the mapping workers.
type Sink func(cb *CellBatch) error
