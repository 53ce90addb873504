package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

// verifyBlockRef is one block found by the sequential scan of the file.
type verifyBlockRef struct {
	Offset   int64
	Size     int // on-disk size with header and checksums
	Type     BlockType
	Payload  int    // uncompressed payload size (a bloom chunk's bit array)
	FirstKey []byte // data blocks only
	LastKey  []byte
	Cells    int
}

// verifyState accumulates what the sequential scan of a file has seen, for the checks that follow
// it. The scan takes its blocks from a Reader (Verify, VerifyBlocks: scanBlocks) or from the bytes
// a StreamVerifier is handed (addBlock); the later steps (checkDataIndex, checkOtherIndexes,
// checkTotals) read the trailer and the load-on-open section through r, which a StreamVerifier builds
// on Finish from the blocks it kept.
type verifyState struct {
	r          *Reader            // nil in a StreamVerifier until Finish
	opts       *decodeCellOptions // the cell layout data blocks are walked with
	blocks     []verifyBlockRef   // in file order: ascending offsets (blockIndex searches them)
	dataBlocks []int              // indexes into blocks
	counts     [countedTypes]int  // the blocks of the types count answers for, by countedType
	cache      map[int64][]byte   // bloom chunks read for Verify's lookups

	// keep (StreamVerifier) keeps the decompressed payloads of the blocks the later steps read back
	// by offset, in kept: index blocks (leaf, intermediate, root), file info and bloom metadata.
	keep       bool
	keptBlocks []readBlock // in file order, like blocks (keptIndex searches them)

	// arena holds the copies a scan keeps (data blocks' first and last keys, kept payloads), so a
	// StreamVerifier's next file reuses it (reset) instead of allocating them one by one. Slices into
	// it stay valid when it grows: the old array lives on while they point into it.
	arena []byte

	// mvccWidth (StreamVerifier, which walks sequence ids as vlongs before the file info tells
	// whether readers decode them) records in mvccWidthErr the first sequence id longer than a byte.
	mvccWidth    bool
	mvccWidthErr error

	// streamReader and streamTrailer are what a StreamVerifier's Finish parses the trailer and the
	// load-on-open section into, kept by reset for the next file (nil and zero before the first).
	streamReader  *Reader
	streamTrailer Trailer

	quick             bool // VerifyBlocks: no per-cell order and bloom checks
	undecoded         bool // VerifyBlocks left encoded data blocks undecoded: no cell totals
	cells             uint64
	prevKey           []byte
	keyLenSum, valSum int64
	maxSeq            uint64
	maxTags           int
	deleteFamilyCells int64
}

// Verify checks the whole file and returns a precise error on the first problem: every block's
// checksum, header sizes and decompression; that blocks tile the file up to the trailer; key order
// (non-decreasing by CompareKeys, equal keys allowed as HBase allows them); data index consistency
// (every index entry points at a data block of the recorded size, whose first key is >= the index key
// and whose previous block's last key is < the index key, in file order, covering every data block);
// meta and bloom chunk indexes; every cell passes the general bloom (ROW: row; ROWCOL: row+qualifier)
// and every delete-family cell the delete-family bloom; the trailer's entry count and data block
// offsets; and the file info's LASTKEY, AVG_KEY_LEN, AVG_VALUE_LEN, MAX_MEMSTORE_TS_KEY and MAX_TAGS_LEN.
func (r *Reader) Verify() error { return r.verify(false) }

// VerifyBlocks is the cheaper check a load runs on every file it wrote before committing it: everything
// Verify checks about blocks, indexes, bloom chunk layout, trailer and file info totals, including every
// block's checksum and the cell count, key and value lengths of every data block, but key order only
// across blocks (first key of each block after the last key of the previous one; the writer refuses
// out-of-order cells itself) and no bloom membership of each cell. Unencoded data blocks are walked by
// their length fields without building cells. Encoded data blocks (PREFIX, DIFF, FAST_DIFF) are
// checksummed and decompressed but not decoded, so for them the index keys, cell totals and file-info
// averages are not checked. It reads every byte of the file; StreamVerifier makes the same checks on
// the bytes as they are written.
func (r *Reader) VerifyBlocks() error { return r.verify(true) }

