package hfilewriter

import (
	"encoding/binary"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

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

// shortQuals is codedCellsShort's table of the qualifiers (codedQuals') for a run's key length without
// the qualifier (kbase), cell size without qualifier and value (fixed) and biggest cell (big: the most
// a cell's qualifier and value may sum to), kept while they stay the same (fixed-width row keys: every
// run of a file once its biggest cell is known). Each entry holds what the loop would otherwise compute
// per cell from those and the qualifier's length, so that it keeps fewer values in registers.
type shortQuals struct {
	kbase, fixed, big int
	ok                bool // the entries are for kbase, fixed and big
	tab               [64]shortQual
}

// shortQual is a qualifier's entry in shortQuals: its bytes as two little-endian words (up to 16
// bytes, zero padded), the cell's first word without the value's length ((kbase + qualifier's
// length) << 32), the cell's size without the value, where its timestamp starts (8 + head + the
// qualifier's length) and the longest value the run takes with it (-1: none, the qualifier longer than
// 16 bytes or no qualifier).
type shortQual struct {
	word, hi uint64
	lens     uint64
	size     int
	ts       int
	maxValue int
}

// reset marks the table out of date and takes no cell of any code: the qualifiers changed.
func (s *shortQuals) reset() {
	s.ok = false
	for i := range s.tab {
		s.tab[i].maxValue = -1
	}
}

// table returns the table for c's qualifiers (in order), made when kbase, fixed or big changed.
func (s *shortQuals) table(c *codedQuals, kbase, fixed, big int) *[64]shortQual {
	if !s.fresh(kbase, fixed, big) {
		s.build(c, kbase, fixed, big, maxShortQual, maxShortValue)
	}
	return &s.tab
}

// fresh reports whether s's table is for kbase, fixed and big (and the qualifiers: reset marks it
// out of date when they change). Small enough to be inlined.
func (s *shortQuals) fresh(kbase, fixed, big int) bool {
	return s.ok && s.kbase == kbase && s.fixed == fixed && s.big == big
}

// build makes s's table for kbase, fixed and big, for a run that takes qualifiers of up to maxQual
// bytes and values of up to maxValue (the same for every call on s).
func (s *shortQuals) build(c *codedQuals, kbase, fixed, big, maxQual, maxValue int) {
	s.kbase, s.fixed, s.big, s.ok = kbase, fixed, big, true
	qo := kbase - (kv.KeyInfrastructureSize - 3) + 8 // 8 + the key head
	for i := range min(c.n, len(s.tab)) {
		ql := c.tab[i].len
		e := shortQual{maxValue: -1}
		if ql <= maxQual {
			e = shortQual{word: c.tab[i].word, hi: c.hi[i], lens: uint64(kbase+ql) << 32, size: fixed + ql,
				ts: qo + ql, maxValue: min(maxValue, big-ql)}
		}
		s.tab[i] = e
	}
}

// codedCellsShort is codedCells for a key head of up to 15 bytes (row and family's): the head is stored
// as one 16-byte array (made here), the qualifier as two words (up to 16 bytes), the value as up to two
// overlapping moves of 8, 16, 32 or 64 bytes (up to 127 bytes), each cell's sizes and offsets from its
// qualifier's entry in tab (shortQuals). It takes cells while end < limit (a block with room and not
// full; limit leaves runRoomShort bytes before cap(blk)) and stops at the first that is not a coded
// cell or that it does not take, as codedCells does. It returns where the last cell it took starts
// rather than its size.
//
// It reads coded and writes blk through unsafe pointers, as codedCells does (with checked slices, and
// the block as a window that shrank from the front, the compiler still kept a third of the loop's
// values on the stack). What keeps each access in bounds: a cell's 2 bytes and value are within coded
// (i+1 < len(coded), 2+vl <= len(coded)-i), and every move reads within the value; a cell starts
// before limit, which leaves runRoomShort bytes before len(blk) (checked on entry), and every store is
// within that window: the head at 8 to 24, the qualifier's two words at qo (at most 23) to qo+16, the
// timestamp at e.ts (at most 39), the value (at most 127 bytes: maxValue) and 4 zero bytes 9 bytes
// after it: at most 179 bytes.
func (r *rowRun) codedCellsShort(row, family []byte, blk []byte, end, limit int, tab *[64]shortQual, coded []byte) (n, used, newEnd, lastCode, lastStart int) {
	if end >= limit { // a full block (or one past its size by a big cell), or no room
		return 0, 0, end, 0, end
	}
	var h [16]byte
	h[0], h[1] = byte(len(row)>>8), byte(len(row))
	if len(row) >= 4 {
		copyMid(h[2:], row) // up to 12 bytes
	} else {
		copyShort(h[2:], row)
	}
	for i, c := range family { // a byte or two
		h[3+len(row)+i] = c
	}
	h[2+len(row)&15] = byte(len(family))
	ts := r.tt      // a copy: a store from a local array is two moves, not a call to memmove
	qo := r.qo & 31 // (at most 23)
	pc := 0         // the previous code: whatever the first cell's is, it passes
	if limit > len(blk)-runRoomShort+1 || end < 0 {
		panic("hfilewriter: codedCellsShort's window past the block's room")
	}
	bp, cp := unsafe.Pointer(unsafe.SliceData(blk)), unsafe.Pointer(unsafe.SliceData(coded))
	i := 0 // coded[i:] is the cells left
	lastStart = end
	for ; i+1 < len(coded) && end < limit; n++ {
		code, vl := int(*(*byte)(unsafe.Add(cp, i))), int(*(*byte)(unsafe.Add(cp, i+1)))
		if code&0x81 != 1 || code <= pc || 2+vl > len(coded)-i {
			break // not a coded cell, not after the previous one, or past the end
		}
		e := &tab[code>>1&63]
		if vl > e.maxValue { // too long (at most 127: a coded cell's), the biggest cell, or no qualifier
			break
		}
		pc = code
		o := unsafe.Add(bp, end)
		binary.BigEndian.PutUint64((*[8]byte)(o)[:], e.lens|uint64(vl))
		*(*[16]byte)(unsafe.Add(o, 8)) = h
		binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(o, qo))[:], e.word)
		binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(o, qo+8))[:], e.hi)
		t := unsafe.Add(o, e.ts&63) // the timestamp: at most 39 (8 + 15 + 16)
		*(*[16]byte)(t) = ts
		// The value, as two overlapping moves, then a tags length and a sequence id of 0. (No pointer to
		// the value's start is made before its length is known: an empty last value starts past
		// coded's end, where no pointer may point; a value under 4 bytes is read back from its last byte.)
		switch {
		case vl > 64:
			*(*[64]byte)(unsafe.Add(t, 9)) = *(*[64]byte)(unsafe.Add(cp, i+2))
			*(*[64]byte)(unsafe.Add(t, vl-55)) = *(*[64]byte)(unsafe.Add(cp, i+2+vl-64))
		case vl > 32:
			*(*[32]byte)(unsafe.Add(t, 9)) = *(*[32]byte)(unsafe.Add(cp, i+2))
			*(*[32]byte)(unsafe.Add(t, vl-23)) = *(*[32]byte)(unsafe.Add(cp, i+2+vl-32))
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
		end += (e.size + vl) & 255
		i += 2 + vl
	}
	return n, i, end, pc, lastStart
}
