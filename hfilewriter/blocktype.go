package hfilewriter

// BlockType identifies an HFile block by its 8-byte magic (HBase BlockType).
type BlockType [8]byte

// Block magics (§4.3 of the format spec).
var (
	BlockData                  = BlockType{'D', 'A', 'T', 'A', 'B', 'L', 'K', '*'}
	BlockEncodedData           = BlockType{'D', 'A', 'T', 'A', 'B', 'L', 'K', 'E'}
	BlockLeafIndex             = BlockType{'I', 'D', 'X', 'L', 'E', 'A', 'F', '2'}
	BlockBloomChunk            = BlockType{'B', 'L', 'M', 'F', 'B', 'L', 'K', '2'}
	BlockMeta                  = BlockType{'M', 'E', 'T', 'A', 'B', 'L', 'K', 'c'}
	BlockIntermediateIndex     = BlockType{'I', 'D', 'X', 'I', 'N', 'T', 'E', '2'}
	BlockRootIndex             = BlockType{'I', 'D', 'X', 'R', 'O', 'O', 'T', '2'}
	BlockFileInfo              = BlockType{'F', 'I', 'L', 'E', 'I', 'N', 'F', '2'}
	BlockGeneralBloomMeta      = BlockType{'B', 'L', 'M', 'F', 'M', 'E', 'T', '2'}
	BlockDeleteFamilyBloomMeta = BlockType{'D', 'F', 'B', 'L', 'M', 'E', 'T', '2'}
	TrailerMagic               = BlockType{'T', 'R', 'A', 'B', 'L', 'K', '"', '$'}
)

func (t BlockType) String() string { return string(t[:]) }

// Block header layout (minor version >= 1).
const (
	// BlockHeaderSize is the size of a block header with checksum fields.
	BlockHeaderSize = 33
	// BlockHeaderSizeNoChecksum is the header size of minor version 0 files.
	BlockHeaderSizeNoChecksum = 24
	// DefaultBytesPerChecksum is HFile.DEFAULT_BYTES_PER_CHECKSUM.
	DefaultBytesPerChecksum = 16384
)

// ChecksumType is the block checksum algorithm (HBase ChecksumType).
type ChecksumType byte

// Checksum types.
const (
	ChecksumNull   ChecksumType = 0
	ChecksumCRC32  ChecksumType = 1
	ChecksumCRC32C ChecksumType = 2
)

func (c ChecksumType) String() string {
	switch c {
	case ChecksumNull:
		return "NULL"
	case ChecksumCRC32:
		return "CRC32"
	case ChecksumCRC32C:
		return "CRC32C"
	}
	return "UNKNOWN"
}

// Compression is the Compression.Algorithm ordinal stored in the trailer.
type Compression uint32

// Compression algorithms (ordinals of HBase's Compression.Algorithm).
const (
	CompressionLZO    Compression = 0
	CompressionGZ     Compression = 1
	CompressionNone   Compression = 2
	CompressionSnappy Compression = 3
	CompressionLZ4    Compression = 4
	CompressionBZIP2  Compression = 5
	CompressionZSTD   Compression = 6
)

func (c Compression) String() string {
	switch c {
	case CompressionLZO:
		return "lzo"
	case CompressionGZ:
		return "gz"
	case CompressionNone:
		return "none"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZ4:
		return "lz4"
	case CompressionBZIP2:
		return "bzip2"
	case CompressionZSTD:
		return "zstd"
	}
	return "unknown"
}

// DataBlockEncoding is HBase's DataBlockEncoding id (int16 at the start of encoded blocks).
type DataBlockEncoding uint16

// Data block encodings.
const (
	EncodingNone       DataBlockEncoding = 0
	EncodingPrefix     DataBlockEncoding = 2
	EncodingDiff       DataBlockEncoding = 3
	EncodingFastDiff   DataBlockEncoding = 4
	EncodingRowIndexV1 DataBlockEncoding = 7
)

// String returns the enum name HBase stores in file info (DATA_BLOCK_ENCODING).
func (e DataBlockEncoding) String() string {
	switch e {
	case EncodingNone:
		return "NONE"
	case EncodingPrefix:
		return "PREFIX"
	case EncodingDiff:
		return "DIFF"
	case EncodingFastDiff:
		return "FAST_DIFF"
	case EncodingRowIndexV1:
		return "ROW_INDEX_V1"
	}
	return "UNKNOWN"
}

// BloomType is the general bloom filter type of a store file.
type BloomType byte

// Bloom types.
const (
	BloomNone BloomType = iota
	BloomRow
	BloomRowCol
)

// String returns the name HBase stores in file info (BLOOM_FILTER_TYPE).
func (b BloomType) String() string {
	switch b {
	case BloomNone:
		return "NONE"
	case BloomRow:
		return "ROW"
	case BloomRowCol:
		return "ROWCOL"
	}
	return "UNKNOWN"
}

// Trailer constants.
const (
	TrailerSizeV2 = 212
	TrailerSizeV3 = 4096
	// ComparatorKV is the comparator class name HBase 1.x and 2.x write for user tables.
	ComparatorKV = "org.apache.hadoop.hbase.KeyValue$KVComparator"
)

// File info keys (§8.2).
const (
	FileInfoLastKey          = "hfile.LASTKEY"
	FileInfoAvgKeyLen        = "hfile.AVG_KEY_LEN"
	FileInfoAvgValueLen      = "hfile.AVG_VALUE_LEN"
	FileInfoCreateTime       = "hfile.CREATE_TIME_TS"
	FileInfoMaxTagsLen       = "hfile.MAX_TAGS_LEN"
	FileInfoTagsCompressed   = "hfile.TAGS_COMPRESSED"
	FileInfoLenOfBiggestCell = "hfile.LEN_OF_BIGGEST_CELL"
	FileInfoKeyOfBiggestCell = "hfile.KEY_OF_BIGGEST_CELL"
	FileInfoKeyValueVersion  = "KEY_VALUE_VERSION"
	FileInfoMaxMemstoreTS    = "MAX_MEMSTORE_TS_KEY"
	FileInfoDataBlockEnc     = "DATA_BLOCK_ENCODING"
	FileInfoBloomType        = "BLOOM_FILTER_TYPE"
	FileInfoBloomParam       = "BLOOM_FILTER_PARAM"
	FileInfoLastBloomKey     = "LAST_BLOOM_KEY"
	FileInfoDeleteFamilyCnt  = "DELETE_FAMILY_COUNT"
	FileInfoTimeRange        = "TIMERANGE"
	FileInfoEarliestPutTS    = "EARLIEST_PUT_TS"
	FileInfoMaxSeqID         = "MAX_SEQ_ID_KEY"
	FileInfoMajorCompaction  = "MAJOR_COMPACTION_KEY"
	FileInfoExcludeMinor     = "EXCLUDE_FROM_MINOR_COMPACTION"
	FileInfoBulkloadTime     = "BULKLOAD_TIMESTAMP"
	FileInfoBulkloadTask     = "BULKLOAD_SOURCE_TASK"
	FileInfoHistorical       = "HISTORICAL"
)
