package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"math/bits"
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
//
// The row path: AppendRow in a FAST_DIFF writer (appendRowFastDiff) writes a put that starts a row and
// the cells after it in one pass (appendNewRowFastDiff, then fdRun.cells), and AppendSameRowCells its
// cells in the same run (appendSameRowRunFastDiff): each cell is stored into a window of the block as
// whole words, its qualifier's common prefix and order found from words. A cell the run does not take
// (a qualifier over 32 bytes, a value over 64, the block full, another type or family, an order error)
// goes the usual way (TestWriterAppendRowFastDiffMatchesAppend, TestWriterAppendRowFastDiffErrors).

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
// the open block has room, as far as the run takes them (fdRun.cells: qualifiers of up to 32 bytes,
// values of up to 64), in one pass, and returns how many. The caller has checked w.sameRowFD. Within the
// run each cell's previous qualifier is the cell before it (the caller's), so the writer's copy of the last
// qualifier is made once, after the run, and the block's, key and value totals are stored at the end.
func (w *Writer) appendSameRowRunFastDiff(cells []SameRowCell) int {
	var r fdRun
	if !w.blkHasFirst || !w.startFastDiffRun(&r, len(w.lastRow), w.fd.ts[7]) {
		return 0
	}
	n, end, unencoded := r.cells(w.blk[:cap(w.blk)], len(w.blk), w.blkUnencoded, cells, w.lastQual)
	if n == 0 {
		return 0
	}
	w.endFastDiffCells(&r, cells[:n], end, unencoded, w.lastRow)
	return n
}

// startFastDiffRun sets up r for a run of cells of a row of rowLen bytes in the writer's family and a
// timestamp whose last byte is tsByte, in the open block: false when the block is closed, full or has
// no room for a cell (a lent block buffer is not grown: the usual path takes the cell).
func (w *Writer) startFastDiffRun(r *fdRun, rowLen int, tsByte byte) bool {
	bs := w.opts.BlockSize
	// Each cell of a run is smaller encoded than unencoded, so while the block's encoded bytes are at
	// most its unencoded ones (always, but for huge cells), the run's unencoded size says when the
	// block is full (unencoded or encoded: HFileWriterImpl.checkBlockBoundary) and bounds its encoded
	// size, hence the room it needs (ulimit).
	if !w.blkOpen || w.blkUnencoded >= bs || w.blkEncoded > w.blkUnencoded {
		return false
	}
	if cap(w.blk)-len(w.blk) < 2*fdRoom {
		if w.blkLent {
			return false
		}
		w.blk = slices.Grow(w.blk, 8*fdRoom)
	}
	r.head = 2 + rowLen + 1 + len(w.family)
	r.keyFixed = kv.KeyInfrastructureSize - 3 + r.head
	if r.keyFixed+32 >= 1<<14 { // key lengths and common prefixes of two bytes at most
		return false
	}
	r.tsByte = tsByte
	r.suffix, r.suffixUnencoded = 0, 0
	if w.tags {
		r.suffix++
		r.suffixUnencoded += 2
	}
	if w.mvcc {
		r.suffix++
		r.suffixUnencoded++
	}
	r.cellFixed = 8 + r.keyFixed + r.suffixUnencoded
	r.ulimit = min(bs, w.blkUnencoded+cap(w.blk)-fdRoom-len(w.blk))
	r.valOff, r.valLen = w.fd.valOff, w.fd.valLen
	return true
}

