// Package hfilewriter reads and writes Apache HBase HFiles (format v3 minor 3, and v2 minor 3),
// byte-compatible with the files HBase 2.6's StoreFileWriter and HFileOutputFormat2 produce.
//
// # File layout
//
// An HFile is a sequence of blocks followed by a fixed-size trailer:
//
//	+---------------------------------------------+  <- offset 0 (first_data_block_offset)
//	| DATA / ENCODED_DATA block                   |  "scanned block section": data blocks of
//	| DATA block                                  |  ~BlockSize bytes, interleaved with inline
//	| LEAF_INDEX block   (IDXLEAF2, inline)       |  blocks written at data block boundaries:
//	| BLOOM_CHUNK block  (BLMFBLK2, inline)       |  leaf index chunks and bloom filter chunks
//	| DATA block ...                              |
//	+---------------------------------------------+
//	| INTERMEDIATE_INDEX blocks (IDXINTE2)        |  "non-scanned section" (only for big indexes)
//	+---------------------------------------------+  <- load_on_open_data_offset
//	| ROOT_INDEX  data index root (+ mid-key)     |  "load-on-open section", read when the file
//	| ROOT_INDEX  meta index (empty)              |  is opened
//	| FILE_INFO   (PBUF + sorted key/value map)   |  <- file_info_offset
//	| GENERAL_BLOOM_META   (BLMFMET2, optional)   |
//	| DELETE_FAMILY_BLOOM_META (DFBLMET2, opt.)   |
//	+---------------------------------------------+
//	| trailer: TRABLK"$ + FileTrailerProto,       |  4096 bytes (v3) / 212 bytes (v2); the
//	| zero padding, int32 version                 |  last 4 bytes are the version
//	+---------------------------------------------+
//
// Every block is
//
//	magic[8] | onDiskSizeWithoutHeader int32 | uncompressedSizeWithoutHeader int32 |
//	prevBlockOffset int64 | checksumType int8 | bytesPerChecksum int32 |
//	onDiskDataSizeWithHeader int32 | payload (compressed) | CRC32C per 16 KiB of header+payload
//
// and a data block payload is a run of cells,
//
//	keyLength int32 | valueLength int32 | key | value | [tagsLength uint16 | tags] | [mvcc vlong]
//
// where key = rowLength int16 | row | familyLength int8 | family | qualifier | timestamp int64 |
// type int8, sorted by kv.CompareKeys. The data index maps the (shortened) first key of every block to
// its offset, in one to three levels; the bloom filter answers "may this row (or row+column) be in
// the file" from one chunk per ~109k keys. The project's HFile format specification has the details.
//
// # Writing
//
//	// The zero WriterOptions are HBase's defaults: v3, 64 KiB blocks, NONE, ROW bloom, CRC32C.
//	opts := hfilewriter.WriterOptions{Compression: hfilewriter.CompressionSnappy}
//	opts.BulkLoad = &hfilewriter.BulkLoadInfo{Time: now, SourceTask: "hfload", MajorCompaction: true}
//	w, err := hfilewriter.NewWriter(f, opts)
//	...
//	for each cell in HBase order {
//		err := w.AppendParts(row, family, qualifier, ts, kv.TypePut, value, nil)
//		if err != nil { ... } // out of order, duplicate, other family, too big
//	}
//	err = w.Close() // writes index, file info, blooms, trailer; does not close f
//
// AppendParts is the hot path: the writer keeps the previous cell as parts, so a cell of the same
// row costs one row comparison, and (without data block encoding) writes the cell's KeyValue bytes
// straight into the data block; flat keys are built only at block boundaries and on Close.
// AppendSameRow(qualifier, value) appends a cell that shares row, family, timestamp and type with the
// previous one (a mapped input row's later cells) without comparing them again, and
// AppendSameRowCells a run of such cells in one call (unencoded blocks: one pass that writes what the
// cells share from registers). Append takes a *Cell
// (with tags and a sequence id if the file carries them) and AppendKeyValue a KeyValue record (as built
// by the AppendKeyValue function); all of them share one write path, with the same checks and the same
// bytes. AppendFileInfo adds metadata such as MAX_SEQ_ID_KEY before
// Close.
//
// The writer streams: it holds only the current data block, the pending index entries and the
// current bloom chunk, so memory stays flat whatever the file size. EstimatedSize tells a caller
// when to roll to a new file. Given the same cells and settings, it writes the same bytes as
// HBase 2.6.4 (checked against files HBase wrote, in testdata/hbase-2.6.4).
//
// # Verifying
//
// Three checks, from cheapest to most thorough; each returns the first problem with the offset of
// the block it is in:
//
//   - StreamVerifier checks a file from its bytes as they are written, without reading it back: an
//     io.Writer between the Writer and the file that passes every Write on, then checks each block
//     as its last byte arrives (parsing the stream by the block headers' sizes, whatever the Write
//     boundaries), and on Finish the trailer, the load-on-open section, the indexes and the totals.
//     It makes VerifyBlocks' checks on the bytes handed to the file (and that the file declares the
//     layout they were checked with); what it cannot see is damage done after that (by the disk,
//     the file system or another writer). It keeps no data or bloom chunk bytes, only per-block
//     offsets, sizes, types and first/last keys, the index blocks and the load-on-open section. The
//     layout the blocks need before the trailer arrives (codec, encoding, tags, mvcc) comes from
//     the WriterOptions; Finish checks that the file agrees.
//
//   - Reader.VerifyBlocks re-reads the whole file: every block's header, checksums and
//     decompression, blocks tiling the file up to the trailer, unencoded data blocks walked by their
//     length fields (cell count, key and value lengths, tags, mvcc, first and last key, order across
//     blocks; encoded blocks: their encoding id), the data index at every level against the data
//     blocks, the meta and bloom chunk indexes, the trailer's entry count and data block offsets and
//     the file info totals. Run on a file read from disk it also catches storage corruption.
//
//   - Reader.Verify is VerifyBlocks plus every cell decoded (encoded blocks too): key order within
//     blocks, one family, and every cell found in the general and delete-family bloom filters. It
//     needs random access to the file (bloom chunks are read by offset) and costs several times
//     VerifyBlocks.
//
// Writing through a StreamVerifier:
//
//	sv, err := hfilewriter.NewStreamVerifier(f, opts)
//	w, err := hfilewriter.NewWriter(sv, opts) // the same options
//	... w.AppendParts(...) ...
//	err = w.Close()
//	err = sv.Finish() // nil: the bytes written pass VerifyBlocks' checks
//
// Over the same bytes in memory the stream verifier costs about what VerifyBlocks does (it walks
// the blocks with the same code, without copying them); in a load it replaces re-reading every file
// from disk. Re-reading with VerifyBlocks remains the check for storage corruption.
package hfilewriter
