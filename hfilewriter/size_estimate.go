package hfilewriter

import (
	"math"

	"github.com/hfload/hfload/internal/kv"
)

// sizeEstimate keeps the part of EstimatedSize that changes only when a block is written or a bloom
// chunk starts: the bytes written, the index entries, the bloom chunks waiting to be written and the
// bloom and file metadata. A caller rolling files at a size (one call per row) then pays for the
// parts that change with every cell only: the open data block, the current bloom chunks and the
// last key. With five families of one column each that is a call per cell.
type sizeEstimate struct {
	valid  bool
	offset int64 // blockOutput.offset when fixed was computed
	chunks int   // bloom chunks started (both bloom writers) when fixed was computed
	fixed  int64
}

// blockOverhead is a block's header and one checksum, as EstimatedSize counts them.
const blockOverhead = BlockHeaderSize + 4

// EstimatedSize estimates the size the file would have if it were closed now: bytes written, plus
// the pending data block (uncompressed), bloom chunks and index entries, plus the load-on-open
// section and trailer. Callers use it to roll files at a size limit.
func (w *Writer) EstimatedSize() int64 {
	// Every change to the fixed part writes a block (data, leaf index or bloom: the offset moves) or
	// starts a bloom chunk (a full chunk is queued as the next one starts; the first key starts the
	// first chunk).
	chunks := 0
	if w.bloom != nil {
		chunks += w.bloom.numChunks
	}
	if w.dfBloom != nil {
		chunks += w.dfBloom.numChunks
	}
	if !w.est.valid || w.est.offset != w.out.offset || w.est.chunks != chunks {
		w.est = sizeEstimate{valid: true, offset: w.out.offset, chunks: chunks, fixed: w.estimatedFixed()}
	}
	n := w.est.fixed
	if w.blkOpen {
		n += int64(len(w.blk)) + 4
	}
	n += w.bloom.currentChunkSize() + w.dfBloom.currentChunkSize()
	// File info: two copies of the last key.
	if w.entries > 0 {
		n += 2 * int64(kv.KeyInfrastructureSize+len(w.lastRow)+len(w.family)+len(w.lastQual))
	}
	return n
}

// rowEstimate is EstimatedSize as a writer taking one new row after another sees it (estimateBelow):
// with an open block holding a cell and both bloom writers (ROW), it is base plus the block's length
// and twice the last row's and qualifier's lengths while no block is written (offset), the ROW bloom
// has fewer than until keys and the delete-family bloom dfKeys. Every other part EstimatedSize adds is
// fixed then: the fixed part (sizeEstimate: no block written and no chunk started: a ROW chunk starts
// only when the current one is full, at maxKeys, and until is below that), the family, the ROW chunk's
// folded size (until is also below the key count from which currentChunkSize's size may change) and
// the delete-family bloom's share (no key added). A bloom's total keys grow with its current chunk's
// key count. until is 0 when the writer was not in that state (or had no estimate yet).
//
// With upper, base counts the ROW chunk at its whole size instead of its folded size (foldedSize is at
// most that) and until is where the chunk fills: base is then a bound from above, valid for many more
// rows (a small file's chunk folds to a new size each time its keys double, and each such row would
// take EstimatedSize), that answers only "below"; a row it does not answer takes EstimatedSize.
type rowEstimate struct {
	offset int64
	until  int64 // the ROW bloom's total keys from which its chunk or its folded size may change
	dfKeys int64 // the delete-family bloom's total keys
	base   int64
	upper  bool
}

// estimateBelow reports whether EstimatedSize() < maxSize, from rowEstimate while it holds (a few
// loads and compares instead of EstimatedSize's call), else from EstimatedSize, whose parts it then
// keeps when the writer is in rowEstimate's state: the same answer as EstimatedSize's, every row. The
// roll check of a caller that writes rows one call each (AppendNewRowCoded, appendRowCodedFastDiff).
func (w *Writer) estimateBelow(maxSize int64) bool {
	q := &w.rowEst
	if q.until > 0 && q.offset == w.out.offset && w.bloom.totalKeys < q.until && w.dfBloom.totalKeys == q.dfKeys && w.blkOpen {
		if q.base+int64(len(w.blk))+2*int64(len(w.lastRow)+len(w.lastQual)) < maxSize {
			return true
		}
		if !q.upper {
			return false
		}
	}
	return w.estimateBelowSlow(maxSize)
}

