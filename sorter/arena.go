package sorter

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/hfload/hfload/internal/cellrec"
)

// entry is the index of one record in the arena: 32 bytes, sorted instead of the records. The first
// 16 bytes of the row are held in it so that keys whose first 8 bytes tie often ([customer][order],
// [salt][id]) are ordered without reading the records: a record is read only when its row's first 16
// bytes tie with another's.
type entry struct {
	prefix uint64 // row bytes 0-7, big-endian, zero padded (later words while sortTies sorts ties)
	next   uint64 // row bytes 8-15, likewise
	off    uint32 // offset of the record's length prefix in its slab
	slab   uint32 // slab id
	seq    uint64 // input order
}

// keyWords is how many 8-byte words of the row an entry holds (prefix, next).
const keyWords = 2

// newEntry returns the entry of rec, a well-formed record, stored at (slab, off).
func newEntry(rec []byte, slab, off int, seq uint64) entry {
	row := cellrec.Row(rec)
	k0, _ := word(row, 0)
	k1, _ := word(row, 1)
	return entry{prefix: k0, next: k1, off: uint32(off), slab: uint32(slab), seq: seq}
}

// keyLess reports whether x's cached row bytes sort before y's; keyEqual whether they are equal.
func keyLess(x, y *entry) bool {
	return x.prefix < y.prefix || x.prefix == y.prefix && x.next < y.next
}

func keyEqual(x, y *entry) bool { return x.prefix == y.prefix && x.next == y.next }

// arena holds records back to back in slabs, each preceded by its length (uvarint); a record never
// straddles two slabs.
type arena struct {
	d     *cellrec.Dict
	slabs [][]byte
	idx   []entry
	// segs, after sort, holds the start of every ascending segment of idx when sort found few of them
	// and left idx as it was: the records are then produced by merging the segments (segOrder).
	// Nil means idx is fully sorted (or made of lanes).
	segs []int
	// lanes, after sort, when not nil: idx is made of these interleaved ascending lanes, keyed by the
	// row bytes laneDepth and laneDepth+1, and left as it was (arena_lanes.go).
	lanes     []lane
	laneDepth int
}

// record returns the record of e. A record of fewer than 128 bytes (placeRun's) has a one-byte length.
func (a *arena) record(e *entry) []byte {
	s := a.slabs[e.slab][e.off:]
	if n := int(s[0]); n < 0x80 {
		return s[1 : 1+n : 1+n]
	}
	n, k := uvarint(s)
	return s[k : k+int(n) : k+int(n)]
}

// row returns the row of e's record, in place.
func (a *arena) row(e *entry) []byte {
	s := a.slabs[e.slab][e.off:]
	k := 0
	for s[k] >= 0x80 { // skip the record's length
		k++
	}
	s = s[k+1:]
	if s[0] < 0x80 {
		return s[1 : 1+s[0] : 1+s[0]]
	}
	rl, k := binary.Uvarint(s)
	return s[k : k+int(rl) : k+int(rl)]
}

// head parses the header and the first cell of e's record.
func (a *arena) head(e *entry) (h cellrec.Header, q, v []byte) {
	h, cells, _ := cellrec.ParseHeader(a.record(e)) // validated when added
	q, v, _ = a.d.Next(cells)
	return h, q, v
}

// compare orders two entries by their records' first cells, then seq (records of one row and family
// that overlap are interleaved later, by the resolver). Equal prefixes compare the rows in place; only
// records of one row have their headers and first cells decoded.
func (a *arena) compare(x, y *entry) int {
	if x.prefix != y.prefix {
		if x.prefix < y.prefix {
			return -1
		}
		return 1
	}
	if x.next != y.next {
		if x.next < y.next {
			return -1
		}
		return 1
	}
	if c := bytes.Compare(a.row(x), a.row(y)); c != 0 {
		return c
	}
	hx, qx, vx := a.head(x)
	hy, qy, vy := a.head(y)
	return cmpCellsInRow(&hx, qx, vx, x.seq, &hy, qy, vy, y.seq)
}

// word returns the 8 bytes of row from offset 8*w on, big-endian, zero padded, and whether the row
// has bytes beyond them.
func word(row []byte, w int) (uint64, bool) {
	off := 8 * w
	if len(row) >= off+8 {
		return binary.BigEndian.Uint64(row[off:]), len(row) > off+8
	}
	if len(row) <= off {
		return 0, false
	}
	var b [8]byte
	copy(b[:], row[off:])
	return binary.BigEndian.Uint64(b[:]), false
}

// radixCutoff is the size below which a bucket is sorted by comparisons.
const radixCutoff = 64

// smallGroup is the largest group of ties sorted by sortEqualPrefix.
const smallGroup = 32

