package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/hfload/hfload/internal/kv"
)

// ErrWriterClosed is returned by Append and Close after Close.
var ErrWriterClosed = errors.New("hfilewriter: writer is closed")

// WriterStats summarizes what a Writer has written so far.
type WriterStats struct {
	Entries      int64  // cells appended
	FirstKey     []byte // flat key of the first cell (nil if none)
	LastKey      []byte // flat key of the last cell (nil if none)
	BytesWritten int64  // bytes handed to the io.Writer so far (the file size once closed)
	DataBlocks   int64  // data blocks written
	KeyBytes     int64  // sum of key lengths
	ValueBytes   int64  // sum of value lengths
	IndexLevels  int    // data index levels (final after Close)
	BloomKeys    int64  // keys added to the general bloom filter
	// SharedBloomChunks counts the general bloom's chunks whose bits were copied from a RowBloomShare
	// (ShareRowBloom) instead of set by the writer: the same bytes either way.
	SharedBloomChunks int64
}

// Writer writes one HFile, streaming: only the current data block, the pending index entries and
// the current bloom chunk are held in memory. Cells must be appended in HBase order (CompareKeys)
// without duplicate keys. A Writer is not safe for concurrent use.
type Writer struct {
	opts WriterOptions
	out  *blockOutput
	err  error // sticky write error
	done bool

	fiOrder fileInfoOrder    // the file info keys' sorted order, kept for the next file (NewWriterReusing)
	fi      writeFileInfoMap // the file info of Close (fileInfo), its storage kept for the next file

	// coded: AppendRowCoded's table of the last qualifiers it was given, kept for the next file
	// (NewWriterReusing): the files of a load are given the same qualifiers.
	coded *codedQuals
	fdq   *fdQuals // appendRowCodedFastDiff's table of qualifiers, made on first use

	tags, mvcc bool
	enc        writeBlockEncoder // nil for EncodingNone
	cenc       cellEncoder       // enc, when it encodes from the key's parts
	fd         *encodeFastDiff   // enc, when it is FAST_DIFF (the same-row path, writer_samerow_fastdiff.go)
	px         *encodePrefix     // enc, when it is PREFIX (the same-row run, writer_samerow_prefix.go)
	dx         *encodeDiff       // enc, when it is DIFF (the same-row run, writer_samerow_diff.go)
	dataType   BlockType

	// Current data block: BlockHeaderSize bytes of room + payload.
	blk          []byte // the data block being built: header room, then cells
	blkOwn       []byte // the Writer's own block buffer (blk when not lent)
	blkLent      bool   // blk is in the output's available buffer (see newDataBlock)
	blkOpen      bool
	blkUnencoded int
	blkEncoded   int
	blkFirstKey  []byte
	blkHasFirst  bool
	prevLastKey  []byte // last key of the previous data block
	hasPrevBlock bool

	// The last cell appended, as parts (its family is family).
	lastRow  []byte
	lastQual []byte
	// lastQualOwn backs lastQual when it is not in the block: unencoded blocks hold each cell's
	// qualifier whole, and lastQual then points there (lastQualInBlk) until the block is written.
	lastQualOwn   []byte
	lastQualInBlk bool
	lastTs        int64
	lastType      Type
	firstKey      []byte
	family        []byte

	index   *writeIndexWriter
	bloom   *writeBloomWriter // general bloom, nil for BloomNone
	dfBloom *writeBloomWriter // delete-family bloom, nil for ROWCOL
	dfRow   []byte            // row of the last delete-family bloom key
	dfHas   bool

	// statistics
	entries        int64
	dataBlocks     int64
	totalKeyLen    int64
	totalValueLen  int64
	maxSeq         uint64
	maxTagsLen     int
	lenBiggest     int64
	keyBiggest     []byte
	deleteFamilies int64
	trMin, trMax   int64
	earliestPut    int64
	totalUncomp    int64
	firstDataOff   int64
	lastDataOff    int64

	userInfo writeFileInfoMap // AppendFileInfo entries

	rowHash    RowHash // the row's hash during AppendPartsRowHash
	hasRowHash bool

	sameRowFast bool // the next same-row cell may take appendSameRowFast (writer_samerow.go)
	sameRowFD   bool // the next same-row cell may take appendSameRowFastDiff (writer_samerow_fastdiff.go)
	sameRowPX   bool // the next same-row cells may take appendSameRowRunPrefix or appendSameRowRunDiff (px or dx)

	est    sizeEstimate // EstimatedSize's parts that change only with the blocks written (size_estimate.go)
	rowEst rowEstimate  // estimateBelow's EstimatedSize less its parts that change with each row (size_estimate.go)

	trailer trailerBuf // the last trailer's bytes, kept by NewWriterReusing
	scratch []byte     // bloom keys, index keys
	keyBuf  []byte     // flat key of the cell being encoded (data block encoders)
	aux     []byte     // inline / load-on-open block assembly
}

// NewWriter returns a Writer that writes an HFile to w. Nothing is written until the first data
// block fills or Close is called. opts is normalized (zero numeric fields take their defaults) and
// validated.
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	return NewWriterReusing(w, opts, nil)
}

