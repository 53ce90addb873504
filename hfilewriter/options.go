package hfilewriter

import (
	"fmt"
	"strings"
)

// WriterOptions configures a Writer. Its zero value is HBase's defaults for a new column family:
// format v3, 64 KiB blocks, no compression, no data block encoding, a ROW bloom filter and CRC32C
// checksums per 16 KiB (what HBase 2.6's StoreFileWriter writes for a family with default settings,
// and what HFileOutputFormat2 writes when BulkLoad is set). Every field's zero value means its
// documented default, so set only what differs:
//
//	w, err := hfilewriter.NewWriter(f, hfilewriter.WriterOptions{Compression: hfilewriter.CompressionSnappy})
type WriterOptions struct {
	// FormatVersion is the HFile major version: 3 (v3 minor 3, as every HBase 2.x writes) or 2
	// (v2 minor 3, as HBase 1.x with hfile.format.version=2: no tags, 212-byte trailer; blocks and
	// index are identical, and the file info carries the same keys as a v3 file, which HBase 1.x
	// readers ignore if they do not know them). Default: 3.
	FormatVersion int

	// NoTags, for version 3 only, omits the per-cell tags length and the hfile.MAX_TAGS_LEN /
	// hfile.TAGS_COMPRESSED file info keys, as StoreFileWriter does with an HFileContext built
	// with includesTags=false (the HBase 2.6.4 golden files). Cells with tags are then rejected.
	// Default: false (tags length written for every cell, as HFileOutputFormat2 does in 2.x).
	NoTags bool

	// NoMVCC omits the per-cell memstore timestamp (sequence id) vlong and the KEY_VALUE_VERSION /
	// MAX_MEMSTORE_TS_KEY file info keys. Default: false (every cell ends with its sequence id,
	// a single 00 byte for bulk-load cells, as HBase writes).
	NoMVCC bool

	// BlockSize is the target uncompressed data block size in bytes (the family's BLOCKSIZE): a
	// block is closed before the first cell that starts at or beyond it. Default: 65536.
	BlockSize int

	// Compression is the block compression codec: CompressionNone, CompressionGZ,
	// CompressionSnappy, CompressionLZ4 or CompressionZSTD. Default (zero value): CompressionNone.
	Compression Compression

	// CompressionLevel is the codec's level: 1-9 for GZ, 1-22 for ZSTD (mapped to the nearest of the
	// Go encoder's four speeds). Default 0: what HBase 2.x uses by default, zlib's default level (6)
	// for GZ (Hadoop's zlib.compress.level, which both HBase gzip paths honour) and level 3 for ZSTD
	// (io.compression.codec.zstd.level / hbase.io.compress.zstd.level). SNAPPY and LZ4 have no level.
	CompressionLevel int

	// Encoding is the data block encoding: EncodingNone, EncodingPrefix, EncodingDiff or
	// EncodingFastDiff. Default (zero value): EncodingNone.
	Encoding DataBlockEncoding

	// Bloom is the general bloom filter type: BloomRow, BloomRowCol or BloomNone.
	// Default (zero value): BloomRow (HBase's default for new families).
	Bloom BloomType

	// BytesPerChecksum is the number of bytes covered by each block checksum
	// (hbase.hstore.bytes.per.checksum). Default: 16384.
	BytesPerChecksum int

	// Checksum is the block checksum algorithm (hbase.hstore.checksum.algorithm): ChecksumCRC32C,
	// ChecksumCRC32 or ChecksumNull. Default (zero value): ChecksumCRC32C.
	Checksum Checksum

	// CreateTime is stored as hfile.CREATE_TIME_TS (milliseconds since the epoch). Default: 0,
	// which is what HFileOutputFormat2-style writers that do not set it store; the writer never
	// reads the clock, so output is deterministic.
	CreateTime int64

	// BloomMaxKeys is the expected number of distinct bloom keys (StoreFileWriter's maxKeyCount).
	// HBase 2.x passes it to BloomFilterFactory, which ignores it for compound bloom filters (the
	// only kind it writes): chunk sizes depend only on BloomBlockSize and BloomErrorRate, and the
	// last chunk is folded to fit the keys actually added. It therefore does not change the output;
	// it is accepted so callers can pass what HBase would. Default: 0 (unknown).
	BloomMaxKeys int

	// BloomBlockSize is the bloom chunk size hint in bytes (io.storefile.bloom.block.size).
	// Default: 131072.
	BloomBlockSize int

	// BloomErrorRate is the target false positive rate (io.storefile.bloom.error.rate), used as a
	// Java float. For ROWCOL the per-lookup rate is derived from it as HBase does. Default: 0.01.
	BloomErrorRate float32

	// BloomMaxFold is the maximum fold factor (io.storefile.bloom.max.fold). Default: 7.
	BloomMaxFold int

	// IndexBlockMaxSize is the maximum size of an index chunk (hfile.index.block.max.size): a leaf
	// index block is written inline once the pending leaf chunk reaches it, and the root level is
	// split into intermediate blocks while it exceeds it. Default: 131072.
	IndexBlockMaxSize int

	// IndexMinEntries is the minimum number of entries per intermediate index block
	// (hfile.index.block.min.entries). Default: 16.
	IndexMinEntries int

	// AllowDuplicateKeys accepts a cell whose key equals the previous cell's key, as HBase's own writer
	// does (HBase then returns one of them on read). Default: false — an exact duplicate is an error,
	// because it almost always means two input rows collapsed into one cell.
	AllowDuplicateKeys bool

	// BulkLoad, when non-nil, adds the file info keys HBase's HFileOutputFormat2 writes on close
	// (BULKLOAD_TIMESTAMP, BULKLOAD_SOURCE_TASK, MAJOR_COMPACTION_KEY, EXCLUDE_FROM_MINOR_COMPACTION,
	// TIMERANGE, EARLIEST_PUT_TS). Default: nil (plain StoreFileWriter metadata).
	BulkLoad *BulkLoadInfo
}

