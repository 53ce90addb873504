package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"slices"

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

// appendSameRowRunFastDiff appends the first cells of cells that appendSameRowFastDiff would take while
// the open block has room (it stops before a cell that crosses the block boundary or that
// appendSameRowFastDiff would not take), in one pass, and returns how many. The caller has checked
// w.sameRowFD. Within the run each cell's previous qualifier is the cell before it (the caller's), so the
// writer's copy of the last qualifier is made once, after the run; the fields are moved as words
// (short ones as words) into room grown once per cell; the block's, key and value totals are stored at the end.
func (w *Writer) appendSameRowRunFastDiff(cells []SameRowCell) int {
	if !w.blkOpen || !w.blkHasFirst {
		return 0
	}
	e := w.fd
	head := 2 + len(w.lastRow) + 1 + len(w.family)
	keyFixed := kv.KeyInfrastructureSize - 3 + head
	tsByte := e.ts[7]
	suffix, suffixUnencoded := 0, 0 // tags length (vint 0; 2 bytes unencoded) and sequence id 0
	if w.tags {
		suffix++
		suffixUnencoded += 2
	}
	if w.mvcc {
		suffix++
		suffixUnencoded++
	}
	bs := w.opts.BlockSize
	blk, start := w.blk, len(w.blk)
	blkUnencoded, encoded0 := w.blkUnencoded, w.blkEncoded-start
	prevQ, klenPrev, valOff, valLen := w.lastQual, e.klen, e.valOff, e.valLen
	valueSum := 0
	n := 0
	for ; n < len(cells); n++ {
		if blkUnencoded >= bs || encoded0+len(blk) >= bs {
			break
		}
		q, v := cells[n].Qualifier, cells[n].Value
		// The order from the common prefix the encoding needs anyway: q sorts after prevQ when it goes on
		// past it and is greater at the first byte that differs (or prevQ ends there).
		p := kv.CommonPrefix(q, prevQ)
		if uint64(len(q))+uint64(len(v)) > maxCellColumnAndValue || p == len(q) || (p < len(prevQ) && q[p] < prevQ[p]) {
			break
		}
		klen := keyFixed + len(q)
		flag := fastDiffSameType | 7
		if klen == klenPrev {
			flag |= fastDiffSameKeyLength
		}
		sameValue := false
		if len(v) == valLen {
			flag |= fastDiffSameValueLength
			if sameValue = bytes.Equal(v, blk[valOff:valOff+valLen]); sameValue {
				flag |= fastDiffSameValue
			}
		}
		// flag, three cints of at most 5 bytes, the timestamp's last byte, the suffix, and 8 bytes past
		// the cell for copyShort's word moves.
		blk = slices.Grow(blk, 1+15+len(q)+1+len(v)+2+8)
		o := len(blk)
		b := blk[:cap(blk)]
		b[o] = byte(flag)
		o++
		if flag&fastDiffSameKeyLength == 0 {
			if klen < 0x80 {
				b[o] = byte(klen)
				o++
			} else {
				o += binary.PutUvarint(b[o:], uint64(uint32(klen)))
			}
		}
		if flag&fastDiffSameValueLength == 0 {
			if len(v) < 0x80 {
				b[o] = byte(len(v))
				o++
			} else {
				o += binary.PutUvarint(b[o:], uint64(uint32(len(v))))
			}
		}
		if c := head + p; c < 0x80 {
			b[o] = byte(c)
			o++
		} else {
			o += binary.PutUvarint(b[o:], uint64(uint32(c)))
		}
		if qs := q[p:]; len(qs) <= 8 {
			binary.LittleEndian.PutUint64(b[o:], loadShort(qs))
			o += len(qs)
		} else {
			o += copy(b[o:], qs)
		}
		b[o] = tsByte
		o++
		if !sameValue {
			valOff, valLen = o, len(v)
			switch {
			case len(v) <= 8:
				binary.LittleEndian.PutUint64(b[o:], loadShort(v))
			case len(v) <= 16:
				x, y := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[len(v)-8:])
				binary.LittleEndian.PutUint64(b[o:], x)
				binary.LittleEndian.PutUint64(b[o+len(v)-8:], y)
			default:
				copy(b[o:], v)
			}
			o += len(v)
		}
		b[o], b[o+1] = 0, 0
		blk = b[:o+suffix]
		blkUnencoded += 8 + klen + len(v) + suffixUnencoded
		valueSum += len(v)
		if cellSize := int64(12 + klen + len(v)); w.lenBiggest < cellSize {
			w.lenBiggest = cellSize
			w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], w.lastRow, w.family, q, w.lastTs, w.lastType)
		}
		prevQ, klenPrev = q, klen
	}
	if n == 0 {
		return 0
	}
	keySum := blkUnencoded - w.blkUnencoded - n*(8+suffixUnencoded) - valueSum // each cell: 8 + klen + value + suffix
	w.blk = blk
	w.blkUnencoded = blkUnencoded
	w.blkEncoded = encoded0 + len(blk)
	w.totalKeyLen += int64(keySum)
	w.totalValueLen += int64(valueSum)
	e.klen, e.valOff, e.valLen = klenPrev, valOff, valLen
	w.lastQualOwn = append(w.lastQualOwn[:0], prevQ...)
	w.lastQual = w.lastQualOwn
	w.entries += int64(n)
	return n
}
