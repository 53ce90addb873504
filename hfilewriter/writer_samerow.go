package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/hfload/hfload/internal/kv"
)

// The same-row path: AppendSameRow and AppendSameRowTags for the cells a mapped input row becomes after
// its first (same row, family, timestamp and type; a greater qualifier; no tags). Such a cell needs none
// of appendCell's checks but the qualifier's order, adds nothing to a ROW bloom, and changes none of the
// statistics a row's first cell set (time range, earliest put, sequence ids, tags), so it is written
// here in a few steps. Everything else (a first cell, tags, an equal or smaller qualifier, a ROWCOL
// bloom, delete-family cells, encoded blocks (FAST_DIFF's have a path of their own: appendSameRowFastDiff), a closed or failed writer) takes appendCell; the bytes,
// Stats and EstimatedSize are the same either way (TestWriterAppendPartsMatchesAppend).

// sameRowFast reports whether the next same-row cell may take appendSameRowFast as far as the writer's
// state goes: set by appendCell after a cell it wrote, cleared on Close and on failure.
func (w *Writer) setSameRowFast(typ Type) {
	ok := w.opts.Bloom != BloomRowCol && typ != kv.TypeDeleteFamily && typ != kv.TypeDeleteFamilyVersion
	w.sameRowFast = ok && w.enc == nil
	w.sameRowFD = ok && w.fd != nil
	w.sameRowPX = ok && (w.px != nil || w.dx != nil)
}

// appendSameRowFast appends a cell with the last cell's row, family, timestamp and type, qualifier and
// value, no tags and sequence id 0, to an unencoded block. The caller has checked w.sameRowFast, that
// qualifier sorts after the last cell's and the sizes (appendCell's first check).
func (w *Writer) appendSameRowFast(qualifier, value []byte) error {
	return w.writeCellFast(w.lastRow, w.family, qualifier, w.lastTs, w.lastType, value)
}

// writeCellFast is the end of appendCell for a cell without tags and sequence id in an unencoded
// block, whose order the caller has checked and whose bloom key it has added: the block boundary, the
// KeyValue and the block's and file's statistics but the time range and the last row (which the
// same-row path leaves as they are).
func (w *Writer) writeCellFast(row, family, qualifier []byte, ts int64, typ Type, value []byte) error {
	// Data block boundary (HFileWriterImpl.checkBlockBoundary); unencoded, the two sizes are equal.
	if full := w.blkOpen && w.blkUnencoded >= w.opts.BlockSize; full || !w.blkOpen {
		if err := w.openDataBlock(full); err != nil {
			return err
		}
	}
	klen := kv.KeyInfrastructureSize + len(row) + len(family) + len(qualifier)
	size := 8 + klen + len(value)
	if w.tags {
		size += 2 // a tags length of 0
	}
	if w.mvcc {
		size++ // sequence id 0
	}
	before := len(w.blk)
	// Room for 8 bytes past the cell: short fields are stored as whole words, whose bytes past the
	// field the next field overwrites (putKeyValue's bytes, with fewer calls to memmove).
	b := slices.Grow(w.blk, size+8)[:before+size]
	p := b[before : before+size+8]
	binary.BigEndian.PutUint64(p, uint64(klen)<<32|uint64(uint32(len(value))))
	binary.BigEndian.PutUint16(p[8:], uint16(len(row)))
	o := 10 + copy(p[10:], row)
	p[o] = byte(len(family))
	o++
	for _, c := range family { // a byte or two: cheaper than a call to memmove
		p[o] = c
		o++
	}
	if len(qualifier) <= 8 {
		binary.LittleEndian.PutUint64(p[o:], loadShort(qualifier))
		o += len(qualifier)
	} else {
		o += copy(p[o:], qualifier)
	}
	binary.BigEndian.PutUint64(p[o:], uint64(ts))
	p[o+8] = byte(typ)
	o += 9
	switch {
	case len(value) <= 8:
		binary.LittleEndian.PutUint64(p[o:], loadShort(value))
	case len(value) <= 16:
		a, c := binary.LittleEndian.Uint64(value), binary.LittleEndian.Uint64(value[len(value)-8:])
		binary.LittleEndian.PutUint64(p[o:], a)
		binary.LittleEndian.PutUint64(p[o+len(value)-8:], c)
	default:
		copy(p[o:], value)
	}
	binary.LittleEndian.PutUint32(p[o+len(value):], 0) // tags length and sequence id (at most 3 bytes)
	q := before + 8 + 2 + len(row) + 1 + len(family)
	w.lastQual, w.lastQualInBlk = b[q:q+len(qualifier):q+len(qualifier)], true
	w.blk = b
	w.blkUnencoded += size
	w.blkEncoded += size

	w.totalKeyLen += int64(klen)
	w.totalValueLen += int64(len(value))
	if cellSize := int64(12 + klen + len(value)); w.lenBiggest < cellSize {
		w.lenBiggest = cellSize
		w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, family, qualifier, ts, typ)
	}
	if !w.blkHasFirst {
		w.blkFirstKey = kv.AppendKey(w.blkFirstKey[:0], row, family, qualifier, ts, typ)
		w.blkHasFirst = true
	}
	w.entries++
	return nil
}

