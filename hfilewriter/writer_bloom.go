package hfilewriter

import (
	"encoding/binary"
	"math"
)

// Compound bloom filter writer (HBase CompoundBloomFilterWriter + BloomFilterChunk +
// BloomFilterUtil). A filter is a sequence of fixed-size chunks, each written as an inline
// BLMFBLK2 block at a data block boundary once it holds maxKeys keys (the last one, folded, at
// close), plus a meta block with a single-level index of the chunks.

// bloomComparatorRowCol is the comparator class HBase 2.x names in ROWCOL bloom metadata.
const bloomComparatorRowCol = "org.apache.hadoop.hbase.CellComparatorImpl"

// BloomChunkParams are the sizing parameters of a bloom chunk.
type BloomChunkParams struct {
	ByteSize  int // chunk size in bytes
	HashCount int // hash functions per key
	MaxKeys   int // keys per chunk before it is full
}

// BloomParams computes the chunk parameters HBase uses for a compound bloom filter
// (BloomFilterUtil.createBySize) from the chunk size hint in bytes, the target error rate (a Java
// float; pass the ROWCOL-adjusted rate for ROWCOL, see bloomErrorRate) and the maximum fold factor.
func BloomParams(chunkByteSizeHint int, errorRate float32, maxFold int) BloomChunkParams {
	byteSize := writeFoldableByteSize(int64(chunkByteSizeHint)*8, maxFold)
	byteSize = writeFoldableByteSize(int64(byteSize)*8, maxFold)
	bitSize := int64(byteSize) * 8
	err := float64(errorRate)
	log2Squared := math.Log(2) * math.Log(2)
	maxKeys := int32(int64(float64(bitSize) * (log2Squared / -math.Log(err))))
	hashCount := int(math.Ceil(math.Log(2) * float64(bitSize/int64(maxKeys))))
	maxKeys = int32(int64(-float64(bitSize) * 1.0 / float64(hashCount) * math.Log(1-math.Exp(math.Log(err)/float64(hashCount)))))
	return BloomChunkParams{ByteSize: byteSize, HashCount: hashCount, MaxKeys: int(maxKeys)}
}

// bloomErrorRate is the per-lookup error rate HBase's BloomFilterFactory uses for a bloom type:
// for ROWCOL each lookup is an OR of two, so p = 1 - sqrt(1 - err), computed as Java does
// ((float)(1 - Math.sqrt(1 - err)) with 1 - err evaluated in float).
func bloomErrorRate(t BloomType, err float32) float32 {
	if t == BloomRowCol {
		return float32(1 - math.Sqrt(float64(float32(1)-err)))
	}
	return err
}

// writeFoldableByteSize is BloomFilterUtil.computeFoldableByteSize.
func writeFoldableByteSize(bitSize int64, foldFactor int) int {
	byteSize := (bitSize + 7) / 8
	mask := int64(1)<<foldFactor - 1
	if byteSize&mask != 0 {
		byteSize >>= foldFactor
		byteSize++
		byteSize <<= foldFactor
	}
	return int(byteSize)
}

// writeBloomChunk is one chunk's bit array and counters.
//
// Keys are hashed as they are added, but their bits are set in batches (setPending): the chunk is
// bigger than the first-level cache and the data blocks streaming through the caches between two
// adds evict it, so bits set one key at a time mostly wait for memory, where a batch of keys sets
// thousands of independent bits in a row. Bits are ORed, so the order does not change them.
//
// The bit array is made when the first batch is set: a chunk whose keys are all still pending when it
// is folded (a small file's only chunk) gets its bits set straight into the folded size, instead of
// zeroing, filling and folding a whole chunk (128 KiB by default) for a few keys.
type writeBloomChunk struct {
	bits      []byte // the bit array: empty until the first setPending, size bytes after it
	size      int    // the chunk's size in bytes (len(bits) once it is made; the folded size after fold)
	hashCount int
	maxKeys   int
	keyCount  int
	firstKey  []byte   // chunk index key
	pending   []uint64 // hashes (h1<<32 | h2) of added keys whose bits are not set yet
	shared    bool     // the keys are a RowBloomShare chunk's: no bits and no pending until fillShared
	// EstimatedSize's cache (currentChunkSize): the size fold() would leave while keyCount < estUntil.
	estSize, estUntil int
}

// bloomPendingKeys is how many keys a chunk hashes before it sets their bits (8 KiB of hashes).
const bloomPendingKeys = 1024

// add adds a key by its hashes, h1<<32 | h2 (bloomHashes).
func (c *writeBloomChunk) add(hh uint64) {
	c.pending = append(c.pending, hh)
	if len(c.pending) >= bloomPendingKeys {
		c.setPending()
	}
	c.keyCount++
}

// setPending sets the bits of the keys added since the last call; c.bits is complete after it.
func (c *writeBloomChunk) setPending() {
	if len(c.bits) != c.size {
		c.bits = zeroed(c.bits, c.size)
	}
	bloomSetAll(c.bits, c.pending, c.hashCount)
	c.pending = c.pending[:0]
}

