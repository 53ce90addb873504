package hfilewriter

import (
	"encoding/binary"
	"fmt"
	"io"
)

// writeBlockTypeIDs is the number of distinct BlockType.getId() values HBase uses to chain blocks
// through prevBlockOffset (DATA and ENCODED_DATA share an id).
const writeBlockTypeIDs = 11

// writeBlockTypeID returns HBase's BlockType.getId() (the enum ordinal, ENCODED_DATA mapped to DATA).
func writeBlockTypeID(t BlockType) int {
	switch t {
	case BlockData, BlockEncodedData:
		return 0
	case BlockLeafIndex:
		return 2
	case BlockBloomChunk:
		return 3
	case BlockMeta:
		return 4
	case BlockIntermediateIndex:
		return 5
	case BlockRootIndex:
		return 6
	case BlockFileInfo:
		return 7
	case BlockGeneralBloomMeta:
		return 8
	case BlockDeleteFamilyBloomMeta:
		return 9
	}
	return 10
}

// writtenBlock describes a block just written.
type writtenBlock struct {
	offset                int64 // file offset of the header
	onDiskSizeWithHeader  int32 // header + on-disk payload + checksums (the index entry size)
	uncompressedSizeNoHdr int32 // payload size before compression
}

// blockOutput writes framed blocks (header, compressed payload, checksums) to the file and tracks
// the file offset and the previous block offset per block type, like HBase's HFileBlock.Writer.
type blockOutput struct {
	w            io.Writer
	ab           availableBufferer // w, if it lends its buffer (see available)
	offset       int64
	prevOffset   [writeBlockTypeIDs]int64
	comp         writeCompressor // nil for NONE
	compression  Compression     // comp's codec and level (newBlockOutput reuses comp for the same)
	compLevel    int
	checksumType ChecksumType
	bytesPerSum  int
	scratch      []byte // compressed block assembly
	lentBlocks   int    // blocks written from the output's available buffer (no copy)

	// gathering (startGather to flushGather: a Writer's Close) holds back what is written in pend, in
	// the output's available buffer, to write it in one Write: the blocks of Close (all of a small
	// file's blocks) are built there one after the other, as they would be with a Write each. offset
	// counts pend's bytes.
	gathering bool
	pend      []byte
}

// newBlockOutput returns the block output of a new file written to w: prev (the previous file's, done
// with; nil: none) set up anew, with its compressor when the codec and level are the same and its
// compressed-block buffer.
func newBlockOutput(w io.Writer, opts *WriterOptions, prev *blockOutput) (*blockOutput, error) {
	var comp writeCompressor
	var scratch []byte
	if prev != nil {
		if prev.comp != nil && prev.compression == opts.Compression && prev.compLevel == opts.CompressionLevel {
			comp = prev.comp
		}
		scratch = prev.scratch
		prev.comp, prev.scratch = nil, nil
	}
	if comp == nil {
		var err error
		if comp, err = newWriteCompressorLevel(opts.Compression, opts.CompressionLevel); err != nil {
			return nil, err
		}
	}
	b := prev // the previous file's output, done with: set up anew in place, field by field
	if b == nil {
		b = new(blockOutput)
	}
	b.w, b.offset, b.comp, b.compression, b.compLevel = w, 0, comp, opts.Compression, opts.CompressionLevel
	b.checksumType, b.bytesPerSum, b.scratch, b.lentBlocks = opts.Checksum.Type(), opts.BytesPerChecksum, scratch, 0
	b.gathering, b.pend = false, nil
	b.ab, _ = w.(availableBufferer)
	b.prevOffset = noPrevOffsets
	return b, nil
}

// noPrevOffsets is a new file's previous block offsets: none of any type.
var noPrevOffsets = [writeBlockTypeIDs]int64{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}

// availableBufferer is implemented by writers that lend the rest of their buffer for the next write
// (bufio.Writer.AvailableBuffer's contract: valid until the next Write). A block built or compressed
// there is written without a copy; the file's bytes are the same either way.
type availableBufferer interface {
	AvailableBuffer() []byte
}

// available returns the output's available buffer as an empty slice if it can hold n bytes, else nil.
// Whatever is appended to it must be written before anything else is.
func (b *blockOutput) available(n int) []byte {
	if b.gathering {
		if cap(b.pend)-len(b.pend) >= n {
			return b.pend[len(b.pend):]
		}
		return nil
	}
	if b.ab == nil {
		return nil
	}
	if a := b.ab.AvailableBuffer(); cap(a) >= n {
		return a[:0]
	}
	return nil
}

// startGather starts gathering the writes (see gathering), when the output lends its buffer.
func (b *blockOutput) startGather() {
	if b.ab == nil {
		return
	}
	b.gathering, b.pend = true, b.ab.AvailableBuffer()[:0]
}

