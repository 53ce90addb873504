package hfilewriter

import (
	"encoding/binary"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

// appendRowCodedFastDiff is AppendRowCoded for a FAST_DIFF writer (w.sameRowFD, rowCodedFastDiffOK): a
// put that starts a new row and the cells after it, from coded cells (a one-byte code 2·i+1 for
// qualifier quals[i], a one-byte value length below 0x80 and the value: an input record's usual cells),
// in one pass without first decoding them into SameRowCells: the first cell as appendNewRowFastDiff
// takes it (startNewRowFastDiff), the others in the run (fdRun.codedRun). It returns how many cells it
// appended and the bytes of coded they took: 0 and 0, with nothing written, when it takes none. The
// bytes, Stats and EstimatedSize are AppendRow's (TestWriterAppendRowCodedMatchesAppend, TestWriterAppendRowCodedFastDiffMatchesAppend).
//
// It is also AppendNewRowCoded for a FAST_DIFF writer, with maxSize (0: none): it takes none of the
// cells when the file has reached maxSize (EstimatedSize() >= maxSize). It takes a row only when it
// sorts after the last one (startNewRowFastDiff), so its first cell is no duplicate: the engine's
// per-row call in FAST_DIFF files (fileWriter.appendNewRowCoded) instead of the roll check's, the
// duplicate check's and AppendRowCoded's (TestWriterAppendNewRowCodedMatchesAppendRowCoded).
func (w *Writer) appendRowCodedFastDiff(row, family []byte, ts int64, typ Type, quals [][]byte, coded []byte, maxSize int64) (n, used int) {
	if len(coded) < 2 || maxSize > 0 && !w.estimateBelow(maxSize) {
		return 0, 0
	}
	x := uint16(coded[0]) | uint16(coded[1])<<8 // the code, then the value's length
	i, end := int(x>>1&0x3f), 2+int(x>>8)
	if x&0x8081 != 1 || i >= len(quals) || end > len(coded) {
		return 0, 0
	}
	q := quals[i]
	var r fdRun
	blkEnd, unencoded, ok := w.startNewRowFastDiff(&r, row, family, ts, typ, q, coded[2:end])
	if !ok {
		return 0, 0
	}
	t := w.fdq
	if t == nil {
		t = new(fdQuals)
		w.fdq = t
	}
	// A cell bigger than the file's biggest so far ends the run (AppendSameRowCells then records it):
	// that is one whose qualifier and value lengths sum to more than big.
	// (When the first cell is bigger still, it is recorded below, and the run's cells are smaller.)
	if big := int(min(w.lenBiggest-int64(12+r.keyFixed), 1<<20)); !t.ready(quals, r.keyFixed, big) {
		t.prepare(quals, r.keyFixed, r.head, r.cellFixed, big)
	}
	// The cells after the first (fdRun.codedRun while the entries are for the previous
	// cells' codes; fdQuals.pair makes the next one so).
	blk, last := w.blk[:cap(w.blk)], int(x&0xff)
	n, used = 1, end
	for {
		m, p, e, u, c := r.codedRun(blk, blkEnd, unencoded, &t.tab, coded[used:], last)
		n, used, blkEnd, unencoded, last = n+m, used+p, e, u, c
		if rest := coded[used:]; len(rest) < 2 || t.tab[rest[0]>>1&63].gate>>8 == last || !t.pair(int(rest[0]), last) {
			break
		}
	}
	w.endNewRowFastDiff(row, ts)
	if cellSize := int64(12 + r.keyFixed + len(q) + end - 2); w.lenBiggest < cellSize {
		w.lenBiggest = cellSize
		w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, w.family, q, w.lastTs, w.lastType)
	}
	// A coded cell is its code, its value's length and its value.
	w.endFastDiffRun(&r, n, blkEnd, unencoded, used-2*n, t.tab[last>>1&63].q)
	return n, used
}

// fdQuals is appendRowCodedFastDiff's table of the qualifiers it was last given, by code>>1 (a code
// below 0x80 has 64 values; an empty qualifier past the last, which the run takes no cell of), with
// what codedRun would otherwise compute per cell: from a run's key length without the qualifier
// (keyFixed), key head (head: 2 + row + 1 + family), cell size without qualifier and value (cellFixed)
// and biggest cell (big), kept while they stay the same (fixed-width row keys: every run of a file once
// its biggest cell is known), and for each qualifier the bytes of its cell that depend on the previous
// cell's qualifier, for the last one it followed (fdQual.pc).
type fdQuals struct {
	first               *[]byte // &quals[0] of the qualifiers the table is of
	n                   int
	keyFixed, head, big int // what the entries are for
	tab                 [64]fdQual
}

