package hfilewriter

import (
	"encoding/binary"
	"slices"

	"github.com/hfload/hfload/internal/kv"
)

// The same-row path of DIFF blocks: as PREFIX's (writer_samerow_prefix.go), AppendSameRowCells in a DIFF
// writer (w.sameRowPX with w.dx) writes the cells that share the last cell's row, family, timestamp and
// type in one pass (appendSameRowRunDiff) instead of appendCell and encodeDiff.encode per cell. Such a
// cell (encodeDiff.encode after a key of the same row, family, timestamp and type) is
//
//	flag | [cint keyLength] | [cint valueLength] | cint(head + k) | q[k:] | timestamp | value
//
// with the flag's same-type bit, its same-key-length and same-value-length bits when the lengths are the
// previous cell's, and the timestamp as one byte: the difference 0 (the is-difference bit) when the
// timestamp itself takes more than one byte (ByteBufferUtils.longFitsIn), else the timestamp; then the
// suffix as every cell (TestWriterAppendRowDiffMatchesAppend).

// appendSameRowRunDiff is appendSameRowRunPrefix for a DIFF writer.
func (w *Writer) appendSameRowRunDiff(cells []SameRowCell) int {
	e := w.dx
	bs := w.opts.BlockSize
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
	keyFixed := head + 9      // a key's length without its qualifier
	if keyFixed+32 >= 1<<14 { // key lengths and common prefixes of two bytes at most
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
	// The timestamp's byte and the flag's bits for it (encodeDiff.encode with a difference of 0).
	flag0, tsByte := diffSameType, byte(w.lastTs)
	if encodeLongFitsIn(w.lastTs) > 1 {
		flag0, tsByte = diffSameType|diffTimestampIsDiff, 0
	}
	ulimit := min(bs, w.blkUnencoded+cap(w.blk)-fdRoom-len(w.blk))
	blk := w.blk[:cap(w.blk)]
	end, unencoded := len(w.blk), w.blkUnencoded
	prevQ := w.lastQual
	lp, pw := len(prevQ), firstWord(prevQ)
	plv := len(e.prev.value)
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
		flag := flag0
		o := 1
		if lq == lp {
			flag |= diffSameKeyLength
		} else if k := keyFixed + lq; k < 0x80 {
			b[1] = byte(k)
			o = 2
		} else {
			b[1], b[2] = byte(k)|0x80, byte(k>>7)
			o = 3
		}
		b[0] = byte(flag)
		if lv == plv {
			b[0] |= diffSameValueLength
		} else {
			b[o] = byte(lv) // below 0x80
			o++
		}
		if c := head + p; c < 0x80 {
			b[o] = byte(c)
			o++
		} else {
			b[o], b[o+1] = byte(c)|0x80, byte(c>>7)
			o += 2
		}
		putQualRest((*[48]byte)(b[o&7:]), q, qw, p) // the qualifier after the common prefix
		o = (o + lq - p) & 63
		b[o] = tsByte
		o++
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
		unencoded += 8 + keyFixed + lq + lv + suffixUnencoded
		valueSum += lv
		biggest = max(biggest, lq+lv)
		pw, lp, plv = qw, lq, lv
	}
	if n == 0 {
		return 0
	}
	w.endSameRowRunEncoded(cells[:n], head, end, unencoded, valueSum, biggest, suffixUnencoded)
	e.prev.key = kv.AppendKey(e.prev.key[:0], w.lastRow, w.family, w.lastQual, w.lastTs, w.lastType)
	e.prev.value = append(e.prev.value[:0], cells[n-1].Value...)
	return n
}