// newRowFastOK reports whether a cell given by parts (AppendParts, AppendPartsRowHash) takes
// appendNewRowFast: a put without tags that starts a row after the last one, in the file's family,
// and the writer's state allows it (sameRowFast: unencoded blocks, no ROWCOL bloom, not closed or
// failed, the last cell not a delete-family one).
func (w *Writer) newRowFastOK(row, family, qualifier []byte, typ Type, value, tags []byte) bool {
	return w.sameRowFast && typ == kv.TypePut && len(tags) == 0 && len(row) <= kv.MaxRowLength &&
		uint64(len(qualifier))+uint64(len(value)) <= maxCellColumnAndValue && equalShort(family, w.family) &&
		bytes.Compare(row, w.lastRow) > 0
}

// appendNewRowFast appends a put that starts a new row (newRowFastOK): appendCell's work for it in the
// same order (bloom key, block boundary, KeyValue, statistics) without the checks and cases it cannot
// need.
func (w *Writer) appendNewRowFast(row, family, qualifier []byte, ts int64, value []byte) error {
	if w.bloom != nil { // ROW (newRowFastOK excludes ROWCOL): the row, as addToBlooms adds it
		if w.hasRowHash {
			w.bloom.addHashed(uint64(w.rowHash), row)
		} else {
			w.bloom.add(row, row)
		}
	}
	if err := w.writeCellFast(row, family, qualifier, ts, kv.TypePut, value); err != nil {
		return err
	}
	w.lastRow = append(w.lastRow[:0], row...)
	w.notePut(ts)
	return nil
}

// sameRowFastOK reports whether a same-row cell with qualifier, value and tags takes appendSameRowFast.
func (w *Writer) sameRowFastOK(qualifier, value, tags []byte) bool {
	return w.sameRowFast && len(tags) == 0 && uint64(len(qualifier))+uint64(len(value)) <= maxCellColumnAndValue &&
		bytes.Compare(qualifier, w.lastQual) > 0
}

// SameRowCell is a cell of AppendSameRowCells: a qualifier and a value.
type SameRowCell = kv.QualifierValue

