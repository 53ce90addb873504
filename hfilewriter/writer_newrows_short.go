package hfilewriter

import (
	"encoding/binary"

	"github.com/hfload/hfload/internal/kv"
)

// The new-row run's usual cells in a loop that calls nothing (appendNewRowShort): rows of 8 to 32 bytes,
// all as long as the last row written, qualifiers of up to 8 bytes, values of up to 32 and a family of
// up to 7 bytes. A row is compared with the previous one as four big-endian words, and stored as the
// same four words; the family (with its length) is one word, the qualifier one, the value one to four.
// The run's bloom keys are added after the loop, and its statistics come from a pass of their own, so
// that the loop's variables stay in registers: with a call in the loop (bytes.Compare, memmove,
// the bloom's add), Go keeps them in stack slots. A cell that is not of this shape, or a stop that
// only might be needed, ends the run; appendNewRowRun's general loop takes what this run does not.

// newRunRoom is the room a cell of appendNewRowShort needs from its start: a 128-byte window (a cell is
// at most 8 + 2 + 32 + 8 + 8 + 9 + 32 + 3 bytes; its fields are stored as whole words, at offsets the
// compiler can see are within the window).
const newRunRoom = 128

// newRun is what the cells of appendNewRowShort's run share: the family's length and bytes as a
// little-endian word (fam), the rows' length and the offsets of its second and third words (x1, x2:
// its words start at 0, x1, x2 and rowLen-8 and cover it in order), where a cell's family and
// qualifier start (fo, qo), a key's length without its qualifier (kbase), a cell's size without its
// qualifier and value (fixed), and the block offset from which no cell is started (stop).
type newRun struct {
	fam                                        uint64
	rowLen, x1, x2, fo, qo, kbase, fixed, stop int
	// The qualifiers by NewRowCell.Qual: each as a little-endian word (qw) and its length (ql), which
	// is newRunNoQual for one longer than 8 bytes and past the table's Quals.
	qw [newRunQuals]uint64
	ql [newRunQuals]uint8
}

// newRunQuals is how many of NewRowData.Quals a run of appendNewRowShort takes; newRunNoQual marks a
// qualifier it does not take.
const (
	newRunQuals  = 64
	newRunNoQual = 0xff
)

// appendNewRowShort is appendNewRowRun for a run of the usual cells (see above); it returns how many it
// appended, 0 when the first is not one or the writer's last row is not of the run's length. bw and c
// are the ROW bloom and its open chunk (nil without a bloom), extra the tags length and sequence id's
// bytes.
func (w *Writer) appendNewRowShort(family []byte, d *NewRowData, cells []NewRowCell, limit int64, bw *writeBloomWriter, c *writeBloomChunk, extra int) int {
	rowLen := len(w.lastRow)
	if rowLen < 8 || rowLen > 32 || len(family) > 7 {
		return 0
	}
	blk := w.blk
	var r newRun
	r.rowLen = rowLen
	r.x1 = min(8, rowLen-8)
	r.x2 = max(r.x1, rowLen-16)
	r.fam = uint64(len(family))
	for i, b := range family {
		r.fam |= uint64(b) << (8 * (i + 1))
	}
	r.fo = 10 + rowLen
	r.qo = r.fo + 1 + len(family)
	r.kbase = kv.KeyInfrastructureSize + len(family) + rowLen
	r.fixed = 8 + r.kbase + extra
	for i := range r.ql {
		r.ql[i] = newRunNoQual
		if i < len(d.Quals) && len(d.Quals[i]) <= 8 {
			r.qw[i], r.ql[i] = loadShort(d.Quals[i]), uint8(len(d.Quals[i]))
		}
	}
	// Where the block is full (unencoded: every byte counts), and the last offset a cell's window fits.
	r.stop = min(len(blk)-w.blkUnencoded+w.opts.BlockSize, cap(blk)-newRunRoom+1)
	most := len(cells)
	if c != nil {
		most = min(most, c.maxKeys-c.keyCount) // the chunk is full after these
	}
	if limit > 0 {
		// EstimatedSize before a cell is what it is now, less the block's length and twice the last row's
		// and qualifier's lengths, plus these for the previous cell. The bloom chunk's share stays
		// while its key count is below estUntil (currentChunkSize), so the run stops there, and it
		// takes the longest qualifier (8, or the writer's last if longer): the run may stop a cell
		// early, which the usual way then writes.
		bw.currentChunkSize() // brings c.estUntil up to date
		if c != nil {
			most = min(most, c.estUntil-c.keyCount)
		}
		base := w.EstimatedSize() - int64(len(blk)) - 2*int64(rowLen+len(w.lastQual))
		room := limit - base - 2*int64(rowLen+max(8, len(w.lastQual)))
		if room < int64(r.stop) {
			r.stop = int(max(room, 0))
		}
	}
	if most <= 0 {
		return 0
	}
	p := w.lastRow
	n, end := r.cells(blk[:cap(blk)], len(blk), d.Buf, cells[:most],
		binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[r.x1:]),
		binary.BigEndian.Uint64(p[r.x2:]), binary.BigEndian.Uint64(p[rowLen-8:]))
	if n == 0 {
		return 0
	}
	if c != nil {
		bw.addRun(c, cells[:n])
	}
	blk = blk[:end]
	last := &cells[n-1]
	lastQ := len(blk) - (r.fixed + int(r.ql[last.Qual]) + int(last.ValueLen)) + r.qo
	return w.endNewRowRun(blk, d, cells[:n], family, r.kbase-rowLen, extra, lastQ)
}