// fdQual is a qualifier's entry in fdQuals: the qualifier, the longest value the run takes with it
// (maxValue: at most 64; -1, none, for a qualifier of 0 or more than 32 bytes, or none at all) and the
// cell's unencoded size without the value (size); then, for a cell after one with code pc (0: none yet),
// the cell's first bytes as a little-endian word (lead: the flag with its same-type, same-key-length and
// timestamp bits, and the key length's cint when it is not the previous one's; nLead bytes) and the
// bytes after the value's length (the common prefix's cint and the qualifier after it: rest, then hi;
// nRest bytes). gate is pc<<8 | (127 - maxValue): a cell with a value of lv bytes after one with code c
// takes the entry as it is when gate ^ c<<8 + lv <= 127 (c is pc and lv at most maxValue).
type fdQual struct {
	gate         int
	size         int
	lead         uint64
	nLead, nRest int
	rest         [16]byte
	hi           [24]byte
	q            []byte
	maxValue     int
}

// ready reports whether t is the table of quals for a run of keyFixed and big (prepare).
func (t *fdQuals) ready(quals [][]byte, keyFixed, big int) bool {
	return t.first == &quals[0] && t.n == len(quals) && t.keyFixed == keyFixed && t.big == big
}

// prepare makes t the table of quals for a run of keyFixed, head, cellFixed and big: the entries when
// the qualifiers changed, their sizes when the run's changed (and then no pair part).
func (t *fdQuals) prepare(quals [][]byte, keyFixed, head, cellFixed, big int) {
	// (head and cellFixed follow keyFixed: the table is the writer's, whose options do not change.)
	if t.ready(quals, keyFixed, big) {
		return
	}
	if t.first != &quals[0] || t.n != len(quals) {
		t.first, t.n = &quals[0], len(quals)
		for i := range t.tab {
			t.tab[i] = fdQual{}
			if i < len(quals) {
				t.tab[i].q = quals[i]
			}
		}
	}
	t.keyFixed, t.head, t.big = keyFixed, head, big
	for i := range t.tab {
		e := &t.tab[i]
		lq := len(e.q)
		e.maxValue, e.size = -1, cellFixed+lq
		if uint(lq-1) < 32 {
			e.maxValue = max(min(64, big-lq), -1) // so that gate's low byte is at most 128
		}
		e.gate = 127 - e.maxValue // pc 0: no code
	}
}

// pair sets the entry of code for a cell after one with code pc: false, and the entry unchanged, when
// its qualifier does not sort after pc's (an order error, which the usual path reports).
func (t *fdQuals) pair(code, pc int) bool {
	e, p := &t.tab[code>>1&63], t.tab[pc>>1&63].q
	q := e.q
	k := kv.CommonPrefix(q, p)
	if k == len(q) || k < len(p) && q[k] < p[k] {
		return false
	}
	flag := fastDiffSameType | 7 // the type and the timestamp's first 7 bytes are the previous cell's
	var b [8]byte
	lead := b[:1]
	if len(q) == len(p) { // the key's length: its row and family are the previous cell's
		flag |= fastDiffSameKeyLength
	} else {
		lead = encodeCInt(lead, t.keyFixed+len(q))
	}
	b[0] = byte(flag)
	e.lead, e.nLead = binary.LittleEndian.Uint64(b[:]), len(lead)
	var r [40]byte
	rest := encodeCInt(r[:0], t.head+k)
	rest = append(rest, q[k:]...)
	e.rest, e.hi, e.nRest = [16]byte(r[:16]), [24]byte(r[16:]), len(rest)
	e.gate = pc<<8 | (127 - e.maxValue)
	return true
}

// rowCodedFastDiffOK is RowCodedOK for a FAST_DIFF writer: whether appendRowCodedFastDiff may take a row
// of rowLen bytes as the writer stands.
func (w *Writer) rowCodedFastDiffOK(rowLen int) bool {
	return w.sameRowFD && w.blkHasFirst && uint(rowLen-1) < 32
}