// AppendSameRowCells appends cells in order, each as AppendSameRow(c.Qualifier, c.Value) would: the same
// checks, the same bytes. It returns how many it appended: all, or those before the first that failed,
// and that one's error. It is for the cells of a row after its first (what the rest of a mapped input
// row becomes): a run of them costs one call and, within a data block, one pass.
func (w *Writer) AppendSameRowCells(cells []SameRowCell) (int, error) {
	i := 0
	for i < len(cells) {
		if w.sameRowFast {
			if i += w.appendSameRowRun(cells[i:]); i == len(cells) {
				break
			}
		} else if w.sameRowFD {
			if i += w.appendSameRowRunFastDiff(cells[i:]); i == len(cells) {
				break
			}
		} else if w.sameRowPX { // PREFIX and DIFF blocks: writer_samerow_prefix.go, writer_samerow_diff.go
			if i += w.appendSameRowRunEncoded(cells[i:]); i == len(cells) {
				break
			}
		}
		// A block boundary, or a cell the run does not take: one cell the usual way.
		c := &cells[i]
		if err := w.AppendSameRow(c.Qualifier, c.Value); err != nil {
			return i, err
		}
		i++
	}
	return len(cells), nil
}

// appendSameRowRun appends the first cells of cells that appendSameRowFast would take while the open
// data block has room (it stops before a cell that crosses the block boundary or that appendSameRowFast
// would not take), in one pass, and returns how many. The caller has checked w.sameRowFast.
func (w *Writer) appendSameRowRun(cells []SameRowCell) int {
	return w.appendRowRun(w.lastRow, w.family, w.lastTs, w.lastType, cells, 0)
}

// appendRowRun is appendSameRowRun for cells of row, family, ts and typ that checks the qualifiers' order
// from cells[check] on: check 0 for cells after the writer's last one (appendSameRowRun), 1 for a new
// row's cells, whose first the caller has checked (AppendRow). It changes no statistics but the
// block's, the key and value totals, the entry count, the biggest cell and the last qualifier: a new
// row's caller keeps the rest.
//
// The loop calls no function, so that what it keeps stays in registers: it takes qualifiers of up to 8
// bytes (compared as words) and values of up to 32 (moved as words) and stops before any other cell,
// which its caller writes the usual way. What the cells share is stored from two small arrays: the
// key's head (row length, row, family length, family: 16 to 32 bytes) and the timestamp and type, into
// fixed-size windows of the block.
func (w *Writer) appendRowRun(row, family []byte, ts int64, typ Type, cells []SameRowCell, check int) int {
	if !w.blkOpen || !w.blkHasFirst || len(cells) == 0 {
		return 0
	}
	head := 2 + len(row) + 1 + len(family)
	if head > 32 || head < 16 {
		return w.appendRowRunLong(row, family, ts, typ, cells, check)
	}
	if check == 0 && bytes.Compare(cells[0].Qualifier, w.lastQual) <= 0 {
		return 0 // AppendSameRow says why
	}
	// The key's head as one 32-byte array, stored whole into each cell: the bytes past head are
	// overwritten by the qualifier and what follows (a cell here is at least 33 bytes: head >= 16).
	var r rowRun
	hd := &r.hd
	hd[0], hd[1] = byte(len(row)>>8), byte(len(row))
	copy(hd[2:], row)
	hd[2+len(row)] = byte(len(family))
	copy(hd[3+len(row):], family)
	// The timestamp and type, and zeros the value overwrites.
	binary.BigEndian.PutUint64(r.tt[:], uint64(ts))
	r.tt[8] = byte(typ)
	extra := 0 // tags length and sequence id: zeros
	if w.tags {
		extra += 2
	}
	if w.mvcc {
		extra++
	}
	blk := w.blk
	kbase := kv.KeyInfrastructureSize + head - 3 // a key's length without its qualifier
	fixed := 8 + kbase + extra                   // a cell's size without its qualifier and value
	r.kbase, r.fixed, r.qo = kbase, fixed, 8+head
	r.limit = len(blk) - w.blkUnencoded + w.opts.BlockSize // where the block is full (unencoded: every byte counts)
	r.room = cap(blk) - runRoom                            // a cell may start up to here
	// The cells, in a function of its own without calls, which keeps its loop's variables in registers.
	n, end, qSum, maxSize, lastQLen := r.cells(blk[:cap(blk)], len(blk), cells)
	if n == 0 {
		return 0
	}
	blk = blk[:end]
	// What the cells add to the statistics: every cell's size is fixed + its qualifier and value, so
	// the bytes added and the qualifiers' bytes give the key and value totals.
	added := len(blk) - len(w.blk)
	keySum := n*kbase + qSum
	valueSum := added - n*fixed - qSum
	// The biggest cell (HFileWriterImpl's keyOfBiggestCell: the first of the largest, beyond the
	// file's biggest so far): a cell's size there is 12 + klen + value, size - extra + 4 here.
	if int64(maxSize-extra+4) > w.lenBiggest {
		for i := range cells[:n] {
			c := &cells[i]
			if cellSize := int64(12 + kbase + len(c.Qualifier) + len(c.Value)); w.lenBiggest < cellSize {
				w.lenBiggest = cellSize
				w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, family, c.Qualifier, ts, typ)
			}
		}
	}
	lastQ := len(blk) - (fixed + lastQLen + len(cells[n-1].Value)) + 8 + head
	return w.endSameRowRun(blk, n, w.blkUnencoded+added, lastQ, lastQLen, keySum, valueSum)
}

