package sorter

import "slices"

// This file holds the order of an index made of interleaved ascending lanes: records whose rows,
// grouped by their first two bytes after those all of them share, each arrive in ascending order but
// interleave, as an export ordered by primary key gives for salted keys ([salt][id]: every salt's ids
// ascend; a region holds a few salts). The ascending-segment scan of sortWith sees such input as
// unsorted (a descent every few records) and the radix sort would scramble and sort again what is in
// order within each lane. Lanes need no sort at all: rows of different lanes differ in one of the two
// lane bytes, so lanes follow one another in the order of their keys, and each is read in index order.

// maxLanes is the most lanes findLanes accepts: producing the order scans each lane's stretch of the
// index, so the cost grows with the number of interleaved lanes.
const maxLanes = 32

// laneMin is the index length below which sortWith does not look for lanes (sorting is cheap there).
const laneMin = 1 << 10

// lane is one lane of an index: the entries whose two lane bytes are key, all between first and last
// (index positions), ascending in index order.
type lane struct {
	key         uint16
	first, last int
	n           int
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
// first one in which its rows' cached bytes differ, each in ascending order (compare) by index position;
// if so, it sets a.lanes (in key order) and a.laneDepth, and order walks them. On other input it gives
// up at the first entry out of order in its lane, usually after a few entries.
func (a *arena) findLanes() bool {
	v := a.idx
	if len(v) < laneMin {
		return false
	}
	d := firstDiffByte(v, 0)
	if d >= 8*keyWords {
		return false
	}
	at := make([]uint8, 1<<16) // lane key -> 1 + its index in lanes
	lanes := make([]lane, 0, maxLanes)
	for i := range v {
		k := laneKey(&v[i], d)
		li := at[k]
		if li == 0 {
			if len(lanes) == maxLanes {
				return false
			}
			lanes = append(lanes, lane{key: k, first: i, last: i, n: 1})
			at[k] = uint8(len(lanes))
			continue
		}
		l := &lanes[li-1]
		if c := keyCmp(&v[l.last], &v[i]); c > 0 || c == 0 && a.compare(&v[l.last], &v[i]) > 0 {
			return false
		}
		l.last = i
		l.n++
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

// laneOrder produces the positions of an index made of lanes (findLanes): lane after lane in key order,
// each by scanning its stretch of the index for its entries (the two lane bytes compared under masks).
type laneOrder struct {
	v      []entry
	lanes  []lane
	mp, mn uint64 // laneMasks
	wp, wn uint64 // the current lane's bytes, masked
	k      int    // current lane
	p      int    // next position to look at
	left   int    // entries of the current lane not yet produced
}

func newLaneOrder(a *arena) *laneOrder {
	o := &laneOrder{v: a.idx, lanes: a.lanes}
	o.mp, o.mn = laneMasks(a.laneDepth)
	o.k = -1
	o.nextLane()
	return o
}

// nextLane moves to the next lane.
func (o *laneOrder) nextLane() {
	if o.k++; o.k < len(o.lanes) {
		l := &o.lanes[o.k]
		o.p, o.left = l.first, l.n
		o.wp, o.wn = o.v[l.first].prefix&o.mp, o.v[l.first].next&o.mn
	}
}

func (o *laneOrder) next() (int, bool) {
	for o.k < len(o.lanes) {
		if o.left > 0 {
			v, mp, mn, wp, wn := o.v, o.mp, o.mn, o.wp, o.wn
			for p := o.p; p < len(v); p++ {
				if v[p].prefix&mp == wp && v[p].next&mn == wn {
					o.p, o.left = p+1, o.left-1
					return p, true
				}
			}
		}
		o.nextLane()
	}
	return 0, false
}
