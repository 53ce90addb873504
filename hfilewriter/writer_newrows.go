package hfilewriter

import (
	"bytes"
	"encoding/binary"

	"github.com/hfload/hfload/internal/kv"
)

// The new-row path: AppendNewRowCells for rows of one cell each, what every family's file gets when the
// families of a mapping have one column each (a row's cells go to as many files). Each such cell starts
// a row, so none takes the same-row path, and AppendPartsRowHash's chain per cell (its checks, the
// bloom key, the block boundary, the KeyValue, the statistics, the last key's copy, and the caller's
// EstimatedSize per row) was most of the cost of writing them. Here a run of them is written in one
// pass within the open data block and bloom chunk: the order and size checks and the bloom key per cell,
// the statistics and the last key stored once per run, and EstimatedSize kept exactly from the parts
// that change with each cell. The bytes, Stats and EstimatedSize are AppendPartsRowHash's
// (TestAppendNewRowCellsMatchesAppendPartsRowHash).

// NewRowCell is a cell of AppendNewRowCells: a put without tags, the first cell of its row in the file,
// with its row's bloom hash (Hash must be HashRow of the row). It holds no pointers: its row and value
// are at offsets in a NewRowData's Buf and its qualifier is one of its Quals, so a caller that gathers
// cells out of a buffer of its own stores four words per cell, without write barriers, instead of
// three slices.
type NewRowCell struct {
	TS       int64
	Hash     RowHash
	Row      uint32 // the row: Buf[Row:Row+RowLen]
	Value    uint32 // the value: Buf[Value:Value+ValueLen]
	ValueLen uint32
	RowLen   uint16
	Qual     uint16 // the qualifier: Quals[Qual]
}

// NewRowData is what the NewRowCells of an AppendNewRowCells call point into: the buffer of their rows
// and values and the table of their qualifiers. Every cell's offsets must be within Buf and its Qual
// within Quals. Quals must not change once a NewRowData is in use (the writer keeps the length of the
// longest in it).
type NewRowData struct {
	Buf   []byte
	Quals [][]byte
	qmax  int // the length of the longest of Quals plus one, once maxQual has found it
}

// maxQual returns the length of the longest of d.Quals.
func (d *NewRowData) maxQual() int {
	if d.qmax == 0 {
		m := 0
		for _, q := range d.Quals {
			m = max(m, len(q))
		}
		d.qmax = m + 1
	}
	return d.qmax - 1
}

func (d *NewRowData) row(c *NewRowCell) []byte {
	o := int(c.Row)
	return d.Buf[o : o+int(c.RowLen)]
}

func (d *NewRowData) value(c *NewRowCell) []byte {
	o := int(c.Value)
	return d.Buf[o : o+int(c.ValueLen)]
}

// AppendNewRowCells appends cells (their rows, values and qualifiers in d) in order, each as
// AppendPartsRowHash(row, family, qualifier, c.TS, TypePut, value, nil, c.Hash) would: the same checks,
// the same bytes.
//
// With limit > 0 it stops before a cell after the first when EstimatedSize() >= limit, as a caller
// rolling to a new file at that size at row boundaries checks before each row (the caller checks before
// the first). It returns how many cells it appended: all, those before the one the limit stopped, or
// those before the first that failed, and that one's error.
func (w *Writer) AppendNewRowCells(family []byte, d *NewRowData, cells []NewRowCell, limit int64) (int, error) {
	i := 0
	for i < len(cells) {
		if i > 0 && limit > 0 && w.EstimatedSize() >= limit {
			return i, nil
		}
		// One cell the usual way: it opens a block or a bloom chunk if need be, or fails.
		c := &cells[i]
		if err := w.AppendPartsRowHash(d.row(c), family, d.Quals[c.Qual], c.TS, kv.TypePut, d.value(c), nil, c.Hash); err != nil {
			return i, err
		}
		i++
		i += w.appendNewRowRun(family, d, cells[i:], limit)
	}
	return i, nil
}

