package hfilewriter

import "encoding/binary"

// maxCodedHead is the longest key head (row length, row, family length, family) AppendRowCoded takes:
// with the run's longest qualifier (8 bytes) and value (32), a cell is 8 + 64 + 8 + 9 + 32 + 3 = 124
// bytes, within the run's 128-byte window (runRoom). That is rows of up to 61 bytes in a one-byte
// family (host-event-revts' are 36). A longer head would need a larger window, so fewer of a small
// block's cells would be taken, and more moves per cell than its value takes.
const maxCodedHead = 64

// longHead is a run's key head (row length, row, family length, family) of 33 to 64 bytes
// (codedCellsLong), zero padded: it is stored whole into each cell, the bytes past the head then
// overwritten by the qualifier and what follows.
type longHead [maxCodedHead]byte

// set sets l to the key head of row and family, 33 to 64 bytes.
func (l *longHead) set(row, family []byte) {
	l[0], l[1] = byte(len(row)>>8), byte(len(row))
	switch n := len(row); {
	case n >= 32: // 32 to 61 bytes: two overlapping 32-byte moves, through locals (not memmove)
		a, b := [32]byte(row), [32]byte(row[n-32:])
		*(*[32]byte)(l[2:34]) = a
		*(*[32]byte)(l[n-30 : n+2]) = b
	case n >= 16:
		*(*[16]byte)(l[2:18]) = [16]byte(row)
		*(*[16]byte)(l[n-14 : n+2]) = [16]byte(row[n-16:])
	default:
		copyShort(l[2:], row)
	}
	l[2+len(row)] = byte(len(family))
	for i, c := range family {
		l[3+len(row)+i] = c
	}
}

// codedCellsLong is codedCells for a key head of 33 to 64 bytes (row and family's): the head is stored
// as one 64-byte array (longHead, made here rather than by the caller, whose frame customer-order's
// shorter heads share), and the qualifier and what follows it start up to 32 bytes later in the cell's
// window. It is a copy of codedCells' loop rather than the same loop: the longer store and the wider
// offsets cost customer-order's heads of up to 32 bytes about 1% of their instructions there.
func (r *rowRun) codedCellsLong(row, family []byte, blk []byte, end int, tab *[64]codedQual, coded []byte, big int) (n, used, newEnd, lastCode, lastSize int) {
	var h longHead
	h.set(row, family)
	ts := r.tt // a copy: a store from a local array is moves, not a call to memmove
	fixed, kbase, limit := r.fixed, r.kbase, r.limit
	// (at most 72, which min tells the compiler: the stores below are then within the window without
	// checks)
	qo := min(r.qo&127, 8+maxCodedHead)
	pc := 0 // the previous code: whatever the first cell's is, it passes
	rest := coded
	for ; len(rest) > 1 && end < limit; n++ {
		code, vl := int(rest[0]), int(rest[1])
		if code&0x81 != 1 || code <= pc || vl > 32 || 2+vl > len(rest) {
			break // not a coded cell, not after the previous one, or too long
		}
		e := tab[code>>1&63]
		ql := e.len
		if uint(ql) > 8 || ql+vl > big { // longer than 8 bytes, no qualifier, or the biggest cell
			break
		}
		pc = code
		v := rest[2 : 2+vl]
		o := (*[runRoom]byte)(blk[end : end+runRoom])
		binary.BigEndian.PutUint64(o[:], uint64(kbase+ql)<<32|uint64(vl))
		*(*[maxCodedHead]byte)(o[8 : 8+maxCodedHead]) = h
		binary.LittleEndian.PutUint64(o[qo:], e.word)
		t := (*[48]byte)(o[qo+ql:]) // the timestamp: at most 80
		*(*[16]byte)(t[:16]) = ts
		switch {
		case vl <= 8:
			binary.LittleEndian.PutUint64(t[9:], loadShort(v))
			binary.LittleEndian.PutUint32(t[9+vl:], 0) // tags length and sequence id (extra <= 3 bytes)
		case vl <= 16:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[vl-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[1+vl:], b)
			binary.LittleEndian.PutUint32(t[9+vl:], 0)
		default:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[8:])
			c, d := binary.LittleEndian.Uint64(v[vl-16:]), binary.LittleEndian.Uint64(v[vl-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[17:], b)
			binary.LittleEndian.PutUint64(t[vl-7:], c)
			binary.LittleEndian.PutUint64(t[1+vl:], d)
			binary.LittleEndian.PutUint32(t[9+vl:], 0)
		}
		lastSize = fixed + ql + vl
		end += lastSize
		rest = rest[2+vl:]
	}
	return n, len(coded) - len(rest), end, pc, lastSize
}
