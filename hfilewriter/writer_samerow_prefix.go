package hfilewriter

import (
	"encoding/binary"
	"slices"

	"github.com/hfload/hfload/internal/kv"
)

// The same-row path of PREFIX blocks: AppendSameRowCells (and so AppendRow after a row's first cell) in
// a PREFIX writer (w.sameRowPX, set by appendCell after a cell it wrote, as sameRowFD) writes the cells
// that share the last cell's row, family, timestamp and type in one pass (appendSameRowRunPrefix)
// instead of appendCell and encodePrefix.encode with a flat key per cell. Such a cell's common prefix
// with the previous key is the key's head (row length, row, family length, family) and the qualifiers'
// common bytes, so it is
//
//	cint(9 + len(q) - k) | cint(len(value)) | cint(head + k) | q[k:] | timestamp | type | value
//
// for k the qualifiers' common bytes (the timestamp and type are never shared: the qualifiers differ),
// then the suffix (a tags length of 0, the sequence id 0) as every cell. A cell the run does not take
// (a qualifier over 32 bytes, a value over 64, the block full, an order error) goes the usual way; the
// bytes, Stats and EstimatedSize are the same either way (TestWriterAppendRowPrefixMatchesAppend).

// appendSameRowRunEncoded is appendSameRowRunPrefix in a PREFIX writer, appendSameRowRunDiff in a DIFF
// one (w.sameRowPX).
func (w *Writer) appendSameRowRunEncoded(cells []SameRowCell) int {
	if w.px != nil {
		return w.appendSameRowRunPrefix(cells)
	}
	return w.appendSameRowRunDiff(cells)
}

