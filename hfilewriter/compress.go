package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// This file holds the compression side of block codecs. Each block payload (after the 33-byte
// header, before the checksums, which cover the compressed bytes) is compressed as an independent
// stream, as HBase's HFileBlockDefaultEncodingContext.compressAfterEncoding does (reset, write the
// whole payload, flush, finish). The codec is the trailer's compression codec ordinal
// (Compression.Algorithm: LZO 0, GZ 1, NONE 2, SNAPPY 3, LZ4 4, BZIP2 5, ZSTD 6).
//
// What HBase 2.x writes, checked in apache/hbase and apache/hadoop source:
//
//   - GZ: hbase-common/.../io/compress/Compression.java maps gz to ReusableStreamGzipCodec
//     (GZ_CODEC_CLASS_DEFAULT); ReusableStreamGzipCodec.java writes a plain gzip member per block with
//     the fixed header captured from java.util.zip.GZIPOutputStream (1f 8b 08 00 00000000 00 00) when
//     native zlib is absent, and Hadoop's GzipCodec (native zlib) otherwise. Neither sets a level:
//     GZIPOutputStream uses Deflater's default and Hadoop's ZlibFactory.getCompressionLevel defaults
//     zlib.compress.level to DEFAULT_COMPRESSION, i.e. zlib level 6. We default to level 6 too.
//   - SNAPPY / LZ4: Hadoop SnappyCodec / Lz4Codec (SNAPPY_CODEC_CLASS_DEFAULT, LZ4_CODEC_CLASS_DEFAULT)
//     through BlockCompressorStream: BE int32 uncompressed length, then chunks of BE int32 compressed
//     length + raw block, each chunk at most bufferSize - overhead input bytes (256 KiB buffers).
//     Snappy chunks are encoded with klauspost/compress s2.EncodeSnappy, which writes the standard
//     snappy block format (any snappy decoder, Hadoop's included, reads it) faster than
//     golang/snappy; like every snappy encoder it picks its own matches, so the compressed bytes
//     are not Java's (the tests compare snappy files with HBase's by uncompressed payload).
//   - ZSTD: Compression.ZSTD_CODEC_CLASS_DEFAULT is org.apache.hadoop.io.compress.ZStandardCodec,
//     whose createOutputStream(out, compressor) is a plain CompressorStream: the block is one raw
//     zstd frame (magic 28 b5 2f fd), level 3 by default. HBase's optional
//     hbase-compression-zstd ZstdCodec (selected with hbase.io.compress.zstd.codec) instead wraps
//     frames in BlockCompressorStream framing like SNAPPY; both use ordinal 6, which is the
//     incompatibility of HBASE-27706. We write the raw frame that the default codec reads; our
//     reader (decompress.go) accepts both, telling them apart by the frame magic.

// writeCompressor compresses one block payload.
type writeCompressor interface {
	// appendCompressed appends the compressed form of src to dst.
	appendCompressed(dst, src []byte) ([]byte, error)
}