// rowRun is what the cells of a run share (appendRowRun): the key's head hd (row length, row, family
// length, family), the timestamp and type tt, a key's length without its qualifier (kbase), a cell's
// size without its qualifier and value (fixed), where a cell's qualifier starts (qo, 8 + the head's
// length), where the block is full (limit) and the last offset a cell may start at (room).
type rowRun struct {
	hd                            [32]byte
	tt                            [16]byte
	kbase, fixed, qo, limit, room int
}

// cells stores the KeyValues of the first of cells that appendRowRun takes into blk from end on and
// returns how many, where they end, the sum of their qualifiers' lengths, the largest one's size and the
// last one's qualifier length. It takes cells while the block is not full (end < limit) and has room
// for a cell's word stores (end <= room), whose qualifier is at most 8 bytes long and sorts after the
// previous cell's (not checked for the first) and whose value is at most 32 bytes long. Each is the
// key's length and the value's, the key's head, the qualifier, the timestamp and type, the value and
// zeros for the tags length and sequence id. It calls nothing: its loop keeps its variables in registers.
func (r *rowRun) cells(blk []byte, end int, cells []SameRowCell) (n, newEnd, qSum, maxSize, lastQLen int) {
	h, ts := r.hd, r.tt // copies: a store from a local array is two moves, not a call to memmove
	kbase, fixed, limit, room := r.kbase, r.fixed, r.limit, r.room
	qo := r.qo & 63 // (at most 40) so that the compiler sees the stores below are within the window
	// The previous qualifier as a big-endian word, zero padded, and its length: whatever the first
	// cell's qualifier is, it passes.
	pw, pl := uint64(0), -1
	for ; n < len(cells) && end < limit && end <= room; n++ {
		q, v := cells[n].Qualifier, cells[n].Value
		if len(q) > 8 || len(v) > 32 {
			break
		}
		qs := loadShort(q)
		qw := bits.ReverseBytes64(qs)
		if qw < pw || qw == pw && len(q) <= pl {
			break // not after the previous one: AppendSameRow says why
		}
		pw, pl = qw, len(q)
		p := (*[runRoom]byte)(blk[end : end+runRoom])
		binary.BigEndian.PutUint64(p[:], uint64(kbase+len(q))<<32|uint64(len(v)))
		*(*[32]byte)(p[8:40]) = h
		binary.LittleEndian.PutUint64(p[qo:], qs)
		t := (*[48]byte)(p[qo+len(q)&15:]) // the timestamp: at most 48
		*(*[16]byte)(t[:16]) = ts
		switch {
		case len(v) <= 8:
			binary.LittleEndian.PutUint64(t[9:], loadShort(v))
			binary.LittleEndian.PutUint32(t[9+len(v):], 0) // tags length and sequence id (extra <= 3 bytes)
		case len(v) <= 16:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[len(v)-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[1+len(v):], b)
			binary.LittleEndian.PutUint32(t[9+len(v):], 0)
		default:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[8:])
			c, d := binary.LittleEndian.Uint64(v[len(v)-16:]), binary.LittleEndian.Uint64(v[len(v)-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[17:], b)
			binary.LittleEndian.PutUint64(t[len(v)-7:], c)
			binary.LittleEndian.PutUint64(t[1+len(v):], d)
			binary.LittleEndian.PutUint32(t[9+len(v):], 0)
		}
		size := fixed + len(q) + len(v)
		end += size
		qSum += len(q)
		maxSize = max(maxSize, size)
	}
	return n, end, qSum, maxSize, pl
}

