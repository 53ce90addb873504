package hfilewriter

import (
	"bytes"

	"github.com/hfload/hfload/internal/kv"
)

// The same-row path of FAST_DIFF blocks: AppendSameRow (and so AppendSameRowCells and AppendRow after a
// row's first cell) for a cell with the last cell's row, family, timestamp and type, a greater qualifier
// and no tags, in an open block that holds cells and has room, is encoded by encodeFastDiff.encodeSameRow
// and written here without appendCell's checks and cases: such a cell adds nothing to a ROW bloom and
// changes none of the statistics a row's first cell set (time range, earliest put, sequence ids, tags).
// Everything else takes appendCell; the bytes, Stats and EstimatedSize are the same either way
// (TestWriterAppendSameRowCellsMatchesAppend, TestWriterAppendPartsMatchesAppend).

// sameRowFastDiffOK reports whether a same-row cell with qualifier and value takes appendSameRowFastDiff.
// The caller has checked w.sameRowFD (set by appendCell after a cell it wrote to a FAST_DIFF writer,
// cleared on Close and on failure).
func (w *Writer) sameRowFastDiffOK(qualifier, value []byte) bool {
	return w.blkOpen && w.blkHasFirst && w.blkUnencoded < w.opts.BlockSize && w.blkEncoded < w.opts.BlockSize &&
		uint64(len(qualifier))+uint64(len(value)) <= maxCellColumnAndValue && bytes.Compare(qualifier, w.lastQual) > 0
}

// appendSameRowFastDiff appends a cell with the last cell's row, family, timestamp and type, qualifier and
// value, no tags and sequence id 0, to the open FAST_DIFF block (sameRowFastDiffOK).
func (w *Writer) appendSameRowFastDiff(qualifier, value []byte) {
	head := 2 + len(w.lastRow) + 1 + len(w.family)
	klen := kv.KeyInfrastructureSize - 3 + head + len(qualifier)
	before := len(w.blk)
	w.blk = w.fd.encodeSameRow(w.blk, head, klen, qualifier, value, w.lastQual)
	unencoded := 8 + klen + len(value)
	if w.tags {
		w.blk = append(w.blk, 0) // vint tags length 0
		unencoded += 2
	}
	if w.mvcc {
		w.blk = append(w.blk, 0) // sequence id 0
		unencoded++
	}
	w.blkUnencoded += unencoded
	w.blkEncoded += len(w.blk) - before

	w.totalKeyLen += int64(klen)
	w.totalValueLen += int64(len(value))
	if cellSize := int64(12 + klen + len(value)); w.lenBiggest < cellSize {
		w.lenBiggest = cellSize
		w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], w.lastRow, w.family, qualifier, w.lastTs, w.lastType)
	}
	w.lastQualOwn = append(w.lastQualOwn[:0], qualifier...)
	w.lastQual = w.lastQualOwn
	w.entries++
}