// cells stores the KeyValues of the first of cells that appendNewRowShort takes into blk from end on
// and returns how many and where they end. It takes cells while end is below r.stop, whose row is
// r.rowLen bytes long and after the previous one (p0 to p3: its four words), whose qualifier is at
// most 8 bytes long and whose value at most 32. It calls nothing: its loop keeps its variables in
// registers.
func (r *newRun) cells(blk []byte, end int, buf []byte, cells []NewRowCell, p0, p1, p2, p3 uint64) (n, newEnd int) {
	rowLen, x1, x2, x3 := r.rowLen, r.x1&31, r.x2&31, (r.rowLen-8)&31
	fam, fo, qo := r.fam, r.fo&63, r.qo&63
	kbase, fixed, stop := r.kbase, r.fixed, r.stop
	for ; n < len(cells) && end < stop; n++ {
		cl := &cells[n]
		qi := int(cl.Qual)
		if int(cl.RowLen) != rowLen || qi >= newRunQuals || r.ql[qi] > 8 || cl.ValueLen > 32 {
			break
		}
		ro, vo := int(cl.Row), int(cl.Value)
		row, v := buf[ro:ro+rowLen:ro+rowLen], buf[vo:vo+int(cl.ValueLen)]
		ql := int(r.ql[qi])
		// Each word's bytes as a slice of capacity 8: no pointer masking for an empty rest, and no use
		// of the row's capacity (x + 8 <= rowLen for every x).
		r0, r1 := binary.BigEndian.Uint64(row[:8:8]), binary.BigEndian.Uint64(row[x1:x1+8:x1+8])
		r2, r3 := binary.BigEndian.Uint64(row[x2:x2+8:x2+8]), binary.BigEndian.Uint64(row[x3:x3+8:x3+8])
		// After the previous row: the first word that differs is greater.
		if r0 != p0 {
			if r0 < p0 {
				break
			}
		} else if r1 != p1 {
			if r1 < p1 {
				break
			}
		} else if r2 != p2 {
			if r2 < p2 {
				break
			}
		} else if r3 <= p3 {
			break
		}
		p0, p1, p2, p3 = r0, r1, r2, r3
		p := (*[newRunRoom]byte)(blk[end : end+newRunRoom])
		binary.BigEndian.PutUint64(p[:], uint64(kbase+ql)<<32|uint64(len(v)))
		binary.BigEndian.PutUint16(p[8:], uint16(rowLen))
		binary.BigEndian.PutUint64(p[10:], r0)
		binary.BigEndian.PutUint64(p[10+x1:], r1)
		binary.BigEndian.PutUint64(p[10+x2:], r2)
		binary.BigEndian.PutUint64(p[10+x3:], r3)
		binary.LittleEndian.PutUint64(p[fo:], fam)
		binary.LittleEndian.PutUint64(p[qo:], r.qw[qi])
		t := (*[48]byte)(p[(qo+ql)&63:]) // the timestamp: at most 58
		binary.BigEndian.PutUint64(t[:], uint64(cl.TS))
		t[8] = byte(kv.TypePut)
		switch {
		case len(v) <= 8:
			binary.LittleEndian.PutUint64(t[9:], loadShort(v))
		case len(v) <= 16:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[len(v)-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[1+len(v):], b)
		default:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[8:])
			c, d := binary.LittleEndian.Uint64(v[len(v)-16:]), binary.LittleEndian.Uint64(v[len(v)-8:])
			binary.LittleEndian.PutUint64(t[9:], a)
			binary.LittleEndian.PutUint64(t[17:], b)
			binary.LittleEndian.PutUint64(t[len(v)-7:], c)
			binary.LittleEndian.PutUint64(t[1+len(v):], d)
		}
		binary.LittleEndian.PutUint32(t[9+len(v):], 0) // tags length and sequence id (extra <= 3 bytes)
		end += fixed + ql + len(v)
	}
	return n, end
}

// addRun adds the rows of cells to the open chunk c as appendNewRowRun's loop does, one by one. The
// shared bloom's usual outcome (the next keys of the followed chunk are the cells' rows) is checked a
// segment of the followed chunk at a time; the first cell that differs goes the usual way.
func (bw *writeBloomWriter) addRun(c *writeBloomChunk, cells []NewRowCell) {
	for i := 0; i < len(cells); {
		if f := bw.follow; f != nil && f.c != nil && c.keyCount > 0 {
			k := c.keyCount
			seg := f.c.segs[k/bloomPendingKeys][k%bloomPendingKeys:]
			run := cells[i:min(len(cells), i+len(seg))]
			j := 0
			for j < len(run) && seg[j] == uint64(run[j].Hash) {
				j++
			}
			c.keyCount += j
			i += j
			if j == len(run) {
				continue // the end of the cells or of the segment
			}
		}
		hh := uint64(cells[i].Hash)
		if f := bw.follow; f == nil {
			c.add(hh)
		} else if k := c.keyCount; k > 0 && f.c != nil && f.c.hash(k) == hh || bw.follows(hh, c) {
			c.keyCount++
		} else {
			c.add(hh)
		}
		i++
	}
	bw.totalKeys += int64(len(cells))
}
