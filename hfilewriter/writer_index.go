package hfilewriter

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// writeIndexChunk is one chunk of a block index under construction (HBase BlockIndexChunk): it can
// be serialized as a leaf/intermediate (non-root) block or as a root block.
type writeIndexChunk struct {
	keys             []byte // all keys concatenated
	keyEnds          []int  // end offset of key i in keys
	offsets          []int64
	sizes            []int32
	numSubEntriesAt  []int64 // root chunk of a multi-level index: cumulative data blocks
	nonRootEntrySize int
	rootSize         int
}

func (c *writeIndexChunk) numEntries() int { return len(c.offsets) }

func (c *writeIndexChunk) key(i int) []byte {
	start := 0
	if i > 0 {
		start = c.keyEnds[i-1]
	}
	return c.keys[start:c.keyEnds[i]]
}

// add appends an entry; cumSub is the cumulative number of sub-entries or -1.
func (c *writeIndexChunk) add(key []byte, offset int64, size int32, cumSub int64) {
	c.nonRootEntrySize += 12 + len(key)
	c.rootSize += 12 + VLongSize(int64(len(key))) + len(key)
	c.keys = append(c.keys, key...)
	c.keyEnds = append(c.keyEnds, len(c.keys))
	c.offsets = append(c.offsets, offset)
	c.sizes = append(c.sizes, size)
	if cumSub >= 0 {
		c.numSubEntriesAt = append(c.numSubEntriesAt, cumSub)
	}
}

func (c *writeIndexChunk) reset() {
	c.keys = c.keys[:0]
	c.keyEnds = c.keyEnds[:0]
	c.offsets = c.offsets[:0]
	c.sizes = c.sizes[:0]
	c.numSubEntriesAt = c.numSubEntriesAt[:0]
	c.nonRootEntrySize = 0
	c.rootSize = 0
}

// nonRootSize is the serialized size in the non-root (leaf/intermediate) format.
func (c *writeIndexChunk) nonRootSize() int {
	return 4 + 4*(c.numEntries()+1) + c.nonRootEntrySize
}

// appendNonRoot serializes the chunk in the non-root format: entry count, secondary index, entries.
func (c *writeIndexChunk) appendNonRoot(dst []byte) []byte {
	n := c.numEntries()
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	off := 0
	for i := 0; i < n; i++ {
		dst = binary.BigEndian.AppendUint32(dst, uint32(off))
		off += 12 + len(c.key(i))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(off))
	for i := 0; i < n; i++ {
		dst = binary.BigEndian.AppendUint64(dst, uint64(c.offsets[i]))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.sizes[i]))
		dst = append(dst, c.key(i)...)
	}
	return dst
}

// appendRoot serializes the chunk in the root format (offset, size, writeByteArray(key)).
func (c *writeIndexChunk) appendRoot(dst []byte) []byte {
	for i := 0; i < c.numEntries(); i++ {
		dst = binary.BigEndian.AppendUint64(dst, uint64(c.offsets[i]))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.sizes[i]))
		dst = AppendByteArray(dst, c.key(i))
	}
	return dst
}

// appendMidKeyMetadata appends the 16-byte mid-key metadata of a root chunk that references leaf
// blocks (BlockIndexChunk.getMidKeyMetadata).
func (c *writeIndexChunk) appendMidKeyMetadata(dst []byte) ([]byte, error) {
	n := c.numEntries()
	if n == 0 || len(c.numSubEntriesAt) != n {
		return dst, fmt.Errorf("mid-key metadata: root chunk has %d entries and %d sub-entry counts", n, len(c.numSubEntriesAt))
	}
	total := c.numSubEntriesAt[n-1]
	if total == 0 {
		return dst, fmt.Errorf("no leaf-level entries, mid-key unavailable")
	}
	mid := (total - 1) / 2
	// Collections.binarySearch semantics: exact match i -> i+1, else the insertion point.
	e := sort.Search(n, func(i int) bool { return c.numSubEntriesAt[i] >= mid })
	if e < n && c.numSubEntriesAt[e] == mid {
		e++
	}
	var before int64
	if e > 0 {
		before = c.numSubEntriesAt[e-1]
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.offsets[e]))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.sizes[e]))
	return binary.BigEndian.AppendUint32(dst, uint32(mid-before)), nil
}

// writeIndexWriter is HBase's HFileBlockIndex.BlockIndexWriter for the data index: leaf chunks are
// written inline at data block boundaries, intermediate levels and the root at close.
type writeIndexWriter struct {
	maxChunkSize int
	minEntries   int
	cur          writeIndexChunk // the current inline (leaf) chunk
	curIsRoot    bool            // the leaf chunk became the root (single-level index)
	root         writeIndexChunk
	levels       int
	totalEntries int64
	// totalUncompressed is the sum of uncompressedSizeWithoutHeader of all data index blocks.
	totalUncompressed int64
	pendingFirstKey   []byte
}

func newWriteIndexWriter(maxChunkSize, minEntries int) *writeIndexWriter {
	return &writeIndexWriter{maxChunkSize: maxChunkSize, minEntries: minEntries, levels: 1}
}