// NewWriterReusing is NewWriter for the next file after prev, a Writer that has been closed and is
// not used again (nil: none). The new Writer is prev itself, set up for the new file: it keeps prev's
// buffers (the data block, the compressed block assembly, the compressor when the codec and level are
// the same, index chunks, bloom writers and chunks, file info storage) instead of making and zeroing
// its own: for a small file (a region with a few rows) they cost more than its cells. The bytes
// written are the same as NewWriter's. A prev still open is not touched (a new Writer is made).
func NewWriterReusing(w io.Writer, opts WriterOptions, prev *Writer) (*Writer, error) {
	if w == nil {
		return nil, errors.New("hfilewriter: nil io.Writer")
	}
	o, err := opts.normalize()
	if err != nil {
		return nil, fmt.Errorf("hfilewriter: %w", err)
	}
	if prev != nil && !prev.done {
		prev = nil // still writing: its buffers are in use
	}
	var prevOut *blockOutput
	if prev != nil {
		prevOut = prev.out
	}
	out, err := newBlockOutput(w, &o, prevOut)
	if err != nil {
		return nil, fmt.Errorf("hfilewriter: %w", err)
	}
	blkCap := BlockHeaderSize + o.BlockSize + o.BlockSize/4
	var blk []byte
	if prev != nil && cap(prev.blkOwn) >= blkCap {
		blk = prev.blkOwn[:BlockHeaderSize]
	} else {
		blk = make([]byte, BlockHeaderSize, blkCap)
	}
	var wr *Writer
	var bloom, dfBloom *writeBloomWriter
	if prev == nil {
		wr = &Writer{coded: new(codedQuals)}
	} else {
		// prev itself, cleared field by field where the new file starts from zero, its buffers and
		// tables kept (a new Writer assigned over it would be zeroed and then copied, ~1.3 KB each).
		wr = prev
		coded, enc := prev.coded, prev.enc
		if enc != nil && prev.opts.Encoding != o.Encoding {
			enc = nil // every data block starts enc anew (writeBlockEncoder.start)
		}
		aux, scratch, keyBuf := prev.aux[:0], prev.scratch[:0], prev.keyBuf[:0]
		index := prev.index
		// The key buffers: Stats copies what it returns, so nothing outside points into them.
		firstKey, family, lastRow, lastQualOwn := prev.firstKey[:0], prev.family[:0], prev.lastRow[:0], prev.lastQualOwn[:0]
		blkFirstKey, keyBiggest, prevLastKey, dfRow := prev.blkFirstKey[:0], prev.keyBiggest[:0], prev.prevLastKey[:0], prev.dfRow[:0]
		bloom, dfBloom = prev.bloom, prev.dfBloom
		wr.clearForReuse()
		wr.coded, wr.enc = coded, enc
		wr.aux, wr.scratch, wr.keyBuf = aux, scratch, keyBuf
		wr.userInfo.reset()
		if index != nil {
			wr.index = index.reuse(o.IndexBlockMaxSize, o.IndexMinEntries)
		}
		wr.firstKey, wr.family, wr.lastRow, wr.lastQualOwn = firstKey, family, lastRow, lastQualOwn
		wr.blkFirstKey, wr.keyBiggest, wr.prevLastKey, wr.dfRow = blkFirstKey, keyBiggest, prevLastKey, dfRow
	}
	wr.opts, wr.out = o, out
	wr.tags, wr.mvcc, wr.dataType = o.includesTags(), !o.NoMVCC, BlockData
	wr.trMin, wr.trMax, wr.earliestPut = math.MaxInt64, -1, kv.LatestTimestamp
	wr.firstDataOff, wr.lastDataOff = -1, -1
	wr.blk, wr.blkOwn = blk, blk
	if wr.index == nil {
		wr.index = newWriteIndexWriter(o.IndexBlockMaxSize, o.IndexMinEntries)
	}
	if o.Encoding != EncodingNone {
		if wr.enc == nil {
			if wr.enc, err = newWriteBlockEncoder(o.Encoding); err != nil {
				return nil, fmt.Errorf("hfilewriter: %w", err)
			}
		}
		wr.cenc, _ = wr.enc.(cellEncoder)
		wr.fd, _ = wr.enc.(*encodeFastDiff)
		wr.px, _ = wr.enc.(*encodePrefix)
		wr.dx, _ = wr.enc.(*encodeDiff)
		wr.dataType = BlockEncodedData
	}
	// The bloom writers: the previous file's, emptied, when their kind is the same (their chunks, chunk
	// index and parameters are reused); else new ones taking the previous ones' free chunks.
	if o.Bloom != BloomNone {
		wr.bloom = reuseWriteBloomWriter(bloom, o.Bloom, &o)
	}
	if o.Bloom != BloomRowCol {
		wr.dfBloom = reuseWriteBloomWriter(dfBloom, BloomRow, &o)
	}
	return wr, nil
}

// clearForReuse zeroes every field of w but the ones NewWriterReusing keeps whole for the next file:
// the file info order, map and user entries (fiOrder, fi, userInfo: their storage) and the trailer's
// buffer. The fields it keeps part of (buffers emptied, tables) it takes before and sets after.
func (w *Writer) clearForReuse() {
	fiOrder, fi, userInfo, trailer := w.fiOrder, w.fi, w.userInfo, w.trailer
	*w = Writer{}
	w.fiOrder, w.fi, w.userInfo, w.trailer = fiOrder, fi, userInfo, trailer
}

// Options returns the normalized options the writer uses.
func (w *Writer) Options() WriterOptions { return w.opts }

// Append adds a cell. Cells must arrive in HBase order; a cell whose key is not greater than the
// previous one is rejected with an error naming both keys, and nothing is written for it. Tags
// are only allowed in v3 files with tags, sequence ids only when MVCC is on.
func (w *Writer) Append(c *Cell) error {
	if c == nil {
		return errors.New("hfilewriter: nil cell")
	}
	return w.appendCell(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags, c.SeqID)
}