// appendNewRowRun appends the first cells of cells that appendNewRowFast would take while the open data
// block has room, the ROW bloom's chunk is not full and EstimatedSize stays below limit (limit > 0),
// in one pass, and returns how many. It stops before a cell that crosses one of these or fails a check
// (its caller then takes the usual way). A run of the usual cells goes to appendNewRowShort's loop
// without calls first; this one's general loop takes the runs that one does not.
func (w *Writer) appendNewRowRun(family []byte, d *NewRowData, cells []NewRowCell, limit int64) int {
	if len(cells) == 0 || !w.sameRowFast || !w.blkOpen || !w.blkHasFirst || !equalShort(family, w.family) {
		return 0
	}
	bw := w.bloom // ROW or nil (sameRowFast excludes ROWCOL)
	var c *writeBloomChunk
	if bw != nil {
		if c = bw.chunk; c == nil {
			return 0
		}
	}
	extra := 0 // tags length and sequence id: zeros
	if w.tags {
		extra += 2
	}
	if w.mvcc {
		extra++
	}
	if n := w.appendNewRowShort(family, d, cells, limit, bw, c, extra); n > 0 {
		return n
	}
	blk := w.blk
	limitBlk := len(blk) - w.blkUnencoded + w.opts.BlockSize // where the block is full
	prevRow, prevQLen := w.lastRow, len(w.lastQual)
	// EstimatedSize is est + the block's length + the bloom chunk's size + twice the last row's and
	// qualifier's lengths: the rest changes only when a block is written or a chunk starts, which a run
	// stops before.
	var est int64
	if limit > 0 {
		est = w.EstimatedSize() - int64(len(blk)) - bw.currentChunkSize() - 2*int64(len(prevRow)+prevQLen)
	}
	kbase := kv.KeyInfrastructureSize + len(family) // a key's length without its row and qualifier
	head := 8 + 2                                   // a cell's row offset
	n, lastQ := 0, 0
	for ; n < len(cells); n++ {
		cl := &cells[n]
		row, q, v := d.row(cl), d.Quals[cl.Qual], d.value(cl)
		if len(blk) >= limitBlk || c != nil && c.keyCount >= c.maxKeys {
			break // writeCellFast opens the next block, addHashed starts the next chunk
		}
		if limit > 0 && est+int64(len(blk))+bw.currentChunkSize()+2*int64(len(prevRow)+prevQLen) >= limit {
			break
		}
		if len(row) > kv.MaxRowLength || uint64(len(q))+uint64(len(v)) > maxCellColumnAndValue ||
			bytes.Compare(row, prevRow) <= 0 {
			break
		}
		klen := kbase + len(row) + len(q)
		size := 8 + klen + len(v) + extra
		before := len(blk)
		// Room for the cell and 8 bytes more: short fields are stored as whole words, whose bytes past
		// the field the next field (or cell) overwrites.
		if cap(blk)-before < size+8 {
			break
		}
		if c != nil { // addHashed's work for a chunk that is open and not full
			hh := uint64(cl.Hash)
			if f := bw.follow; f == nil {
				c.add(hh)
			} else if k := c.keyCount; k > 0 && f.c != nil && f.c.hash(k) == hh || bw.follows(hh, c) {
				c.keyCount++ // follows' usual outcome, checked here first
			} else {
				c.add(hh)
			}
			bw.totalKeys++
		}
		p := blk[before : before+size+8]
		binary.BigEndian.PutUint64(p, uint64(klen)<<32|uint64(uint32(len(v))))
		binary.BigEndian.PutUint16(p[8:], uint16(len(row)))
		o := head + copy(p[head:], row)
		p[o] = byte(len(family))
		o++
		for _, b := range family { // a byte or two: cheaper than a call to memmove
			p[o] = b
			o++
		}
		lastQ = before + o
		if len(q) <= 8 {
			binary.LittleEndian.PutUint64(p[o:], loadShort(q))
			o += len(q)
		} else {
			o += copy(p[o:], q)
		}
		binary.BigEndian.PutUint64(p[o:], uint64(cl.TS))
		p[o+8] = byte(kv.TypePut)
		o += 9
		switch {
		case len(v) <= 8:
			binary.LittleEndian.PutUint64(p[o:], loadShort(v))
		case len(v) <= 16:
			a, b := binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[len(v)-8:])
			binary.LittleEndian.PutUint64(p[o:], a)
			binary.LittleEndian.PutUint64(p[o+len(v)-8:], b)
		default:
			copy(p[o:], v)
		}
		binary.LittleEndian.PutUint32(p[o+len(v):], 0) // tags length and sequence id (extra <= 3 bytes)
		blk = blk[:before+size]
		prevRow, prevQLen = row, len(q)
	}
	if n == 0 {
		return 0
	}
	return w.endNewRowRun(blk, d, cells[:n], family, kbase, extra, lastQ)
}

