package hfilewriter

import (
	"encoding/binary"
	"math/bits"

	"github.com/hfload/hfload/internal/kv"
)

// appendRowCodedFastDiff is AppendRowCoded for a FAST_DIFF writer (w.sameRowFD, rowCodedFastDiffOK): a
// put that starts a new row and the cells after it, from coded cells (a one-byte code 2·i+1 for
// qualifier quals[i], a one-byte value length below 0x80 and the value: an input record's usual cells),
// in one pass without first decoding them into SameRowCells: the first cell as appendNewRowFastDiff
// takes it (startNewRowFastDiff), the others in the run (fdRun.codedCells). It returns how many cells it
// appended and the bytes of coded they took: 0 and 0, with nothing written, when it takes none. The
// bytes, Stats and EstimatedSize are AppendRow's (TestWriterAppendRowCodedMatchesAppend, TestWriterAppendRowCodedFastDiffMatchesAppend).
func (w *Writer) appendRowCodedFastDiff(row, family []byte, ts int64, typ Type, quals [][]byte, coded []byte) (n, used int) {
	if len(coded) < 2 {
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
	if w.fdq == nil {
		w.fdq = new(fdQuals)
	}
	tab := w.fdq.table(quals)
	// A cell bigger than the file's biggest so far ends the run (AppendSameRowCells then records it):
	// that is one whose qualifier and value lengths sum to more than r.big.
	// (When the first cell is bigger still, it is recorded below, and the run's cells are smaller.)
	r.big = int(min(w.lenBiggest-int64(12+r.keyFixed), 1<<20))
	m, more, blkEnd, unencoded := r.codedCells(w.blk[:cap(w.blk)], blkEnd, unencoded, tab, coded[end:], q)
	n, used = 1+m, end+more
	w.endNewRowFastDiff(row, ts)
	if cellSize := int64(12 + r.keyFixed + len(q) + end - 2); w.lenBiggest < cellSize {
		w.lenBiggest = cellSize
		w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, w.family, q, w.lastTs, w.lastType)
	}
	valueSum := end - 2 + r.valueSum
	last := q
	if m > 0 {
		last = tab[r.prevIdx&63].q
	}
	w.endFastDiffRun(&r, n, blkEnd, unencoded, valueSum, last)
	return n, used
}

// fdQuals is appendRowCodedFastDiff's table of the qualifiers it was last given, by code>>1 (a code
// below 0x80 has 64 values): for each, the qualifier and its first 8 bytes as a little-endian word
// (firstWord); an empty qualifier past the last, which the run takes no cell of.
type fdQuals struct {
	first *[]byte // &quals[0] of the qualifiers the table is of
	n     int
	tab   [64]fdQual
}

type fdQual struct {
	q    []byte
	word uint64
}

// table returns the table of quals (not empty), made when they are not the last ones.
func (t *fdQuals) table(quals [][]byte) *[64]fdQual {
	if t.first != &quals[0] || t.n != len(quals) {
		t.first, t.n = &quals[0], len(quals)
		for i := range t.tab {
			t.tab[i] = fdQual{}
			if i < len(quals) {
				t.tab[i] = fdQual{q: quals[i], word: firstWord(quals[i])}
			}
		}
	}
	return &t.tab
}

// rowCodedFastDiffOK is RowCodedOK for a FAST_DIFF writer: whether appendRowCodedFastDiff may take a row
// of rowLen bytes as the writer stands.
func (w *Writer) rowCodedFastDiffOK(rowLen int) bool {
	return w.sameRowFD && w.blkHasFirst && uint(rowLen-1) < 32
}