// reuse empties x, whose file is written, for the next file, keeping its chunks' arrays (NewWriterReusing).
//
// It sets x's fields one by one (a new writeIndexWriter assigned over x would be built and then copied):
// every field not kept is set as newWriteIndexWriter sets it.
func (x *writeIndexWriter) reuse(maxChunkSize, minEntries int) *writeIndexWriter {
	if x.curIsRoot { // a single-level index moved its leaf chunk to the root: the next file's leaf again
		x.cur, x.root = x.root, x.cur
	}
	x.cur.reset()
	x.root.reset()
	x.maxChunkSize, x.minEntries, x.levels, x.curIsRoot = maxChunkSize, minEntries, 1, false
	x.totalEntries, x.totalUncompressed, x.pendingFirstKey = 0, 0, x.pendingFirstKey[:0]
	return x
}

// addEntry records a data block.
func (x *writeIndexWriter) addEntry(key []byte, offset int64, size int32) {
	x.cur.add(key, offset, size, -1)
	x.totalEntries++
}

// shouldWrite reports whether a leaf index block must be written now (InlineBlockWriter.shouldWriteBlock).
func (x *writeIndexWriter) shouldWrite(closing bool) bool {
	if x.curIsRoot || x.cur.numEntries() == 0 {
		return false
	}
	if closing {
		if x.root.numEntries() == 0 {
			// No leaf block yet: the pending entries become the root (single-level index).
			x.root, x.cur = x.cur, writeIndexChunk{}
			x.curIsRoot = true
			return false
		}
		return true
	}
	return x.cur.nonRootSize() >= x.maxChunkSize
}

// appendLeaf serializes the pending leaf chunk and clears it.
func (x *writeIndexWriter) appendLeaf(dst []byte) []byte {
	dst = x.cur.appendNonRoot(dst)
	x.pendingFirstKey = append(x.pendingFirstKey[:0], x.cur.key(0)...)
	x.cur.reset()
	return dst
}

// leafWritten adds the root entry for the leaf block just written.
func (x *writeIndexWriter) leafWritten(b writtenBlock) {
	x.totalUncompressed += int64(b.uncompressedSizeNoHdr)
	if x.root.numEntries() == 0 {
		x.levels = 2
	}
	x.root.add(x.pendingFirstKey, b.offset, b.onDiskSizeWithHeader, x.totalEntries)
}

// writeIndexBlocks writes the intermediate levels (if the root is too big) and the root block and
// returns the root block's offset (BlockIndexWriter.writeIndexBlocks).
func (x *writeIndexWriter) writeIndexBlocks(out *blockOutput, buf []byte) ([]byte, int64, error) {
	if !x.curIsRoot && x.cur.numEntries() != 0 {
		return buf, 0, fmt.Errorf("data index: %d entries left in the last leaf chunk", x.cur.numEntries())
	}
	var midKey []byte
	if x.levels > 1 {
		var err error
		if midKey, err = x.root.appendMidKeyMetadata(nil); err != nil {
			return buf, 0, fmt.Errorf("data index: %w", err)
		}
	}
	if !x.curIsRoot {
		for x.root.rootSize > x.maxChunkSize && x.root.numEntries() > x.minEntries && x.levels < 16 {
			parent, b, err := x.writeIntermediateLevel(out, buf)
			buf = b
			if err != nil {
				return buf, 0, err
			}
			x.root = parent
			x.levels++
		}
	}
	buf = x.root.appendRoot(buf[:BlockHeaderSize])
	buf = append(buf, midKey...)
	buf, wb, err := out.writeBlock(BlockRootIndex, buf)
	if err != nil {
		return buf, 0, fmt.Errorf("data index root: %w", err)
	}
	x.totalUncompressed += int64(wb.uncompressedSizeNoHdr)
	return buf, wb.offset, nil
}

func (x *writeIndexWriter) writeIntermediateLevel(out *blockOutput, buf []byte) (writeIndexChunk, []byte, error) {
	var parent, chunk writeIndexChunk
	flush := func() error {
		var wb writtenBlock
		var err error
		buf, wb, err = out.writeBlock(BlockIntermediateIndex, chunk.appendNonRoot(buf[:BlockHeaderSize]))
		if err != nil {
			return fmt.Errorf("data index intermediate block: %w", err)
		}
		x.totalUncompressed += int64(wb.uncompressedSizeNoHdr)
		parent.add(chunk.key(0), wb.offset, wb.onDiskSizeWithHeader, -1)
		chunk.reset()
		return nil
	}
	for i := 0; i < x.root.numEntries(); i++ {
		chunk.add(x.root.key(i), x.root.offsets[i], x.root.sizes[i], -1)
		if i >= x.minEntries && chunk.rootSize >= x.maxChunkSize {
			if err := flush(); err != nil {
				return parent, buf, err
			}
		}
	}
	if chunk.numEntries() > 0 {
		if err := flush(); err != nil {
			return parent, buf, err
		}
	}
	return parent, buf, nil
}

// numRootEntries is the trailer's data_index_count.
func (x *writeIndexWriter) numRootEntries() int { return x.root.numEntries() }