func (r *Reader) verify(quick bool) error {
	v := newVerifyState(r, &r.opts, quick)
	for _, step := range []func() error{v.scanBlocks, v.checkDataIndex, v.checkOtherIndexes, v.checkTotals} {
		if err := step(); err != nil {
			return fmt.Errorf("hfile verify: %w", err)
		}
	}
	return nil
}

func newVerifyState(r *Reader, opts *decodeCellOptions, quick bool) *verifyState {
	return &verifyState{r: r, opts: opts, cache: map[int64][]byte{}, quick: quick}
}

// verifyArenaMax is the largest arena reset keeps for the next file (a file with a huge index or huge
// keys does not pin its copies' memory).
const verifyArenaMax = 4 << 20

// reset empties v for the next file's scan with opts, keeping its maps, slices and arena (nothing
// taken from v before stays valid).
func (v *verifyState) reset(opts *decodeCellOptions) {
	if len(v.cache) > 0 {
		clear(v.cache)
	}
	clear(v.keptBlocks)
	arena := v.arena[:0]
	if cap(arena) > verifyArenaMax {
		arena = nil
	}
	// Field by field: streamTrailer, the one large field, is set whole where it is used (readTrailerInto).
	v.r, v.opts = nil, opts
	v.blocks, v.dataBlocks, v.counts = v.blocks[:0], v.dataBlocks[:0], [countedTypes]int{}
	v.keptBlocks, v.arena = v.keptBlocks[:0], arena
	v.mvccWidthErr = nil
	v.undecoded, v.cells, v.prevKey = false, 0, nil
	v.keyLenSum, v.valSum, v.maxSeq, v.maxTags, v.deleteFamilyCells = 0, 0, 0, 0, 0
}

// keep copies b into the arena.
func (v *verifyState) copyBytes(b []byte) []byte {
	n := len(v.arena)
	v.arena = append(v.arena, b...)
	return v.arena[n:len(v.arena):len(v.arena)]
}

func isDataBlockType(t BlockType) bool { return t == BlockData || t == BlockEncodedData }

// verifyKeepsPayload reports whether a StreamVerifier keeps the payload of a block of type t: the
// blocks the index walk and the load-on-open section read back.
func verifyKeepsPayload(t BlockType) bool {
	switch t {
	case BlockLeafIndex, BlockIntermediateIndex, BlockRootIndex, BlockFileInfo, BlockGeneralBloomMeta, BlockDeleteFamilyBloomMeta:
		return true
	}
	return false
}

// scanBlocks reads every block from offset 0 to the trailer and checks it (addBlock).
func (v *verifyState) scanBlocks() error {
	r := v.r
	limit := r.blockLimit()
	var buf, payload []byte // reused: nothing below keeps a reference to a block's bytes
	for off := int64(0); off < limit; {
		b, err := r.readBlockInto(off, limit, 0, &buf, &payload)
		if err != nil {
			return err
		}
		if isDataBlockType(b.Header.Type) {
			if err := v.checkDataPlacement(len(v.dataBlocks), off); err != nil {
				return err
			}
		}
		if err := v.addBlock(b); err != nil {
			return err
		}
		off += int64(b.Header.OnDiskSize())
	}
	return v.checkScanEnd()
}

// addBlock records the next block of the file (checksummed and decompressed already) and checks it
// if it is a data block. It keeps no reference to b's bytes, except, with keep, a copy of the
// payload of the blocks verifyKeepsPayload names.
func (v *verifyState) addBlock(b *readBlock) error {
	ref := verifyBlockRef{Offset: b.Offset, Size: b.Header.OnDiskSize(), Type: b.Header.Type, Payload: len(b.Payload)}
	if isDataBlockType(b.Header.Type) {
		n := len(v.dataBlocks)
		if err := v.checkDataBlock(b, &ref); err != nil {
			return fmt.Errorf("data block %d at offset %d%w", n, b.Offset, err)
		}
		v.dataBlocks = append(v.dataBlocks, len(v.blocks))
	} else {
		if v.keep && verifyKeepsPayload(b.Header.Type) {
			v.keptBlocks = append(v.keptBlocks, readBlock{Offset: b.Offset, Header: b.Header, Payload: v.copyBytes(b.Payload)})
		}
		if i := countedType(b.Header.Type); i >= 0 {
			v.counts[i]++
		}
	}
	v.blocks = append(v.blocks, ref)
	return nil
}

// countedTypes is how many block types count answers for (countedType).
const countedTypes = 4

