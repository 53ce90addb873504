package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

// AppendRowCoded is AppendRow for the cells of a row as a run of coded cells: each is a one-byte code
// 2·i+1 for qualifier quals[i], a one-byte value length below 0x80 and the value (an input record's usual
// cells). quals must be in order and distinct, and not change while the writer is given them (it keeps a
// table of them: when they are not in order it takes no cell).
//
// It appends the first of the cells that AppendRow's one-pass run takes, in one pass, without first
// decoding them into SameRowCells: the row a put that starts a new row, in an open unencoded block with
// room, qualifiers of up to 8 bytes in order, values of up to 32 (key heads of up to 15 bytes:
// qualifiers of up to 16 bytes, values of up to 127, codedCellsShort). It returns how many cells it appended
// and the bytes of coded they took: 0 and 0, with nothing written, when it takes none (the caller then
// takes AppendRow); after the cells it took, the caller goes on with AppendSameRowCells. The bytes,
// Stats and EstimatedSize are AppendRow's.
func (w *Writer) AppendRowCoded(row, family []byte, ts int64, typ Type, quals [][]byte, coded []byte) (n, used int) {
	if w.sameRowFD { // FAST_DIFF blocks: writer_rowcoded_fastdiff.go
		return w.appendRowCodedFastDiff(row, family, ts, typ, quals, coded, 0)
	}
	return w.AppendNewRowCoded(row, family, ts, typ, quals, coded, 0)
}

