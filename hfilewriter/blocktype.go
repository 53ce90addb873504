package hfilewriter

// BlockType identifies an HFile block by its 8-byte magic (HBase BlockType). Its values are the
// Block* constants; a header with any other magic is refused.
type BlockType string

// Block magics (§4.3 of the format spec).
const (
	BlockData                  BlockType = "DATABLK*"
	BlockEncodedData           BlockType = "DATABLKE"
	BlockLeafIndex             BlockType = "IDXLEAF2"
	BlockBloomChunk            BlockType = "BLMFBLK2"
	BlockMeta                  BlockType = "METABLKc"
	BlockIntermediateIndex     BlockType = "IDXINTE2"
	BlockRootIndex             BlockType = "IDXROOT2"
	BlockFileInfo              BlockType = "FILEINF2"
	BlockGeneralBloomMeta      BlockType = "BLMFMET2"
	BlockDeleteFamilyBloomMeta BlockType = "DFBLMET2"
	TrailerMagic               BlockType = "TRABLK\"$"
)

func (t BlockType) String() string { return string(t) }

// blockTypeOf returns the block type whose magic is b (8 bytes), and false for an unknown magic.
// It does not allocate for a known magic.
func blockTypeOf(b []byte) (BlockType, bool) {
	switch BlockType(b) {
	case BlockData:
		return BlockData, true
	case BlockEncodedData:
		return BlockEncodedData, true
	case BlockLeafIndex:
		return BlockLeafIndex, true
	case BlockBloomChunk:
		return BlockBloomChunk, true
	case BlockMeta:
		return BlockMeta, true
	case BlockIntermediateIndex:
		return BlockIntermediateIndex, true
	case BlockRootIndex:
		return BlockRootIndex, true
	case BlockFileInfo:
		return BlockFileInfo, true
	case BlockGeneralBloomMeta:
		return BlockGeneralBloomMeta, true
	case BlockDeleteFamilyBloomMeta:
		return BlockDeleteFamilyBloomMeta, true
	}
	return BlockType(b), false
}

// Block header layout (minor version >= 1).
const (
	// BlockHeaderSize is the size of a block header with checksum fields.
	BlockHeaderSize = 33
	// BlockHeaderSizeNoChecksum is the header size of minor version 0 files.
	BlockHeaderSizeNoChecksum = 24
	// DefaultBytesPerChecksum is HFile.DEFAULT_BYTES_PER_CHECKSUM.
	DefaultBytesPerChecksum = 16384
)

// Checksum is the block checksum a Writer writes. Its zero value is ChecksumCRC32C, HBase's
// default (hbase.hstore.checksum.algorithm); the code stored in block headers is Checksum.Type.
type Checksum uint8

// Block checksums a Writer can write.
const (
	ChecksumCRC32C Checksum = iota
	ChecksumCRC32
	ChecksumNull // no checksums (zeros), as hbase.hstore.checksum.algorithm=NULL
)

// Type returns the checksum type code stored in block headers (HBase ChecksumType.getCode), and
// ChecksumTypeUnknown for a value that is not one of the Checksum constants.
func (c Checksum) Type() ChecksumType {
	switch c {
	case ChecksumCRC32C:
		return ChecksumTypeCRC32C
	case ChecksumCRC32:
		return ChecksumTypeCRC32
	case ChecksumNull:
		return ChecksumTypeNull
	}
	return ChecksumTypeUnknown
}

func (c Checksum) String() string { return c.Type().String() }

// ChecksumType is the block checksum algorithm code in a block header (HBase ChecksumType).
type ChecksumType byte

// Checksum type codes.
const (
	ChecksumTypeNull   ChecksumType = 0
	ChecksumTypeCRC32  ChecksumType = 1
	ChecksumTypeCRC32C ChecksumType = 2
	// ChecksumTypeUnknown is no code HBase has: what Checksum.Type returns for an invalid Checksum.
	ChecksumTypeUnknown ChecksumType = 0xFF
)

func (c ChecksumType) String() string {
	switch c {
	case ChecksumTypeNull:
		return "NULL"
	case ChecksumTypeCRC32:
		return "CRC32"
	case ChecksumTypeCRC32C:
		return "CRC32C"
	}
	return "UNKNOWN"
}

// Compression is the block compression codec a Writer uses. Its zero value is CompressionNone,
// HBase's default; the ordinal stored in the trailer is Compression.Codec, a different number.
type Compression uint8

// Compression codecs a Writer can write.
const (
	CompressionNone Compression = iota
	CompressionGZ
	CompressionSnappy
	CompressionLZ4
	CompressionZSTD
)

// Compressions returns the codecs a Writer can write, in the order of their constants.
func Compressions() []Compression {
	return []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionLZ4, CompressionZSTD}
}

// Codec returns the ordinal HBase stores in the trailer for c (Compression.Algorithm), and
// CodecUnknown for a value that is not one of the Compression constants.
func (c Compression) Codec() CompressionCodec {
	switch c {
	case CompressionNone:
		return CodecNone
	case CompressionGZ:
		return CodecGZ
	case CompressionSnappy:
		return CodecSnappy
	case CompressionLZ4:
		return CodecLZ4
	case CompressionZSTD:
		return CodecZSTD
	}
	return CodecUnknown
}

func (c Compression) String() string { return c.Codec().String() }

// CompressionCodec is the Compression.Algorithm ordinal stored in the trailer (compressionCodec).
type CompressionCodec uint32

// Compression.Algorithm ordinals. LZO and BZIP2 can be named but neither read nor written.
const (
	CodecLZO    CompressionCodec = 0
	CodecGZ     CompressionCodec = 1
	CodecNone   CompressionCodec = 2
	CodecSnappy CompressionCodec = 3
	CodecLZ4    CompressionCodec = 4
	CodecBZIP2  CompressionCodec = 5
	CodecZSTD   CompressionCodec = 6
	// CodecUnknown is no ordinal HBase has: what Compression.Codec returns for an invalid Compression.
	CodecUnknown CompressionCodec = 0xFFFFFFFF
)

// Compression returns the Writer codec stored as c, and false for LZO, BZIP2 and unknown ordinals.
func (c CompressionCodec) Compression() (Compression, bool) {
	for _, w := range Compressions() {
		if w.Codec() == c {
			return w, true
		}
	}
	return 0, false
}

func (c CompressionCodec) String() string {
	switch c {
	case CodecLZO:
		return "lzo"
	case CodecGZ:
		return "gz"
	case CodecNone:
		return "none"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecBZIP2:
		return "bzip2"
	case CodecZSTD:
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

// BloomType is the general bloom filter type of a store file. Its zero value is BloomRow, HBase's
// default for new column families; the file info stores the name (String), not the number.
type BloomType byte

// Bloom types.
const (
	BloomRow BloomType = iota
	BloomNone
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