// countedType is the index in verifyState.counts of the blocks of type t, -1 for a type count does not
// answer for.
func countedType(t BlockType) int {
	switch t {
	case BlockLeafIndex:
		return 0
	case BlockIntermediateIndex:
		return 1
	case BlockMeta:
		return 2
	case BlockBloomChunk:
		return 3
	}
	return -1
}

// blockIndex returns the index in v.blocks of the scanned block that starts at off. The blocks are
// added in file order, each after the one before it (a scan tiles the file), so their offsets ascend
// and a binary search finds it: the files of a load have a few blocks each, and a map per file cost
// more to fill and clear than the lookups it served.
func (v *verifyState) blockIndex(off int64) (int, bool) {
	b := v.blocks
	lo, hi := 0, len(b) // sort.Search's loop, without a call per step
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); b[m].Offset < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(b) && b[lo].Offset == off
}

// keptIndex is blockIndex for v.keptBlocks (in file order too).
func (v *verifyState) keptIndex(off int64) (int, bool) {
	b := v.keptBlocks
	lo, hi := 0, len(b)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); b[m].Offset < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(b) && b[lo].Offset == off
}

// checkDataPlacement checks the position of data block n, at off, against the trailer.
func (v *verifyState) checkDataPlacement(n int, off int64) error {
	t := v.r.trailer
	if n == 0 && off != t.FirstDataBlockOffset {
		return fmt.Errorf("first data block is at offset %d but the trailer says %d", off, t.FirstDataBlockOffset)
	}
	if off > t.LastDataBlockOffset {
		return fmt.Errorf("data block at offset %d lies after the trailer's last data block offset %d", off, t.LastDataBlockOffset)
	}
	if off >= t.LoadOnOpenOffset {
		return fmt.Errorf("data block at offset %d lies in the load-on-open section (from %d)", off, t.LoadOnOpenOffset)
	}
	return nil
}

// checkScanEnd checks, once every block is scanned, the last data block and the load-on-open offset
// against the trailer.
func (v *verifyState) checkScanEnd() error {
	t := v.r.trailer
	if len(v.dataBlocks) > 0 {
		if last := v.blocks[v.dataBlocks[len(v.dataBlocks)-1]].Offset; last != t.LastDataBlockOffset {
			return fmt.Errorf("last data block is at offset %d but the trailer says %d", last, t.LastDataBlockOffset)
		}
	}
	if _, ok := v.blockIndex(t.LoadOnOpenOffset); !ok {
		return fmt.Errorf("no block starts at the load-on-open offset %d", t.LoadOnOpenOffset)
	}
	return nil
}

// keptBlock serves a StreamVerifier's Reader (Reader.blocks): the scanned block at off with its kept
// payload, or, for a block whose payload is not kept (data, bloom chunk, meta), its type and size only.
func (v *verifyState) keptBlock(off, limit int64, wantSize int) (*readBlock, error) {
	var b *readBlock
	if k, ok := v.keptIndex(off); ok {
		b = &v.keptBlocks[k] // a kept block is one of the scanned blocks (addBlock): no need to look there
	} else {
		i, ok := v.blockIndex(off)
		if !ok {
			return nil, fmt.Errorf("block at offset %d: no block of the file starts there", off)
		}
		ref := &v.blocks[i]
		b = &readBlock{Offset: off, Header: readBlockHeader{Type: ref.Type, OnDiskSizeWithoutHeader: ref.Size - BlockHeaderSize}}
	}
	if err := checkBlockExtent(&b.Header, off, limit, wantSize); err != nil {
		return nil, err
	}
	return b, nil
}

// checkDataBlock checks one data block's cells (how deeply depends on v.quick) and fills ref's keys
// and cell count. Errors start with ": " or ", cell N" to follow the block's position.
func (v *verifyState) checkDataBlock(b *readBlock, ref *verifyBlockRef) error {
	if v.quick && b.Header.Type == BlockData {
		if err := v.walkNoneBlock(b.Payload, ref); err != nil {
			return fmt.Errorf(": %w", err)
		}
		return nil
	}
	if v.quick { // an encoded block: checksummed and decompressed already; check its encoding id only
		if len(b.Payload) < 2 || DataBlockEncoding(binary.BigEndian.Uint16(b.Payload)) != v.opts.Encoding {
			return fmt.Errorf(" does not start with the file's encoding id (%s)", v.opts.Encoding)
		}
		v.undecoded = true
		return nil
	}
	cells, err := decodeDataBlock(b.Header.Type, b.Payload, v.opts)
	if err != nil {
		return fmt.Errorf(": %w", err)
	}
	if len(cells) == 0 {
		return fmt.Errorf(" holds no cells")
	}
	for i := range cells {
		if err := v.checkCell(&cells[i]); err != nil {
			return fmt.Errorf(", cell %d (%s): %w", i, Key(cells[i].Key()), err)
		}
	}
	ref.FirstKey, ref.LastKey, ref.Cells = cells[0].Key(), cells[len(cells)-1].Key(), len(cells)
	return nil
}