// endFastDiffRun stores what the n cells of a run added (their values' bytes valueSum, the last one's
// qualifier last), which end at end in the block, whose unencoded size is then unencoded: the block, the
// key and value totals, the encoder's key length and last value, the last qualifier and the entry count.
// The caller records the biggest cell (runBiggest).
func (w *Writer) endFastDiffRun(r *fdRun, n, end, unencoded, valueSum int, last []byte) {
	// Each cell's unencoded size is 8 + its key + its value + the suffix.
	keySum := unencoded - w.blkUnencoded - n*(8+r.suffixUnencoded) - valueSum
	w.blkEncoded += end - len(w.blk)
	w.blk = w.blk[:end]
	w.blkUnencoded = unencoded
	w.totalKeyLen += int64(keySum)
	w.totalValueLen += int64(valueSum)
	e := w.fd
	e.klen, e.valOff, e.valLen = r.keyFixed+len(last), r.valOff, r.valLen
	if cap(w.lastQualOwn) < 32 { // the run's qualifiers are at most 32 bytes
		w.lastQualOwn = make([]byte, 0, 32)
	}
	w.lastQualOwn = w.lastQualOwn[:len(last)]
	copyShort(w.lastQualOwn, last)
	w.lastQual = w.lastQualOwn
	w.entries += int64(n)
}

// endFastDiffCells is endFastDiffRun for a run of cells (of row, the writer's family, timestamp and type)
// with the biggest cell among them.
func (w *Writer) endFastDiffCells(r *fdRun, cells []SameRowCell, end, unencoded int, row []byte) {
	valueSum, biggest := 0, 0
	for i := range cells {
		lv := len(cells[i].Value)
		valueSum += lv
		biggest = max(biggest, len(cells[i].Qualifier)+lv)
	}
	// The biggest cell (HFileWriterImpl's keyOfBiggestCell: the first of the largest beyond the file's
	// biggest so far): a cell's size there is 12 + its key and value.
	if int64(12+r.keyFixed+biggest) > w.lenBiggest {
		for i := range cells {
			c := &cells[i]
			if cellSize := int64(12 + r.keyFixed + len(c.Qualifier) + len(c.Value)); w.lenBiggest < cellSize {
				w.lenBiggest = cellSize
				w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, w.family, c.Qualifier, w.lastTs, w.lastType)
			}
		}
	}
	w.endFastDiffRun(r, len(cells), end, unencoded, valueSum, cells[len(cells)-1].Qualifier)
}

// fdRoom is the window of the block a cell of a FAST_DIFF run is stored into (fdRun.cells): a cell the
// run takes is at most 1 + 2 + 1 + 2 + 32 + 1 + 64 + 2 bytes (flag, key length, value length, common
// prefix, the qualifier's rest, the timestamp's last byte, the value, the suffix), a row's first cell
// (appendNewRowFastDiff) at most 1 + 2 + 1 + 2 + 34 + 32 + 8 + 1 + 64 + 2; fields are stored as whole
// words, up to 8 bytes past them.
const fdRoom = 160

// fdRun is what the cells of a FAST_DIFF run share (appendSameRowRunFastDiff, appendNewRowFastDiff): the
// key's row and family part (head: 2 + row + 1 + family), a key's length without its qualifier
// (keyFixed), the timestamp's last byte, the bytes each cell ends with (the tags length and the sequence
// id: suffix encoded, suffixUnencoded unencoded), a cell's unencoded size without its qualifier and value
// (cellFixed), the block's unencoded size the run stops at (ulimit: the block is full, or the next cell
// may not have fdRoom bytes of room), and the last value's place in the block (valOff, valLen: FAST_DIFF's
// same-value flag compares with it).
type fdRun struct {
	head, keyFixed          int
	tsByte                  byte
	suffix, suffixUnencoded int
	cellFixed, ulimit       int
	valOff, valLen          int
	last                    int // codedRun's last cell start in the block (len(blk) - fdRoom)
}

