package sorter

import (
	"bytes"
	"math"

	"github.com/hfload/hfload/internal/cellrec"
)

// cursor is a record the resolver is interleaving with others: its entry position and the offset of its
// current cell in the record's cells region. 8 bytes: entrySize accounts one per index entry, the most
// the resolver's heap can hold.
type cursor struct {
	i   uint32
	pos uint32
}

// resolver turns the records of a sorted arena, in (first cell, seq) order, into non-overlapping views
// in (key, seq) order. Records of different rows or families never overlap, and each then becomes one
// view after one comparison of cached row prefixes. Records of one row and family may overlap (the same
// row twice in the input, or qualifiers built from data that interleave): those are merged cell by cell
// with a heap of cursors, handing on each time the longest stretch of one record that sorts before
// every other candidate.
type resolver struct {
	a       *arena
	ord     order
	la      int // lookahead: the next position of ord, -1 at the end
	heap    heap[cursor]
	emitted int  // cells bytes of heap[0] handed out by the last next
	done    bool // ... and they were the rest of its record
	out     view
	bnd     view
	touched byte // sum of the bytes the plain-load prefetch read (prefetch_other.go; unused on amd64, kept so that those reads are not optimized away)
	sorted  bool // ord walks a fully sorted index: prefetch ahead
	// light: the consumer reads only the header, cells, seq and row prefix of a view (an Iterator's
	// direct source, or a run's writer, without Combine): the first cell, which merging and folding
	// compare on, is decoded only where the resolver itself needs it (the row prefix is the entry's).
	light bool
	// stop: next hands on nothing of the records at index positions stop and after (Ranges.Open's
	// in-memory ranges, cut at each Limit: limitRows); math.MaxInt otherwise.
	stop int
}

func newResolver(a *arena) *resolver {
	return newResolverOf(a, a.order())
}

func newResolverOf(a *arena, ord order) *resolver {
	_, sorted := ord.(*idxOrder)
	r := &resolver{a: a, ord: ord, sorted: sorted, stop: math.MaxInt}
	r.heap = heap[cursor]{s: make([]cursor, 0, 4), less: r.less}
	r.fetch()
	return r
}

func (r *resolver) fetch() {
	if r.sorted {
		// idxOrder's next without the interface call.
		o := r.ord.(*idxOrder)
		if o.i >= o.n {
			r.la = -1
			return
		}
		i := o.i
		o.i++
		r.la = i
		if i&(prefetchAhead-1) == 0 {
			r.prefetch(i + prefetchDist)
		}
		return
	}
	if i, ok := r.ord.next(); ok {
		r.la = i
		if r.sorted && i&(prefetchAhead-1) == 0 {
			r.prefetch(i + prefetchDist)
		}
	} else {
		r.la = -1
	}
}

// prefetchAhead is how many records of a sorted index prefetch asks for at once, every prefetchAhead
// records; prefetchDist how far ahead of the record being taken they start (a multiple of prefetchAhead).
const (
	prefetchAhead = 8
	prefetchDist  = 16
)

func (r *resolver) cur() *view { return &r.out }

// cells returns the header of c's record and its cells from c's current cell on.
func (r *resolver) cells(c cursor) (cellrec.Header, []byte) {
	h, cells, _ := cellrec.ParseHeader(r.a.record(&r.a.idx[c.i])) // validated when added
	return h, cells[c.pos:]
}

// less orders two cursors by (current cell, seq). A cursor's current cell is in its record's row, so the
// entry's cached row bytes still decide whenever they differ, and otherwise the rows compared in place
// do unless they are equal.
func (r *resolver) less(x, y cursor) bool {
	ex, ey := &r.a.idx[x.i], &r.a.idx[y.i]
	if !keyEqual(ex, ey) {
		return keyLess(ex, ey)
	}
	if c := bytes.Compare(r.a.row(ex), r.a.row(ey)); c != 0 {
		return c < 0
	}
	hx, cx := r.cells(x)
	hy, cy := r.cells(y)
	qx, vx, _ := r.a.d.Next(cx)
	qy, vy, _ := r.a.d.Next(cy)
	return cmpCellsInRow(&hx, qx, vx, ex.seq, &hy, qy, vy, ey.seq) < 0
}

