package hfilewriter

import (
	"encoding/binary"
	"fmt"
)

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
func beUint32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// Iterator scans every cell of a file in order:
//
//	it := r.Iter()
//	for it.Next() { c := it.Cell() ... }
//	if err := it.Err(); err != nil { ... }
//
// Cells returned by Cell stay valid after Next (each block is decoded into fresh memory).
type Iterator struct {
	r     *Reader
	off   int64 // offset of the next block to read
	cells []Cell
	i     int
	err   error
	done  bool

	block *readBlock // current data block
	nblk  int        // data blocks read so far
}

// Iter returns an iterator over all cells, reading the scanned block section sequentially from the
// first data block to the last one and skipping inline index and bloom blocks.
func (r *Reader) Iter() *Iterator {
	it := &Iterator{r: r, off: r.trailer.FirstDataBlockOffset, i: -1}
	if r.trailer.EntryCount == 0 && len(r.rootIndex) == 0 {
		it.done = true
	}
	return it
}

// Next advances to the next cell; it returns false at the end or on error (see Err).
func (it *Iterator) Next() bool {
	if it.err != nil || it.done && it.i+1 >= len(it.cells) {
		return false
	}
	it.i++
	for it.i >= len(it.cells) {
		if !it.nextBlock() {
			return false
		}
	}
	return true
}

func (it *Iterator) nextBlock() bool {
	r := it.r
	last := r.trailer.LastDataBlockOffset
	limit := r.blockLimit()
	for {
		if it.done || it.off > last || it.off < 0 {
			it.done = true
			it.cells, it.i = nil, 0
			return false
		}
		b, err := r.readBlockAt(it.off, limit, 0)
		if err != nil {
			it.err = fmt.Errorf("hfile: scanning: %w", err)
			return false
		}
		it.off += int64(b.Header.OnDiskSize())
		switch b.Header.Type {
		case BlockData, BlockEncodedData:
		case BlockLeafIndex, BlockBloomChunk:
			continue
		default:
			it.err = fmt.Errorf("hfile: scanning: unexpected %s in the data section", b.describe())
			return false
		}
		cells, err := decodeDataBlock(b.Header.Type, b.Payload, &r.opts)
		if err != nil {
			it.err = fmt.Errorf("hfile: data block %d at offset %d: %w", it.nblk, b.Offset, err)
			return false
		}
		it.nblk++
		it.block = b
		it.cells, it.i = cells, 0
		if len(cells) > 0 {
			return true
		}
	}
}

// Cell returns the current cell.
func (it *Iterator) Cell() *Cell {
	if it.i < 0 || it.i >= len(it.cells) {
		return nil
	}
	return &it.cells[it.i]
}

// Err returns the first error met.
func (it *Iterator) Err() error { return it.err }

// BlockOffset is the file offset of the data block holding the current cell.
func (it *Iterator) BlockOffset() int64 {
	if it.block == nil {
		return -1
	}
	return it.block.Offset
}