// BulkLoadInfo holds the metadata HFileOutputFormat2 adds to every file it closes.
type BulkLoadInfo struct {
	// Time is BULKLOAD_TIMESTAMP, milliseconds since the epoch (HBase uses the close time).
	Time int64
	// SourceTask is BULKLOAD_SOURCE_TASK (HBase stores the task attempt id).
	SourceTask string
	// MajorCompaction is MAJOR_COMPACTION_KEY; HFileOutputFormat2 always writes true.
	MajorCompaction bool
	// ExcludeFromMinorCompaction is EXCLUDE_FROM_MINOR_COMPACTION
	// (hbase.mapreduce.hfileoutputformat.compaction.exclude, default false).
	ExcludeFromMinorCompaction bool
}

// Defaults of the numeric options.
const (
	DefaultBlockSize         = 65536
	DefaultBloomBlockSize    = 128 * 1024
	DefaultBloomErrorRate    = float32(0.01)
	DefaultBloomMaxFold      = 7
	DefaultIndexBlockMaxSize = 128 * 1024
	DefaultIndexMinEntries   = 16
)

// DefaultWriterOptions returns the documented defaults, fully filled in: the same file as
// WriterOptions{}, with every default visible.
func DefaultWriterOptions() WriterOptions {
	return WriterOptions{
		FormatVersion:     3,
		BlockSize:         DefaultBlockSize,
		Compression:       CompressionNone,
		Encoding:          EncodingNone,
		Bloom:             BloomRow,
		BytesPerChecksum:  DefaultBytesPerChecksum,
		Checksum:          ChecksumCRC32C,
		BloomBlockSize:    DefaultBloomBlockSize,
		BloomErrorRate:    DefaultBloomErrorRate,
		BloomMaxFold:      DefaultBloomMaxFold,
		IndexBlockMaxSize: DefaultIndexBlockMaxSize,
		IndexMinEntries:   DefaultIndexMinEntries,
	}
}

// ParseCompression maps a codec name (none, gz, snappy, lz4, zstd; case-insensitive; "gzip" is
// accepted for gz) to its Compression ordinal.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return CompressionNone, nil
	case "gz", "gzip":
		return CompressionGZ, nil
	case "snappy":
		return CompressionSnappy, nil
	case "lz4":
		return CompressionLZ4, nil
	case "zstd":
		return CompressionZSTD, nil
	}
	return 0, fmt.Errorf("unknown compression %q (want none, gz, snappy, lz4 or zstd)", s)
}

// ParseEncoding maps a data block encoding name (none, prefix, diff, fast_diff; case-insensitive,
// "fastdiff" accepted) to its id.
func ParseEncoding(s string) (DataBlockEncoding, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return EncodingNone, nil
	case "prefix":
		return EncodingPrefix, nil
	case "diff":
		return EncodingDiff, nil
	case "fast_diff", "fastdiff":
		return EncodingFastDiff, nil
	}
	return 0, fmt.Errorf("unknown data block encoding %q (want none, prefix, diff or fast_diff)", s)
}

