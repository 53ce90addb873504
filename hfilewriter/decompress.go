package hfilewriter

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// zstdFrameMagic starts every zstd frame.
var zstdFrameMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

// decompressBlockPayloadInto decompresses one block's on-disk payload with the file's codec; the
// result must be exactly n bytes (the header's uncompressedSizeWithoutHeader). It decompresses into
// *buf when it is large enough (growing it otherwise), for sequential scans that drop each payload
// before the next: the result is valid until the next call with the same buf. A nil buf allocates
// every time.
func decompressBlockPayloadInto(codec CompressionCodec, src []byte, n int, buf *[]byte) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative uncompressed size %d", n)
	}
	switch codec {
	case CodecNone:
		if len(src) != n {
			return nil, fmt.Errorf("uncompressed block payload is %d bytes, header says %d", len(src), n)
		}
		return src, nil
	case CodecGZ:
		return decompressReadGzip(src, n, buf)
	case CodecSnappy:
		return decompressReadHadoopBlocks(src, n, buf, decompressReadSnappyChunk)
	case CodecLZ4:
		return decompressReadHadoopBlocks(src, n, buf, decompressReadLZ4Chunk)
	case CodecZSTD:
		if bytes.HasPrefix(src, zstdFrameMagic) {
			return decompressReadZstdStream(src, n, buf)
		}
		return decompressReadZstdChunks(src, n, buf)
	}
	return nil, fmt.Errorf("unsupported compression codec %s (ordinal %d)", codec, uint32(codec))
}

// decompressOut returns n bytes of *buf (growing it) or, with a nil buf, a new slice.
func decompressOut(buf *[]byte, n int) []byte {
	if buf == nil {
		return make([]byte, n)
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return (*buf)[:n]
}

// decompressReadExact reads exactly n bytes from rd and requires that nothing but EOF follows. With
// buf, it reads into *buf's storage and keeps what it grew to there.
func decompressReadExact(rd io.Reader, n int, buf *[]byte) ([]byte, error) {
	var dst []byte
	if buf != nil {
		dst = (*buf)[:0]
	}
	b := bytes.NewBuffer(dst)
	// Grow gradually: n comes from an untrusted header.
	b.Grow(min(n, 1<<20))
	got, err := io.Copy(b, io.LimitReader(rd, int64(n)+1))
	if buf != nil {
		*buf = b.Bytes()[:0]
	}
	if err != nil {
		return nil, err
	}
	if got != int64(n) {
		return nil, fmt.Errorf("decompressed to %d bytes, header says %d", got, n)
	}
	return b.Bytes(), nil
}

func decompressReadGzip(src []byte, n int, buf *[]byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	zr.Multistream(false)
	out, err := decompressReadExact(zr, n, buf)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return out, nil
}

func decompressReadZstdStream(src []byte, n int, buf *[]byte) ([]byte, error) {
	zr, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(uint64(n)+1<<20))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	defer zr.Close()
	out, err := decompressReadExact(zr, n, buf)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}

// decompressChunkFunc decompresses one raw chunk of Hadoop block framing into dst (len(dst) = room left)
// and returns the number of bytes produced.
type decompressChunkFunc func(dst, chunk []byte) (int, error)

// decompressReadHadoopBlocks undoes Hadoop's BlockCompressorStream framing: repeated
// [int32 outerUncompressedLen][int32 chunkLen][chunk]... until the outer length is produced.
func decompressReadHadoopBlocks(src []byte, n int, buf *[]byte, chunkFn decompressChunkFunc) ([]byte, error) {
	// A raw chunk expands at most ~255x (LZ4); refuse absurd sizes before allocating.
	if int64(n) > 256*int64(len(src))+64 {
		return nil, fmt.Errorf("header claims %d uncompressed bytes from %d compressed bytes", n, len(src))
	}
	out := decompressOut(buf, n)
	pos := 0
	for len(src) > 0 {
		if len(src) < 4 {
			return nil, errors.New("truncated Hadoop block length")
		}
		outer := int(binary.BigEndian.Uint32(src))
		src = src[4:]
		if outer < 0 || outer > n-pos {
			return nil, fmt.Errorf("Hadoop block of %d bytes overflows the %d-byte block payload", outer, n)
		}
		end := pos + outer
		for pos < end {
			if len(src) < 4 {
				return nil, errors.New("truncated Hadoop chunk length")
			}
			cl := int(binary.BigEndian.Uint32(src))
			src = src[4:]
			if cl < 0 || cl > len(src) {
				return nil, fmt.Errorf("Hadoop chunk of %d bytes exceeds the %d bytes left", cl, len(src))
			}
			got, err := chunkFn(out[pos:end], src[:cl])
			if err != nil {
				return nil, err
			}
			if got <= 0 && cl > 0 {
				return nil, errors.New("empty decompressed chunk")
			}
			src = src[cl:]
			pos += got
			if got == 0 {
				break
			}
		}
		if pos != end {
			return nil, fmt.Errorf("Hadoop block decompressed to %d bytes, want %d", pos-(end-outer), outer)
		}
	}
	if pos != n {
		return nil, fmt.Errorf("decompressed to %d bytes, header says %d", pos, n)
	}
	return out, nil
}

func decompressReadSnappyChunk(dst, chunk []byte) (int, error) {
	dl, err := snappy.DecodedLen(chunk)
	if err != nil {
		return 0, fmt.Errorf("snappy: %w", err)
	}
	if dl > len(dst) {
		return 0, fmt.Errorf("snappy chunk decodes to %d bytes, only %d expected", dl, len(dst))
	}
	out, err := snappy.Decode(dst[:dl:dl], chunk)
	if err != nil {
		return 0, fmt.Errorf("snappy: %w", err)
	}
	if len(out) != dl {
		return 0, errors.New("snappy: short output")
	}
	return dl, nil
}

func decompressReadLZ4Chunk(dst, chunk []byte) (int, error) {
	got, err := lz4.UncompressBlock(chunk, dst)
	if err != nil {
		return 0, fmt.Errorf("lz4: %w", err)
	}
	return got, nil
}

// decompressReadZstdChunks decodes Hadoop-framed zstd chunks (each a complete zstd frame) with one
// decoder per block.
func decompressReadZstdChunks(src []byte, n int, buf *[]byte) ([]byte, error) {
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(uint64(n)+1<<20))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	defer zd.Close()
	return decompressReadHadoopBlocks(src, n, buf, func(dst, chunk []byte) (int, error) {
		out, err := zd.DecodeAll(chunk, dst[:0:len(dst)])
		if err != nil {
			return 0, fmt.Errorf("zstd: %w", err)
		}
		if len(out) > len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			if len(out) > len(dst) {
				return 0, fmt.Errorf("zstd chunk decodes to %d bytes, only %d expected", len(out), len(dst))
			}
			copy(dst, out)
		}
		return len(out), nil
	})
}