// AppendParts adds a cell given by its parts, as Append does (same checks, same bytes), without
// building a Cell or a KeyValue first. tags may be nil. It is the hot path: it does not allocate
// in the steady state and does not retain its arguments; consecutive cells of one row cost least.
func (w *Writer) AppendParts(row, family, qualifier []byte, ts int64, typ Type, value, tags []byte) error {
	if w.newRowFastOK(row, family, qualifier, typ, value, tags) {
		return w.appendNewRowFast(row, family, qualifier, ts, value)
	}
	return w.appendCell(row, family, qualifier, ts, typ, value, tags, 0)
}

// AppendSameRow adds a cell with the row, family, timestamp and type of the last cell appended and no
// tags: AppendParts(lastRow, family, qualifier, lastTs, lastType, value, nil), the same checks and the
// same bytes. It is for the second and later cells of a row whose cells share everything but qualifier
// and value (what a mapped input row becomes): the writer's own copies of the row and family are
// recognised as the previous cell's without comparing bytes, and FAST_DIFF sees the same row at once.
func (w *Writer) AppendSameRow(qualifier, value []byte) error {
	if w.sameRowFD && w.sameRowFastDiffOK(qualifier, value) {
		w.appendSameRowFastDiff(qualifier, value)
		return nil
	}
	if w.sameRowFastOK(qualifier, value, nil) {
		return w.appendSameRowFast(qualifier, value)
	}
	if w.entries == 0 && !w.done && w.err == nil {
		return errors.New("hfilewriter: AppendSameRow before any cell")
	}
	return w.appendCell(w.lastRow, w.family, qualifier, w.lastTs, w.lastType, value, nil, 0)
}

// AppendSameRowTags is AppendSameRow for a cell with tags: AppendParts(lastRow, family, qualifier,
// lastTs, lastType, value, tags), the same checks and the same bytes. tags may be nil.
func (w *Writer) AppendSameRowTags(qualifier, value, tags []byte) error {
	if w.sameRowFastOK(qualifier, value, tags) {
		return w.appendSameRowFast(qualifier, value)
	}
	if w.entries == 0 && !w.done && w.err == nil {
		return errors.New("hfilewriter: AppendSameRowTags before any cell")
	}
	return w.appendCell(w.lastRow, w.family, qualifier, w.lastTs, w.lastType, value, tags, 0)
}

// LastRow returns the row of the last cell appended (empty before the first). The caller must not
// change it; it holds until the next cell is appended.
func (w *Writer) LastRow() []byte { return w.lastRow }

// IsLast reports whether row, family, qualifier, ts and typ are the key of the last cell appended
// (false before the first): whether a cell with that key would duplicate it.
func (w *Writer) IsLast(row, family, qualifier []byte, ts int64, typ Type) bool {
	return w.entries > 0 && ts == w.lastTs && typ == w.lastType && bytes.Equal(qualifier, w.lastQual) &&
		bytes.Equal(row, w.lastRow) && bytes.Equal(family, w.family)
}

