package hfilewriter

import (
	"errors"
	"sync"
)

// RowBloomShare sets the bits of ROW bloom chunks once for several files that hold the same rows in the
// same order: the files of one region's column families, which HBase keeps apart (one family per HFile)
// although a row's ROW bloom key, its row bytes, is the same in each.
//
// One goroutine, the producer, calls Add with every row's hash in row order before it hands the row's
// cells to the writers, Drop when it sees that a consumer did not get a row, and Finish after the last
// row. Each consumer is a Writer given the share with ShareRowBloom before its first cell. A consumer
// compares every row it adds to its ROW bloom with the producer's row at the same place; while all have
// matched since its file began, its chunks are the producer's chunks, and it copies their bits when they
// are complete instead of setting them key by key. At the first difference, or when a chunk's bits
// cannot be the producer's (its file ends before the producer's chunk does), it takes the hashes of the
// chunk's keys so far from the producer and sets its bits itself from then on: the bytes are the same
// either way.
//
// The producer keeps a chunk's hashes and bits until every consumer that follows it has moved past it:
// the consumers lag the producer by the rows in flight between them, so a few chunks at most.
type RowBloomShare struct {
	params BloomChunkParams

	mu     sync.Mutex
	in     uint32        // consumers still following the producer: new chunks are kept for them
	chunks []*shareChunk // live chunks in order; chunks[i] is number base+i
	base   int
	spare  *shareChunk // a released chunk, reused for the next one
	done   bool        // Finish called: the last chunk's key count is final

	// The producer's own state (only its goroutine touches it).
	cur     *shareChunk
	n       int // keys in cur
	set     int // keys of cur whose bits are set
	stopped bool
}

// shareChunk is one chunk of the producer. Its keys' hashes are in segments of bloomPendingKeys, made
// as keys arrive (a region of a few rows costs a few KiB, not a chunk). n, the keys added, and hasBits
// are published under the share's lock when the chunk is full or the share finishes; bits are set only
// for a chunk of at least shareMinKeys keys (a consumer sets a small chunk's bits straight into its
// folded size, cheaper than copying and folding a whole chunk).
type shareChunk struct {
	num     int
	segs    [][]uint64 // len: the chunk's keys / bloomPendingKeys, rounded up; fixed once made
	bits    []byte
	n       int
	hasBits bool
	holders uint32 // consumers that have not released it
}

// shareMinKeys is the fewest keys whose bits a producer sets for its consumers.
const shareMinKeys = 4 * bloomPendingKeys

func (c *shareChunk) hash(i int) uint64 { return c.segs[i/bloomPendingKeys][i%bloomPendingKeys] }

// maxShareConsumers is the most consumers a RowBloomShare has (one bit each).
const maxShareConsumers = 32

// NewRowBloomShare returns a share for consumers Writers (numbered 0 to consumers-1) whose options are
// opts. Writers whose bloom is not ROW with the same chunk parameters cannot use it.
func NewRowBloomShare(opts WriterOptions, consumers int) (*RowBloomShare, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if o.Bloom != BloomRow {
		return nil, errors.New("hfilewriter: a RowBloomShare is for ROW blooms")
	}
	if consumers < 1 || consumers > maxShareConsumers {
		return nil, errors.New("hfilewriter: a RowBloomShare has 1 to 32 consumers")
	}
	return &RowBloomShare{params: BloomParams(o.BloomBlockSize, bloomErrorRate(BloomRow, o.BloomErrorRate), o.BloomMaxFold),
		in: uint32(1)<<consumers - 1}, nil
}

// Add adds the next row's hash (producer). After the last consumer has been dropped or left, it does nothing.
func (s *RowBloomShare) Add(rh RowHash) {
	if s.stopped {
		return
	}
	if s.cur == nil || s.n == s.params.MaxKeys {
		if !s.startChunk() {
			return
		}
	}
	c := s.cur
	seg := c.segs[s.n/bloomPendingKeys]
	if seg == nil {
		seg = make([]uint64, bloomPendingKeys)
		c.segs[s.n/bloomPendingKeys] = seg
	}
	seg[s.n%bloomPendingKeys] = uint64(rh)
	s.n++
	if s.n == s.params.MaxKeys || (s.n >= shareMinKeys && s.n-s.set >= bloomPendingKeys) {
		s.setBits()
	}
	if s.n == s.params.MaxKeys {
		s.mu.Lock()
		c.n, c.hasBits = s.n, true
		s.mu.Unlock()
	}
}

// setBits sets the bits of cur's keys that are not set yet (in batches, as writeBloomChunk.setPending).
func (s *RowBloomShare) setBits() {
	c := s.cur
	if c.bits == nil {
		c.bits = make([]byte, s.params.ByteSize)
	}
	for s.set < s.n { // a segment's stretch at a time
		seg := c.segs[s.set/bloomPendingKeys][s.set%bloomPendingKeys:]
		seg = seg[:min(len(seg), s.n-s.set)]
		bloomSetAll(c.bits, seg, s.params.HashCount)
		s.set += len(seg)
	}
}

// startChunk starts the producer's next chunk, kept for the consumers still following. false: none is.
func (s *RowBloomShare) startChunk() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.in == 0 {
		s.stopped, s.cur = true, nil
		return false
	}
	c := s.spare
	s.spare = nil
	if c == nil {
		c = &shareChunk{segs: make([][]uint64, (s.params.MaxKeys+bloomPendingKeys-1)/bloomPendingKeys)}
	} else if c.hasBits {
		clear(c.bits)
	}
	c.num, c.n, c.hasBits, c.holders = s.base+len(s.chunks), 0, false, s.in
	s.chunks = append(s.chunks, c)
	s.cur, s.n, s.set = c, 0, 0
	return true
}

