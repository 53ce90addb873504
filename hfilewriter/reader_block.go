package hfilewriter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// readAtFunc reads exactly len(p) bytes at off.
type readAtFunc func(p []byte, off int64) error

// readBlockHeader is a decoded 33-byte block header (§4.1).
type readBlockHeader struct {
	Type                          BlockType
	OnDiskSizeWithoutHeader       int
	UncompressedSizeWithoutHeader int
	PrevBlockOffset               int64
	ChecksumType                  ChecksumType
	BytesPerChecksum              int
	OnDiskDataSizeWithHeader      int
}

// OnDiskSize is the whole block's size on disk (header + payload + checksums).
func (h *readBlockHeader) OnDiskSize() int { return BlockHeaderSize + h.OnDiskSizeWithoutHeader }

// readBlock is one block read from the file: header, offset, and its decompressed payload.
type readBlock struct {
	Offset  int64
	Header  readBlockHeader
	Payload []byte // uncompressed payload (still data-block encoded for ENCODED_DATA)
}

func (b *readBlock) describe() string {
	return fmt.Sprintf("%s block at offset %d", b.Header.Type, b.Offset)
}

// readParseBlockHeader decodes and sanity-checks a header.
func readParseBlockHeader(b []byte) (readBlockHeader, error) {
	var h readBlockHeader
	err := readParseBlockHeaderInto(&h, b)
	return h, err
}

// readParseBlockHeaderInto is readParseBlockHeader into *h, without a copy of the header on return
// (the stream verifier parses one for every block). On an error *h holds the fields parsed so far.
func readParseBlockHeaderInto(h *readBlockHeader, b []byte) error {
	*h = readBlockHeader{}
	if len(b) < BlockHeaderSize {
		return errors.New("truncated block header")
	}
	var known bool
	h.Type, known = blockTypeOf(b[:8])
	be := binary.BigEndian
	h.OnDiskSizeWithoutHeader = int(int32(be.Uint32(b[8:])))
	h.UncompressedSizeWithoutHeader = int(int32(be.Uint32(b[12:])))
	h.PrevBlockOffset = int64(be.Uint64(b[16:]))
	h.ChecksumType = ChecksumType(b[24])
	h.BytesPerChecksum = int(int32(be.Uint32(b[25:])))
	h.OnDiskDataSizeWithHeader = int(int32(be.Uint32(b[29:])))
	if !known {
		return fmt.Errorf("unknown block magic %q", h.Type)
	}
	if h.OnDiskSizeWithoutHeader < 0 || h.UncompressedSizeWithoutHeader < 0 {
		return fmt.Errorf("negative block size in header (onDiskSizeWithoutHeader %d, uncompressedSizeWithoutHeader %d)",
			h.OnDiskSizeWithoutHeader, h.UncompressedSizeWithoutHeader)
	}
	if h.ChecksumType > ChecksumTypeCRC32C {
		return fmt.Errorf("unknown checksum type %d in block header", h.ChecksumType)
	}
	if h.BytesPerChecksum < BlockHeaderSize {
		return fmt.Errorf("bytesPerChecksum %d in block header is below the minimum %d", h.BytesPerChecksum, BlockHeaderSize)
	}
	if h.OnDiskDataSizeWithHeader < BlockHeaderSize || h.OnDiskDataSizeWithHeader > BlockHeaderSize+h.OnDiskSizeWithoutHeader {
		return fmt.Errorf("onDiskDataSizeWithHeader %d outside [%d, %d]", h.OnDiskDataSizeWithHeader, BlockHeaderSize, BlockHeaderSize+h.OnDiskSizeWithoutHeader)
	}
	want := NumChecksumBytes(h.OnDiskDataSizeWithHeader, h.BytesPerChecksum)
	if got := BlockHeaderSize + h.OnDiskSizeWithoutHeader - h.OnDiskDataSizeWithHeader; got != want {
		return fmt.Errorf("block has %d checksum bytes, want %d for %d data bytes at %d bytes per checksum",
			got, want, h.OnDiskDataSizeWithHeader, h.BytesPerChecksum)
	}
	return nil
}

// readBlockAt reads, checksum-verifies and decompresses the block at off. limit is the end of the region
// the block must fit in; wantSize, if > 0, is the on-disk size (with header) the index says it has.
func (r *Reader) readBlockAt(off, limit int64, wantSize int) (*readBlock, error) {
	return r.readBlockInto(off, limit, wantSize, nil, nil)
}