// AppendKeyValue adds a KeyValue record (int32 keyLen | int32 valueLen | key | value, as built by
// AppendKeyValue) with no tags and sequence id 0. It splits the record into its parts and takes
// the path of AppendParts; it does not allocate in the steady state and does not retain rec.
func (w *Writer) AppendKeyValue(rec []byte) error {
	if w.done {
		return ErrWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	key, value, n, err := kv.SplitKeyValue(rec)
	if err != nil || n != len(rec) {
		return fmt.Errorf("hfilewriter: malformed KeyValue record of %d bytes", len(rec))
	}
	k := Key(key)
	if !k.Valid() {
		return fmt.Errorf("hfilewriter: malformed key %s", kv.ToStringBinary(key))
	}
	rl := int(binary.BigEndian.Uint16(key))
	fl := int(key[2+rl])
	if fl > kv.MaxFamilyLength {
		return fmt.Errorf("hfilewriter: key %s: family of %d bytes exceeds HBase's limit of %d", k, fl, kv.MaxFamilyLength)
	}
	return w.appendCell(key[2:2+rl], key[3+rl:3+rl+fl], key[3+rl+fl:len(key)-9],
		int64(binary.BigEndian.Uint64(key[len(key)-9:])), Type(key[len(key)-1]), value, nil, 0)
}

// maxCellColumnAndValue bounds len(qualifier)+len(value) so that a cell's KeyValue record
// (int32 lengths, at most Integer.MAX_VALUE bytes in all) stays representable.
const maxCellColumnAndValue = math.MaxInt32 - 8 - kv.KeyInfrastructureSize - kv.MaxRowLength - kv.MaxFamilyLength - 2 - kv.MaxTagsLength

// checkCell makes the checks that only cells given by parts need (a KeyValue record cannot fail
// them): size limits, and tags and sequence id against the file's settings. Errors name the cell
// as Cell.String does.
func (w *Writer) checkCell(row, family, qualifier []byte, ts int64, typ Type, value, tags []byte, seq uint64) error {
	if err := kv.ValidateSizes(row, family, tags); err != nil {
		return fmt.Errorf("hfilewriter: cell %s: %w", kv.FormatCell(row, family, qualifier, ts, typ, len(value), seq), err)
	}
	if len(tags) > 0 && !w.tags {
		return fmt.Errorf("hfilewriter: cell %s has tags but the file is written without tags (tags need HFile v3 without NoTags)",
			kv.FormatCell(row, family, qualifier, ts, typ, len(value), seq))
	}
	if err := kv.CheckTags(tags); err != nil {
		return fmt.Errorf("hfilewriter: cell %s: %w", kv.FormatCell(row, family, qualifier, ts, typ, len(value), seq), err)
	}
	if seq != 0 && !w.mvcc {
		return fmt.Errorf("hfilewriter: cell %s has a sequence id but the file is written without MVCC",
			kv.FormatCell(row, family, qualifier, ts, typ, len(value), seq))
	}
	if seq > math.MaxInt64 {
		return fmt.Errorf("hfilewriter: cell %s: sequence id out of range", kv.FormatCell(row, family, qualifier, ts, typ, len(value), seq))
	}
	if n := uint64(len(qualifier)) + uint64(len(value)); n > maxCellColumnAndValue {
		return fmt.Errorf("hfilewriter: cell %s: qualifier and value of %d bytes exceed the KeyValue format's limit of %d",
			kv.FormatCell(row, family, qualifier, ts, typ, len(value), seq), n, uint64(maxCellColumnAndValue))
	}
	return nil
}

// appendCell is the one write path of Append, AppendParts and AppendKeyValue. The previous cell
// is kept as parts (lastRow, family, lastQual, lastTs, lastType): a cell of the same row costs a
// row comparison and a qualifier copy; the row is copied and added to a ROW bloom only when it
// changes. Flat keys are built only where HBase stores them: first key of a block and last key
// of the previous block (index entries), keys of encoded cells (in a reused buffer), the biggest
// cell, and on demand for Stats and Close.
func (w *Writer) appendCell(row, family, qualifier []byte, ts int64, typ Type, value, tags []byte, seq uint64) error {
	// Checks a KeyValue record passes by construction (AppendKeyValue makes its own); the common
	// cell (small, no tags, sequence id 0) passes them in one comparison chain.
	if len(row) > kv.MaxRowLength || len(family) > kv.MaxFamilyLength || len(tags) != 0 || seq != 0 ||
		uint64(len(qualifier))+uint64(len(value)) > maxCellColumnAndValue {
		if err := w.checkCell(row, family, qualifier, ts, typ, value, tags, seq); err != nil {
			return err
		}
	}
	if w.done {
		return ErrWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	switch typ {
	case kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion:
	default:
		return fmt.Errorf("hfilewriter: key %s has type %s, which cannot be stored", kv.FormatKey(row, family, qualifier, ts, typ), typ)
	}
	// Order against the previous cell, as CompareKeys orders flat keys (row, family, qualifier
	// ascending, timestamp and type descending; stored types are never Minimum).
	newRow, newCol := true, true
	if w.entries > 0 {
		// Equality first: the same row and the file's family are the common case.
		c, sameFamily := 0, equalShort(family, w.family)
		if bytes.Equal(row, w.lastRow) {
			newRow = false
			if !sameFamily {
				c = bytes.Compare(family, w.family)
			} else if c = bytes.Compare(qualifier, w.lastQual); c == 0 {
				newCol = false
				c = compareTsTypeParts(ts, typ, w.lastTs, w.lastType)
			}
		} else {
			c = bytes.Compare(row, w.lastRow)
		}
		if c < 0 {
			return fmt.Errorf("hfilewriter: key out of order: %s sorts before the previous key %s",
				kv.FormatKey(row, family, qualifier, ts, typ), w.lastKeyString())
		}
		if c == 0 && !w.opts.AllowDuplicateKeys {
			return fmt.Errorf("hfilewriter: duplicate key: %s equals the previous key %s",
				kv.FormatKey(row, family, qualifier, ts, typ), w.lastKeyString())
		}
		if !sameFamily {
			return fmt.Errorf("hfilewriter: key %s has family %q but the file holds family %q (one family per HFile)",
				kv.FormatKey(row, family, qualifier, ts, typ), kv.ToStringBinary(family), kv.ToStringBinary(w.family))
		}
	}

	// Blooms first, as StoreFileWriter.append does (a full chunk is enqueued here and written at
	// the next data block boundary).
	if newCol || typ == kv.TypeDeleteFamily || typ == kv.TypeDeleteFamilyVersion { // newRow implies newCol
		w.addToBlooms(row, family, qualifier, typ, newRow, newCol)
	}

	// Data block boundary (HFileWriterImpl.checkBlockBoundary).
	if full := w.blkOpen && (w.blkUnencoded >= w.opts.BlockSize || w.blkEncoded >= w.opts.BlockSize); full || !w.blkOpen {
		if err := w.openDataBlock(full); err != nil {
			return err
		}
	}

	// Encode the cell.
	klen := kv.KeyInfrastructureSize + len(row) + len(family) + len(qualifier)
	before := len(w.blk)
	unencoded := 8 + klen + len(value)
	if w.enc == nil {
		// keyLength | valueLength | key | value written straight into the block.
		b := slices.Grow(w.blk, unencoded+2+len(tags)+binary.MaxVarintLen64)
		b = b[:before+unencoded]
		putKeyValue(b[before:], klen, row, family, qualifier, ts, typ, value)
		if newCol {
			q := before + 8 + 2 + len(row) + 1 + len(family)
			w.lastQual, w.lastQualInBlk = b[q:q+len(qualifier):q+len(qualifier)], true
		}
		if w.tags {
			b = binary.BigEndian.AppendUint16(b, uint16(len(tags)))
			if len(tags) > 0 {
				b = append(b, tags...)
			}
		}
		w.blk = b
	} else {
		if w.cenc != nil {
			w.blk = w.cenc.encodeCell(w.blk, row, family, qualifier, ts, typ, value, w.lastRow, w.lastQual)
		} else {
			w.keyBuf = kv.AppendKey(w.keyBuf[:0], row, family, qualifier, ts, typ)
			w.blk = w.enc.encode(w.blk, w.keyBuf, value)
		}
		if w.tags {
			if len(tags) == 0 {
				w.blk = append(w.blk, 0) // vint 0
			} else {
				w.blk = binary.AppendUvarint(w.blk, uint64(len(tags)))
				w.blk = append(w.blk, tags...)
			}
		}
	}
	if w.tags {
		unencoded += 2 + len(tags)
	}
	if w.mvcc {
		if seq == 0 {
			w.blk = append(w.blk, 0)
			unencoded++
		} else {
			w.blk = AppendVLong(w.blk, int64(seq))
			unencoded += VLongSize(int64(seq))
		}
	}
	w.blkUnencoded += unencoded
	w.blkEncoded += len(w.blk) - before

	// Statistics (HFileWriterImpl.append, StoreFileWriter.trackTimestamps).
	w.totalKeyLen += int64(klen)
	w.totalValueLen += int64(len(value))
	cellSize := int64(12 + klen + len(value))
	if len(tags) > 0 {
		cellSize += int64(2 + len(tags))
	}
	if w.lenBiggest < cellSize {
		w.lenBiggest = cellSize
		w.keyBiggest = kv.AppendKey(w.keyBiggest[:0], row, family, qualifier, ts, typ)
	}
	if !w.blkHasFirst {
		w.blkFirstKey = kv.AppendKey(w.blkFirstKey[:0], row, family, qualifier, ts, typ)
		w.blkHasFirst = true
	}
	if w.entries == 0 {
		w.firstKey = kv.AppendKey(w.firstKey[:0], row, family, qualifier, ts, typ)
		w.family = append(w.family[:0], family...)
	}
	if newRow {
		w.lastRow = append(w.lastRow[:0], row...)
	}
	if newCol && w.enc != nil {
		w.lastQualOwn = append(w.lastQualOwn[:0], qualifier...)
		w.lastQual = w.lastQualOwn
	}
	w.lastTs, w.lastType = ts, typ
	w.entries++
	if seq > w.maxSeq {
		w.maxSeq = seq
	}
	if len(tags) > w.maxTagsLen {
		w.maxTagsLen = len(tags)
	}
	if typ == kv.TypePut && ts < w.earliestPut {
		w.earliestPut = ts
	}
	w.includeTimestamp(ts)
	if typ == kv.TypeDeleteColumn || typ == kv.TypeDeleteFamily {
		w.includeTimestamp(0)
	}
	w.setSameRowFast(typ)
	return nil
}

// putKeyValue writes the KeyValue record keyLength | valueLength | key | value into p, which has
// exactly its length; klen is the key length.
func putKeyValue(p []byte, klen int, row, family, qualifier []byte, ts int64, typ Type, value []byte) {
	binary.BigEndian.PutUint32(p, uint32(klen))
	binary.BigEndian.PutUint32(p[4:], uint32(len(value)))
	binary.BigEndian.PutUint16(p[8:], uint16(len(row)))
	i := 10 + copy(p[10:], row)
	p[i] = byte(len(family))
	i++
	for _, c := range family { // a byte or two: cheaper than a call to memmove
		p[i] = c
		i++
	}
	i += copy(p[i:], qualifier)
	binary.BigEndian.PutUint64(p[i:], uint64(ts))
	p[i+8] = byte(typ)
	copy(p[i+9:], value)
}

// equalShort is bytes.Equal for a few bytes (a family), without a call to the runtime.
func equalShort(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] { // the Writer's own copy (AppendSameRow)
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// compareTsTypeParts orders two cells of the same column: timestamp descending, then type
// descending (compareTsType on parts).
func compareTsTypeParts(ats int64, at Type, bts int64, bt Type) int {
	switch {
	case ats > bts:
		return -1
	case ats < bts:
		return 1
	case at > bt:
		return -1
	case at < bt:
		return 1
	}
	return 0
}

// appendLastKey appends the flat key of the last cell appended (entries > 0).
func (w *Writer) appendLastKey(dst []byte) []byte {
	return kv.AppendKey(dst, w.lastRow, w.family, w.lastQual, w.lastTs, w.lastType)
}

// lastKeyString formats the last cell's key for error messages.
func (w *Writer) lastKeyString() string {
	return kv.FormatKey(w.lastRow, w.family, w.lastQual, w.lastTs, w.lastType)
}

// notePut records a put at ts that a row path appended as the last cell: its timestamp and type, the
// earliest put and the file's time range.
func (w *Writer) notePut(ts int64) {
	w.lastTs, w.lastType = ts, kv.TypePut
	if ts < w.earliestPut {
		w.earliestPut = ts
	}
	w.includeTimestamp(ts)
}

func (w *Writer) includeTimestamp(ts int64) {
	if ts < w.trMin {
		w.trMin = ts
	}
	if ts > w.trMax {
		w.trMax = ts
	}
}

// addToBlooms feeds the general and delete-family blooms (RowBloomContext / RowColBloomContext:
// a key is added only when it differs from the previous bloom key, i.e. when the row, or for
// ROWCOL the column, changes; the family never changes within a file).
func (w *Writer) addToBlooms(row, family, qualifier []byte, typ Type, newRow, newCol bool) {
	if w.bloom != nil {
		if w.opts.Bloom == BloomRowCol {
			if newCol {
				// Hashed: (row, empty family, qualifier, LATEST, Maximum); chunk key: firstOnRowCol.
				w.scratch = kv.AppendKey(w.scratch[:0], row, nil, qualifier, kv.LatestTimestamp, kv.TypeMaximum)
				hashLen := len(w.scratch)
				w.scratch = kv.AppendKey(w.scratch, row, family, qualifier, kv.LatestTimestamp, kv.TypeMaximum)
				w.bloom.add(w.scratch[:hashLen], w.scratch[hashLen:])
			}
		} else if newRow {
			if w.hasRowHash {
				w.bloom.addHashed(uint64(w.rowHash), row)
			} else {
				w.bloom.add(row, row)
			}
		}
	}
	if typ == kv.TypeDeleteFamily || typ == kv.TypeDeleteFamilyVersion {
		w.deleteFamilies++
		if w.dfBloom != nil {
			if !w.dfHas || !bytes.Equal(w.dfRow, row) {
				w.dfBloom.add(row, row)
				w.dfRow = append(w.dfRow[:0], row...)
				w.dfHas = true
			}
		}
	}
}

func (w *Writer) fail(err error) error {
	w.sameRowFast, w.sameRowFD, w.sameRowPX = false, false, false
	w.err = fmt.Errorf("hfilewriter: %w", err)
	return w.err
}

func (w *Writer) newDataBlock() {
	if w.entries > 0 {
		w.prevLastKey = w.appendLastKey(w.prevLastKey[:0])
		w.hasPrevBlock = true
	}
	// An uncompressed block is built where the output will take it from, if it lends its buffer and
	// that has room for a full block: the write is then no copy. (A block that outgrows it moves to
	// the heap on append and is copied as usual.)
	w.blk, w.blkLent = w.blkOwn[:BlockHeaderSize], false
	if w.out.comp == nil {
		room := BlockHeaderSize + w.opts.BlockSize + w.opts.BlockSize/4
		if a := w.out.available(room + NumChecksumBytes(room, w.out.bytesPerSum)); a != nil {
			w.blk, w.blkLent = a[:BlockHeaderSize], true
		}
	}
	if w.enc != nil {
		w.blk = w.enc.start(w.blk)
	}
	w.blkOpen = true
	w.blkUnencoded = 0
	w.blkEncoded = 0
	w.blkHasFirst = false
}

// finishDataBlock writes the current data block and adds its index entry.
func (w *Writer) finishDataBlock() error {
	if !w.blkOpen || w.blkUnencoded == 0 {
		return nil
	}
	w.blkOpen = false
	if w.lastQualInBlk { // the block is about to be handed on
		w.lastQualOwn = append(w.lastQualOwn[:0], w.lastQual...)
		w.lastQual, w.lastQualInBlk = w.lastQualOwn, false
	}
	if w.enc != nil {
		w.enc.finish(w.blk[BlockHeaderSize:], w.blkUnencoded)
	}
	var wb writtenBlock
	var err error
	w.blk, wb, err = w.out.writeBlock(w.dataType, w.blk)
	if !w.blkLent {
		w.blkOwn = w.blk // kept, grown or not
	}
	// A lent buffer is the output's again once written: never touch it after.
	w.blk, w.blkLent = w.blkOwn[:BlockHeaderSize], false
	if err != nil {
		return err
	}
	if w.firstDataOff < 0 {
		w.firstDataOff = wb.offset
	}
	w.lastDataOff = wb.offset
	w.dataBlocks++
	var left []byte
	if w.hasPrevBlock {
		left = w.prevLastKey
	}
	w.scratch = appendMidpointKey(w.scratch[:0], left, w.blkFirstKey)
	w.index.addEntry(w.scratch, wb.offset, wb.onDiskSizeWithHeader)
	w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)
	return nil
}

// openDataBlock ends the open data block when full (then writing the inline blocks that are ready)
// and makes sure a data block is open for the next cell.
func (w *Writer) openDataBlock(full bool) error {
	if full {
		if err := w.finishDataBlock(); err != nil {
			return w.fail(err)
		}
		if err := w.writeInlineBlocks(false); err != nil {
			return w.fail(err)
		}
	}
	if !w.blkOpen {
		w.newDataBlock()
	}
	return nil
}

// writeInlineBlocks writes ready leaf index and bloom chunk blocks (HFileWriterImpl.writeInlineBlocks),
// in registration order: data index, general bloom, delete-family bloom.
func (w *Writer) writeInlineBlocks(closing bool) error {
	for w.index.shouldWrite(closing) {
		var wb writtenBlock
		var err error
		w.aux, wb, err = w.out.writeBlock(BlockLeafIndex, w.index.appendLeaf(w.auxBuf()))
		if err != nil {
			return fmt.Errorf("leaf index block: %w", err)
		}
		w.index.leafWritten(wb)
		w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)
	}
	for _, bw := range []*writeBloomWriter{w.bloom, w.dfBloom} {
		if bw == nil {
			continue
		}
		for bw.shouldWrite(closing) {
			var wb writtenBlock
			var err error
			w.aux, wb, err = w.out.writeBlock(BlockBloomChunk, bw.appendReady(w.auxBuf()))
			if err != nil {
				return fmt.Errorf("bloom chunk block: %w", err)
			}
			bw.readyWritten(wb)
			w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)
		}
	}
	return nil
}