// AppendNewRowCoded is AppendRowCoded for a caller that rolls files at maxSize bytes (0: never) and
// checks the size before each new row (EstimatedSize() >= maxSize: a new file for the row), with that
// check in the same call: it takes none of the cells when the file has reached maxSize (the caller then
// rolls the usual way), and otherwise what AppendRowCoded takes in an unencoded file (sameRowFast)
// or a FAST_DIFF one (sameRowFD, appendRowCodedFastDiff): the row after the last one (one comparison: the row is new, so its first
// cell is no duplicate). One call a row instead of the roll check's, the duplicate check's and
// AppendRowCoded's.
func (w *Writer) AppendNewRowCoded(row, family []byte, ts int64, typ Type, quals [][]byte, coded []byte, maxSize int64) (n, used int) {
	if w.sameRowFD { // FAST_DIFF blocks: writer_rowcoded_fastdiff.go
		return w.appendRowCodedFastDiff(row, family, ts, typ, quals, coded, maxSize)
	}
	// newRowFastOK's checks for the first cell (RowCodedFits bounds the row far below kv.MaxRowLength),
	// and the run's key head.
	if !w.sameRowFast || typ != kv.TypePut || len(coded) < 2 || !RowCodedFits(len(row), len(family)) {
		return 0, 0
	}
	code, vl := coded[0], coded[1]
	if code&0x81 != 1 || vl >= 0x80 || int(code>>1) >= len(quals) || 2+int(vl) > len(coded) ||
		uint64(len(quals[code>>1]))+uint64(vl) > maxCellColumnAndValue || !equalShort(family, w.family) ||
		bytes.Compare(row, w.lastRow) <= 0 || !w.blkOpen || !w.blkHasFirst {
		return 0, 0
	}
	if maxSize > 0 && !w.estimateBelow(maxSize) {
		return 0, 0
	}
	tab := &w.coded.tab
	if w.coded.first != &quals[0] || w.coded.n != len(quals) || !w.coded.ok {
		if tab = w.coded.table(quals); tab == nil {
			return 0, 0
		}
	}
	// The run (appendRowRun, check 1: the first cell is checked above) of the coded cells of a put, in
	// this call: the key's head fits the run's arrays (RowCodedFits), the block is open and has a first
	// key, tab is the qualifiers' table, in order.
	{
		family := w.family
		head := 2 + len(row) + 1 + len(family)
		// The run's shared values as appendRowRun sets them up.
		var r rowRun
		binary.BigEndian.PutUint64(r.tt[:], uint64(ts))
		r.tt[8] = byte(kv.TypePut)
		extra := 0
		if w.tags {
			extra += 2
		}
		if w.mvcc {
			extra++
		}
		blk := w.blk
		kbase := kv.KeyInfrastructureSize + head - 3
		fixed := 8 + kbase + extra
		r.kbase, r.fixed, r.qo = kbase, fixed, 8+head
		r.limit = min(len(blk)-w.blkUnencoded+w.opts.BlockSize, cap(blk)-runRoom+1) // end < limit: full block, or no room
		// A cell bigger than the file's biggest so far ends the run (the usual way then records it): that
		// is a cell whose qualifier and value lengths sum to more than big.
		big := max(w.lenBiggest-int64(12+kbase), -1)
		// lastStart: where the last cell taken starts in blk.
		var end, lastCode, lastStart int
		if head <= maxShortHead { // the key's head as one 16-byte array, which codedCellsShort makes
			limit := min(r.limit, cap(blk)-runRoomShort+1)
			sq := w.coded.short.table(w.coded, kbase, fixed, int(min(big, maxShortQual+maxShortValue)))
			n, used, end, lastCode, lastStart = r.codedCellsShort(row, family, blk[:cap(blk)], len(blk), limit, sq, coded)
		} else {
			// codedCells' and codedCellsLong's table of the qualifiers (up to 8 bytes, values of up to 32)
			// for the run's kbase, fixed and big, made when they changed.
			mq := &w.coded.mid
			if big64 := int(min(big, 64)); !mq.fresh(kbase, fixed, big64) {
				mq.build(w.coded, kbase, fixed, big64, 8, 32)
			}
			if head > 32 { // the key's head as one 64-byte array, which codedCellsLong makes
				n, used, end, lastCode, lastStart = r.codedCellsLong(row, family, blk[:cap(blk)], len(blk), &mq.tab, coded)
			} else { // the key's head as one 32-byte array
				hd := &r.hd
				hd[0], hd[1] = byte(len(row)>>8), byte(len(row))
				if n := len(row); n >= 16 { // 16 to 29 bytes: two overlapping 16-byte moves
					*(*[16]byte)(hd[2:18]) = [16]byte(row)
					*(*[16]byte)(hd[n-14 : n+2]) = [16]byte(row[n-16:])
				} else {
					copyShort(hd[2:], row)
				}
				hd[2+len(row)] = byte(len(family))
				if len(family) == 1 { // the usual one-byte family
					hd[3+len(row)] = family[0]
				} else {
					for i, c := range family {
						hd[3+len(row)+i] = c
					}
				}
				n, used, end, lastCode, lastStart = r.codedCells(blk[:cap(blk)], len(blk), &mq.tab, coded)
			}
		}
		if n == 0 {
			return 0, 0
		}
		blk = blk[:end]
		added := len(blk) - len(w.blk)
		valueSum := used - 2*n // a coded cell is 2 bytes and its value
		qSum := added - n*fixed - valueSum
		keySum := n*kbase + qSum
		lastQLen := tab[lastCode>>1].len
		lastQ := lastStart + 8 + head
		w.endSameRowRun(blk, n, w.blkUnencoded+added, lastQ, lastQLen, keySum, valueSum)
	}
	// What AppendRow records for the row after its run.
	if w.bloom != nil { // ROW (newRowFastOK excludes ROWCOL): the row, as addToBlooms adds it
		w.bloom.add(row, row)
	}
	// The row into lastRow: up to two overlapping moves through pointers (cap(lastRow) >= n checked;
	// RowCodedFits: n <= 61).
	switch n := len(row); {
	case cap(w.lastRow) < n || n < 4:
		w.lastRow = append(w.lastRow[:0], row...)
	default:
		w.lastRow = w.lastRow[:n]
		d, s := unsafe.Pointer(unsafe.SliceData(w.lastRow)), unsafe.Pointer(unsafe.SliceData(row))
		switch {
		case n >= 32: // 32 to 61 bytes: 16-byte moves (a wider array goes through a copy on the stack)
			*(*[16]byte)(d) = *(*[16]byte)(s)
			*(*[16]byte)(unsafe.Add(d, 16)) = *(*[16]byte)(unsafe.Add(s, 16))
			*(*[16]byte)(unsafe.Add(d, n-32)) = *(*[16]byte)(unsafe.Add(s, n-32))
			*(*[16]byte)(unsafe.Add(d, n-16)) = *(*[16]byte)(unsafe.Add(s, n-16))
		case n >= 16:
			*(*[16]byte)(d) = *(*[16]byte)(s)
			*(*[16]byte)(unsafe.Add(d, n-16)) = *(*[16]byte)(unsafe.Add(s, n-16))
		case n >= 8:
			a, b := *(*[8]byte)(s), *(*[8]byte)(unsafe.Add(s, n-8))
			*(*[8]byte)(d) = a
			*(*[8]byte)(unsafe.Add(d, n-8)) = b
		default: // 4 to 7 bytes
			a, b := *(*[4]byte)(s), *(*[4]byte)(unsafe.Add(s, n-4))
			*(*[4]byte)(d) = a
			*(*[4]byte)(unsafe.Add(d, n-4)) = b
		}
	}
	w.notePut(ts)
	return n, used
}