// cells encodes the first of cells that the run takes into blk (the block's whole capacity) from end on,
// each after the previous (prevQ for the first: the writer's last qualifier, the previous cell's), while
// the block's unencoded size is below r.ulimit. It takes a cell whose qualifier of 1 to 32 bytes sorts
// after the previous one and whose value is at most 64 bytes long, and stops before any other, which its
// caller writes the usual way. It returns how many it took, where they end and the block's unencoded
// size after them, and keeps the last value's place in r.
//
// Its loop calls nothing and keeps few values, so that they stay in registers: two qualifiers' common
// prefix and order come from their first 8 bytes as words, what the cells share is read from r, and
// every field is stored as whole words into the window of fdRoom bytes at the cell's start.
func (r *fdRun) cells(blk []byte, end, unencoded int, cells []SameRowCell, prevQ []byte) (n, newEnd, newUnencoded int) {
	lp := len(prevQ)
	pw := firstWord(prevQ)
	for ; n < len(cells) && unencoded < r.ulimit; n++ {
		q, v := cells[n].Qualifier, cells[n].Value
		lq, lv := len(q), len(v)
		if uint(lq-1) >= 32 || lv > 64 {
			break
		}
		var qw uint64 // q's first 8 bytes (fewer: zero padded) as a little-endian word
		if lq >= 8 {
			qw = binary.LittleEndian.Uint64(q)
		} else {
			qw = loadShort(q)
		}
		// The common prefix p of q and the previous qualifier, and their order: q sorts after it when it
		// goes on past the prefix and is greater at the first byte that differs (or the previous ends).
		p, slow := qualPrefix(lq, lp, qw, pw)
		if slow { // the first 8 bytes are the same (rare): byte by byte from there
			pq := prevQ
			if n > 0 {
				pq = cells[n-1].Qualifier
			}
			p = qualPrefixTail(q, pq)
		}
		if p < 0 || p == lq {
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
		if c := r.head + p; c < 0x80 {
			b[o] = byte(c)
			o++
		} else {
			b[o], b[o+1] = byte(c)|0x80, byte(c>>7)
			o += 2
		}
		putQualRest((*[48]byte)(b[o&7:]), q, qw, p) // the qualifier after the common prefix
		o = (o + lq - p) & 63
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
	}
	return n, end, unencoded
}

// firstWord returns the first 8 bytes of b (fewer: zero padded) as a little-endian word.
func firstWord(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	return loadShort(b)
}

// appendRowFastDiff is AppendRow for a FAST_DIFF writer (w.sameRowFD): a row's first cell with the
// cells after it in one pass (appendNewRowFastDiff) when it can, else the first cell the usual way
// (appendCell) and the others with AppendSameRowCells. The bytes, Stats and EstimatedSize are
// AppendRow's (TestWriterAppendRowMatchesAppend).
func (w *Writer) appendRowFastDiff(row, family []byte, ts int64, typ Type, cells []SameRowCell) (int, error) {
	return w.appendRowRest(row, family, ts, typ, cells, w.appendNewRowFastDiff(row, family, ts, typ, cells))
}

// appendNewRowFastDiff appends a put that starts a new row, cells[0], and the cells after it that the
// run takes (fdRun.cells), to the open FAST_DIFF block, and returns how many: 0, with nothing written,
// unless startNewRowFastDiff takes the first cell.
func (w *Writer) appendNewRowFastDiff(row, family []byte, ts int64, typ Type, cells []SameRowCell) int {
	var r fdRun
	c := &cells[0]
	end, unencoded, ok := w.startNewRowFastDiff(&r, row, family, ts, typ, c.Qualifier, c.Value)
	if !ok {
		return 0
	}
	n := 1
	if len(cells) > 1 { // the cells after it, in the run
		var m int
		m, end, unencoded = r.cells(w.blk[:cap(w.blk)], end, unencoded, cells[1:], c.Qualifier)
		n += m
	}
	w.endNewRowFastDiff(row, ts)
	w.endFastDiffCells(&r, cells[:n], end, unencoded, row)
	return n
}

// startNewRowFastDiff sets up r and encodes a put that starts a new row, with qualifier q and value v,
// into the open FAST_DIFF block (not yet counted in it: the caller ends the run, endFastDiffRun), and
// returns where it ends and the block's unencoded size after it; false, with nothing written, unless
// the row of 1 to 32 bytes sorts after the last one, in the file's family, the qualifier has 1 to 32
// bytes and the value at most 64, and the block is open, holds cells and has room. It does appendCell's
// work for the cell's bytes (FAST_DIFF's against the last cell: the row's common prefix, the timestamp
// and type) without the checks and cases it cannot need; endNewRowFastDiff records the rest.
func (w *Writer) startNewRowFastDiff(r *fdRun, row, family []byte, ts int64, typ Type, q, v []byte) (end, unencoded int, ok bool) {
	rl, lq, lv := len(row), len(q), len(v)
	if typ != kv.TypePut || uint(rl-1) >= 32 || uint(lq-1) >= 32 || lv > 64 || !w.blkHasFirst || !equalShort(family, w.family) {
		return 0, 0, false
	}
	// The order from the rows' common prefix, which the encoding needs too: row sorts after the last
	// row when it goes on past the prefix and is greater at the first byte that differs (if any).
	prevRow := w.lastRow
	pr := min(rl, len(prevRow))
	rw := firstWord(row)
	if x := rw ^ firstWord(prevRow); x != 0 {
		pr = min(bits.TrailingZeros64(x)>>3, pr)
	} else if pr > 8 {
		pr = 8 + kv.CommonPrefix(row[8:], prevRow[8:])
	}
	if pr == rl || pr < len(prevRow) && row[pr] < prevRow[pr] {
		return 0, 0, false // appendCell says why
	}
	if !w.startFastDiffRun(r, rl, byte(ts)) {
		return 0, 0, false
	}
	e := w.fd
	blk := w.blk[:cap(w.blk)]
	start := len(w.blk)
	b := (*[fdRoom]byte)(blk[start : start+fdRoom])
	// flag | [cint keyLength] | [cint valueLength] | cint common | the row's rest | qualifier |
	// timestamp bytes after the shared ones | [type] | [value] (encodeFastDiff.encodeCell for a new row).
	klen := r.keyFixed + lq
	tsCommon := min(bits.LeadingZeros64(uint64(ts)^binary.BigEndian.Uint64(e.ts[:]))>>3, 7)
	flag := tsCommon
	if e.typ == byte(kv.TypePut) {
		flag |= fastDiffSameType
	}
	if klen == e.klen {
		flag |= fastDiffSameKeyLength
	}
	sameValue := false
	if lv == e.valLen {
		flag |= fastDiffSameValueLength
		if sameValue = bytes.Equal(v, blk[e.valOff:e.valOff+lv]); sameValue {
			flag |= fastDiffSameValue
		}
	}
	b[0] = byte(flag)
	o := 1
	if flag&fastDiffSameKeyLength == 0 { // cint: one byte below 0x80, else two (startFastDiffRun)
		if klen < 0x80 {
			b[1] = byte(klen)
			o = 2
		} else {
			b[1], b[2] = byte(klen)|0x80, byte(klen>>7)
			o = 3
		}
	}
	if flag&fastDiffSameValueLength == 0 {
		b[o] = byte(lv)
		o++
	}
	// The common prefix of the flat keys: 0 or 1 (the row length's high byte) for rows of different
	// lengths, else 2 + the rows' common bytes.
	switch lr := len(prevRow); {
	case rl == lr:
		b[o] = byte(2 + pr) // below 0x80: rows of up to 32 bytes
		// The row after the common bytes: up to 8 bytes as one word.
		if rl <= 8 {
			binary.LittleEndian.PutUint64(b[(o+1)&7:], rw>>(8*pr&63))
		} else {
			copyShort(b[o+1:], row[pr:])
		}
		o += 1 + rl - pr
	case rl>>8 == lr>>8:
		b[o], b[o+1] = 1, byte(rl)
		copyShort(b[o+2:], row)
		o += 2 + rl
	default:
		b[o], b[o+1], b[o+2] = 0, byte(rl>>8), byte(rl)
		copyShort(b[o+3:], row)
		o += 3 + rl
	}
	switch o &= 63; { // (at most 39)
	case lq <= 8:
		binary.LittleEndian.PutUint64(b[o:], loadShort(q))
	case lq <= 16:
		binary.LittleEndian.PutUint64(b[o:], binary.LittleEndian.Uint64(q))
		binary.LittleEndian.PutUint64(b[o+(lq-8)&15:], binary.LittleEndian.Uint64(q[lq-8:]))
	default:
		copyShort(b[o:], q)
	}
	o += lq
	binary.BigEndian.PutUint64(b[o:], uint64(ts)<<(8*tsCommon))
	o += 8 - tsCommon
	if flag&fastDiffSameType == 0 {
		b[o] = byte(kv.TypePut)
		o++
	}
	if !sameValue {
		r.valOff, r.valLen = start+o, lv
		switch d := (*[48]byte)(b[o : o+48]); { // (o is at most 80)
		case lv <= 8:
			binary.LittleEndian.PutUint64(d[:], loadShort(v))
		case lv <= 16:
			binary.LittleEndian.PutUint64(d[:], binary.LittleEndian.Uint64(v))
			binary.LittleEndian.PutUint64(d[(lv-8)&15:], binary.LittleEndian.Uint64(v[lv-8:]))
		case lv <= 32:
			*(*[16]byte)(d[:]) = [16]byte(v)
			*(*[16]byte)(d[(lv-16)&31:]) = [16]byte(v[lv-16:])
		default:
			copyShort(b[o:], v)
		}
		o += lv
	}
	b[o], b[o+1] = 0, 0 // the suffix: a tags length of 0 (vint) and the sequence id 0
	binary.BigEndian.PutUint64(e.ts[:], uint64(ts))
	e.typ = byte(kv.TypePut)
	return start + o + r.suffix, w.blkUnencoded + 8 + klen + lv + r.suffixUnencoded, true
}

// endNewRowFastDiff records what appendCell records for a row's first cell (a put without tags) but the
// block's and the run's totals (endFastDiffRun): the bloom key, the last row, timestamp and type, the
// earliest put and the time range.
func (w *Writer) endNewRowFastDiff(row []byte, ts int64) {
	if w.bloom != nil { // ROW (sameRowFD excludes ROWCOL): the row, as addToBlooms adds it
		w.bloom.add(row, row)
	}
	if n := len(row); n <= 8 && cap(w.lastRow) >= 8 {
		w.lastRow = w.lastRow[:n]
		binary.LittleEndian.PutUint64(w.lastRow[:8], loadShort(row))
	} else if cap(w.lastRow) >= n {
		w.lastRow = w.lastRow[:n]
		copyShort(w.lastRow, row)
	} else {
		w.lastRow = append(w.lastRow[:0], row...)
	}
	w.notePut(ts)
}

// qualPrefix is the first step of the same-row runs' order check (FAST_DIFF, PREFIX and DIFF): the
// length p of the common prefix of a qualifier of lq bytes and the previous one of lp bytes, from their
// first 8 bytes as little-endian words (zero padded), or -1 when the qualifier sorts before the previous
// one at a byte that differs. slow: their first 8 bytes are the same and both go on, so the prefix is
// qualPrefixTail's to find. A p of lq means the qualifier does not sort after the previous one either.
func qualPrefix(lq, lp int, qw, pw uint64) (p int, slow bool) {
	m := min(lq, lp)
	if x := qw ^ pw; x != 0 {
		if d := bits.TrailingZeros64(x) >> 3; d < m {
			if byte(qw>>(8*d)) < byte(pw>>(8*d)) {
				return -1, false
			}
			return d, false
		}
		return m, false
	}
	return m, m > 8
}

// qualPrefixTail is qualPrefix's slow case: q and the previous qualifier pq share their first 8 bytes;
// the common prefix's length, byte by byte from there, or -1 when q sorts before pq.
func qualPrefixTail(q, pq []byte) int {
	m := min(len(q), len(pq))
	p := 8
	for p < m && q[p] == pq[p] {
		p++
	}
	if p < m && q[p] < pq[p] {
		return -1
	}
	return p
}

// putQualRest stores the 1 to 32 bytes of q after its common prefix p with the previous qualifier at
// the start of d, as whole words (the same-row runs of FAST_DIFF, PREFIX and DIFF; qw is q's first 8
// bytes as a little-endian word, zero padded). The words may run past the rest's end into d: the
// caller writes what follows over them. Two moves that overlap when the rest is not a whole word.
func putQualRest(d *[48]byte, q []byte, qw uint64, p int) {
	lq := len(q)
	switch k := lq - p; {
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
}