// auxBuf returns the auxiliary block buffer with header room.
func (w *Writer) auxBuf() []byte {
	if cap(w.aux) < BlockHeaderSize {
		w.aux = make([]byte, BlockHeaderSize, 4096)
	}
	return w.aux[:BlockHeaderSize]
}

// Close finishes the file: the last data block, remaining inline blocks, the index, file info,
// bloom metadata and trailer. It does not close the underlying io.Writer.
func (w *Writer) Close() error {
	if w.done {
		return ErrWriterClosed
	}
	w.done = true
	w.sameRowFast, w.sameRowFD, w.sameRowPX = false, false, false
	if w.err != nil {
		return w.err
	}
	if err := w.close(); err != nil {
		w.err = fmt.Errorf("hfilewriter: close: %w", err)
		return w.err
	}
	return nil
}

// close writes what Close writes in one write to the output, when it lends its buffer (blockOutput's
// gathering): with a write each, a small file's seven blocks and trailer cost more in the calls
// through the stream verifier and the file's buffer than in their bytes.
func (w *Writer) close() error {
	w.out.startGather()
	err := w.closeBlocks()
	if ferr := w.out.flushGather(); err == nil {
		err = ferr
	}
	return err
}

func (w *Writer) closeBlocks() error {
	if err := w.finishDataBlock(); err != nil {
		return err
	}
	if err := w.writeInlineBlocks(true); err != nil {
		return err
	}
	if w.bloom != nil && w.bloom.follow != nil {
		w.bloom.unfollow(nil) // the last chunk is written: let the producer free what it keeps for this file
	}
	// No META blocks. Load-on-open section: data index root (after intermediate levels).
	var rootOff int64
	var err error
	w.aux, rootOff, err = w.index.writeIndexBlocks(w.out, w.auxBuf())
	if err != nil {
		return err
	}
	// Meta index: an empty single-level root block.
	var wb writtenBlock
	if w.aux, wb, err = w.out.writeBlock(BlockRootIndex, w.auxBuf()); err != nil {
		return fmt.Errorf("meta index: %w", err)
	}
	w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)

	// File info.
	fileInfoOff := w.out.offset
	fi := w.fileInfo()
	if w.aux, wb, err = w.out.writeBlock(BlockFileInfo, fi.appendProtoOrder(w.auxBuf(), &w.fiOrder)); err != nil {
		return fmt.Errorf("file info: %w", err)
	}
	w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)

	// Bloom metadata: general first, then delete-family, each only if it got keys.
	if w.bloom != nil && w.bloom.totalKeys > 0 {
		if w.aux, wb, err = w.out.writeBlock(BlockGeneralBloomMeta, w.bloom.appendMeta(w.auxBuf())); err != nil {
			return fmt.Errorf("bloom meta: %w", err)
		}
		w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)
	}
	if w.dfBloom != nil && w.dfBloom.totalKeys > 0 {
		if w.aux, wb, err = w.out.writeBlock(BlockDeleteFamilyBloomMeta, w.dfBloom.appendMeta(w.auxBuf())); err != nil {
			return fmt.Errorf("delete-family bloom meta: %w", err)
		}
		w.totalUncomp += BlockHeaderSize + int64(wb.uncompressedSizeNoHdr)
	}

	t := writeTrailerFields{
		fileInfoOffset:          fileInfoOff,
		loadOnOpenOffset:        rootOff,
		uncompressedDataIndexSz: w.index.totalUncompressed,
		dataIndexCount:          uint32(w.index.numRootEntries()),
		entryCount:              uint64(w.entries),
		numDataIndexLevels:      uint32(w.index.levels),
		firstDataBlockOffset:    w.firstDataOff,
		lastDataBlockOffset:     w.lastDataOff,
		comparatorClassName:     ComparatorKV,
		compressionCodec:        uint32(w.opts.Compression.Codec()),
		majorVersion:            w.opts.FormatVersion,
		minorVersion:            3,
	}
	trailerSize := int64(TrailerSizeV3)
	if w.opts.FormatVersion == 2 {
		trailerSize = TrailerSizeV2
	}
	t.totalUncompressedBytes = w.totalUncomp + trailerSize
	tb, err := w.trailer.write(&t)
	if err != nil {
		return err
	}
	if err := w.out.writeRaw(tb); err != nil {
		return fmt.Errorf("trailer: %w", err)
	}
	w.blk = nil // blkOwn and aux stay for NewWriterReusing
	return nil
}

