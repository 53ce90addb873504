package hfilewriter

import (
	"encoding/binary"
	"unsafe"

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
	var last [newRunRowWindow]byte // the writer's last row, for the first cell's order check
	copy(last[:], w.lastRow)
	n, end := r.cells(blk[:cap(blk)], len(blk), d.Buf, cells[:most], &last)
	if n == 0 {
		return 0
	}
	if c != nil {
		bw.addRun(c, cells[:n])
	}
	blk = blk[:end]
	lc := &cells[n-1]
	lastQ := len(blk) - (r.fixed + int(r.ql[lc.Qual]) + int(lc.ValueLen)) + r.qo
	return w.endNewRowRun(blk, d, cells[:n], family, r.kbase-rowLen, extra, lastQ)
}

// cells stores the KeyValues of the first of cells that appendNewRowShort takes into blk from end on
// and returns how many and where they end. It takes cells while end is below r.stop, whose row is
// r.rowLen bytes long and after the previous one (prev: the window of the writer's last row), whose
// qualifier is one of the run's table (r.ql at most 8) and whose value at most 32 bytes long, and whose
// row and value are followed by enough bytes of buf for a whole window (newRunRowWindow,
// newRunValueWindow): a row is compared as its four words loaded from its window and the previous
// row's, and the row's and value's windows are stored whole (32 bytes each: what follows overwrites
// the bytes past them), without a check each. It calls nothing, and it holds little across cells
// (the run's constants are read from r): so Go keeps its variables in registers.
func (r *newRun) cells(blk []byte, end int, buf []byte, cells []NewRowCell, prev *[newRunRowWindow]byte) (n, newEnd int) {
	// The loop reads cells and buf and writes blk through unsafe pointers (with checked slices Go
	// reloaded the slices' bounds and checked each window, ~20 instructions a cell). Every access is in
	// bounds: cell n < len(cells); a row's and a value's window only when it lies within buf (checked
	// per cell); a cell's window at end < r.stop, which is checked here to be at most
	// len(blk)-newRunRoom+1 (end only grows).
	if end < 0 || r.stop > len(blk)-newRunRoom+1 {
		return 0, end
	}
	bp, sp := unsafe.Pointer(unsafe.SliceData(blk)), unsafe.Pointer(unsafe.SliceData(buf))
	cp := unsafe.Pointer(unsafe.SliceData(cells))
	rowMax, valMax := len(buf)-newRunRowWindow, len(buf)-newRunValueWindow
	for ; n < len(cells) && end < r.stop; n++ {
		cl := (*NewRowCell)(unsafe.Add(cp, uintptr(n)*unsafe.Sizeof(NewRowCell{})))
		qi, ro, vo, vl := int(cl.Qual), int(cl.Row), int(cl.Value), int(cl.ValueLen)
		if int(cl.RowLen) != r.rowLen || qi >= newRunQuals || r.ql[qi] > 8 || vl > 32 || ro > rowMax || vo > valMax {
			break
		}
		row := (*[newRunRowWindow]byte)(unsafe.Add(sp, ro))
		// After the previous row: the first of the four words that differs is greater.
		if a, b := binary.BigEndian.Uint64(row[:]), binary.BigEndian.Uint64(prev[:]); a != b {
			if a < b {
				break
			}
		} else if x := r.x1 & 31; binary.BigEndian.Uint64(row[x:]) != binary.BigEndian.Uint64(prev[x:]) {
			if binary.BigEndian.Uint64(row[x:]) < binary.BigEndian.Uint64(prev[x:]) {
				break
			}
		} else if x := r.x2 & 31; binary.BigEndian.Uint64(row[x:]) != binary.BigEndian.Uint64(prev[x:]) {
			if binary.BigEndian.Uint64(row[x:]) < binary.BigEndian.Uint64(prev[x:]) {
				break
			}
		} else if x := (r.rowLen - 8) & 31; binary.BigEndian.Uint64(row[x:]) <= binary.BigEndian.Uint64(prev[x:]) {
			break
		}
		prev = row
		ql := int(r.ql[qi])
		p := (*[newRunRoom]byte)(unsafe.Add(bp, end))
		binary.BigEndian.PutUint64(p[:], uint64(r.kbase+ql)<<32|uint64(vl))
		binary.BigEndian.PutUint16(p[8:], uint16(r.rowLen))
		// The row's window, its first 32 bytes: the family and qualifier overwrite what is past the row.
		rw := *(*[32]byte)(row[:32]) // through a copy: the compiler does not know that row and p differ
		*(*[32]byte)(p[10:42]) = rw
		fo := r.fo & 63
		binary.LittleEndian.PutUint64(p[fo:], r.fam)
		qo := r.qo & 63
		binary.LittleEndian.PutUint64(p[qo:], r.qw[qi])
		t := (*[48]byte)(p[(qo+ql)&63:]) // the timestamp: at most 58
		binary.BigEndian.PutUint64(t[:], uint64(cl.TS))
		t[8] = byte(kv.TypePut)
		// The value's window, whole: the bytes past the value are overwritten by what follows it.
		vw := *(*[newRunValueWindow]byte)(unsafe.Add(sp, vo))
		*(*[newRunValueWindow]byte)(t[9 : 9+newRunValueWindow]) = vw
		binary.LittleEndian.PutUint32(t[9+vl:], 0) // tags length and sequence id (extra <= 3 bytes)
		end += r.fixed + ql + vl
	}
	return n, end
}

// The windows of buf that newRun.cells loads a row's words (at offsets up to 24, masked to 31) and a
// value (four words) from.
const (
	newRunRowWindow   = 40
	newRunValueWindow = 32
)

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
