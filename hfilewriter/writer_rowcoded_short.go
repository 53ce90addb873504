package hfilewriter

import "encoding/binary"

// The coded run for short key heads (row length, row, family length, family: 4 to 15 bytes, rows of up
// to 12 bytes in a one-byte family, such as order ids), with longer qualifiers and values than
// codedCells takes: qualifiers of up to 16 bytes (codedQuals' word and hi) and values of up to 127 (a
// coded cell's one-byte value length). A cell is then at most 8 + 15 + 16 + 9 + 127 + 3 = 178 bytes, in
// a window of runRoomShort.

// maxShortHead is the longest key head codedCellsShort takes; longer ones take codedCells (16 to 32
// bytes) or codedCellsLong (33 to 64).
const maxShortHead = 15

// maxShortQual and maxShortValue are the longest qualifier and value codedCellsShort takes.
const (
	maxShortQual  = 16
	maxShortValue = 127
)

// runRoomShort is codedCellsShort's window from a cell's start: its stores reach at most 8 + 15 + 16 +
// 9 + 127 + 4 bytes past it, at offsets the compiler can see are within the window.
const runRoomShort = 256

// codedCellsShort is codedCells for a key head of up to 15 bytes (row and family's): the head is stored
// as one 16-byte array (made here), the qualifier as two words (codedQuals' word and hi, up to 16
// bytes), the value as up to two overlapping moves of 8, 16, 32 or 64 bytes (up to 127 bytes). It
// takes cells while end < limit (a block with room and not full; limit leaves runRoomShort bytes) and
// stops at the first that is not a coded cell or that it does not take, as codedCells does.
func (r *rowRun) codedCellsShort(row, family []byte, blk []byte, end, limit int, tab *[64]codedQual, hi *[64]uint64, coded []byte, big int) (n, used, newEnd, lastCode, lastSize int) {
	var h [16]byte
	h[0], h[1] = byte(len(row)>>8), byte(len(row))
	copyShort(h[2:], row)
	for i, c := range family { // a byte or two
		h[3+len(row)+i] = c
	}
	h[2+len(row)&15] = byte(len(family))
	ts := r.tt // a copy: a store from a local array is two moves, not a call to memmove
	fixed, kbase := r.fixed, r.kbase
	qo := r.qo & 31 // (at most 23) so that the compiler sees the stores below are within the window
	pc := 0         // the previous code: whatever the first cell's is, it passes
	rest := coded
	for ; len(rest) > 1 && end < limit; n++ {
		code, vl := int(rest[0]), int(rest[1])
		if code&0x81 != 1 || code <= pc || vl > maxShortValue || 2+vl > len(rest) {
			break // not a coded cell, not after the previous one, or too long
		}
		i := code >> 1 & 63
		ql := tab[i].len
		if uint(ql) > maxShortQual || ql+vl > big { // longer than 16 bytes, no qualifier, or the biggest cell
			break
		}
		pc = code
		v := rest[2 : 2+vl]
		o := (*[runRoomShort]byte)(blk[end : end+runRoomShort])
		binary.BigEndian.PutUint64(o[:], uint64(kbase+ql)<<32|uint64(vl))
		*(*[16]byte)(o[8:24]) = h
		binary.LittleEndian.PutUint64(o[qo:], tab[i].word)
		binary.LittleEndian.PutUint64(o[qo+8:], hi[i])
		t := (*[144]byte)(o[qo+ql&31:]) // the timestamp: at most 62 (23 + 16)
		*(*[16]byte)(t[:16]) = ts
		switch {
		case vl <= 8:
			binary.LittleEndian.PutUint64(t[9:], loadShort(v))
		case vl <= 16:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[vl-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[1+vl:], b)
		case vl <= 32:
			a, b := [16]byte(v), [16]byte(v[vl-16:])
			*(*[16]byte)(t[9:25]) = a
			*(*[16]byte)(t[vl-7 : vl+9]) = b
		case vl <= 64:
			a, b := [32]byte(v), [32]byte(v[vl-32:])
			*(*[32]byte)(t[9:41]) = a
			*(*[32]byte)(t[vl-23 : vl+9]) = b
		default:
			a, b := [64]byte(v), [64]byte(v[vl-64:])
			*(*[64]byte)(t[9:73]) = a
			*(*[64]byte)(t[vl-55 : vl+9]) = b
		}
		binary.LittleEndian.PutUint32(t[9+vl:], 0) // tags length and sequence id (extra <= 3 bytes)
		lastSize = fixed + ql + vl
		end += lastSize
		rest = rest[2+vl:]
	}
	return n, len(coded) - len(rest), end, pc, lastSize
}