// flushGather writes what was gathered and stops gathering.
func (b *blockOutput) flushGather() error {
	p := b.pend
	b.gathering, b.pend = false, nil
	if len(p) == 0 {
		return nil
	}
	b.offset -= int64(len(p)) // writeRaw counts what is written
	return b.writeRaw(p)
}

// writeRaw writes p (a block, or bytes that are not a block: the trailer), or gathers it.
func (b *blockOutput) writeRaw(p []byte) error {
	if b.gathering {
		if n := len(b.pend); len(p) <= cap(b.pend)-n {
			b.pend = b.pend[:n+len(p)]
			if len(p) > 0 && &b.pend[n] != &p[0] { // not built in place (available)
				copy(b.pend[n:], p)
			}
			b.offset += int64(len(p))
			return nil
		}
		// No room left: write what was gathered and p, and gather on in the output's next buffer.
		if err := b.flushGather(); err != nil {
			return err
		}
		err := b.writeRaw(p)
		b.startGather()
		return err
	}
	n, err := b.w.Write(p)
	b.offset += int64(n)
	if err == nil && n != len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("write at offset %d: %w", b.offset, err)
	}
	return nil
}

// writeBlock frames and writes one block. buf holds BlockHeaderSize bytes of room followed by the
// uncompressed payload; the header is filled in place and checksums are appended, so buf's
// capacity is reused. It returns buf (possibly reallocated) for the caller to keep.
func (b *blockOutput) writeBlock(t BlockType, buf []byte) ([]byte, writtenBlock, error) {
	payloadLen := len(buf) - BlockHeaderSize
	block := buf
	var lentAt *byte // where the output's available buffer starts, when block was compressed there
	if b.comp != nil {
		// Room for a block that grew by a quarter (snappy's worst case is a sixth plus 32 bytes a chunk),
		// so that a Hadoop-framed codec compresses into it in place (hadoopBlockWriteCompressor).
		if room := 2*BlockHeaderSize + payloadLen + payloadLen/4 + 64; cap(b.scratch) < room {
			b.scratch = make([]byte, BlockHeaderSize, room+NumChecksumBytes(room, b.bytesPerSum))
		}
		dst := b.scratch
		// Compressed straight into the output's buffer when it has room for a block that did not
		// shrink (if it grows past that, append moves it and the write copies it as usual).
		if a := b.available(2*BlockHeaderSize + payloadLen + payloadLen/8 + NumChecksumBytes(2*payloadLen+BlockHeaderSize, b.bytesPerSum)); a != nil {
			dst, lentAt = a, &a[:1][0]
		}
		var err error
		if block, err = b.comp.appendCompressed(dst[:BlockHeaderSize], buf[BlockHeaderSize:]); err != nil {
			return buf, writtenBlock{}, fmt.Errorf("compress %s block: %w", t, err)
		}
	}
	onDiskDataWithHeader := len(block)
	sums := NumChecksumBytes(onDiskDataWithHeader, b.bytesPerSum)
	id := writeBlockTypeID(t)
	h := block[:BlockHeaderSize]
	copy(h, t[:])
	binary.BigEndian.PutUint32(h[8:], uint32(onDiskDataWithHeader-BlockHeaderSize+sums))
	binary.BigEndian.PutUint32(h[12:], uint32(payloadLen))
	binary.BigEndian.PutUint64(h[16:], uint64(b.prevOffset[id]))
	h[24] = byte(b.checksumType)
	binary.BigEndian.PutUint32(h[25:], uint32(b.bytesPerSum))
	binary.BigEndian.PutUint32(h[29:], uint32(onDiskDataWithHeader))
	block = AppendChecksums(block, block[:onDiskDataWithHeader], b.checksumType, b.bytesPerSum)
	// Whether block is in the output's available buffer (a block that grew past the room moved).
	lent := lentAt != nil && &block[0] == lentAt
	if b.comp == nil { // an uncompressed data block built there (Writer.newDataBlock)?
		a := b.available(1)
		lent = a != nil && &a[:1][0] == &block[0]
	}
	switch {
	case b.comp == nil:
		buf = block
	case !lent:
		b.scratch = block
	}
	if lent {
		b.lentBlocks++
	}
	wb := writtenBlock{offset: b.offset, onDiskSizeWithHeader: int32(len(block)), uncompressedSizeNoHdr: int32(payloadLen)}
	if err := b.writeRaw(block); err != nil {
		return buf, wb, fmt.Errorf("%s block: %w", t, err)
	}
	b.prevOffset[id] = wb.offset
	return buf, wb, nil
}