// NewRowCodedOK reports whether AppendNewRowCoded may take rows as the writer stands (unencoded or
// FAST_DIFF blocks, no ROWCOL bloom, not closed or failed): a caller skips the call when it may not. Small
// enough to be inlined.
func (w *Writer) NewRowCodedOK() bool { return w.sameRowFast || w.sameRowFD }

// RowCodedFits reports whether AppendRowCoded can take a row of rowLen bytes in a family of famLen
// bytes: its run stores the key's head (row length, row, family length, family) of up to 64 bytes as
// one window of 16 bytes (heads of up to 15 bytes, codedCellsShort), 32 (up to 32 bytes, codedCells)
// or 64 (longer heads, codedCellsLong). A caller may skip preparing a row for it when it cannot
// (AppendRow takes such rows).
func RowCodedFits(rowLen, famLen int) bool {
	return 2+rowLen+1+famLen <= maxCodedHead
}

// RowCodedOK reports whether AppendRowCoded may take a row of rowLen bytes in a family of famLen
// bytes as the writer stands (RowCodedFits, unencoded blocks, no ROWCOL bloom, not closed or failed):
// when it may not, a caller skips preparing the row for it (AppendRowCoded would take none of its
// cells).
func (w *Writer) RowCodedOK(rowLen, famLen int) bool {
	return w.sameRowFast && RowCodedFits(rowLen, famLen) || w.rowCodedFastDiffOK(rowLen)
}

// codedQuals is AppendRowCoded's table of the qualifiers it was last given, by code>>1 (a code below
// 0x80 has 64 values): for each, its first 8 bytes as a little-endian word (loadShort) and its length,
// noCodedQual for one longer than 16 bytes or past the last (the run takes no such qualifier), and in
// hi its bytes 8 to 16, zero padded (codedCellsShort's; codedCells and codedCellsLong take qualifiers
// of up to 8 bytes). ok is false when they are not in order.
type codedQuals struct {
	first *[]byte // &quals[0] of the qualifiers the table is of
	n     int
	ok    bool
	tab   [64]codedQual
	hi    [64]uint64
	short shortQuals // codedCellsShort's table for a run's key head and biggest cell
	mid   shortQuals // codedCells' and codedCellsLong's (qualifiers of up to 8 bytes, values of up to 32)
}

// noCodedQual is codedQual.len for a code the run takes no cell of.
const noCodedQual = maxShortQual + 1

type codedQual struct {
	word uint64
	len  int
}

// table returns the table of quals (not empty), made when they are not the last ones; nil when they
// are not in order.
func (c *codedQuals) table(quals [][]byte) *[64]codedQual {
	if c.first != &quals[0] || c.n != len(quals) {
		c.first, c.n, c.ok = &quals[0], len(quals), true
		c.short.reset()
		c.mid.reset()
		for i := range c.tab {
			e, hi := codedQual{len: noCodedQual}, uint64(0)
			if i < len(quals) && len(quals[i]) <= maxShortQual {
				q := quals[i]
				e = codedQual{word: loadShort(q[:min(len(q), 8)]), len: len(q)}
				if len(q) > 8 {
					hi = loadShort(q[8:])
				}
			}
			c.hi[i] = hi
			if i > 0 && i < len(quals) && bytes.Compare(quals[i-1], quals[i]) >= 0 {
				c.ok = false
			}
			c.tab[i] = e
		}
	}
	if !c.ok {
		return nil
	}
	return &c.tab
}