// alone hands on the record just taken (at index position i, at its first cell, the heap empty) whole, as
// next does, when the next record is not of its row (the usual case: no overlap to resolve), and reports
// whether it did; otherwise next pushes it and goes on. A record handed on alone never enters the heap, and
// leaves emitted 0: the next call has nothing to pop. For a light resolver: the view's header, cells and
// seq only. The cached row bytes decide when they differ; when they tie (rows with a long common prefix,
// such as host-event-revts'), the rows in place do, as next would compare them.
func (r *resolver) alone(i int) bool {
	e := &r.a.idx[i]
	if r.la >= 0 && keyEqual(&r.a.idx[r.la], e) {
		return r.aloneTied(e) // maybe the same row
	}
	cells, _ := cellrec.ParseHeaderTo(&r.out.h, r.a.record(e)) // validated when added
	r.out.cells, r.out.seq, r.out.prefix = cells, e.seq, e.prefix
	return true
}

// aloneTied is alone for a record e whose cached row bytes tie with the next record's: it hands e on
// whole when the rows, compared in place, differ; when they are equal next goes on and merges.
func (r *resolver) aloneTied(e *entry) bool {
	h, cells, _ := cellrec.ParseHeader(r.a.record(e)) // validated when added
	if bytes.Equal(r.a.row(&r.a.idx[r.la]), h.Row) {
		return false
	}
	r.out.h, r.out.cells, r.out.seq, r.out.prefix = h, cells, e.seq, e.prefix
	return true
}

func (r *resolver) next() (bool, error) {
	if r.emitted > 0 {
		switch {
		case !r.done:
			r.heap.s[0].pos += uint32(r.emitted)
		case len(r.heap.s) == 1: // the common case: one record at a time
			r.heap.s = r.heap.s[:0]
		default:
			r.heap.pop()
		}
		if len(r.heap.s) > 1 {
			r.heap.down(0)
		}
		r.emitted = 0
	}
	if len(r.heap.s) == 0 {
		if uint(r.la) >= uint(r.stop) { // the end (la -1) or the stop
			return false, nil
		}
		i := r.la
		r.fetch()
		if r.light && r.alone(i) {
			return true, nil
		}
		r.heap.s = append(r.heap.s, cursor{i: uint32(i)})
	} else if int(r.heap.s[0].i) >= r.stop {
		return false, nil // a stop lowered into the row being merged: its records are all at or after it
	}
	// Records whose first cell sorts before the top's current cell join before the top goes on (later
	// records start no earlier than this one). While the top is at its first cell none does: ord yields
	// records in (first cell, seq) order.
	for r.la >= 0 && r.heap.s[0].pos > 0 && r.less(cursor{i: uint32(r.la)}, r.heap.s[0]) {
		r.heap.push(cursor{i: uint32(r.la)})
		r.fetch()
	}
	top := r.heap.s[0]
	h, cells := r.cells(top)
	seq := r.a.idx[top.i].seq
	n := len(cells)
	if len(r.heap.s) > 1 || r.la >= 0 && keyEqual(&r.a.idx[r.la], &r.a.idx[top.i]) && bytes.Equal(r.a.row(&r.a.idx[r.la]), h.Row) {
		// Something of the same row comes next: hand on only what sorts before the smallest
		// other candidate.
		r.out.set(r.a.d, &h, cells, seq)
		var b cursor
		k := r.heap.second()
		has := k > 0
		if has {
			b = r.heap.s[k]
		}
		if la := (cursor{i: uint32(r.la)}); r.la >= 0 && (!has || r.less(la, b)) {
			b, has = la, true
		}
		bh, bc := r.cells(b)
		r.bnd.set(r.a.d, &bh, bc, r.a.idx[b.i].seq)
		n = below(r.a.d, &r.out, &r.bnd)
	} else if r.light {
		r.out.h, r.out.cells, r.out.seq, r.out.prefix = h, cells, seq, r.a.idx[top.i].prefix
	} else {
		r.out.set(r.a.d, &h, cells, seq)
	}
	r.done = n == len(cells)
	r.out.cells = cells[:n]
	r.emitted = n
	return true, nil
}

// limitRows makes next stop before the first record whose row is hi or after it (nil hi: at the end of
// the resolver's stretch of a sorted index, end), from where the resolver is: the records left are
// those in its heap (all of one row) and from la on, in row order.
func (r *resolver) limitRows(hi []byte, end int) {
	switch {
	case hi == nil || r.la < 0 && len(r.heap.s) == 0:
		r.stop = end
	case len(r.heap.s) > 0 && r.a.rowAtOrAfter(int(r.heap.s[0].i), hi):
		r.stop = 0 // every record left is of the heap's row or after it
	case r.la < 0:
		r.stop = end
	default:
		r.stop = r.a.firstRowAtOrAfter(r.la, end, hi)
	}
}