// fold is BloomFilterChunk.compactBloom: halve the chunk while it stays even-sized and holds at
// most half its capacity, OR-ing the pieces together.
func (c *writeBloomChunk) fold() {
	if c.keyCount == 0 {
		c.setPending()
		return
	}
	pieces := 1
	newSize := c.size
	newMax := c.maxKeys
	for newSize&1 == 0 && newMax > c.keyCount<<1 {
		pieces <<= 1
		newSize >>= 1
		newMax >>= 1
	}
	if pieces > 1 && len(c.bits) == 0 {
		// Every key is pending: OR-ing the pieces maps bit pos of the chunk to bit pos mod the folded
		// size, so set each key's bits there directly.
		c.bits = zeroed(c.bits, newSize)
		// The folded size divides the chunk's, so |x| modulo the chunk's bits, modulo the folded bits,
		// is |x| modulo the folded bits (also as masks for powers of two): bloomSet's positions in an
		// array of the folded size, every key in one call.
		bloomSetAll(c.bits, c.pending, c.hashCount)
		c.pending = c.pending[:0]
		c.size, c.maxKeys = newSize, newMax
		return
	}
	c.setPending()
	if pieces == 1 {
		return
	}
	dst := c.bits[:newSize]
	for p := 1; p < pieces; p++ {
		src := c.bits[p*newSize : (p+1)*newSize]
		i := 0
		for ; i+8 <= len(src); i += 8 { // 8 bytes at a time
			binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(dst[i:])|binary.LittleEndian.Uint64(src[i:]))
		}
		for ; i < len(src); i++ {
			dst[i] |= src[i]
		}
	}
	c.bits = c.bits[:newSize]
	c.size, c.maxKeys = newSize, newMax
}