// sortEqualPrefix sorts a small group whose rows share all bytes before the words in their prefix
// fields (see sortTies). It first restores arena order, which is the order the records were added in: exports are
// often ordered by key, so the insertion sort that follows mostly confirms the order with one
// comparison per entry instead of sorting a permutation the radix pass scrambled.
func (a *arena) sortEqualPrefix(v []entry) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && (v[j].slab < v[j-1].slab || v[j].slab == v[j-1].slab && v[j].off < v[j-1].off); j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && a.compare(&v[j], &v[j-1]) < 0; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// minSegment is the average length of ascending segments below which sort gives up on merging them
// and sorts the index instead.
const minSegment = 256

// sort readies the index for producing the records in (first cell, seq) order (see order). Records
// often arrive nearly sorted: exports ordered by primary key give row keys in order and each batch of
// records is added under one lock. sort first looks for the
// ascending segments of the index; if there are few (on average at least minSegment records long),
// it leaves the index as it is and source merges the segments, which costs about one comparison per
// record. Then it looks for interleaved ascending lanes (findLanes), which need no sort either.
// Otherwise it sorts the index in place: an MSD radix sort (American flag sort) on the 16 cached row
// bytes, needing no extra memory, with a quicksort for small buckets (sortSmall) and pdqsort on the
// full comparator for large groups whose cached bytes are all equal.
func (a *arena) sort() { a.sortWith(1, false, nil) }

// sortWith is sort on up to workers goroutines (sortParallel, with scratch memory from scratch, which
// may be nil); with whole the index ends fully sorted even when it is made of few ascending segments.
func (a *arena) sortWith(workers int, whole bool, scratch scratchFunc) {
	a.segs, a.lanes = a.segs[:0], nil
	n := len(a.idx)
	limit := n/minSegment + 1
	segs := append(a.segs, 0)
	for i := 1; i < n; i++ {
		if a.compare(&a.idx[i-1], &a.idx[i]) > 0 {
			if segs = append(segs, i); len(segs) > limit {
				break
			}
		}
	}
	switch {
	case len(segs) == 1: // already sorted
		a.segs = nil
	case len(segs) <= limit && !whole:
		a.segs = segs
	case !whole && a.findLanes():
		a.segs = nil
	default:
		a.sortParallel(workers, scratch)
	}
}

// order returns the positions of a sorted arena's entries in (first cell, seq) order.
func (a *arena) order() order {
	if a.lanes != nil {
		return newLaneOrder(a)
	}
	if a.segs == nil {
		return &idxOrder{n: len(a.idx)}
	}
	return newSegOrder(a)
}

// digit returns byte depth (0-15) of e's cached row bytes: of next from depth 8 on.
func (e *entry) digit(depth int) int {
	k := e.prefix
	if depth >= 8 {
		k = e.next
	}
	return int(byte(k >> uint(56-8*(depth&7))))
}

// radixSort sorts v by the row words that the entries' prefix and next fields hold (words 0 and 1, the
// first 16 bytes of the row, unless sortTies put later words there), from byte depth of them on.
func (a *arena) radixSort(v []entry, depth, w int) {
	switch {
	case depth == 8*keyWords:
		a.sortTies(v, w)
	case len(v) < radixCutoff:
		if len(v) < nibbleMin || !a.sortNibble(v, depth, w) {
			a.sortSmall(v)
		}
	case !radixStep(v, depth, func(b []entry, depth int) { a.radixSort(b, depth, w) }):
		a.sortTies(v, w) // the cached bytes from depth on are all equal
	}
}

// radixStep is one pass of the MSD radix sort, shared by radixSort and sortBuckets: it distributes v by
// the first digit, from byte depth on, in which the entries' cached row bytes differ (bytes all share
// are skipped without moving anything) and calls sub for every bucket of more than one entry, in bucket
// order, with the depth after that digit. The digit is that byte, or, when it and the byte after it
// differ only in their low four bits (decimal digits, as in most keys), the two low halves together
// (digitAt): one pass then orders two bytes. It returns false, v unchanged, when the cached bytes from
// depth on are all equal.
func radixStep(v []entry, depth int, sub func(b []entry, depth int)) bool {
	dp, dn := diffBits(v)
	if depth = diffDepthFrom(dp, dn, depth); depth == 8*keyWords {
		return false
	}
	g := digitAt(dp, dn, depth)
	var count [256]int
	if g.next {
		for i := range v {
			count[g.of(v[i].next)]++
		}
	} else {
		for i := range v {
			count[g.of(v[i].prefix)]++
		}
	}
	// The buckets from the first to the last non-empty one: keys are often digits or letters,
	// and the passes over the buckets need not visit the other two hundred.
	lo, hi := 0, 255
	for count[lo] == 0 {
		lo++
	}
	for count[hi] == 0 {
		hi--
	}
	distribute(v, g, &count, lo, hi)
	start := 0
	for b := lo; b <= hi; b++ {
		if n := count[b]; n > 1 {
			sub(v[start:start+n], depth+g.width())
		}
		start += count[b]
	}
	return true
}

