package sorter

import (
	"bytes"
	"context"
	"errors"

	"github.com/hfload/hfload/internal/cellrec"
)

// Iterator streams the cells of a finished Sorter in (key, seq) order, folded with Combine when set, as
// views: each step yields one or more consecutive cells of one record, with their header and seq. The
// cells of a view are in strictly ascending key order; every cell of a view sorts before every cell of
// the next one (equal keys can meet only across views). A record added whole comes out as one view
// unless cells of another record of the same row and family sort between its cells.
//
//	d := pool.Dict()
//	for it.Next() {
//		h := it.Header()
//		for cells := it.Cells(); len(cells) > 0; {
//			var q, v []byte
//			q, v, cells = d.Next(cells)
//			...
//		}
//	}
//	if err := it.Err(); err != nil { ... }
//	it.Close()
type Iterator struct {
	s        *Sorter
	ctx      context.Context
	src      source
	m        *merger
	cs       *combineSource
	scratch  [2][]byte
	reserved int64 // read buffers + combine scratch
	n        int
	cur      *view
	err      error
	closed   bool
	ranged   bool          // opened by Ranges.Open: closing it leaves the sorter and its runs alone
	slots    chan struct{} // opened by Ranges.Open on reserved buffers: the token to give back
	limit    []byte
	held     *view // the view Next stopped at because of limit
	// span: the source is a light resolver over one stretch of a sorted arena ending at spanEnd
	// (Ranges.Open, in memory, no runs; or Finish's, the whole arena, when it is fully sorted): Limit
	// stops it by index position instead of Next comparing every view's row with the limit.
	span    *resolver
	spanEnd int
}

// newIterator builds the final merge (s.mu held, remainder sorted, reserved already accounted).
func (s *Sorter) newIterator(ctx context.Context, reserved int64) (*Iterator, error) {
	it := &Iterator{s: s, ctx: ctx, reserved: reserved}
	var mem source
	if len(s.a.idx) > 0 {
		mem = newResolver(&s.a)
	}
	if len(s.runs) == 0 && mem != nil {
		it.src = mem
		r := mem.(*resolver)
		r.light = s.opts.Combine == nil // the Iterator's consumer reads header, cells and seq
		if r.light && r.sorted {
			// A fully sorted index, in memory, nothing folded: Next calls the resolver directly, as
			// for Ranges.Open's stretches (the whole index is one).
			it.span, it.spanEnd = r, len(s.a.idx)
		}
	} else {
		m, err := newMerger(ctx, s.p.dict, s.runs, mem)
		if err != nil {
			s.p.release(reserved)
			return nil, err
		}
		it.m = m
		it.src = m
	}
	if s.opts.Combine != nil && it.src != nil {
		it.cs = newCombineSource(s.p, s.p.dict, it.src, s.opts, &it.scratch)
		it.src = it.cs
	}
	return it, nil
}

// Limit makes Next stop (return false, with a nil Err) before the first view whose row is hi or after
// it; nil hi means no limit. A later Limit with a higher bound goes on from that view, so that one
// merge writes several consecutive regions (a Ranges.Open over all of them, then Limit(end) per region).
func (it *Iterator) Limit(hi []byte) {
	if it.span != nil {
		it.span.limitRows(hi, it.spanEnd)
		return
	}
	it.limit = hi
}

// beyond reports whether v is at or after the limit. (Comparing the rows' first 8 bytes as integers
// first was tried: it made beyond too big to inline, and the call cost what the compare saved: 10,000
// regions at 200,000 rows, cachegrind +1.6 M instructions.)
func (it *Iterator) beyond(v *view) bool {
	return it.limit != nil && bytes.Compare(v.h.Row, it.limit) >= 0
}

// Next advances to the next view. It returns false at the end, at the limit (see Limit) or on error
// (see Err).
func (it *Iterator) Next() bool {
	if r := it.span; r != nil && it.n&1023 != 0 && it.err == nil {
		// An in-memory stretch (Ranges.Open): the resolver's next, which cannot fail, without the
		// interface calls and the limit compare (Limit stops the resolver by position).
		it.n++
		if ok, _ := r.next(); ok {
			it.cur = &r.out
			return true
		}
		return it.ended()
	}
	if it.err != nil || it.closed || it.src == nil {
		it.cur = nil
		return false
	}
	if it.held != nil {
		if it.beyond(it.held) {
			it.cur = nil
			return false
		}
		it.cur, it.held = it.held, nil
		return true
	}
	if it.n&1023 == 0 {
		if err := it.ctx.Err(); err != nil {
			it.err = err
			return false
		}
		if it.s.opts.CombineErr != nil {
			if err := it.s.opts.CombineErr(); err != nil {
				it.err = it.s.errorf("%w", err)
				return false
			}
		}
	}
	it.n++
	ok, err := it.src.next()
	if err != nil {
		it.err = it.s.errorf("merge: %w", err)
		it.cur = nil
		return false
	}
	if !ok {
		return it.ended()
	}
	it.cur = it.src.cur()
	if it.beyond(it.cur) {
		it.held, it.cur = it.cur, nil
		return false
	}
	return true
}

// ended is Next at the end of the source or at a limit: no current view, and Combine's error if any.
func (it *Iterator) ended() bool {
	it.cur = nil
	if it.s.opts.CombineErr != nil {
		if err := it.s.opts.CombineErr(); err != nil {
			it.err = it.s.errorf("%w", err)
		}
	}
	return false
}

// Header returns the header of the current view's cells; valid until the next call of Next.
func (it *Iterator) Header() *cellrec.Header { return &it.cur.h }

// Cells returns the current view's cells (at least one), encoded: walk them with the pool's
// Dict().Next. Valid until the next call of Next.
func (it *Iterator) Cells() []byte { return it.cur.cells }

// Seq returns the seq of the current view's record (for a folded cell: of the first cell of its group,
// or of the last with FoldSeqLast).
func (it *Iterator) Seq() uint64 { return it.cur.seq }

// Err returns the first error met by Next (I/O, corruption, cancellation, Combine errors).
func (it *Iterator) Err() error { return it.err }

// release gives back the Iterator's read buffers.
func (it *Iterator) release() {
	it.s.p.release(it.reserved)
	it.reserved = 0
	if it.slots != nil {
		<-it.slots
		it.slots = nil
	}
}

// Close frees the sorter's memory and removes its run files. It is safe to call more than once.
func (it *Iterator) Close() error {
	if it.closed {
		return nil
	}
	it.closed, it.span = true, nil
	var errs []error
	if it.cs != nil {
		it.cs.close()
	}
	if it.m != nil {
		errs = append(errs, it.m.close())
	}
	it.release()
	if it.ranged {
		it.cur, it.src, it.held = nil, nil, nil
		return errors.Join(errs...)
	}
	it.s.mu.Lock()
	errs = append(errs, it.s.cleanupLocked())
	it.s.mu.Unlock()
	it.cur, it.src, it.held = nil, nil, nil
	return errors.Join(errs...)
}
