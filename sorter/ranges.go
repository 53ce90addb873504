package sorter

import (
	"bytes"
	"context"
	"errors"
	"sort"

	"github.com/hfload/hfload/internal/cellrec"
)

// Ranges gives access to the sorted records of a finished Sorter by row range, so that several
// goroutines can merge disjoint ranges at once (one output region each) instead of one goroutine
// merging everything. Records on disk are in runs; every run records where each of its chunks
// starts and the row of the chunk's first record, so a range merge starts reading each run near the
// range's first row. The sorted in-memory remainder may stay in memory (RangesOptions), read by a
// binary search for the range's first row.
type Ranges struct {
	s       *Sorter
	scratch int64
	// mem: the sorted arena s.a is read in place. Its Iterators then take their read buffers from
	// bufs, reserved for opens of them at once by FinishRangesWith, instead of waiting on the budget.
	mem   bool
	need  int64         // one Iterator's read buffers and scratch
	slots chan struct{} // with mem: one token per open Iterator
	bufs  int64         // with mem: the reserved read buffers of cap(slots) Iterators
}

// RangesOptions configures FinishRangesWith. The zero value writes the in-memory remainder as a run,
// as FinishRanges does.
type RangesOptions struct {
	// Opens is the most Iterators of the Ranges the caller keeps open at once. With Opens > 0 the
	// sorted in-memory remainder stays in memory for the ranges to read, instead of being written as a
	// run and read back, if the budget holds it together with the read buffers of Opens Iterators
	// (reserved at once, without waiting) and Leave bytes more; otherwise it is written as a run.
	Opens int
	// Leave is memory the caller will reserve from the budget later, while the Ranges are open (output
	// buffers, say): it must stay free, since a finished sorter's memory can no longer be spilled.
	Leave int64
	// Plan, if set, is called once the in-memory remainder is sorted (the sort is then a whole one, for
	// Opens > 0) and before it is kept or written as a run, to set Opens and Leave: the caller may
	// work out what they depend on while the records are sorted. An error from Plan ends the sorter as
	// Close does and is returned as it is.
	Plan func(opts *RangesOptions) error
}

// FinishRanges ends adding like Finish, but instead of one Iterator returns a Ranges: the in-memory
// remainder is written as a run and intermediate merge passes run until one merge's read buffers fit
// the sorter's merge share. The Ranges must be closed; that removes the run files.
func (s *Sorter) FinishRanges(ctx context.Context) (*Ranges, error) {
	return s.FinishRangesWith(ctx, RangesOptions{})
}

// FinishRangesWith is FinishRanges, keeping the sorted in-memory remainder in memory when opts allow.
func (s *Sorter) FinishRangesWith(ctx context.Context, opts RangesOptions) (*Ranges, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateAdding {
		return nil, s.errorf("FinishRanges called twice or after Finish or Close")
	}
	s.state = stateFinished
	s.spillable.Store(0)
	s.waitSpillsLocked()
	fail := func(err error) (*Ranges, error) {
		err = s.fail(err)
		s.cleanupLocked()
		return nil, err
	}
	if s.err != nil {
		return fail(s.err)
	}
	r := &Ranges{s: s}
	if s.opts.Combine != nil {
		r.scratch = 2 * int64(s.p.scratchSize())
	}
	if len(s.a.idx) > 0 {
		sl, err := s.p.acquireSlot(ctx)
		if err != nil {
			return fail(err)
		}
		// Kept in memory, ranges are found by binary search: sort it all. Nothing else runs now (adding
		// is over, the ranges not open yet): use every processor the pool may.
		s.a.sortWith(s.p.par, opts.Opens > 0 || opts.Plan != nil, s.p.entryScratch)
		s.p.releaseSlot(sl)
	}
	if opts.Plan != nil {
		if err := opts.Plan(&opts); err != nil {
			s.cleanupLocked()
			return nil, err
		}
	}
	if len(s.a.idx) > 0 {
		kept, err := r.keep(opts)
		if err != nil {
			return fail(err)
		}
		if !kept {
			if err := s.spillFinishing(ctx); err != nil {
				return fail(err)
			}
		}
	} else {
		s.releaseArena()
	}
	for !r.mem && sumBufs(s.runs) > s.p.share && len(s.runs) > 2 {
		if err := s.mergePass(ctx); err != nil {
			return fail(err)
		}
	}
	return r, nil
}

// keep decides whether the sorted remainder stays in memory (s.mu held) and if so reserves the read
// buffers of opts.Opens Iterators. It stays only when the runs need no merge pass, so that nothing
// has to be reserved while it is held.
func (r *Ranges) keep(opts RangesOptions) (bool, error) {
	s := r.s
	if opts.Opens <= 0 || opts.Leave < 0 || sumBufs(s.runs) > s.p.share {
		return false, nil
	}
	r.need = sumBufs(s.runs) + r.scratch
	bufs := int64(opts.Opens) * r.need
	if bufs+opts.Leave > s.p.budget-s.p.reserveIO {
		return false, nil
	}
	switch err := s.p.reserve(nil, bufs+opts.Leave, nil, false); {
	case errors.Is(err, errNoMemory):
		return false, nil
	case err != nil:
		return false, err
	}
	s.p.release(opts.Leave)
	r.mem, r.bufs, r.slots = true, bufs, make(chan struct{}, opts.Opens)
	return true, nil
}

