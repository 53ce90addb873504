package hfilewriter

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// writeTrailerFields are the FileTrailerProto fields the writer fills in (§9).
type writeTrailerFields struct {
	fileInfoOffset             int64
	loadOnOpenOffset           int64
	uncompressedDataIndexSz    int64
	totalUncompressedBytes     int64
	dataIndexCount             uint32
	metaIndexCount             uint32
	entryCount                 uint64
	numDataIndexLevels         uint32
	firstDataBlockOffset       int64
	lastDataBlockOffset        int64
	comparatorClassName        string
	compressionCodec           uint32
	majorVersion, minorVersion int
}

// writeTrailer serializes the fixed file trailer: magic, length-delimited FileTrailerProto with
// proto2 semantics (fields 1-12 always present, in field order; negative offsets as 10-byte
// varints), zero padding, and the version int in the last 4 bytes; appended to dst.
func writeTrailer(dst []byte, t *writeTrailerFields) ([]byte, error) {
	size := TrailerSizeV3
	if t.majorVersion == 2 {
		size = TrailerSizeV2
	}
	var msgBuf [192]byte // the fields: 12 varints of at most 11 bytes each, and the comparator's name
	msg := msgBuf[:0]
	u64 := func(field int, v uint64) {
		msg = binary.AppendUvarint(msg, uint64(field)<<3) // wire type 0
		msg = binary.AppendUvarint(msg, v)
	}
	u64(1, uint64(t.fileInfoOffset))
	u64(2, uint64(t.loadOnOpenOffset))
	u64(3, uint64(t.uncompressedDataIndexSz))
	u64(4, uint64(t.totalUncompressedBytes))
	u64(5, uint64(t.dataIndexCount))
	u64(6, uint64(t.metaIndexCount))
	u64(7, t.entryCount)
	u64(8, uint64(t.numDataIndexLevels))
	u64(9, uint64(t.firstDataBlockOffset))
	u64(10, uint64(t.lastDataBlockOffset))
	msg = binary.AppendUvarint(msg, 11<<3|2)
	msg = binary.AppendUvarint(msg, uint64(len(t.comparatorClassName)))
	msg = append(msg, t.comparatorClassName...)
	u64(12, uint64(t.compressionCodec))

	start := len(dst)
	out := slices.Grow(dst, size)
	out = append(out, TrailerMagic[:]...)
	out = binary.AppendUvarint(out, uint64(len(msg)))
	out = append(out, msg...)
	if len(out)-start > size-4 {
		return nil, fmt.Errorf("trailer of %d bytes does not fit in %d", len(out)-start, size)
	}
	out = out[:start+size]
	clear(out[start+len(TrailerMagic)+writeUvarintLen(uint64(len(msg)))+len(msg):])
	binary.BigEndian.PutUint32(out[start+size-4:], uint32(t.minorVersion)<<24|uint32(t.majorVersion)&0x00FFFFFF)
	return out, nil
}