// walkNoneBlock accounts the cells of an unencoded data block from their length fields (VerifyBlocks):
// count, key and value lengths, tags, mvcc, delete-family cells, first and last key, and the order of the
// block's first key after the previous block's last key.
func (v *verifyState) walkNoneBlock(payload []byte, ref *verifyBlockRef) error {
	if v.walkNoneBlockFast(payload, ref) {
		return nil
	}
	return v.walkNoneBlockCells(payload, ref)
}

// walkNoneBlockCells is walkNoneBlock cell by cell through walkNoneCells, with a precise error.
func (v *verifyState) walkNoneBlockCells(payload []byte, ref *verifyBlockRef) error {
	var first, last []byte
	n := 0
	o := v.opts
	err := walkNoneCells(payload, o, o.DecodeMvcc, func(start, end int, key, value, tags []byte, seq uint64) error {
		if !Key(key).Valid() {
			return fmt.Errorf("cell %d at payload offset %d has a malformed key", n, start)
		}
		if v.mvccWidth && v.mvccWidthErr == nil {
			body := start + 8 + len(key) + len(value)
			if o.Tags {
				body += 2 + len(tags)
			}
			if w := end - body; w > 1 {
				v.mvccWidthErr = fmt.Errorf("data block %d at offset %d, cell %d at payload offset %d: its sequence id takes %d bytes, but with %s 0 readers take one byte",
					len(v.dataBlocks), ref.Offset, n, start, w, FileInfoMaxMemstoreTS)
			}
		}
		if first == nil {
			first = key
			if v.prevKey != nil && kv.CompareKeys(v.prevKey, key) > 0 {
				return fmt.Errorf("first key %s is before the previous block's last key %s", Key(key), Key(v.prevKey))
			}
		}
		if t := Key(key).Type(); t == kv.TypeDeleteFamily || t == kv.TypeDeleteFamilyVersion {
			v.deleteFamilyCells++
		}
		last = key
		n++
		v.keyLenSum += int64(len(key))
		v.valSum += int64(len(value))
		v.maxSeq = max(v.maxSeq, seq)
		v.maxTags = max(v.maxTags, len(tags))
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("holds no cells")
	}
	v.cells += uint64(n)
	ref.FirstKey = v.copyBytes(first)
	ref.LastKey = v.copyBytes(last)
	ref.Cells = n
	v.prevKey = ref.LastKey
	return nil
}

// walkNoneBlockFast is walkNoneBlock without a callback and a cursor per cell, for blocks whose cells
// all have well-formed keys and at most one-byte sequence ids. It makes the same checks and updates the
// same totals; it reports false, changing nothing, on anything else (a truncated cell, a bad key, a
// longer sequence id, keys out of order with the previous block), and walkNoneBlock then walks the
// block again and says precisely what is wrong.
func (v *verifyState) walkNoneBlockFast(p []byte, ref *verifyBlockRef) bool {
	o := v.opts
	var t walkTotals
	ok := false
	if o.Tags && o.Mvcc && o.DecodeMvcc { // the stream verifier's layout: most blocks' cells end in 3 zero bytes
		t, ok = walkZeroTails(p)
	}
	if !ok {
		if t, ok = walkNoneTotals(p, o); !ok {
			return false
		}
	}
	if t.n == 0 {
		return false
	}
	first := p[8 : 8+int(binary.BigEndian.Uint32(p))]
	if v.prevKey != nil && kv.CompareKeys(v.prevKey, first) > 0 {
		return false
	}
	v.deleteFamilyCells += t.deleteFamilies
	v.keyLenSum += int64(t.keySum)
	v.valSum += int64(t.valSum)
	v.maxSeq = max(v.maxSeq, t.maxSeq)
	v.maxTags = max(v.maxTags, t.maxTags)
	v.cells += uint64(t.n)
	ref.FirstKey = v.copyBytes(first)
	ref.LastKey = v.copyBytes(p[t.lastAt : t.lastAt+t.lastLen])
	ref.Cells = t.n
	v.prevKey = ref.LastKey
	return true
}

// walkTotals is what walkNoneBlockFast's loops find in a block: the cells, their key and value bytes,
// the largest tags length and sequence id, the delete-family cells, and where the last cell's key
// starts and how long it is.
type walkTotals struct {
	n, keySum, valSum, maxTags, lastAt, lastLen int
	deleteFamilies                              int64
	maxSeq                                      uint64
}

// walkNoneTotals is walkNoneBlockFast's loop for any layout o: it reports false on anything the
// cell-by-cell walk would refuse or could not take in one pass (a truncated cell, a bad key, a longer
// sequence id).
func walkNoneTotals(p []byte, o *decodeCellOptions) (walkTotals, bool) {
	tags, mvcc, decodeMvcc := o.Tags, o.Mvcc, o.Mvcc && o.DecodeMvcc
	var n, maxTags, keySum, valSum int
	var deleteFamilies int64
	var maxSeq uint64
	lastAt, lastLen := 0, 0
	// Each cell is sliced off once (c) and its fields read at offsets checked against len(c).
	for pos := 0; pos < len(p); {
		c := p[pos:]
		if len(c) < 8 {
			return walkTotals{}, false
		}
		lens := binary.BigEndian.Uint64(c)
		klen, vlen := int(int32(lens>>32)), int(int32(lens))
		if klen < kv.KeyInfrastructureSize || vlen < 0 || klen > len(c)-8 || vlen > len(c)-8-klen {
			return walkTotals{}, false
		}
		key := c[8 : 8+klen]
		// The row and family fit the key before its timestamp and type: 2+rl+1+fl <= klen-9.
		if rl := int(binary.BigEndian.Uint16(key)); rl > kv.MaxRowLength || rl > klen-12 || rl+int(key[2+rl]) > klen-12 {
			return walkTotals{}, false
		}
		end := 8 + klen + vlen
		if tags {
			if len(c)-end < 2 {
				return walkTotals{}, false
			}
			t := int(binary.BigEndian.Uint16(c[end:]))
			end += 2
			if t > len(c)-end {
				return walkTotals{}, false
			}
			end += t
			maxTags = max(maxTags, t)
		}
		if mvcc {
			if end >= len(c) {
				return walkTotals{}, false
			}
			if decodeMvcc {
				b := int8(c[end])
				if b < -112 { // a longer vlong
					return walkTotals{}, false
				}
				maxSeq = max(maxSeq, uint64(int64(b)))
			}
			end++
		}
		if t := Type(key[klen-1]); t == kv.TypeDeleteFamily || t == kv.TypeDeleteFamilyVersion {
			deleteFamilies++
		}
		lastAt, lastLen = pos+8, klen
		n++
		keySum += klen
		valSum += vlen
		pos += end
	}
	return walkTotals{n: n, keySum: keySum, valSum: valSum, maxTags: maxTags, lastAt: lastAt, lastLen: lastLen,
		deleteFamilies: deleteFamilies, maxSeq: maxSeq}, true
}

// walkZeroTails is walkNoneTotals for a block with tags and decoded one-byte sequence ids whose cells
// all end in a tags length of 0 and a sequence id of 0 and none is a delete-family cell (what the
// writer writes for a bulk load): the same checks, with fewer values to carry per cell (the totals
// of tags, sequence ids and delete-family cells are 0, the value bytes are the block's bytes less the
// cells' fixed and key bytes, the last key's length is read at its start). It reports false on any other
// cell, and walkNoneTotals then walks the block.
//
// It reads the block through an unsafe pointer (with checked slices the compiler resliced the block
// and checked every read, about 12 more instructions a cell). Each read is within the block by the
// checks before it: the cell's 8 length bytes (23 bytes left), then with klen >= 12 and 8+klen+vlen+3
// <= left, the row length at 8, the family length at 10+rl (rl <= klen-12, so before the key's end),
// the type at 7+klen and the 3 bytes at 8+klen+vlen.
func walkZeroTails(p []byte) (walkTotals, bool) {
	n, keySum, last := 0, 0, 0
	b := unsafe.Pointer(unsafe.SliceData(p))
	for pos := 0; pos < len(p); n++ {
		left := len(p) - pos
		// A cell with its tags length and sequence id is at least 23 bytes.
		if left < 8+kv.KeyInfrastructureSize+3 {
			return walkTotals{}, false
		}
		c := unsafe.Add(b, pos)
		lens := binary.BigEndian.Uint64((*[8]byte)(c)[:])
		klen, vlen := int(int32(lens>>32)), int(int32(lens))
		// The cell, its tags length and its sequence id fit: 8+klen+vlen+3 <= left (klen and vlen are
		// below 1<<31, so the sum does not overflow).
		if klen < kv.KeyInfrastructureSize || vlen < 0 || klen+vlen > left-11 {
			return walkTotals{}, false
		}
		// The row and family fit the key before its timestamp and type: 2+rl+1+fl <= klen-9.
		rl := int(binary.BigEndian.Uint16((*[2]byte)(unsafe.Add(c, 8))[:]))
		if rl > kv.MaxRowLength || rl > klen-12 || rl+int(*(*byte)(unsafe.Add(c, 10+rl))) > klen-12 {
			return walkTotals{}, false
		}
		end := 8 + klen + vlen
		tail := (*[3]byte)(unsafe.Add(c, end))                                       // the tags length and the sequence id
		if t := *(*byte)(unsafe.Add(c, 7+klen)); t|4 == byte(kv.TypeDeleteFamily) || // 14 or 10: TypeDeleteFamily(Version)
			tail[0]|tail[1]|tail[2] != 0 {
			return walkTotals{}, false
		}
		last = pos
		keySum += klen
		pos += end + 3
	}
	if n == 0 { // an empty block: no cells (the caller refuses it)
		return walkTotals{}, true
	}
	lastLen := int(binary.BigEndian.Uint32(p[last:]))
	return walkTotals{n: n, keySum: keySum, valSum: len(p) - 11*n - keySum, lastAt: last + 8, lastLen: lastLen}, true
}

func (v *verifyState) checkCell(c *Cell) error {
	r := v.r
	key := c.Key()
	if v.prevKey != nil && kv.CompareKeys(v.prevKey, key) > 0 {
		return fmt.Errorf("key out of order: previous key %s sorts after it", Key(v.prevKey))
	}
	if v.prevKey != nil && !bytes.Equal(Key(v.prevKey).Family(), c.Family) {
		return fmt.Errorf("family %s differs from the previous cell's %s", kv.ToStringBinary(c.Family), kv.ToStringBinary(Key(v.prevKey).Family()))
	}
	if r.generalBloom != nil && !v.quick {
		ok, err := r.bloomLookup(r.generalBloom, r.bloomType, c.Row, c.Qualifier, v.cache)
		if err != nil {
			return fmt.Errorf("general bloom lookup: %w", err)
		}
		if !ok {
			return fmt.Errorf("cell is not in the %s bloom filter", r.bloomType)
		}
	}
	if c.Type == kv.TypeDeleteFamily || c.Type == kv.TypeDeleteFamilyVersion {
		v.deleteFamilyCells++
		if r.deleteBloom != nil && !v.quick {
			ok, err := r.bloomLookup(r.deleteBloom, BloomRow, c.Row, nil, v.cache)
			if err != nil {
				return fmt.Errorf("delete-family bloom lookup: %w", err)
			}
			if !ok {
				return fmt.Errorf("delete-family cell is not in the delete-family bloom filter")
			}
		}
	}
	v.prevKey = key
	v.cells++
	v.keyLenSum += int64(len(key))
	v.valSum += int64(len(c.Value))
	v.maxSeq = max(v.maxSeq, c.SeqID)
	v.maxTags = max(v.maxTags, len(c.Tags))
	return nil
}

// blockAt returns the scanned block at off, checking its type (t1 or t2; the same for one type) and
// on-disk size.
func (v *verifyState) blockAt(what func() string, e readIndexEntry, t1, t2 BlockType) (*verifyBlockRef, error) {
	i, ok := v.blockIndex(e.Offset)
	if !ok {
		return nil, fmt.Errorf("%s points at offset %d where no block starts", what(), e.Offset)
	}
	b := &v.blocks[i]
	if b.Type != t1 && b.Type != t2 {
		types := []BlockType{t1}
		if t2 != t1 {
			types = append(types, t2)
		}
		return nil, fmt.Errorf("%s points at a %s block at offset %d, want %v", what(), b.Type, e.Offset, types)
	}
	if b.Size != e.Size {
		return nil, fmt.Errorf("%s records on-disk size %d for the %s block at offset %d, header says %d", what(), e.Size, b.Type, e.Offset, b.Size)
	}
	return b, nil
}

// checkDataIndex walks the data index and matches it against the scanned data blocks. The entries'
// descriptions for errors (what) are formatted only when an error needs one: formatting every
// entry's key took more than the rest of the check for files of one block.
func (v *verifyState) checkDataIndex() error {
	r := v.r
	if int(r.trailer.DataIndexCount) != len(r.rootIndex) {
		return fmt.Errorf("trailer data index count %d, root index has %d entries", r.trailer.DataIndexCount, len(r.rootIndex))
	}
	w, err := r.walkDataIndex()
	if err != nil {
		return err
	}
	if len(w.DataBlocks) != len(v.dataBlocks) {
		return fmt.Errorf("data index lists %d data blocks, the file has %d", len(w.DataBlocks), len(v.dataBlocks))
	}
	for i, e := range w.DataBlocks {
		what := func() string { return fmt.Sprintf("data index entry %d (key %s)", i, Key(e.Key)) }
		b, err := v.blockAt(what, e, BlockData, BlockEncodedData)
		if err != nil {
			return err
		}
		if b.Offset != v.blocks[v.dataBlocks[i]].Offset {
			return fmt.Errorf("%s points at offset %d, but data block %d is at offset %d", what(), b.Offset, i, v.blocks[v.dataBlocks[i]].Offset)
		}
		if !Key(e.Key).Valid() {
			return fmt.Errorf("data index entry %d has a malformed key %s", i, kv.ToStringBinary(e.Key))
		}
		if b.FirstKey == nil { // VerifyBlocks does not decode encoded blocks
			continue
		}
		if kv.CompareKeys(e.Key, b.FirstKey) > 0 {
			return fmt.Errorf("%s is after the block's first key %s (block at offset %d)", what(), Key(b.FirstKey), b.Offset)
		}
		if i > 0 {
			prev := v.blocks[v.dataBlocks[i-1]]
			// The index key sorts after the previous block's last key, or equals it when equal keys
			// (duplicates a file may hold) straddle the boundary: HBase's midpoint of equal keys is the
			// right one (HFileWriterImpl.getMidpoint).
			if c := kv.CompareKeys(e.Key, prev.LastKey); c < 0 || c == 0 && kv.CompareKeys(b.FirstKey, prev.LastKey) != 0 {
				return fmt.Errorf("%s is not after the previous block's last key %s (block at offset %d)", what(), Key(prev.LastKey), b.Offset)
			}
		}
	}
	for i, e := range w.LeafBlocks {
		if _, err := v.blockAt(func() string { return fmt.Sprintf("leaf index reference %d", i) }, e, BlockLeafIndex, BlockLeafIndex); err != nil {
			return err
		}
	}
	for i, e := range w.IntermediateBlocks {
		if _, err := v.blockAt(func() string { return fmt.Sprintf("intermediate index reference %d", i) }, e, BlockIntermediateIndex, BlockIntermediateIndex); err != nil {
			return err
		}
	}
	leaves, inters := v.count(BlockLeafIndex), v.count(BlockIntermediateIndex)
	if leaves != len(w.LeafBlocks) || inters != len(w.IntermediateBlocks) {
		return fmt.Errorf("data index references %d leaf and %d intermediate blocks, the file has %d and %d",
			len(w.LeafBlocks), len(w.IntermediateBlocks), leaves, inters)
	}
	return nil
}

// count returns how many of the scanned blocks have type t, one of the types countedType names.
func (v *verifyState) count(t BlockType) int {
	return v.counts[countedType(t)]
}

// checkOtherIndexes checks the meta index and the bloom chunk indexes.
func (v *verifyState) checkOtherIndexes() error {
	r := v.r
	for i, e := range r.metaIndex {
		if _, err := v.blockAt(func() string { return fmt.Sprintf("meta index entry %d (%q)", i, e.Key) }, e, BlockMeta, BlockMeta); err != nil {
			return err
		}
	}
	if n := v.count(BlockMeta); n != len(r.metaIndex) {
		return fmt.Errorf("meta index lists %d meta blocks, the file has %d", len(r.metaIndex), n)
	}
	chunks := 0
	if r.unknownBloom != "" {
		return nil // chunks of a bloom type this reader does not evaluate are not matched up
	}
	for _, m := range []*readBloom{r.generalBloom, r.deleteBloom} {
		if m == nil {
			continue
		}
		var total int64
		for i, e := range m.Chunks {
			what := func() string { return fmt.Sprintf("%s chunk index entry %d", m.BlockType, i) }
			b, err := v.blockAt(what, e, BlockBloomChunk, BlockBloomChunk)
			if err != nil {
				return err
			}
			total += int64(b.Payload) // the chunk's bit array, as the scan decompressed it
			if i > 0 && bytes.Compare(m.Chunks[i-1].Key, e.Key) >= 0 && r.bloomType != BloomRowCol {
				return fmt.Errorf("%s key %s is not after the previous chunk's key", what(), kv.ToStringBinary(e.Key))
			}
		}
		if total != m.TotalByteSize {
			return fmt.Errorf("%s says %d bytes of bloom chunks, the chunks hold %d", m.BlockType, m.TotalByteSize, total)
		}
		chunks += len(m.Chunks)
	}
	if n := v.count(BlockBloomChunk); n != chunks {
		return fmt.Errorf("bloom metadata lists %d bloom chunks, the file has %d", chunks, n)
	}
	return nil
}

// checkTotals compares counts and file-info summaries with what the cells showed.
func (v *verifyState) checkTotals() error {
	r := v.r
	if v.undecoded {
		return nil
	}
	if v.cells != r.trailer.EntryCount {
		return fmt.Errorf("file holds %d cells, trailer entry count is %d", v.cells, r.trailer.EntryCount)
	}
	if v.cells == 0 {
		return nil
	}
	if r.lastKey == nil {
		return fmt.Errorf("file info has no %s", FileInfoLastKey)
	}
	if !bytes.Equal(r.lastKey, v.prevKey) {
		return fmt.Errorf("file info %s is %s, the last cell's key is %s", FileInfoLastKey, Key(r.lastKey), Key(v.prevKey))
	}
	if n, ok, err := r.fileInfoIntAt(slotAvgKeyLen); err != nil || !ok {
		return fmt.Errorf("file info %s missing or malformed: %v", FileInfoAvgKeyLen, err)
	} else if want := int32(v.keyLenSum / int64(v.cells)); n != want {
		return fmt.Errorf("file info %s is %d, cells give %d", FileInfoAvgKeyLen, n, want)
	}
	if n, ok, err := r.fileInfoIntAt(slotAvgValueLen); err != nil || !ok {
		return fmt.Errorf("file info %s missing or malformed: %v", FileInfoAvgValueLen, err)
	} else if want := int32(v.valSum / int64(v.cells)); n != want {
		return fmt.Errorf("file info %s is %d, cells give %d", FileInfoAvgValueLen, n, want)
	}
	if r.opts.Mvcc {
		n, _, err := r.fileInfoLongAt(slotMaxMemstoreTS)
		if err != nil {
			return err
		}
		if v.maxSeq > uint64(n) {
			return fmt.Errorf("a cell has sequence id %d above %s %d", v.maxSeq, FileInfoMaxMemstoreTS, n)
		}
	}
	if r.opts.Tags {
		n, _, err := r.fileInfoIntAt(slotMaxTagsLen)
		if err != nil {
			return err
		}
		if v.maxTags > int(n) {
			return fmt.Errorf("a cell has %d bytes of tags, above %s %d", v.maxTags, FileInfoMaxTagsLen, n)
		}
	}
	if n, ok, err := r.fileInfoLongAt(slotDeleteFamilyCnt); err != nil {
		return err
	} else if ok && n != v.deleteFamilyCells {
		return fmt.Errorf("file info %s is %d, the file has %d delete-family cells", FileInfoDeleteFamilyCnt, n, v.deleteFamilyCells)
	}
	if first := r.firstKey; first != nil && len(v.dataBlocks) > 0 {
		if kv.CompareKeys(first, v.blocks[v.dataBlocks[0]].FirstKey) > 0 {
			return fmt.Errorf("first index key %s is after the first cell's key", Key(first))
		}
	}
	return nil
}