// AppendFileInfo adds a file info entry, like HBase's Writer.appendFileInfo: keys starting with
// "hfile." are reserved for the format and rejected. Entries the writer itself sets on Close
// (bloom, counts, time range with BulkLoad, ...) replace user entries with the same key, as they do
// in HBase. Typical use: MAX_SEQ_ID_KEY, MAJOR_COMPACTION_KEY or application metadata.
func (w *Writer) AppendFileInfo(key string, value []byte) error {
	if w.done {
		return ErrWriterClosed
	}
	if key == "" {
		return errors.New("hfilewriter: empty file info key")
	}
	if strings.HasPrefix(key, "hfile.") {
		return fmt.Errorf("hfilewriter: file info key %q uses the reserved prefix \"hfile.\"", key)
	}
	w.userInfo.put(key, append([]byte(nil), value...))
	return nil
}

// fileInfo assembles the file info map as HBase 2.6's HFileWriterImpl and StoreFileWriter (and,
// with BulkLoad, HFileOutputFormat2) fill it.
//
// Its entries live in w.fi, reused from file to file (NewWriterReusing): they are read only to
// serialize the file info block, right after.
func (w *Writer) fileInfo() *writeFileInfoMap {
	fi := &w.fi
	// The files of a load have the same keys, mostly with values of the same lengths: first try
	// putting the values straight into the last file's message (writeFileInfoMap.direct).
	if fi.resetDirect(&w.fiOrder) {
		w.putFileInfo(fi)
		if fi.directDone() {
			return fi
		}
	}
	fi.reset()
	w.putFileInfo(fi)
	return fi
}

