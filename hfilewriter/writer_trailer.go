package hfilewriter

import (
	"encoding/binary"
	"fmt"
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
	var tb trailerBuf
	out, err := tb.write(t)
	if err != nil {
		return nil, err
	}
	return append(dst, out...), nil
}

// trailerBuf keeps a Writer's last trailer for the next file's (NewWriterReusing): a v3 trailer is
// 4,096 bytes of which ~100 change; the zero padding is cleared only where the last message ran past
// the new one.
type trailerBuf struct {
	b   []byte // the last trailer written (nil: none); its bytes have not changed since
	end int    // where its message ends: b[end:len(b)-4] is zero
}

// write returns the trailer of t (writeTrailer's bytes), in tb's array when the last trailer had the
// same size, else in a new one.
func (tb *trailerBuf) write(t *writeTrailerFields) ([]byte, error) {
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

	if n := len(TrailerMagic) + writeUvarintLen(uint64(len(msg))) + len(msg); n > size-4 {
		return nil, fmt.Errorf("trailer of %d bytes does not fit in %d", n, size)
	}
	if len(tb.b) != size {
		tb.b, tb.end = make([]byte, size), 0
	}
	out := tb.b
	n := copy(out, TrailerMagic[:])
	n += binary.PutUvarint(out[n:], uint64(len(msg)))
	n += copy(out[n:], msg)
	if tb.end > n {
		clear(out[n:tb.end])
	}
	tb.end = n
	binary.BigEndian.PutUint32(out[size-4:], uint32(t.minorVersion)<<24|uint32(t.majorVersion)&0x00FFFFFF)
	return out, nil
}