// firstDiffByte returns the first byte depth, from depth on, in which the cached row bytes of v's entries
// differ, or 8*keyWords when they are all equal from depth on.
func firstDiffByte(v []entry, depth int) int {
	dp, dn := diffBits(v)
	return diffDepthFrom(dp, dn, depth)
}

// distribute permutes v in place into the buckets of digit g of the entries' cached row bytes (count:
// the size of each bucket; the non-empty ones lie from lo to hi), in bucket order.
func distribute(v []entry, g digit, count *[256]int, lo, hi int) {
	var next [256]int
	sum := 0
	for b := lo; b <= hi; b++ {
		next[b] = sum
		sum += count[b]
	}
	// The digit's word and shifts are chosen once, not per entry: one loop for each word.
	if g.next {
		for b, end := lo, 0; b <= hi; b++ {
			for end += count[b]; next[b] < end; {
				e := v[next[b]]
				d := int(g.of(e.next))
				for d != b {
					e, v[next[d]] = v[next[d]], e
					next[d]++
					d = int(g.of(e.next))
				}
				v[next[b]] = e
				next[b]++
			}
		}
		return
	}
	for b, end := lo, 0; b <= hi; b++ {
		for end += count[b]; next[b] < end; {
			e := v[next[b]]
			d := int(g.of(e.prefix))
			for d != b {
				e, v[next[d]] = v[next[d]], e
				next[d]++
				d = int(g.of(e.prefix))
			}
			v[next[b]] = e
			next[b]++
		}
	}
}

// rowWords returns the row words w and w+1 of e's record (word's: big-endian, zero padded) and whether
// the row has bytes beyond them. A record and row of one-byte lengths that hold both words are read
// in place with two loads; any other through row and word.
func (a *arena) rowWords(e *entry, w int) (k0, k1 uint64, more bool) {
	s := a.slabs[e.slab][e.off:]
	if end := 8*w + 16; len(s) > 2+end && s[0] < 0x80 && s[1] < 0x80 && int(s[1]) >= end {
		return binary.BigEndian.Uint64(s[2+8*w:]), binary.BigEndian.Uint64(s[10+8*w:]), int(s[1]) > end
	}
	row := a.row(e)
	k0, _ = word(row, w)
	k1, more = word(row, w+1)
	return k0, k1, more
}

// sortTies sorts a group of entries whose rows share their first 8*(w+keyWords) bytes, the last 16 of
// them held in the entries (keys with a long shared prefix: [host][event][time]): it radix sorts them
// on the first later pair of words in which their rows differ, held in the prefix and next fields
// meanwhile and then set back to the group's (equal) words. Rows equal to their end are sorted by the
// full comparator.
func (a *arena) sortTies(v []entry, w int) {
	k0, k1 := v[0].prefix, v[0].next
	for {
		w += keyWords
		more, differ := false, false
		for i := range v {
			var m bool
			v[i].prefix, v[i].next, m = a.rowWords(&v[i], w)
			more = more || m
			differ = differ || !keyEqual(&v[i], &v[0])
		}
		if !differ && more {
			continue
		}
		switch {
		case len(v) <= smallGroup:
			a.sortEqualPrefix(v)
		case differ:
			a.radixSort(v, 0, w)
		default:
			slices.SortFunc(v, func(x, y entry) int { return a.compare(&x, &y) })
		}
		break
	}
	for i := range v {
		v[i].prefix, v[i].next = k0, k1
	}
}

// order yields entry positions of an arena in (first cell, seq) order.
type order interface {
	next() (int, bool)
}

// idxOrder walks a fully sorted index.
type idxOrder struct{ i, n int }

func (o *idxOrder) next() (int, bool) {
	if o.i >= o.n {
		return 0, false
	}
	o.i++
	return o.i - 1, true
}

// segOrder produces the positions of an index made of a few ascending segments, with a heap of
// segment cursors ordered by the arena's comparator. On input that was sorted apart from how batches
// interleaved, the top cursor stays on top for long stretches and each record costs one or two
// comparisons, mostly on the cached prefixes.
type segOrder struct {
	h       heap[segCursor]
	started bool
}

type segCursor struct{ i, end int }

func newSegOrder(a *arena) *segOrder {
	m := &segOrder{h: heap[segCursor]{s: make([]segCursor, 0, len(a.segs)), less: func(x, y segCursor) bool {
		return a.compare(&a.idx[x.i], &a.idx[y.i]) < 0
	}}}
	for k, start := range a.segs {
		end := len(a.idx)
		if k+1 < len(a.segs) {
			end = a.segs[k+1]
		}
		m.h.s = append(m.h.s, segCursor{start, end})
	}
	m.h.init()
	return m
}

func (m *segOrder) next() (int, bool) {
	if m.started && len(m.h.s) > 0 {
		top := &m.h.s[0]
		top.i++
		if top.i == top.end {
			m.h.pop()
		}
		m.h.down(0)
	}
	m.started = true
	if len(m.h.s) == 0 {
		return 0, false
	}
	return m.h.s[0].i, true
}
