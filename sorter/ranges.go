package sorter

import (
	"bytes"
	"context"
)

// Ranges gives access to the sorted records of a finished Sorter by row range, so that several
// goroutines can merge disjoint ranges at once (one output region each) instead of one goroutine
// merging everything. All records are on disk in runs; every run records where each of its chunks
// starts and the row of the chunk's first record, so a range merge starts reading each run near the
// range's first row.
type Ranges struct {
	s       *Sorter
	scratch int64
}

// FinishRanges ends adding like Finish, but instead of one Iterator returns a Ranges: the in-memory
// remainder is written as a run and intermediate merge passes run until one merge's read buffers fit
// the sorter's merge share. The Ranges must be closed; that removes the run files.
func (s *Sorter) FinishRanges(ctx context.Context) (*Ranges, error) {
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
	if len(s.a.idx) > 0 {
		sl, err := s.p.acquireSlot(ctx)
		if err != nil {
			return fail(err)
		}
		s.a.sort()
		s.p.releaseSlot(sl)
		if err := s.spillFinishing(ctx); err != nil {
			return fail(err)
		}
	} else {
		s.releaseArena()
	}
	for sumBufs(s.runs) > s.p.share && len(s.runs) > 2 {
		if err := s.mergePass(ctx); err != nil {
			return fail(err)
		}
	}
	r := &Ranges{s: s}
	if s.opts.Combine != nil {
		r.scratch = 2 * int64(s.p.scratchSize())
	}
	return r, nil
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
	need := sumBufs(runs) + r.scratch
	if err := s.p.reserve(ctx, need, nil, true); err != nil {
		return nil, err
	}
	it := &Iterator{s: s, ctx: ctx, reserved: need, ranged: true}
	if len(runs) > 0 {
		m := newMergerOf(s.p.dict)
		for _, ri := range runs {
			rr, err := openRunAt(ctx, s.p.dict, ri, ri.seek(lo))
			if err != nil {
				m.close()
				s.p.release(need)
				return nil, err
			}
			rr.keep = true
			m.readers = append(m.readers, rr)
			m.h.s = append(m.h.s, &rangeSource{src: rr, lo: lo, hi: hi})
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
	return r.s.cleanupLocked()
}

// rangeSource limits a source to the views whose row is in [lo, hi).
type rangeSource struct {
	src     source
	lo, hi  []byte
	started bool
	done    bool
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
		row := r.src.cur().h.Row
		if !r.started {
			if r.lo != nil && bytes.Compare(row, r.lo) < 0 {
				continue
			}
			r.started = true
		}
		if r.hi != nil && bytes.Compare(row, r.hi) >= 0 {
			r.done = true
			return false, nil
		}
		return true, nil
	}
}

func (r *rangeSource) cur() *view { return r.src.cur() }