// readBlockInto is readBlockAt reading into *buf and decompressing into *payloadBuf when they are
// large enough (growing them otherwise), for sequential scans: the returned block's bytes are valid
// until the next call with the same buffers.
func (r *Reader) readBlockInto(off, limit int64, wantSize int, buf, payloadBuf *[]byte) (*readBlock, error) {
	if off < 0 || off+BlockHeaderSize > limit {
		return nil, fmt.Errorf("block offset %d outside the readable region [0, %d)", off, limit)
	}
	if r.blocks != nil {
		return r.blocks(off, limit, wantSize)
	}
	var hb [BlockHeaderSize]byte
	if err := r.readAt(hb[:], off); err != nil {
		return nil, fmt.Errorf("block at offset %d: reading header: %w", off, err)
	}
	h, err := readParseBlockHeader(hb[:])
	if err != nil {
		return nil, fmt.Errorf("block at offset %d: %w", off, err)
	}
	if err := checkBlockExtent(&h, off, limit, wantSize); err != nil {
		return nil, err
	}
	var raw []byte
	if buf != nil && cap(*buf) >= h.OnDiskSize() {
		raw = (*buf)[:h.OnDiskSize()]
	} else {
		raw = make([]byte, h.OnDiskSize())
		if buf != nil {
			*buf = raw
		}
	}
	copy(raw, hb[:])
	if err := r.readAt(raw[BlockHeaderSize:], off+BlockHeaderSize); err != nil {
		return nil, fmt.Errorf("%s block at offset %d: reading body: %w", h.Type, off, err)
	}
	return decodeRawBlock(raw, off, h, r.trailer.Compression, r.trailer.Encrypted, r.skipChecksums, payloadBuf)
}

// checkBlockExtent checks a block's parsed header against where it must lie: limit is the end of
// the region the block must fit in; wantSize, if > 0, is the on-disk size the index records.
func checkBlockExtent(h *readBlockHeader, off, limit int64, wantSize int) error {
	if wantSize > 0 && h.OnDiskSize() != wantSize {
		return fmt.Errorf("%s block at offset %d: on-disk size %d does not match the %d recorded in the index",
			h.Type, off, h.OnDiskSize(), wantSize)
	}
	if int64(h.OnDiskSize()) > limit-off {
		return fmt.Errorf("%s block at offset %d: on-disk size %d runs past offset %d (file truncated or corrupt header)",
			h.Type, off, h.OnDiskSize(), limit)
	}
	return nil
}

// decodeRawBlock checks the checksums of one whole on-disk block at off (raw: header, payload and
// checksums; h: its parsed header) and decompresses its payload with codec, into *payloadBuf if not
// nil (see decompressBlockPayloadInto). The payload may alias raw (CompressionNone).
func decodeRawBlock(raw []byte, off int64, h readBlockHeader, codec CompressionCodec, encrypted, skipChecksums bool, payloadBuf *[]byte) (*readBlock, error) {
	payload, err := decodeRawPayload(raw, off, &h, codec, encrypted, skipChecksums, payloadBuf)
	if err != nil {
		return nil, err
	}
	return &readBlock{Offset: off, Header: h, Payload: payload}, nil
}

// decodeRawPayload is decodeRawBlock's checks and decompression: the block's payload.
func decodeRawPayload(raw []byte, off int64, h *readBlockHeader, codec CompressionCodec, encrypted, skipChecksums bool, payloadBuf *[]byte) ([]byte, error) {
	data := raw[:h.OnDiskDataSizeWithHeader]
	if !skipChecksums {
		if err := VerifyChecksums(data, raw[h.OnDiskDataSizeWithHeader:], h.ChecksumType, h.BytesPerChecksum); err != nil {
			return nil, fmt.Errorf("%s block at offset %d: checksum: %w", h.Type, off, err)
		}
	}
	if encrypted {
		return nil, fmt.Errorf("%s block at offset %d: encrypted HFiles are not supported", h.Type, off)
	}
	payload, err := decompressBlockPayloadInto(codec, data[BlockHeaderSize:], h.UncompressedSizeWithoutHeader, payloadBuf)
	if err != nil {
		return nil, fmt.Errorf("%s block at offset %d: decompressing %d bytes: %w", h.Type, off, len(data)-BlockHeaderSize, err)
	}
	return payload, nil
}

// readBlockOfType reads a block and requires one of the given types.
func (r *Reader) readBlockOfType(off, limit int64, wantSize int, types ...BlockType) (*readBlock, error) {
	b, err := r.readBlockAt(off, limit, wantSize)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		if b.Header.Type == t {
			return b, nil
		}
	}
	return nil, fmt.Errorf("block at offset %d is %s, want %v", off, b.Header.Type, types)
}

// readAtFull adapts an io.ReaderAt to readAtFunc.
func readAtFull(ra io.ReaderAt, size int64) readAtFunc {
	return func(p []byte, off int64) error {
		if off < 0 || off+int64(len(p)) > size {
			return fmt.Errorf("read of %d bytes at offset %d outside the %d-byte file", len(p), off, size)
		}
		n, err := ra.ReadAt(p, off)
		if n == len(p) {
			return nil
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
}