// Open returns an Iterator over the cells whose row is in [lo, hi) (nil lo: from the first row; nil
// hi: to the last) in (key, seq) order, folded with Combine like Finish's. It reserves the
// merge's read buffers, waiting for memory if needed; Iterators of one Ranges may be used
// concurrently. Closing the Iterator releases its memory but keeps the runs for other ranges.
func (r *Ranges) Open(ctx context.Context, lo, hi []byte) (*Iterator, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s := r.s
	s.mu.Lock()
	runs := append([]*runInfo(nil), s.runs...)
	closed := s.state == stateClosed
	s.mu.Unlock()
	if closed {
		return nil, s.errorf("Ranges.Open after Close")
	}
	it := &Iterator{s: s, ctx: ctx, ranged: true}
	if r.mem {
		// The read buffers are reserved already: take one Iterator's share of them.
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		it.slots = r.slots
	} else {
		need := sumBufs(runs) + r.scratch
		if err := s.p.reserve(ctx, need, nil, true); err != nil {
			return nil, err
		}
		it.reserved = need
	}
	var mem *resolver
	end := 0
	if r.mem {
		// The sorted arena's records of rows in [lo, hi) are one stretch of its index: the resolver
		// walks just that stretch, and nothing needs to compare each view's row with the bounds.
		var first int
		first, end = s.a.rowSpan(lo, hi)
		mem = newResolverOf(&s.a, &idxOrder{i: first, n: end})
	}
	switch {
	case len(runs) == 0 && mem != nil:
		it.src = mem
		if s.opts.Combine == nil {
			// The Iterator's consumer reads header, cells and seq; Limit cuts the stretch by position.
			mem.light, it.span, it.spanEnd = true, mem, end
			mem.limitRows(nil, end)
		}
	case len(runs) > 0:
		m := newMergerOf(s.p.dict)
		for _, ri := range runs {
			rr, err := openRunAt(ctx, s.p.dict, ri, ri.seek(lo))
			if err != nil {
				m.close()
				it.release()
				return nil, err
			}
			rr.keep = true
			m.readers = append(m.readers, rr)
			m.add(newRangeSource(rr, lo, hi))
		}
		if mem != nil {
			m.add(mem)
		}
		it.m, it.src = m, m
	}
	if s.opts.Combine != nil && it.src != nil {
		it.cs = newCombineSource(s.p, s.p.dict, it.src, s.opts, &it.scratch)
		it.src = it.cs
	}
	return it, nil
}

// Close removes the run files and frees what the sorter holds. Iterators must be closed first.
func (r *Ranges) Close() error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.state == stateClosed {
		return nil
	}
	r.s.p.release(r.bufs)
	r.bufs = 0
	return r.s.cleanupLocked()
}

// rowAtOrAfter reports whether the row of the record at index position i is hi or after it: on the
// entry's cached row words when they differ from hi's (zero-padded big-endian words order as the bytes
// do where they differ), else on the rows.
func (a *arena) rowAtOrAfter(i int, hi []byte) bool {
	e := &a.idx[i]
	h0, _ := word(hi, 0)
	if e.prefix != h0 {
		return e.prefix > h0
	}
	h1, _ := word(hi, 1)
	if e.next != h1 {
		return e.next > h1
	}
	return bytes.Compare(a.row(e), hi) >= 0
}

// firstRowAtOrAfter returns the first index position in [from, end) of a sorted index whose record's
// row is hi or after it, end if none: a search that doubles its step from from (the next region's few
// records cost a few comparisons, not a search of the whole stretch), then halves it.
func (a *arena) firstRowAtOrAfter(from, end int, hi []byte) int {
	lo, step := from, 1 // every position before lo is before hi
	for lo < end && !a.rowAtOrAfter(lo, hi) {
		lo += step
		step <<= 1
	}
	// The answer is in (lo-step/2, min(lo, end)]: halve.
	hiPos := min(lo, end)
	if step > 1 {
		lo -= step >> 1
		lo++
	}
	return lo + sort.Search(hiPos-lo, func(k int) bool { return a.rowAtOrAfter(lo+k, hi) })
}

// rowSpan returns the positions [first, end) of a fully sorted index whose records' rows are in
// [lo, hi) (nil lo: from the first row; nil hi: to the last). Records are sorted by their first cell,
// whose key starts with the row, so those records are one stretch.
func (a *arena) rowSpan(lo, hi []byte) (first, end int) {
	end = len(a.idx)
	if lo != nil {
		first = sort.Search(end, func(i int) bool { return bytes.Compare(a.row(&a.idx[i]), lo) >= 0 })
	}
	if hi != nil {
		end = first + sort.Search(end-first, func(i int) bool { return bytes.Compare(a.row(&a.idx[first+i]), hi) >= 0 })
	}
	return first, end
}

// rangeSource limits a source to the views whose row is in [lo, hi). It keeps the source's current
// view (a merger asks for it at every comparison) and compares rows with hi on their row prefixes
// first: only a row whose first eight bytes are hi's is compared in full.
type rangeSource struct {
	src     source
	lo, hi  []byte
	started bool
	done    bool
	v       *view
	hiPre   uint64 // cellrec.Prefix(hi)
}

func newRangeSource(src source, lo, hi []byte) *rangeSource {
	return &rangeSource{src: src, lo: lo, hi: hi, hiPre: cellrec.Prefix(hi)}
}

func (r *rangeSource) next() (bool, error) {
	if r.done {
		return false, nil
	}
	for {
		ok, err := r.src.next()
		if !ok || err != nil {
			r.done = true
			return false, err
		}
		v := r.src.cur()
		r.v = v
		if !r.started {
			if r.lo != nil && bytes.Compare(v.h.Row, r.lo) < 0 {
				continue
			}
			r.started = true
		}
		// Zero-padded big-endian prefixes order as the rows do where they differ.
		if r.hi != nil && v.prefix >= r.hiPre && (v.prefix > r.hiPre || bytes.Compare(v.h.Row, r.hi) >= 0) {
			r.done = true
			return false, nil
		}
		return true, nil
	}
}

func (r *rangeSource) cur() *view { return r.v }
