package hfilewriter

import (
	"encoding/binary"

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
// Its loop keeps few values (the block as a window that shrinks from the front, the coded cells
// likewise, the previous code, the count, the last start, the table and the qualifier's offset): with
// more, the compiler keeps some on the stack and loads and stores them in every cell.
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
	qo := r.qo & 31 // (at most 23) so that the compiler sees the stores below are within the window
	pc := 0         // the previous code: whatever the first cell's is, it passes
	// The block from end on, to limit + the window: a cell starts where it has the window's room.
	win := blk[end : limit+runRoomShort-1]
	rest := coded
	last := win
	for ; len(rest) > 1 && len(win) >= runRoomShort; n++ {
		code, vl := int(rest[0]), int(rest[1])
		if code&0x81 != 1 || code <= pc || 2+vl > len(rest) {
			break // not a coded cell, not after the previous one, or past the end
		}
		e := &tab[code>>1&63]
		if vl > e.maxValue { // too long (at most 127: a coded cell's), the biggest cell, or no qualifier
			break
		}
		pc = code
		v := rest[2 : 2+vl]
		o := (*[runRoomShort]byte)(win)
		binary.BigEndian.PutUint64(o[:], e.lens|uint64(vl))
		*(*[16]byte)(o[8:24]) = h
		binary.LittleEndian.PutUint64(o[qo:], e.word)
		binary.LittleEndian.PutUint64(o[qo+8:], e.hi)
		t := (*[144]byte)(o[e.ts&63:]) // the timestamp: at most 39 (8 + 15 + 16)
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
		last = win
		win = win[(e.size+vl)&255:]
		rest = rest[2+vl:]
	}
	newEnd = limit + runRoomShort - 1 - len(win)
	return n, len(coded) - len(rest), newEnd, pc, limit + runRoomShort - 1 - len(last)
}