// putFileInfo puts the file's info entries into fi.
func (w *Writer) putFileInfo(fi *writeFileInfoMap) {
	for i, k := range w.userInfo.keys {
		fi.put(k, w.userInfo.values[i])
	}
	// StoreFileWriter.close: general bloom, delete-family count, historical.
	if w.bloom != nil && w.bloom.totalKeys > 0 {
		fi.putString(FileInfoBloomType, w.opts.Bloom.String())
		if w.opts.Bloom == BloomRowCol {
			n := len(fi.num)
			fi.num = kv.AppendKey(fi.num, w.lastRow, w.family, w.lastQual, kv.LatestTimestamp, kv.TypeMaximum)
			fi.putNum(FileInfoLastBloomKey, len(fi.num)-n)
		} else {
			fi.putCopy(FileInfoLastBloomKey, w.lastRow)
		}
	}
	fi.putInt64(FileInfoDeleteFamilyCnt, w.deleteFamilies)
	fi.putBool(FileInfoHistorical, false)
	// HFileOutputFormat2.close + appendTrackedTimestampsToMetadata.
	if b := w.opts.BulkLoad; b != nil {
		fi.putInt64(FileInfoBulkloadTime, b.Time)
		fi.putString(FileInfoBulkloadTask, b.SourceTask)
		fi.putBool(FileInfoMajorCompaction, b.MajorCompaction)
		fi.putBool(FileInfoExcludeMinor, b.ExcludeFromMinorCompaction)
		fi.grow(16)
		fi.num = binary.BigEndian.AppendUint64(fi.num, uint64(w.trMin))
		fi.num = binary.BigEndian.AppendUint64(fi.num, uint64(w.trMax))
		fi.putNum(FileInfoTimeRange, 16)
		fi.putInt64(FileInfoEarliestPutTS, w.earliestPut)
	}
	// HFileWriterImpl.close / finishFileInfo.
	if w.enc != nil {
		fi.putString(FileInfoDataBlockEnc, w.opts.Encoding.String())
	}
	if w.mvcc {
		fi.putInt64(FileInfoMaxMemstoreTS, int64(w.maxSeq))
		fi.putInt32(FileInfoKeyValueVersion, 1)
	}
	if w.entries > 0 {
		n := len(fi.num)
		fi.num = w.appendLastKey(fi.num)
		fi.putNum(FileInfoLastKey, len(fi.num)-n)
	}
	var avgKey, avgValue int32
	if w.entries > 0 {
		avgKey = int32(w.totalKeyLen / w.entries)
		avgValue = int32(w.totalValueLen / w.entries)
	}
	fi.putInt32(FileInfoAvgKeyLen, avgKey)
	fi.putInt64(FileInfoCreateTime, w.opts.CreateTime)
	fi.putInt32(FileInfoAvgValueLen, avgValue)
	if w.entries > 0 { // the first cell sets keyBiggest
		fi.putCopy(FileInfoKeyOfBiggestCell, w.keyBiggest)
		fi.putInt64(FileInfoLenOfBiggestCell, w.lenBiggest)
	}
	if w.tags {
		fi.putInt32(FileInfoMaxTagsLen, int32(w.maxTagsLen))
		fi.putBool(FileInfoTagsCompressed, false)
	}
}