// appendSameRowRunPrefix appends the first cells of cells that appendCell would take as same-row cells
// while the open PREFIX block has room, in one pass, and returns how many. The caller has checked
// w.sameRowPX. The writer's last qualifier, the block's, key and value totals and the encoder's last key
// are stored once, after the run.
func (w *Writer) appendSameRowRunPrefix(cells []SameRowCell) int {
	e := w.px
	bs := w.opts.BlockSize
	// As startFastDiffRun: each cell of the run is smaller encoded than unencoded, so while the
	// block's encoded bytes are at most its unencoded ones, the run's unencoded size says when the
	// block is full and bounds its encoded size, hence the room it needs (ulimit).
	if !e.prev.has || !w.blkOpen || !w.blkHasFirst || w.blkUnencoded >= bs || w.blkEncoded > w.blkUnencoded {
		return 0
	}
	if cap(w.blk)-len(w.blk) < 2*fdRoom {
		if w.blkLent {
			return 0
		}
		w.blk = slices.Grow(w.blk, 8*fdRoom)
	}
	head := 2 + len(w.lastRow) + 1 + len(w.family)
	if head+32 >= 1<<14 { // common prefixes of two bytes at most
		return 0
	}
	suffix, suffixUnencoded := 0, 0
	if w.tags {
		suffix++
		suffixUnencoded += 2
	}
	if w.mvcc {
		suffix++
		suffixUnencoded++
	}
	ulimit := min(bs, w.blkUnencoded+cap(w.blk)-fdRoom-len(w.blk))
	blk := w.blk[:cap(w.blk)]
	end, unencoded := len(w.blk), w.blkUnencoded
	tsw := uint64(w.lastTs)
	typ := byte(w.lastType)
	prevQ := w.lastQual
	lp, pw := len(prevQ), firstWord(prevQ)
	n, valueSum, biggest := 0, 0, 0
	for ; n < len(cells) && unencoded < ulimit; n++ {
		q, v := cells[n].Qualifier, cells[n].Value
		lq, lv := len(q), len(v)
		if uint(lq-1) >= 32 || lv > 64 {
			break
		}
		qw := firstWord(q)
		// The common prefix p of q and the previous qualifier, and their order (fdRun.cells).
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
		b := (*[fdRoom]byte)(blk[end : end+fdRoom])
		b[0], b[1] = byte(9+lq-p), byte(lv) // both below 0x80
		o := 2
		if c := head + p; c < 0x80 {
			b[2] = byte(c)
			o = 3
		} else {
			b[2], b[3] = byte(c)|0x80, byte(c>>7)
			o = 4
		}
		putQualRest((*[48]byte)(b[o&7:]), q, qw, p) // the qualifier after the common prefix
		o = (o + lq - p) & 63
		binary.BigEndian.PutUint64(b[o:], tsw)
		b[o+8] = typ
		o += 9
		// The value: 0 to 64 bytes.
		dv := (*[96]byte)(b[o:])
		switch {
		case lv <= 8:
			binary.LittleEndian.PutUint64(dv[:], loadShort(v))
		case lv <= 16:
			binary.LittleEndian.PutUint64(dv[:], binary.LittleEndian.Uint64(v))
			binary.LittleEndian.PutUint64(dv[(lv-8)&15:], binary.LittleEndian.Uint64(v[lv-8:]))
		case lv <= 32:
			*(*[16]byte)(dv[:]) = [16]byte(v)
			*(*[16]byte)(dv[(lv-16)&31:]) = [16]byte(v[lv-16:])
		default:
			t := dv[(lv-32)&63:]
			*(*[16]byte)(dv[:]) = [16]byte(v)
			*(*[16]byte)(dv[16:]) = [16]byte(v[16:])
			*(*[16]byte)(t) = [16]byte(v[lv-32:])
			*(*[16]byte)(t[16:]) = [16]byte(v[lv-16:])
		}
		o = (o + lv) & 127
		b[o], b[o+1] = 0, 0 // the suffix: a tags length of 0 (vint) and the sequence id 0
		end += o + suffix
		unencoded += 8 + head + 9 + lq + lv + suffixUnencoded
		valueSum += lv
		biggest = max(biggest, lq+lv)
		pw, lp = qw, lq
	}
	if n == 0 {
		return 0
	}
	w.endSameRowRunEncoded(cells[:n], head, end, unencoded, valueSum, biggest, suffixUnencoded)
	e.prev.key = kv.AppendKey(e.prev.key[:0], w.lastRow, w.family, w.lastQual, w.lastTs, w.lastType)
	return n
}

// endSameRowRunEncoded stores what a PREFIX or DIFF run of cells (of the writer's last row, family,
// timestamp and type, with a key head of head bytes) added, which end at end in the block, whose
// unencoded size is then unencoded (valueSum their values' bytes, biggest their largest qualifier and
// value, suffixUnencoded the bytes each cell ends with): the block, the key and value totals, the biggest
// cell, the last qualifier and the entry count. The caller sets the encoder's previous cell.
func (w *Writer) endSameRowRunEncoded(run []SameRowCell, head, end, unencoded, valueSum, biggest, suffixUnencoded int) {
	n := len(run)
	keySum := unencoded - w.blkUnencoded - n*(8+suffixUnencoded) - valueSum
	// The biggest cell (appendCell's: the first of the largest beyond the file's biggest so far).
	if int64(12+head+9+biggest) > w.lenBiggest {
		for i := range run {
			c := &run[i]
			if cellSize := int64(12 + head + 9 + len(c.Qualifier) + len(c.Value)); w.lenBiggest < cellSize {
				w.lenBiggest = cellSize
				w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], w.lastRow, w.family, c.Qualifier, w.lastTs, w.lastType)
			}
		}
	}
	w.blkEncoded += end - len(w.blk)
	w.blk = w.blk[:end]
	w.blkUnencoded = unencoded
	w.totalKeyLen += int64(keySum)
	w.totalValueLen += int64(valueSum)
	w.lastQualOwn = append(w.lastQualOwn[:0], run[n-1].Qualifier...)
	w.lastQual = w.lastQualOwn
	w.entries += int64(n)
}