// newWriteCompressorLevel returns the compressor for c at level (0 = HBase's default; see
// WriterOptions.CompressionLevel; the level was validated by normalize).
func newWriteCompressorLevel(c Compression, level int) (writeCompressor, error) {
	switch c {
	case CompressionNone:
		return nil, nil
	case CompressionGZ:
		if level == 0 {
			level = gzip.DefaultCompression // zlib's default, level 6, as HBase writes
		}
		return &gzipWriteCompressor{level: level}, nil
	case CompressionSnappy:
		// Hadoop SnappyCodec: 256 KiB buffer, overhead bufferSize/6 + 32.
		const buf = 256 * 1024
		return &hadoopBlockWriteCompressor{maxInput: buf - (buf/6 + 32), compress: func(dst, src []byte) ([]byte, error) {
			return s2.EncodeSnappy(dst, src), nil
		}, bound: s2.MaxEncodedLen}, nil
	case CompressionLZ4:
		// Hadoop Lz4Codec: 256 KiB buffer, overhead bufferSize/255 + 16.
		const buf = 256 * 1024
		lc := &lz4.Compressor{}
		return &hadoopBlockWriteCompressor{maxInput: buf - (buf/255 + 16), compress: func(dst, src []byte) ([]byte, error) {
			n, err := lc.CompressBlock(src, dst)
			if err != nil {
				return nil, err
			}
			if n == 0 && len(src) > 0 {
				return nil, fmt.Errorf("lz4: %d bytes did not compress into a buffer of %d", len(src), len(dst))
			}
			return dst[:n], nil
		}, bound: lz4.CompressBlockBound}, nil
	case CompressionZSTD:
		// Blocks are ~64 KiB: a small window keeps each writer's encoder small (many writers run
		// at once, one per region and family) at no cost in ratio.
		if level == 0 {
			level = 3 // Hadoop's IO_COMPRESSION_CODEC_ZSTD_LEVEL_DEFAULT
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(256<<10), zstd.WithLowerEncoderMem(true),
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		return &zstdWriteCompressor{enc: enc}, nil
	}
	return nil, fmt.Errorf("compression %s cannot be written", c)
}

// gzipWriteCompressor writes one gzip member per block with the header Java's
// ReusableStreamGzipCodec writes (1f 8b 08 00 00000000 00 00: no mtime, XFL 0, OS 0).
type gzipWriteCompressor struct {
	level int
	zw    *gzip.Writer
	buf   bytes.Buffer
}

func (g *gzipWriteCompressor) appendCompressed(dst, src []byte) ([]byte, error) {
	g.buf.Reset()
	if g.zw == nil {
		zw, err := gzip.NewWriterLevel(&g.buf, g.level)
		if err != nil {
			return nil, err
		}
		g.zw = zw
	} else {
		g.zw.Reset(&g.buf)
	}
	g.zw.Header.OS = 0
	g.zw.Header.ModTime = time.Unix(0, 0) // klauspost writes ModTime.Unix() as is; the zero Time is not 0
	if _, err := g.zw.Write(src); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := g.zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return append(dst, g.buf.Bytes()...), nil
}

// hadoopBlockWriteCompressor reproduces Hadoop's BlockCompressorStream framing for one payload
// written in a single call: int32 uncompressed length, then one or more chunks of
// int32 compressed length + raw compressed block, each chunk covering at most maxInput bytes.
type hadoopBlockWriteCompressor struct {
	maxInput int
	compress func(dst, src []byte) ([]byte, error)
	bound    func(int) int
	tmp      []byte
}

func (h *hadoopBlockWriteCompressor) appendCompressed(dst, src []byte) ([]byte, error) {
	// An empty payload (e.g. the empty meta index block) still gets finish()'s length word.
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(src)))
	for len(src) > 0 {
		n := min(len(src), h.maxInput)
		need := h.bound(n)
		if at := len(dst) + 4; cap(dst)-at >= need {
			// Room for the worst case after the chunk's length word: compressed in place.
			out, err := h.compress(dst[at:at+need], src[:n])
			if err != nil {
				return nil, err
			}
			if len(out) > 0 && &out[0] != &dst[at : at+1][0] {
				return nil, fmt.Errorf("compressor wrote %d bytes elsewhere than into its %d-byte output", len(out), need)
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(out)))[:at+len(out)]
		} else {
			if cap(h.tmp) < need {
				h.tmp = make([]byte, need)
			}
			out, err := h.compress(h.tmp[:need], src[:n])
			if err != nil {
				return nil, err
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(out)))
			dst = append(dst, out...)
		}
		src = src[n:]
	}
	return dst, nil
}

// zstdWriteCompressor writes one standard zstd frame per block, as Hadoop's ZStandardCodec (HBase
// 2.x's default ZSTD codec) does through a plain CompressorStream; see the file comment.
type zstdWriteCompressor struct{ enc *zstd.Encoder }

func (z *zstdWriteCompressor) appendCompressed(dst, src []byte) ([]byte, error) {
	return z.enc.EncodeAll(src, dst), nil
}
