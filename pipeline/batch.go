package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/hfload/hfload/internal/cellrec"
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
	return fieldText(b.Data, b.Ends, k), b.Nulls[k]
}

// fieldText is the text of field k (row-major) of a text batch's Data and Ends.
func fieldText(data []byte, ends []int32, k int) []byte {
	start := int32(0)
	if k > 0 {
		start = ends[k-1]
	}
	return data[start:ends[k]]
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

	tee  *inputTee  // see SetTee; shared by every copy of the Input, so wrapped Opens honour it
	text *inputText // an uncompressed CSV file: Range can open it at an offset
}

// inputTee is where the Open of a text file input sends a copy of the bytes it reads.
type inputTee struct{ w io.Writer }

// SetTee makes Open (of this Input and of every copy of it, however its Open was wrapped since
// ExpandInputs) write every byte it reads from the file, before decompression, to w; nil stops it. A
// caller checksums an input in the same pass that loads it, and the checksum is of exactly the bytes
// loaded. It reports false, and does nothing, for inputs that are not text files (Parquet, standard
// input). Set it before the sources are opened.
func (in Input) SetTee(w io.Writer) bool {
	if in.tee == nil {
		return false
	}
	in.tee.w = w
	return true
}

// CellBatch is what mapping one Batch produces: cellrec records (see package internal/cellrec) back to
// back in Buf, one RecordRef per record in emission order. A record holds cells of one input row and one
// family that share the row key, timestamp and type; its fixed qualifiers are indexes into Dict, the
// mapping's dictionary (Mapping.Dict). The records of one input row are contiguous and the rows are in
// input order. KeyValues expands a batch into the KeyValue records of its cells.
// A CellBatch handed to a Sink is only valid during the call: the sink copies what it keeps.
type CellBatch struct {
	Buf     []byte        // cellrec records back to back
	Records []RecordRef   // one per record, in emission order
	Dict    *cellrec.Dict // the mapping's dictionary (Mapping.Dict()); records' dictionary qualifiers index it
}

// RecordRef locates one record of a CellBatch and says what it stands for.
type RecordRef struct {
	Off, Len uint32 // the record is Buf[Off:Off+Len]
	Cells    uint32 // cells in the record
	// KVBytes is the size of the KeyValue records its cells stand for: the sum of Dict.KeyValueSize
	// over its cells (int32 keyLen | int32 valueLen | key | value, then int16 tagsLen | tags when the
	// Dict is tagged; no mvcc).
	KVBytes uint32
	Family  uint16 // index of the record's family in the mapping's family list (Mapping.Families)
	// Seq orders records by input position: SeqOf(file, row). Equal keys are resolved by Seq (e.g.
	// --duplicates last keeps the highest Seq), which makes output deterministic.
	Seq uint64
}

// KVRef locates the KeyValue record of one cell in the buffer filled by CellBatch.KeyValues.
type KVRef struct {
	Off, Len uint32 // the KeyValue record is buf[Off:Off+Len]
	Family   uint16 // as the cell's RecordRef.Family
	Seq      uint64 // as the cell's RecordRef.Seq
}

// Reset empties the batch for reuse, keeping its buffers and its Dict.
func (cb *CellBatch) Reset() { cb.Buf, cb.Records = cb.Buf[:0], cb.Records[:0] }

// reserve makes room in the (empty) batch for the records of mapping b, a text batch, when it has
// less, in memory with huge pages asked for (hugeMake): a worker's batch grew by appending, and each
// doubling was fresh memory faulted in 4 KiB at a time (customer-order, 1M rows: ~900 page faults
// in mapPlainRows). Records take about the row's text plus its key again and a header: twice the
// text and 64 KiB are room for most; a batch that needs more grows as before.
func (cb *CellBatch) reserve(b *Batch) {
	if len(b.Data) == 0 {
		return
	}
	if want := 2*len(b.Data) + 64<<10; cap(cb.Buf) < want {
		cb.Buf = hugeMake[byte](want + want/4)
	}
	if want := b.NumRows + b.NumRows/4; cap(cb.Records) < want {
		cb.Records = hugeMake[RecordRef](want)
	}
}

// Record returns the bytes of record i.
func (cb *CellBatch) Record(i int) []byte {
	r := &cb.Records[i]
	return cb.Buf[r.Off : r.Off+r.Len : r.Off+r.Len]
}

// Cells returns the number of cells of the batch (the sum of RecordRef.Cells).
func (cb *CellBatch) Cells() int {
	n := 0
	for i := range cb.Records {
		n += int(cb.Records[i].Cells)
	}
	return n
}