// KeyValueBytes returns the size of the cells appended so far as KeyValue records without tags and
// sequence ids (8 + key + value bytes each): Stats' Entries, KeyBytes and ValueBytes in one sum, without
// Stats' copies. A caller counting what it hands the writer takes the difference across its calls.
func (w *Writer) KeyValueBytes() int64 { return 8*w.entries + w.totalKeyLen + w.totalValueLen }

// Stats returns what has been written so far. FirstKey and LastKey are copies.
func (w *Writer) Stats() WriterStats {
	s := w.StatsWithoutKeys()
	if w.entries > 0 {
		s.FirstKey = append([]byte(nil), w.firstKey...)
		s.LastKey = w.appendLastKey(nil)
	}
	return s
}

// AppendFirstKey appends the flat key of the first cell to dst (nothing before the first cell).
func (w *Writer) AppendFirstKey(dst []byte) []byte {
	if w.entries == 0 {
		return dst
	}
	return append(dst, w.firstKey...)
}

// AppendLastKey appends the flat key of the last cell to dst (nothing before the first cell).
func (w *Writer) AppendLastKey(dst []byte) []byte {
	if w.entries == 0 {
		return dst
	}
	return w.appendLastKey(dst)
}

// StatsWithoutKeys is Stats without FirstKey and LastKey (nil), and without their copies: for a
// caller that takes the keys with AppendFirstKey and AppendLastKey into memory of its own.
func (w *Writer) StatsWithoutKeys() WriterStats {
	s := WriterStats{
		Entries:      w.entries,
		BytesWritten: w.out.offset,
		DataBlocks:   w.dataBlocks,
		KeyBytes:     w.totalKeyLen,
		ValueBytes:   w.totalValueLen,
	}
	if w.index != nil {
		s.IndexLevels = w.index.levels
	}
	if w.bloom != nil {
		s.BloomKeys = w.bloom.totalKeys
		s.SharedBloomChunks = int64(w.bloom.sharedChunks)
	}
	return s
}