// codedCells is cells for coded cells (AppendRowCoded), their qualifiers from tab (shortQuals for
// qualifiers of up to 8 bytes and values of up to 32: each entry's sizes and offsets for the run's key
// head and biggest cell), whose codes are in order (a greater code is a greater qualifier): it takes
// them on the same terms, while end < r.limit (a block with room and not full), and stops at the first
// that is not a coded cell either. It returns how many it took, the bytes of coded they took, where
// they end in blk and the last one's code and start. It calls nothing.
//
// It reads coded and writes blk through unsafe pointers (with checked slices the compiler kept half of
// the loop's values on the stack and loaded and stored them in every cell). What keeps each access in
// bounds: a cell's 2 bytes and value are within coded (i+1 < len(coded), 2+vl <= len(coded)-i), and
// every move reads within the value; a cell starts before limit, which leaves the 128-byte window
// (runRoom) before len(blk) (checked on entry), and every store is within the window: the head at 8 to
// 40, the qualifier's word at qo (at most 40), the timestamp at e.ts (at most 48), the value (at most
// 32 bytes: maxValue) and 4 zero bytes 9 bytes after it.
func (r *rowRun) codedCells(blk []byte, end int, tab *[64]shortQual, coded []byte) (n, used, newEnd, lastCode, lastStart int) {
	h, ts := r.hd, r.tt // copies: a store from a local array is two moves, not a call to memmove
	limit := r.limit
	qo := r.qo & 63 // (at most 40)
	if limit > len(blk)-runRoom+1 || end < 0 {
		panic("hfilewriter: codedCells' window past the block's room")
	}
	bp, cp := unsafe.Pointer(unsafe.SliceData(blk)), unsafe.Pointer(unsafe.SliceData(coded))
	pc := 0 // the previous code: whatever the first cell's is, it passes
	i := 0  // coded[i:] is the cells left
	lastStart = end
	for ; i+1 < len(coded) && end < limit; n++ {
		code, vl := int(*(*byte)(unsafe.Add(cp, i))), int(*(*byte)(unsafe.Add(cp, i+1)))
		if code&0x81 != 1 || code <= pc || 2+vl > len(coded)-i {
			break // not a coded cell, not after the previous one, or too long
		}
		e := &tab[code>>1&63]
		if vl > e.maxValue { // longer than 32 bytes, the biggest cell, or no qualifier
			break
		}
		pc = code
		o := unsafe.Add(bp, end)
		binary.BigEndian.PutUint64((*[8]byte)(o)[:], e.lens|uint64(vl))
		*(*[32]byte)(unsafe.Add(o, 8)) = h
		binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(o, qo))[:], e.word)
		t := unsafe.Add(o, e.ts&63) // the timestamp
		*(*[16]byte)(t) = ts
		// The value, as two overlapping moves, then a tags length and a sequence id of 0. (No pointer to
		// the value's start is made before its length is known: an empty last value starts past
		// coded's end, where no pointer may point; a value under 4 bytes is read back from its last byte.)
		switch {
		case vl > 16:
			*(*[16]byte)(unsafe.Add(t, 9)) = *(*[16]byte)(unsafe.Add(cp, i+2))
			*(*[16]byte)(unsafe.Add(t, vl-7)) = *(*[16]byte)(unsafe.Add(cp, i+2+vl-16))
		case vl >= 8:
			*(*[8]byte)(unsafe.Add(t, 9)) = *(*[8]byte)(unsafe.Add(cp, i+2))
			*(*[8]byte)(unsafe.Add(t, vl+1)) = *(*[8]byte)(unsafe.Add(cp, i+2+vl-8))
		case vl >= 4:
			*(*[4]byte)(unsafe.Add(t, 9)) = *(*[4]byte)(unsafe.Add(cp, i+2))
			*(*[4]byte)(unsafe.Add(t, 5+vl)) = *(*[4]byte)(unsafe.Add(cp, i+2+vl-4))
		default:
			binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(t, 9))[:], loadShortTo(unsafe.Add(cp, i+1+vl), vl))
		}
		binary.LittleEndian.PutUint32((*[4]byte)(unsafe.Add(t, 9+vl))[:], 0) // (extra <= 3 bytes)
		lastStart = end
		end += e.size + vl
		i += 2 + vl
	}
	return n, i, end, pc, lastStart
}

// loadShortTo is loadShort of the n bytes (0 to 3) that end with the byte at last: a run's value read
// back from its last byte (or, empty, its length's), so that no pointer is made to where an empty value
// at the end of the cells would start, past their end.
func loadShortTo(last unsafe.Pointer, n int) uint64 {
	if n == 0 {
		return 0
	}
	b := unsafe.Add(last, 1-n)
	return uint64(*(*byte)(b)) | uint64(*(*byte)(unsafe.Add(b, n>>1)))<<(8*(n>>1)&63) | uint64(*(*byte)(last))<<(8*(n-1)&63)
}