// AppendRecord appends a copy of rec, a record for the family with index family and the input position
// seq, to the batch, filling its RecordRef (Cells and KVBytes from the record). The record is checked
// with cb.Dict.Validate. It is for tests and tools that build batches by hand; the mapping writes its
// records itself.
func (cb *CellBatch) AppendRecord(rec []byte, family uint16, seq uint64) error {
	n, err := cb.Dict.Validate(rec)
	if err != nil {
		return fmt.Errorf("cell batch: record for seq %d: %w", seq, err)
	}
	h, cells, _ := cellrec.ParseHeader(rec)
	kv := 0
	for len(cells) > 0 {
		var q, v, t []byte
		q, v, t, cells = cb.Dict.NextTags(cells)
		kv += cb.Dict.KeyValueSize(&h, len(q), len(v), len(t))
	}
	if uint64(len(cb.Buf))+uint64(len(rec)) > math.MaxUint32 || uint64(kv) > math.MaxUint32 {
		return fmt.Errorf("cell batch: record for seq %d: batch or record too large for 32-bit offsets", seq)
	}
	cb.Records = append(cb.Records, RecordRef{Off: uint32(len(cb.Buf)), Len: uint32(len(rec)), Cells: uint32(n),
		KVBytes: uint32(kv), Family: family, Seq: seq})
	cb.Buf = append(cb.Buf, rec...)
	return nil
}

// KeyValues appends the KeyValue records (int32 keyLen | int32 valueLen | key | value, no mvcc; with a
// tagged Dict, as a CellTags mapping's, int16 tagsLen | tags follow the value as in HBase's KeyValue) of
// every cell of the batch to dst and one KVRef per cell to refs, in emission order; a KVRef's Off is an
// offset in the returned buffer. Every record is checked first (bounds, Dict.Validate, and its Cells
// and KVBytes against what it holds): on a malformed one, KeyValues returns dst and refs as they were
// and an error naming it.
func (cb *CellBatch) KeyValues(dst []byte, refs []KVRef) ([]byte, []KVRef, error) {
	dst0, refs0 := len(dst), len(refs)
	fail := func(i int, format string, args ...any) ([]byte, []KVRef, error) {
		r := &cb.Records[i]
		return dst[:dst0], refs[:refs0], fmt.Errorf("cell batch: record %d (file %d row %d): %s", i,
			SeqFile(r.Seq), SeqRow(r.Seq), fmt.Sprintf(format, args...))
	}
	for i := range cb.Records {
		r := &cb.Records[i]
		if uint64(r.Off)+uint64(r.Len) > uint64(len(cb.Buf)) {
			return fail(i, "bytes [%d, %d) lie outside the buffer of %d", r.Off, uint64(r.Off)+uint64(r.Len), len(cb.Buf))
		}
		if uint64(len(dst))+uint64(r.KVBytes) > math.MaxUint32 {
			return fail(i, "KeyValues beyond 4 GiB")
		}
		start := len(dst)
		var n int
		var err error
		if dst, n, err = cb.Dict.AppendKeyValuesChecked(dst, cb.Record(i)); err != nil {
			return fail(i, "malformed record: %v", err)
		}
		if n != int(r.Cells) {
			return fail(i, "holds %d cells, its reference says %d", n, r.Cells)
		}
		if kv := len(dst) - start; kv != int(r.KVBytes) {
			return fail(i, "stands for %d bytes of KeyValues, its reference says %d", kv, r.KVBytes)
		}
		tagged := cb.Dict.Tagged()
		for off := start; off < len(dst); {
			kvLen := 8 + int(binary.BigEndian.Uint32(dst[off:])) + int(binary.BigEndian.Uint32(dst[off+4:]))
			if tagged {
				kvLen += 2 + int(binary.BigEndian.Uint16(dst[off+kvLen:]))
			}
			refs = append(refs, KVRef{Off: uint32(off), Len: uint32(kvLen), Family: r.Family, Seq: r.Seq})
			off += kvLen
		}
	}
	return dst, refs, nil
}

// SeqOf builds a RecordRef.Seq from a file index and a row ordinal within the file.
func SeqOf(fileIndex int, row int64) uint64 { return uint64(fileIndex)<<40 | uint64(row) }

// SeqFile and SeqRow split a Seq.
func SeqFile(seq uint64) int  { return int(seq >> 40) }
func SeqRow(seq uint64) int64 { return int64(seq & (1<<40 - 1)) }

// Sink receives the records of each mapped batch. It is called concurrently from the mapping workers.
type Sink func(cb *CellBatch) error