// zeroed returns n zero bytes, in b's array when it is large enough.
func zeroed(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// writeBloomWriter accumulates one compound bloom filter (general or delete-family).
type writeBloomWriter struct {
	typ          BloomType // ROW (also for delete-family) or ROWCOL: selects chunk index keys
	params       BloomChunkParams
	comparator   string
	chunk        *writeBloomChunk
	prevParams   BloomChunkParams
	hasPrev      bool
	ready        []*writeBloomChunk
	free         *writeBloomChunk // a written chunk whose arrays can be reused
	index        writeIndexChunk
	follow       *bloomFollower // the RowBloomShare this ROW bloom follows (Writer.ShareRowBloom), nil if none
	sharedChunks int            // chunks whose bits were copied from a RowBloomShare
	numChunks    int
	totalKeys    int64
	totalMax     int64
	totalBytes   int64
	paramsOf     bloomParamsKey // what params were computed from
}

// bloomParamsKey is what a bloom writer's chunk parameters depend on.
type bloomParamsKey struct {
	blockSize int
	errorRate float32
	maxFold   int
}

func newWriteBloomWriter(typ BloomType, opts *WriterOptions) *writeBloomWriter {
	k := bloomParamsKey{opts.BloomBlockSize, bloomErrorRate(typ, opts.BloomErrorRate), opts.BloomMaxFold}
	bw := &writeBloomWriter{typ: typ, params: BloomParams(k.blockSize, k.errorRate, k.maxFold), paramsOf: k}
	if typ == BloomRowCol {
		bw.comparator = bloomComparatorRowCol
	}
	return bw
}

// reuseWriteBloomWriter returns a bloom writer of type typ for a new file with opts: prev (a closed
// file's, nil: none) emptied, when it has that type, keeping its chunk arrays, chunk index arrays and,
// when opts ask for the same, its parameters; else a new one that takes prev's free chunk.
func reuseWriteBloomWriter(prev *writeBloomWriter, typ BloomType, opts *WriterOptions) *writeBloomWriter {
	if prev == nil || prev.typ != typ || prev.chunk != nil || len(prev.ready) != 0 {
		bw := newWriteBloomWriter(typ, opts)
		bw.takeFree(prev)
		return bw
	}
	k := bloomParamsKey{opts.BloomBlockSize, bloomErrorRate(typ, opts.BloomErrorRate), opts.BloomMaxFold}
	params := prev.params
	if k != prev.paramsOf {
		params = BloomParams(k.blockSize, k.errorRate, k.maxFold)
	}
	// prev's fields one by one (a new writeBloomWriter assigned over prev would be built and then
	// copied): as newWriteBloomWriter sets them, but for the chunk index, ready queue and free chunk
	// kept for their arrays.
	prev.index.reset()
	prev.typ, prev.params, prev.paramsOf = typ, params, k
	prev.chunk, prev.prevParams, prev.hasPrev, prev.ready = nil, BloomChunkParams{}, false, prev.ready[:0]
	prev.follow, prev.sharedChunks, prev.numChunks = nil, 0, 0
	prev.totalKeys, prev.totalMax, prev.totalBytes = 0, 0, 0
	return prev
}

// enqueueReady moves the current chunk to the ready queue if it is full (or closing).
func (bw *writeBloomWriter) enqueueReady(closing bool) {
	c := bw.chunk
	if c == nil || (c.keyCount < c.maxKeys && !closing) {
		return
	}
	if c.shared {
		bw.fillShared(c)
	}
	c.fold()
	bw.ready = append(bw.ready, c)
	bw.totalMax += int64(c.maxKeys)
	bw.totalBytes += int64(len(c.bits))
	bw.prevParams = BloomChunkParams{ByteSize: len(c.bits), HashCount: c.hashCount, MaxKeys: c.maxKeys}
	bw.hasPrev = true
	bw.chunk = nil
}

// add adds one bloom key. chunkKey is the chunk index key to use if this key starts a chunk
// (the row for ROW; the firstOnRowCol key for ROWCOL); hashKey is the hashed bytes.
func (bw *writeBloomWriter) add(hashKey, chunkKey []byte) {
	hh := bloomHashes(hashKey)
	if c := bw.chunk; c != nil && c.keyCount < c.maxKeys && len(c.pending) < cap(c.pending)-1 && bw.follow == nil {
		c.pending = append(c.pending, hh) // addHashed's usual key, without a second call
		c.keyCount++
		bw.totalKeys++
		return
	}
	bw.addHashedChunk(hh, chunkKey)
}

// bloomHashes is a bloom key's two hashes as a chunk keeps them: h1<<32 | h2.
func bloomHashes(key []byte) uint64 {
	h1, h2 := murmurHashPair(key)
	return uint64(uint32(h1))<<32 | uint64(uint32(h2))
}

// addHashed is add for a key whose hashes are hh (bloomHashes of the hashed bytes). The usual key is
// queued in the current chunk, which has room (below its batch's capacity: append does not grow it),
// without calls; a full chunk or batch, the first key of a file and a ROW bloom that follows a
// RowBloomShare take addHashedChunk.
func (bw *writeBloomWriter) addHashed(hh uint64, chunkKey []byte) {
	if c := bw.chunk; c != nil && c.keyCount < c.maxKeys && len(c.pending) < cap(c.pending)-1 && bw.follow == nil {
		c.pending = append(c.pending, hh)
		c.keyCount++
		bw.totalKeys++
		return
	}
	bw.addHashedChunk(hh, chunkKey)
}

// addHashedChunk is addHashed for any key: it enqueues a full chunk and starts the next.
func (bw *writeBloomWriter) addHashedChunk(hh uint64, chunkKey []byte) {
	bw.enqueueReady(false)
	if bw.chunk == nil {
		p := bw.params
		if bw.hasPrev {
			p = bw.prevParams
		}
		c := bw.free
		bw.free = nil
		if c == nil {
			c = &writeBloomChunk{}
		}
		c.bits, c.size = c.bits[:0], p.ByteSize // made by the first setPending (or fold)
		c.hashCount, c.maxKeys, c.keyCount, c.shared = p.HashCount, p.MaxKeys, 0, false
		c.estUntil = 0 // recomputed at the next EstimatedSize
		c.firstKey = append(c.firstKey[:0], chunkKey...)
		bw.chunk = c
		bw.numChunks++
	}
	if bw.follow != nil && bw.follows(hh, bw.chunk) {
		bw.chunk.keyCount++
	} else {
		bw.chunk.add(hh)
	}
	bw.totalKeys++
}

// takeFree takes the written chunk prev keeps for reuse (its arrays), if bw has none. Either may be nil.
func (bw *writeBloomWriter) takeFree(prev *writeBloomWriter) {
	if bw == nil || prev == nil || bw.free != nil {
		return
	}
	bw.free, prev.free = prev.free, nil
}

// shouldWrite is InlineBlockWriter.shouldWriteBlock.
func (bw *writeBloomWriter) shouldWrite(closing bool) bool {
	bw.enqueueReady(closing)
	return len(bw.ready) > 0
}

// appendReady appends the payload of the oldest ready chunk.
func (bw *writeBloomWriter) appendReady(dst []byte) []byte { return append(dst, bw.ready[0].bits...) }

// readyWritten records the chunk index entry of the oldest ready chunk and dequeues it.
func (bw *writeBloomWriter) readyWritten(b writtenBlock) {
	c := bw.ready[0]
	n := copy(bw.ready, bw.ready[1:]) // the queue holds a chunk or two: its array is kept
	bw.ready[n] = nil
	bw.ready = bw.ready[:n]
	bw.index.add(c.firstKey, b.offset, b.onDiskSizeWithHeader, -1)
	bw.free = c
}

// appendMeta appends the bloom meta block payload (CompoundBloomFilterWriter.MetaWriter).
func (bw *writeBloomWriter) appendMeta(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, 3) // version
	dst = binary.BigEndian.AppendUint64(dst, uint64(bw.totalBytes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(bw.prevParams.HashCount))
	dst = binary.BigEndian.AppendUint32(dst, uint32(HashMurmur))
	dst = binary.BigEndian.AppendUint64(dst, uint64(bw.totalKeys))
	dst = binary.BigEndian.AppendUint64(dst, uint64(bw.totalMax))
	dst = binary.BigEndian.AppendUint32(dst, uint32(bw.numChunks))
	dst = AppendByteArray(dst, []byte(bw.comparator))
	return bw.index.appendRoot(dst)
}