// Drop says that consumer id did not get the producer's latest row (producer): chunks started from
// now on are not kept for it (it leaves when it sees the difference).
func (s *RowBloomShare) Drop(id int) {
	s.mu.Lock()
	s.in &^= 1 << id
	s.mu.Unlock()
}

// Finish says that the producer has added its last row.
func (s *RowBloomShare) Finish() {
	bits := s.cur != nil && (s.n == s.params.MaxKeys || s.n >= shareMinKeys)
	if bits {
		s.setBits()
	}
	s.mu.Lock()
	if s.cur != nil {
		s.cur.n, s.cur.hasBits = s.n, bits
	}
	s.done = true
	s.mu.Unlock()
}

// chunk returns chunk number num for consumer id, nil if it is not kept for it.
func (s *RowBloomShare) chunk(num, id int) *shareChunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := num - s.base; i >= 0 && i < len(s.chunks) && s.chunks[i] != nil && s.chunks[i].holders&(1<<id) != 0 {
		return s.chunks[i]
	}
	return nil
}

// complete returns c's bits if c holds exactly keys keys and they are final, else nil.
func (s *RowBloomShare) complete(c *shareChunk, keys int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.n == keys && c.hasBits && (keys == s.params.MaxKeys || s.done) {
		return c.bits
	}
	return nil
}

// release gives up consumer id's hold on c (after its bits or hashes were copied).
func (s *RowBloomShare) release(c *shareChunk, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.holders &^= 1 << id
	s.trim()
}

// leave gives up every hold of consumer id: it no longer follows the producer.
func (s *RowBloomShare) leave(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.in &^= 1 << id
	for _, c := range s.chunks {
		if c != nil {
			c.holders &^= 1 << id
		}
	}
	s.trim()
}

// trim frees the released chunks (the producer's current chunk stays until the share finishes): any
// of them, so that one held by a consumer that never comes (a family without cells in the region,
// dropped by the producer) keeps only itself. Freed chunks leave a nil behind unless at the front.
func (s *RowBloomShare) trim() {
	for i, c := range s.chunks {
		if c != nil && c.holders == 0 && (c != s.cur || s.done) {
			if c != s.cur {
				s.spare = c
			}
			s.chunks[i] = nil
		}
	}
	for len(s.chunks) > 0 && s.chunks[0] == nil {
		s.chunks = s.chunks[1:]
		s.base++
	}
}

// bloomFollower is a consumer's side of a RowBloomShare (in writeBloomWriter).
type bloomFollower struct {
	s  *RowBloomShare
	id int
	c  *shareChunk // the producer's chunk the writer's current chunk is
}

// ShareRowBloom makes w a consumer of s (number id): w's ROW bloom takes its bits from s while w's rows
// are the producer's. Call it before the first cell. It does nothing if w's bloom is not a ROW bloom
// with s's chunk parameters, or when called after the first cell (w then sets its bits itself).
func (w *Writer) ShareRowBloom(s *RowBloomShare, id int) {
	bw := w.bloom
	if s == nil || id < 0 || id >= maxShareConsumers || bw == nil || bw.typ != BloomRow || w.opts.Bloom != BloomRow ||
		bw.params != s.params || bw.totalKeys > 0 || bw.follow != nil {
		return
	}
	bw.follow = &bloomFollower{s: s, id: id}
}

// follows is addHashed's check of key hh, number c.keyCount of chunk c (bw.numChunks-1), against the
// producer: true when it is the producer's key at that place and every earlier key of the file was
// too (c's bits then come from the producer). Otherwise bw leaves the share, and c's pending keys
// are the chunk's keys before hh, so that hh is added to c as usual.
func (bw *writeBloomWriter) follows(hh uint64, c *writeBloomChunk) bool {
	f := bw.follow
	if c.keyCount == 0 {
		f.c = nil
		if c.size == f.s.params.ByteSize && c.maxKeys == f.s.params.MaxKeys && c.hashCount == f.s.params.HashCount {
			f.c = f.s.chunk(bw.numChunks-1, f.id)
		}
		c.shared = f.c != nil
	}
	if f.c != nil && f.c.hash(c.keyCount) == hh {
		return true
	}
	bw.unfollow(c)
	return false
}

// unfollow leaves the share: chunk c (nil: none) takes the hashes of its keys so far from the producer.
func (bw *writeBloomWriter) unfollow(c *writeBloomChunk) {
	f := bw.follow
	if c != nil && c.shared {
		for i := range c.keyCount {
			c.pending = append(c.pending, f.c.hash(i))
		}
		c.shared = false
	}
	f.s.leave(f.id)
	bw.follow = nil
}

// fillShared gives a shared chunk, about to be folded and written, its bits: the producer's when they
// are its keys' (copied), else its keys' hashes, taken from the producer (and bw leaves the share).
func (bw *writeBloomWriter) fillShared(c *writeBloomChunk) {
	f := bw.follow
	if bits := f.s.complete(f.c, c.keyCount); bits != nil {
		c.bits = append(c.bits[:0], bits...)
		c.shared = false
		bw.sharedChunks++
		f.s.release(f.c, f.id)
		f.c = nil
		return
	}
	bw.unfollow(c)
}

// Accepts reports whether a Writer with options opts can follow s: a ROW bloom with s's chunk parameters.
func (s *RowBloomShare) Accepts(opts WriterOptions) bool {
	o, err := opts.normalize()
	return err == nil && o.Bloom == BloomRow &&
		BloomParams(o.BloomBlockSize, bloomErrorRate(BloomRow, o.BloomErrorRate), o.BloomMaxFold) == s.params
}