// codedCells is fdRun.cells for coded cells (appendRowCodedFastDiff; quals: their qualifiers): it takes
// them on the same terms and stops at the first that is not a coded cell either. It returns how many it
// took and the bytes of coded they took, where they end in blk and the block's unencoded size after them,
// and keeps the last one's qualifier index in r.prevIdx.
func (r *fdRun) codedCells(blk []byte, end, unencoded int, tab *[64]fdQual, coded []byte, prevQ []byte) (n, used, newEnd, newUnencoded int) {
	lp := len(prevQ)
	pw := firstWord(prevQ)
	p := 0 // where the next coded cell starts
	for ; p+1 < len(coded) && unencoded < r.ulimit; n++ {
		x := uint16(coded[p]) | uint16(coded[p+1])<<8 // the code, then the value's length
		i, next := int(x>>1&0x3f), p+2+int(x>>8)
		if x&0x8081 != 1 || next > len(coded) {
			break // not a coded cell
		}
		e := &tab[i]
		q, v := e.q, coded[p+2:next:next]
		lq, lv := len(q), len(v)
		if uint(lq-1) >= 32 || lv > 64 || lq+lv > r.big { // past the dictionary (empty), too long, or the biggest
			break
		}
		qw := e.word // q's first 8 bytes (fewer: zero padded) as a little-endian word
		// The common prefix k of q and the previous qualifier, and their order: q sorts after it when it
		// goes on past the prefix and is greater at the first byte that differs (or the previous ends).
		m := min(lq, lp)
		k := m
		if x := qw ^ pw; x != 0 {
			if d := bits.TrailingZeros64(x) >> 3; d < m {
				if byte(qw>>(8*d)) < byte(pw>>(8*d)) {
					break
				}
				k = d
			}
		} else if m > 8 { // the first 8 bytes are the same (rare): byte by byte from there
			pq := prevQ
			if n > 0 {
				pq = tab[r.prevIdx&63].q
			}
			for k = 8; k < m && q[k] == pq[k]; k++ {
			}
			if k < m && q[k] < pq[k] {
				break
			}
		}
		if k == lq {
			break
		}
		flag := fastDiffSameType | 7 // the type and the timestamp's first 7 bytes are the previous cell's
		if lq == lp {                // the key's length: its row and family are the previous cell's
			flag |= fastDiffSameKeyLength
		}
		sameValue := false
		if lv == r.valLen {
			flag |= fastDiffSameValueLength
			pv := blk[r.valOff : r.valOff+lv]
			if lv < 8 {
				sameValue = loadShort(v) == loadShort(pv)
			} else {
				sameValue = binary.LittleEndian.Uint64(v[lv-8:]) == binary.LittleEndian.Uint64(pv[lv-8:])
				for i := 0; sameValue && i < lv-8; i += 8 {
					sameValue = binary.LittleEndian.Uint64(v[i:]) == binary.LittleEndian.Uint64(pv[i:])
				}
			}
			if sameValue {
				flag |= fastDiffSameValue
			}
		}
		b := (*[fdRoom]byte)(blk[end : end+fdRoom])
		b[0] = byte(flag)
		o := 1
		if flag&fastDiffSameKeyLength == 0 { // cint: one byte below 0x80, else two (startFastDiffRun)
			if k := r.keyFixed + lq; k < 0x80 {
				b[1] = byte(k)
				o = 2
			} else {
				b[1], b[2] = byte(k)|0x80, byte(k>>7)
				o = 3
			}
		}
		if flag&fastDiffSameValueLength == 0 {
			b[o] = byte(lv)
			o++
		}
		if c := r.head + k; c < 0x80 {
			b[o] = byte(c)
			o++
		} else {
			b[o], b[o+1] = byte(c)|0x80, byte(c>>7)
			o += 2
		}
		// The qualifier after the common prefix: 1 to 32 bytes.
		d := (*[48]byte)(b[o&7:])
		switch k, p := lq-k, k; {
		case lq <= 8:
			binary.LittleEndian.PutUint64(d[:], qw>>(8*p&63))
		case k <= 8:
			binary.LittleEndian.PutUint64(d[:], binary.LittleEndian.Uint64(q[lq-8:])>>(8*(8-k)&63))
		case k <= 16:
			binary.LittleEndian.PutUint64(d[:], binary.LittleEndian.Uint64(q[p:]))
			binary.LittleEndian.PutUint64(d[(k-8)&31:], binary.LittleEndian.Uint64(q[lq-8:]))
		default:
			*(*[16]byte)(d[:]) = [16]byte(q[p:])
			*(*[16]byte)(d[(k-16)&31:]) = [16]byte(q[lq-16:])
		}
		o = (o + lq - k) & 63
		b[o] = r.tsByte
		o++
		if !sameValue { // the value: 0 to 64 bytes
			r.valOff, r.valLen = end+o, lv
			d := (*[96]byte)(b[o:])
			switch {
			case lv <= 8:
				binary.LittleEndian.PutUint64(d[:], loadShort(v))
			case lv <= 16:
				binary.LittleEndian.PutUint64(d[:], binary.LittleEndian.Uint64(v))
				binary.LittleEndian.PutUint64(d[(lv-8)&15:], binary.LittleEndian.Uint64(v[lv-8:]))
			case lv <= 32:
				*(*[16]byte)(d[:]) = [16]byte(v)
				*(*[16]byte)(d[(lv-16)&31:]) = [16]byte(v[lv-16:])
			default:
				t := d[(lv-32)&63:]
				*(*[16]byte)(d[:]) = [16]byte(v)
				*(*[16]byte)(d[16:]) = [16]byte(v[16:])
				*(*[16]byte)(t) = [16]byte(v[lv-32:])
				*(*[16]byte)(t[16:]) = [16]byte(v[lv-16:])
			}
			o += lv
		}
		o &= 127
		b[o], b[o+1] = 0, 0 // the suffix: a tags length of 0 (vint) and the sequence id 0
		end += o + r.suffix
		unencoded += r.cellFixed + lq + lv
		pw, lp = qw, lq
		r.prevIdx = i
		r.valueSum += lv
		p = next
	}
	return n, p, end, unencoded
}
