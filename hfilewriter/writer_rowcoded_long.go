package hfilewriter

import (
	"encoding/binary"
	"unsafe"
)

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

// set sets l to the key head of row and family, 33 to 64 bytes: the row as up to two overlapping
// moves through pointers (2+len(row)+1+len(family) <= 64 checked, so every move is within l and row).
func (l *longHead) set(row, family []byte) {
	n := len(row)
	if 3+n+len(family) > len(l) {
		panic("hfilewriter: longHead.set's head longer than 64 bytes")
	}
	l[0], l[1] = byte(n>>8), byte(n)
	d, s := unsafe.Pointer(&l[2]), unsafe.Pointer(unsafe.SliceData(row))
	switch {
	case n >= 32: // 32 to 61 bytes: 16-byte moves (a wider array goes through a copy on the stack)
		*(*[16]byte)(d) = *(*[16]byte)(s)
		*(*[16]byte)(unsafe.Add(d, 16)) = *(*[16]byte)(unsafe.Add(s, 16))
		*(*[16]byte)(unsafe.Add(d, n-32)) = *(*[16]byte)(unsafe.Add(s, n-32))
		*(*[16]byte)(unsafe.Add(d, n-16)) = *(*[16]byte)(unsafe.Add(s, n-16))
	case n >= 16:
		*(*[16]byte)(d) = *(*[16]byte)(s)
		*(*[16]byte)(unsafe.Add(d, n-16)) = *(*[16]byte)(unsafe.Add(s, n-16))
	default:
		copyShort(l[2:], row)
	}
	l[2+n] = byte(len(family))
	if len(family) == 1 { // the usual one-byte family
		l[3+n] = family[0]
		return
	}
	for i, c := range family {
		l[3+n+i] = c
	}
}

// codedCellsLong is codedCells for a key head of 33 to 64 bytes (row and family's): the head is stored
// as one 64-byte array (longHead, made here rather than by the caller, whose frame customer-order's
// shorter heads share), and the qualifier and what follows it start up to 32 bytes later in the cell's
// window. It is a copy of codedCells' loop rather than the same loop: the longer store and the wider
// offsets cost customer-order's heads of up to 32 bytes about 1% of their instructions there. Its
// accesses are in bounds as codedCells' are, with the head at 8 to 72, the qualifier's word at qo (at
// most 72) and the timestamp at e.ts (at most 80): the value's 4 zero bytes end at most 125 bytes into
// the window.
func (r *rowRun) codedCellsLong(row, family []byte, blk []byte, end int, tab *[64]shortQual, coded []byte) (n, used, newEnd, lastCode, lastStart int) {
	var h longHead
	h.set(row, family)
	ts := r.tt // a copy: a store from a local array is moves, not a call to memmove
	limit := r.limit
	qo := min(r.qo&127, 8+maxCodedHead) // (at most 72)
	if limit > len(blk)-runRoom+1 || end < 0 {
		panic("hfilewriter: codedCellsLong's window past the block's room")
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
		*(*longHead)(unsafe.Add(o, 8)) = h
		binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(o, qo))[:], e.word)
		t := unsafe.Add(o, e.ts&127) // the timestamp
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