// ParseBloom maps a bloom type name (none, row, rowcol; case-insensitive) to its BloomType.
func ParseBloom(s string) (BloomType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return BloomNone, nil
	case "row":
		return BloomRow, nil
	case "rowcol":
		return BloomRowCol, nil
	}
	return 0, fmt.Errorf("unknown bloom type %q (want none, row or rowcol)", s)
}

// normalize fills numeric defaults and validates the options.
func (o WriterOptions) normalize() (WriterOptions, error) {
	if o.FormatVersion == 0 {
		o.FormatVersion = 3
	}
	if o.FormatVersion != 2 && o.FormatVersion != 3 {
		return o, fmt.Errorf("hfile format version %d not supported (want 2 or 3)", o.FormatVersion)
	}
	if o.FormatVersion == 2 {
		o.NoTags = true
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.BlockSize < 0 {
		return o, fmt.Errorf("invalid block size %d", o.BlockSize)
	}
	switch o.Compression {
	case CompressionNone, CompressionGZ, CompressionSnappy, CompressionLZ4, CompressionZSTD:
	default:
		return o, fmt.Errorf("compression %d cannot be written (want none, gz, snappy, lz4 or zstd)", uint8(o.Compression))
	}
	if o.CompressionLevel != 0 {
		switch {
		case o.Compression == CompressionGZ && o.CompressionLevel >= 1 && o.CompressionLevel <= 9:
		case o.Compression == CompressionZSTD && o.CompressionLevel >= 1 && o.CompressionLevel <= 22:
		default:
			return o, fmt.Errorf("compression level %d is not valid for %s (gz: 1-9, zstd: 1-22, others: none)", o.CompressionLevel, o.Compression)
		}
	}
	switch o.Encoding {
	case EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff:
	default:
		return o, fmt.Errorf("data block encoding %s (id %d) cannot be written (want NONE, PREFIX, DIFF or FAST_DIFF)",
			o.Encoding, uint16(o.Encoding))
	}
	switch o.Bloom {
	case BloomNone, BloomRow, BloomRowCol:
	default:
		return o, fmt.Errorf("unknown bloom type %d", o.Bloom)
	}
	if o.BytesPerChecksum == 0 {
		o.BytesPerChecksum = DefaultBytesPerChecksum
	}
	if o.BytesPerChecksum < BlockHeaderSize {
		return o, fmt.Errorf("bytes per checksum %d must be at least %d", o.BytesPerChecksum, BlockHeaderSize)
	}
	switch o.Checksum {
	case ChecksumCRC32C, ChecksumCRC32, ChecksumNull:
	default:
		return o, fmt.Errorf("unknown checksum %d", o.Checksum)
	}
	if o.BloomMaxKeys < 0 {
		return o, fmt.Errorf("invalid bloom max keys %d", o.BloomMaxKeys)
	}
	if o.BloomBlockSize == 0 {
		o.BloomBlockSize = DefaultBloomBlockSize
	}
	if o.BloomBlockSize < 0 || o.BloomBlockSize > 1<<28 {
		return o, fmt.Errorf("invalid bloom block size %d", o.BloomBlockSize)
	}
	if o.BloomErrorRate == 0 {
		o.BloomErrorRate = DefaultBloomErrorRate
	}
	if !(o.BloomErrorRate > 0 && o.BloomErrorRate < 1) {
		return o, fmt.Errorf("bloom error rate %v must be in (0, 1)", o.BloomErrorRate)
	}
	if o.BloomMaxFold == 0 {
		o.BloomMaxFold = DefaultBloomMaxFold
	}
	if o.BloomMaxFold < 0 || o.BloomMaxFold > 20 {
		return o, fmt.Errorf("invalid bloom max fold %d", o.BloomMaxFold)
	}
	if o.IndexBlockMaxSize == 0 {
		o.IndexBlockMaxSize = DefaultIndexBlockMaxSize
	}
	if o.IndexBlockMaxSize < 0 {
		return o, fmt.Errorf("invalid index block max size %d", o.IndexBlockMaxSize)
	}
	if o.IndexMinEntries == 0 {
		o.IndexMinEntries = DefaultIndexMinEntries
	}
	if o.IndexMinEntries < 2 {
		return o, fmt.Errorf("index min entries %d must be at least 2", o.IndexMinEntries)
	}
	return o, nil
}

func (o *WriterOptions) includesTags() bool { return o.FormatVersion >= 3 && !o.NoTags }