// newRowStats returns what endNewRowRun takes from the cells of a run (at least one): the sum of their
// values' lengths, the longest row and value together, and their least and greatest timestamps. A leaf
// of its own (not inlined): in endNewRowRun's big frame Go kept the loop's sum and index on the stack.
//
//go:noinline
func newRowStats(cells []NewRowCell) (valueSum, maxRowValue int, tsMin, tsMax int64) {
	tsMin, tsMax = cells[0].TS, cells[0].TS
	for i := range cells {
		cl := &cells[i]
		valueSum += int(cl.ValueLen)
		maxRowValue = max(maxRowValue, int(cl.RowLen)+int(cl.ValueLen))
		tsMin, tsMax = min(tsMin, cl.TS), max(tsMax, cl.TS)
	}
	return valueSum, maxRowValue, tsMin, tsMax
}

// endNewRowRun records the cells of a new-row run (appendNewRowRun's or appendNewRowShort's loop), which
// the loop stored into blk, the writer's block: the block's lengths, the last key's row, qualifier (at
// lastQ in blk), timestamp and type, the key and value totals, the entry count, the time range, the
// earliest put and the biggest cell. kbase is a key's length without its row and qualifier, extra the
// bytes of tags length and sequence id after each value. The statistics are taken in a pass of their
// own, which leaves the loops' variables in registers. It returns len(cells).
func (w *Writer) endNewRowRun(blk []byte, d *NewRowData, cells []NewRowCell, family []byte, kbase, extra, lastQ int) int {
	n := len(cells)
	added := len(blk) - len(w.blk)
	valueSum, maxRowValue, tsMin, tsMax := newRowStats(cells)
	keySum := added - n*(8+extra) - valueSum // each cell is 8 + key + value + extra bytes
	// The biggest cell (the first of the largest, beyond the file's biggest so far), as writeCellFast
	// keeps it: a cell's size there is 12 + klen + value. The run's are looked at one by one only when
	// its longest row and value with the longest qualifier could pass the biggest so far.
	if int64(12+kbase+maxRowValue+d.maxQual()) > w.lenBiggest {
		for i := range cells {
			cl := &cells[i]
			q := d.Quals[cl.Qual]
			if cellSize := int64(12 + kbase + int(cl.RowLen) + len(q) + int(cl.ValueLen)); w.lenBiggest < cellSize {
				w.lenBiggest = cellSize
				w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], d.row(cl), family, q, cl.TS, kv.TypePut)
			}
		}
	}
	last := &cells[n-1]
	w.blk = blk
	w.blkUnencoded += added
	w.blkEncoded += added
	lq := lastQ + len(d.Quals[last.Qual])
	w.lastQual, w.lastQualInBlk = blk[lastQ:lq:lq], true
	w.lastRow = append(w.lastRow[:0], d.row(last)...)
	w.lastTs, w.lastType = last.TS, kv.TypePut
	w.totalKeyLen += int64(keySum)
	w.totalValueLen += int64(valueSum)
	w.entries += int64(n)
	w.trMin, w.trMax = min(w.trMin, tsMin), max(w.trMax, tsMax)
	w.earliestPut = min(w.earliestPut, tsMin) // (every cell is a put)
	return n
}