// estimateBelowSlow is estimateBelow from EstimatedSize, keeping rowEstimate when its state holds.
func (w *Writer) estimateBelowSlow(maxSize int64) bool {
	e := w.EstimatedSize() // (brings the chunks' folded sizes and the key counts they hold to up to date)
	q := &w.rowEst
	q.until = 0
	if bw, dw := w.bloom, w.dfBloom; bw != nil && dw != nil && bw.chunk != nil && w.blkOpen && w.entries > 0 {
		c := bw.chunk
		*q = rowEstimate{offset: w.out.offset, until: bw.totalKeys + int64(min(c.estUntil, c.maxKeys)-c.keyCount),
			dfKeys: dw.totalKeys, base: e - int64(len(w.blk)) - 2*int64(len(w.lastRow)+len(w.lastQual))}
		// EstimatedSize brought c.estSize up to date: with the whole chunk instead, is the file below
		// maxSize? Then keep that bound until the chunk fills.
		if up := int64(c.size - c.estSize); e+up < maxSize {
			q.base += up
			q.until = bw.totalKeys + int64(c.maxKeys-c.keyCount)
			q.upper = true
		}
		// (A full chunk: until is totalKeys, which the fast check refuses: the next key starts another.
		// blkOpen and entries: EstimatedSize's block and last key parts are in e; with a cell in the
		// open block they stay while the fast check holds.)
	}
	return e < maxSize
}

// estimatedFixed is EstimatedSize but for the open data block, the chunks being filled and the
// last key.
func (w *Writer) estimatedFixed() int64 {
	n := w.out.offset
	// Pending leaf entries (written as a leaf block or moved to the root) and the root.
	n += int64(w.index.cur.nonRootSize()+w.index.root.rootSize) + 2*blockOverhead
	for _, bw := range []*writeBloomWriter{w.bloom, w.dfBloom} {
		if bw == nil || bw.totalKeys == 0 {
			continue
		}
		for _, c := range bw.ready {
			n += int64(len(c.bits)) + blockOverhead
		}
		n += int64(bw.index.rootSize+len(bw.ready)*64+64) + blockOverhead // bloom meta
	}
	// Meta index, file info (fixed entries; the two keys are EstimatedSize's) and trailer.
	n += blockOverhead + blockOverhead + 512
	if w.opts.FormatVersion == 2 {
		return n + TrailerSizeV2
	}
	return n + TrailerSizeV3
}

// currentChunkSize is the size of the chunk bw is filling as fold will leave it, with its block's
// overhead; 0 without one (or with bw nil).
func (bw *writeBloomWriter) currentChunkSize() int64 {
	if bw == nil {
		return 0
	}
	c := bw.chunk
	if c == nil {
		return 0
	}
	if c.keyCount >= c.estUntil {
		c.estSize, c.estUntil = foldedSize(c.size, c.maxKeys, c.keyCount)
	}
	return int64(c.estSize) + blockOverhead
}

// foldedSize is the size fold() leaves a chunk of size bytes, maxKeys capacity and keyCount keys in,
// and the smallest key count (math.MaxInt: none) from which it leaves a bigger one: with more keys the
// chunk folds fewer times, and fold's last halving needs maxKeys > 2*keyCount with that halving's
// maxKeys. A writer calls EstimatedSize per row, and the chunk gets a key per row: the cached size
// holds for thousands of rows.
func foldedSize(size, maxKeys, keyCount int) (folded, until int) {
	until = math.MaxInt
	for size&1 == 0 && maxKeys > keyCount<<1 { // fold's loop
		until = (maxKeys + 1) / 2
		size >>= 1
		maxKeys >>= 1
	}
	return size, until
}