// runRoom is the room appendRowRun needs for a cell: a 128-byte window from the cell's start (a cell
// it takes is at most 8 + 32 + 8 + 9 + 32 + 3 bytes; its fields are stored as whole words, at offsets
// the compiler can see are within the window).
const runRoom = 128

// loadShort returns the bytes of b (at most 8) as a little-endian word, zero padded: b[0] is its
// lowest byte.
func loadShort(b []byte) uint64 {
	n := len(b)
	if n >= 4 { // two overlapping halves
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*(n-4)&63)
	}
	if n > 1 {
		return uint64(b[0]) | uint64(b[n>>1])<<(8*(n>>1)) | uint64(b[n-1])<<(8*(n-1))
	}
	if n == 1 { // a one-byte qualifier: common
		return uint64(b[0])
	}
	return 0
}

// endSameRowRun stores what a run of n cells changed.
func (w *Writer) endSameRowRun(blk []byte, n, unencoded, lastQ, lastQLen, keySum, valueSum int) int {
	if n == 0 {
		return 0
	}
	w.blk = blk
	w.blkEncoded += unencoded - w.blkUnencoded
	w.blkUnencoded = unencoded
	w.lastQual, w.lastQualInBlk = blk[lastQ:lastQ+lastQLen:lastQ+lastQLen], true
	w.totalKeyLen += int64(keySum)
	w.totalValueLen += int64(valueSum)
	w.entries += int64(n)
	return n
}

// appendRowRunLong is appendRowRun for a key head (row and family) shorter than 16 or longer than 32
// bytes.
func (w *Writer) appendRowRunLong(row, family []byte, ts int64, typ Type, cells []SameRowCell, check int) int {
	extra := 0
	if w.tags {
		extra += 2
	}
	if w.mvcc {
		extra++
	}
	blk, unencoded, limit := w.blk, w.blkUnencoded, w.opts.BlockSize
	prevQ := w.lastQual
	lastQ := 0
	var keySum, valueSum int
	n := 0
	for ; n < len(cells) && unencoded < limit; n++ {
		q, v := cells[n].Qualifier, cells[n].Value
		if uint64(len(q))+uint64(len(v)) > maxCellColumnAndValue || n >= check && bytes.Compare(q, prevQ) <= 0 {
			break
		}
		klen := kv.KeyInfrastructureSize + len(row) + len(family) + len(q)
		body := 8 + klen + len(v)
		size := body + extra
		before := len(blk)
		blk = slices.Grow(blk, size)[:before+size]
		p := blk[before:]
		putKeyValue(p, klen, row, family, q, ts, typ, v)
		clear(p[body:])
		if cellSize := int64(12 + klen + len(v)); w.lenBiggest < cellSize {
			w.lenBiggest = cellSize
			w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, family, q, ts, typ)
		}
		lastQ = before + 8 + 2 + len(row) + 1 + len(family)
		prevQ = q
		unencoded += size
		keySum += klen
		valueSum += len(v)
	}
	return w.endSameRowRun(blk, n, unencoded, lastQ, len(prevQ), keySum, valueSum)
}
