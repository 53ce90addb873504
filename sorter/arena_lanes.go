package sorter

import "slices"

// This file holds the order of an index made of interleaved ascending lanes: records whose rows,
// grouped by their first two bytes after those all of them share, each arrive in ascending order but
// interleave, as an export ordered by primary key gives for salted keys ([salt][id]: every salt's ids
// ascend; a region holds a few salts). The ascending-segment scan of sortWith sees such input as
// unsorted (a descent every few records) and the radix sort would scramble and sort again what is in
// order within each lane. Lanes need no sort: rows of different lanes differ in one of the two lane
// bytes, so lanes follow one another in the order of their keys. Within a lane, the records are in
// order but for where concurrent mapping workers' batches were added out of order: a lane is made of a
// few ascending pieces, merged with a heap (for most records the top piece stays on top, one
// comparison).

// maxLanes is the most lanes findLanes accepts: producing the order scans each lane's stretch of the
// index, so the cost grows with the number of interleaved lanes.
const maxLanes = 32

// laneMin is the index length below which sortWith does not look for lanes (sorting is cheap there).
const laneMin = 1 << 10

// piece is an ascending run of one lane's entries: n of them, the first at index position first, the
// last at last; the lane's other entries and other lanes' may lie between.
type piece struct {
	first, last, n int
}

// lane is one lane of an index: the entries whose two lane bytes are key, in pieces (by position).
type lane struct {
	key    uint16
	pieces []piece
}

// laneKey returns the bytes depth and depth+1 of e's cached row bytes (depth < 16; a byte past them
// reads as zero).
func laneKey(e *entry, depth int) uint16 {
	switch {
	case depth < 7:
		return uint16(e.prefix >> (48 - 8*depth))
	case depth == 7:
		return uint16(e.prefix<<8 | e.next>>56)
	case depth < 15:
		return uint16(e.next >> (48 - 8*(depth-8)))
	}
	return uint16(e.next << 8)
}

// findLanes reports whether the index is made of at most maxLanes lanes, keyed by the two bytes from the
// first one in which its rows' cached bytes differ, each made of ascending pieces (compare) by index
// position, at most one piece for every minSegment entries (as for ascending segments); if so, it sets
// a.lanes (in key order) and a.laneDepth, and order walks them. On other input it gives up after the
// first few entries, once the pieces are too many.
func (a *arena) findLanes() bool {
	v := a.idx
	if len(v) < laneMin {
		return false
	}
	d := firstDiffByte(v, 0)
	if d >= 8*keyWords {
		return false
	}
	limit := len(v)/minSegment + maxLanes // pieces, in all
	pieces := 0
	at := make([]uint8, 1<<16) // lane key -> 1 + its index in lanes
	lanes := make([]lane, 0, maxLanes)
	for i := range v {
		k := laneKey(&v[i], d)
		li := at[k]
		if li == 0 {
			if len(lanes) == maxLanes || pieces == limit {
				return false
			}
			lanes = append(lanes, lane{key: k, pieces: []piece{{first: i, last: i, n: 1}}})
			at[k] = uint8(len(lanes))
			pieces++
			continue
		}
		l := &lanes[li-1]
		p := &l.pieces[len(l.pieces)-1]
		if c := keyCmp(&v[p.last], &v[i]); c > 0 || c == 0 && a.compare(&v[p.last], &v[i]) > 0 {
			if pieces++; pieces > limit {
				return false
			}
			l.pieces = append(l.pieces, piece{first: i, last: i, n: 1})
			continue
		}
		p.last = i
		p.n++
	}
	slices.SortFunc(lanes, func(x, y lane) int { return int(x.key) - int(y.key) })
	a.lanes, a.laneDepth = lanes, d
	return true
}

// laneMasks returns the masks that keep bytes depth and depth+1 of the cached row bytes (prefix, next).
func laneMasks(depth int) (mp, mn uint64) {
	m := uint64(0xffff) << 48 // two bytes, at depth 0 of a word
	switch {
	case depth < 7:
		return m >> (8 * depth), 0
	case depth == 7:
		return 0xff, 0xff << 56
	}
	return 0, m >> (8 * (depth - 8))
}

// laneCursor walks one piece of a lane: at is the position of its current entry, left how many of its
// entries come after it.
type laneCursor struct {
	at, left int
}

// laneOrder produces the positions of an index made of lanes (findLanes): lane after lane in key order;
// each piece of a lane by scanning its stretch of the index for the lane's entries (the two lane bytes
// compared under masks), the pieces of a lane merged with a heap of cursors.
type laneOrder struct {
	v      []entry
	lanes  []lane
	mp, mn uint64 // laneMasks
	wp, wn uint64 // the current lane's bytes, masked
	k      int    // current lane
	h      heap[laneCursor]
}

func newLaneOrder(a *arena) *laneOrder {
	o := &laneOrder{v: a.idx, lanes: a.lanes}
	o.mp, o.mn = laneMasks(a.laneDepth)
	o.h = heap[laneCursor]{less: func(x, y laneCursor) bool { return a.compare(&a.idx[x.at], &a.idx[y.at]) < 0 }}
	o.k = -1
	o.nextLane()
	return o
}

// nextLane moves to the next lane and fills the heap with its pieces.
func (o *laneOrder) nextLane() {
	o.h.s = o.h.s[:0]
	if o.k++; o.k >= len(o.lanes) {
		return
	}
	l := &o.lanes[o.k]
	e := &o.v[l.pieces[0].first]
	o.wp, o.wn = e.prefix&o.mp, e.next&o.mn
	for _, p := range l.pieces {
		o.h.s = append(o.h.s, laneCursor{at: p.first, left: p.n - 1})
	}
	o.h.init()
}

func (o *laneOrder) next() (int, bool) {
	for len(o.h.s) == 0 {
		if o.k >= len(o.lanes) {
			return 0, false
		}
		o.nextLane()
	}
	top := &o.h.s[0]
	at := top.at
	if top.left == 0 {
		o.h.pop()
	} else {
		// The piece's next entry: the lane's next one after at (the pieces of a lane follow one another
		// in position order; other lanes' entries lie between).
		top.left--
		v, mp, mn, wp, wn := o.v, o.mp, o.mn, o.wp, o.wn
		p := at + 1
		for v[p].prefix&mp != wp || v[p].next&mn != wn {
			p++
		}
		top.at = p
	}
	if len(o.h.s) > 1 {
		o.h.down(0)
	}
	return at, true
}