// codedRun is fdRun.cells for coded cells after one with code pc, with the qualifiers of tab (fdQuals,
// prepared for the run), while their entries are for the previous cells' codes: it takes them on the
// same terms and stops at the first that is not a coded cell either, or whose entry is not for the
// previous cell's code (appendRowCodedFastDiff then has fdQuals.pair make it so and goes on). It
// returns how many it took and the bytes of coded they took, where they end in blk and the block's
// unencoded size after them, and the last one's code (pc when it took none).
//
// Each cell's bytes but its value's length, the timestamp's last byte and the value come from its
// qualifier's entry (fdQual). It is a leaf loop that reads and writes through unsafe pointers, so that
// its values stay in registers (with checked slices Go's register allocator spilled and reloaded about
// a dozen of them in every cell, pipeline.plainShort's reason too). Every access is in bounds:
//   - a cell is written only at end <= len(blk)-fdRoom (checked in each step), and each store of it
//     lies within its first 8 + 3 + 1 + 16 + 24 (lead, its cints, rest and hi), then, with o masked to
//     63 after the rest, 1 + 64 (the timestamp byte and the value: gate bounds lv by maxValue, at most
//     64, and each of its stores lies within lv bytes but the first case's 8) and, with o masked to 127,
//     2 (the suffix) bytes: at most 130 < fdRoom;
//   - the previous value, which the same-value check compares with byte by byte, lies in the block
//     before end (r.valOff and r.valLen, which the run's first cell set);
//   - a cell's code and length are read only at p+1 < len(coded), and its value, which ends at
//     next <= len(coded) (checked), only within [p+2, next), but for a value of up to 8 bytes, read as
//     the word at p+2 when p+10 <= len(coded) (the bytes past the value are stored past it, and the
//     next field or cell overwrites them or they are past the block's end), else as the word that ends
//     at next when next >= 8 (shifted down), else byte by byte (TestWriterAppendRowCodedFastDiffStaysInCoded).
func (r *fdRun) codedRun(blk []byte, end, unencoded int, tab *[64]fdQual, coded []byte, pc int) (n, used, newEnd, newUnencoded, lastCode int) {
	bp, cp := unsafe.Pointer(unsafe.SliceData(blk)), unsafe.Pointer(unsafe.SliceData(coded))
	r.last = len(blk) - fdRoom
	nc := len(coded)
	p := 0 // where the next coded cell starts
	for ; p < nc-1 && unencoded < r.ulimit && end <= r.last; n++ {
		x := *(*uint16)(unsafe.Add(cp, p)) // the code, then the value's length
		code, lv := int(x&0xff), int(x>>8)
		next := p + 2 + lv
		if code&0x81 != 1 || next > nc {
			break // not a coded cell (one with a value of 0x80 bytes or more stops below)
		}
		e := &tab[code>>1&63]
		if e.gate^(pc<<8)+lv > 127 { // the entry is not for pc, or the value is too long (fdQual)
			break
		}
		b := unsafe.Add(bp, end)
		lead := e.lead
		if lv == r.valLen {
			lead |= fastDiffSameValueLength | fastDiffSameValue
			v, pv := unsafe.Add(cp, p+1), unsafe.Add(bp, r.valOff) // v: the value length's byte (see below)
			for i := range lv {
				if *(*byte)(unsafe.Add(v, i+1)) != *(*byte)(unsafe.Add(pv, i)) {
					lead &^= fastDiffSameValue
					break
				}
			}
		}
		*(*uint64)(b) = lead
		o := e.nLead & 3
		if lead&fastDiffSameValueLength == 0 {
			*(*byte)(unsafe.Add(b, o)) = byte(lv)
			o++
		}
		*(*[16]byte)(unsafe.Add(b, o)) = e.rest
		if e.nRest > 16 {
			*(*[24]byte)(unsafe.Add(b, o+16)) = e.hi
		}
		o = (o + e.nRest) & 63
		*(*byte)(unsafe.Add(b, o)) = r.tsByte
		o++
		if lead&fastDiffSameValue == 0 { // the value: 0 to 64 bytes
			r.valOff, r.valLen = end+o, lv
			// v: the value length's byte, in coded also before an empty last value (its start is
			// past coded's end, where no pointer may point).
			d, v := unsafe.Add(b, o), unsafe.Add(cp, p+1)
			switch {
			case lv <= 8:
				var w uint64
				switch {
				case p+10 <= nc:
					w = *(*uint64)(unsafe.Add(v, 1))
				case next >= 8:
					w = *(*uint64)(unsafe.Add(cp, next-8)) >> (64 - 8*lv)
				default: // (coded is under 8 bytes long)
					for i := range lv {
						w |= uint64(*(*byte)(unsafe.Add(v, i+1))) << (8 * i)
					}
				}
				*(*uint64)(d) = w
			case lv <= 16:
				*(*uint64)(d) = *(*uint64)(unsafe.Add(v, 1))
				*(*uint64)(unsafe.Add(d, lv-8)) = *(*uint64)(unsafe.Add(v, lv-7))
			case lv <= 32:
				*(*[16]byte)(d) = *(*[16]byte)(unsafe.Add(v, 1))
				*(*[16]byte)(unsafe.Add(d, lv-16)) = *(*[16]byte)(unsafe.Add(v, lv-15))
			default:
				*(*[32]byte)(d) = *(*[32]byte)(unsafe.Add(v, 1))
				*(*[32]byte)(unsafe.Add(d, lv-32)) = *(*[32]byte)(unsafe.Add(v, lv-31))
			}
			o += lv
		}
		o &= 127
		*(*uint16)(unsafe.Add(b, o)) = 0 // the suffix: a tags length of 0 (vint) and the sequence id 0
		end += o + r.suffix
		unencoded += e.size + lv
		pc = code
		p = next
	}
	return n, p, end, unencoded, pc
}
