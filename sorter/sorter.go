package sorter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/internal/cellrec"
)

// CombineFunc folds the values a and b of two cells with equal keys (a's cell earlier in (key, seq)
// order): it appends the folded value to dst and returns it. h and qualifier give the key. It must not
// modify a or b, and must be safe for concurrent use.
type CombineFunc func(dst []byte, h *cellrec.Header, qualifier, a, b []byte) []byte

// SorterOptions configures one Sorter.
type SorterOptions struct {
	// Combine, if set, folds cells with equal keys. It is applied when a run is spilled and while
	// merging, so every group of equal keys comes out as exactly one cell (carrying the seq of its first
	// input, or of its last with FoldSeqLast).
	Combine CombineFunc
	// CombineErr, if set, reports an error that Combine could not return (e.g. Aggregator.Err). It is
	// checked after every spill and merge pass and while iterating; a non-nil result fails the sort:
	// Add or Finish return it, or Iterator.Next stops and Iterator.Err returns it.
	CombineErr func() error
	// FoldSeqLast makes a folded record carry the seq of its last input instead of its first, so that
	// partial groups from different runs merge in the order of their last inputs (needed for "last").
	FoldSeqLast bool
}

const (
	stateAdding = iota
	stateFinished
	stateClosed
)

// Sorter sorts the records (internal/cellrec) of one output stream by their cells. Add is safe for
// concurrent use; Finish is called once, after the last Add.
type Sorter struct {
	p    *Pool
	name string
	id   uint64
	opts SorterOptions

	mu          sync.Mutex
	a           arena
	held        int64        // accounted arena bytes: slab capacities + index capacity × entrySize
	spillable   atomic.Int64 // == held while adding, 0 otherwise (read by the pool without s.mu)
	cur         int          // current slab; slabs after it are empty (kept across an in-place spill)
	slabUsed    int          // bytes used in the current slab
	pleaseSpill atomic.Bool  // set by a reservation that found s busy
	empty       atomic.Bool  // no records in memory (a victim that is empty is spilled without I/O)
	nextSlab    int
	runs        []*runInfo
	inflight    int        // detached arenas being spilled outside the lock
	idxHint     int        // index capacity of the last arena s spilled itself: grow straight to it
	spare       []entry    // an index kept from a spilled arena for the next one (accounted in held)
	spillDone   *sync.Cond // on mu: signalled when a detached spill ends
	state       int
	err         error
	records     int64
	noPlaceRun  bool // tests: every record goes through placeLocked
}

// NewSorter returns a sorter drawing on the pool's budget. name appears in errors.
func (p *Pool) NewSorter(name string, opts SorterOptions) *Sorter {
	s := &Sorter{p: p, name: name, id: p.fileSeq.Add(1), opts: opts, nextSlab: minSlab, cur: -1, a: arena{d: p.dict}}
	s.spillDone = sync.NewCond(&s.mu)
	s.empty.Store(true)
	if err := p.register(s); err != nil {
		s.err = fmt.Errorf("sorter %q: %w", name, err)
		s.state = stateClosed
	}
	return s
}

// Name returns the sorter's name.
func (s *Sorter) Name() string { return s.name }

// Records returns the number of records added so far (cells still in the sorter may have been folded
// or cut into several records since).
func (s *Sorter) Records() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records
}

// Runs returns the number of run files the sorter currently has.
func (s *Sorter) Runs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

func (s *Sorter) errorf(format string, args ...any) error {
	return fmt.Errorf("sorter %q: "+format, append([]any{s.name}, args...)...)
}

// Record is one record for AddRecords: the record bytes (internal/cellrec, with qualifier indexes into
// the pool's dictionary; copied) and its input order.
type Record struct {
	Rec []byte
	Seq uint64
}

// Add copies rec, a record, into the sorter. Malformed records (cellrec.Dict.Validate) and records larger
// than Pool.MaxRecord are rejected without harming the sorter. seq orders cells with equal keys (input
// order). It may spill to disk and may wait for memory.
func (s *Sorter) Add(rec []byte, seq uint64) error {
	recs := [1]Record{{Rec: rec, Seq: seq}}
	return s.AddRecords(recs[:])
}

// AddRecords adds many records under one lock acquisition, as Add does for each: callers with batches
// (the pipeline's record batches) use it to keep lock traffic off the hot path. Records are validated
// before any is added; a spill triggered while adding runs outside the sorter's lock, so other
// goroutines keep adding into a fresh arena while the full one is sorted and written.
func (s *Sorter) AddRecords(recs []Record) error {
	for i := range recs {
		rec := recs[i].Rec
		if _, err := s.p.dict.Validate(rec); err != nil {
			return s.errorf("invalid record of %d bytes: %w", len(rec), err)
		}
		if int64(len(rec)) > s.p.MaxRecord() {
			return s.errorf("record of %d bytes exceeds the largest record this budget sorts (%d bytes)",
				len(rec), s.p.MaxRecord())
		}
	}
	s.mu.Lock()
	for i := 0; i < len(recs); {
		if s.err != nil {
			s.mu.Unlock()
			return s.err
		}
		if s.state != stateAdding {
			s.mu.Unlock()
			return s.errorf("Add after Finish or Close")
		}
		var job *spillJob
		if s.pleaseSpill.Load() {
			// Another sorter waits for memory and could not take our lock: give our memory back.
			s.pleaseSpill.Store(false)
			job = s.detachLocked(false)
		} else {
			if k := s.placeRun(recs[i:]); k > 0 {
				i += k
				continue
			}
			err := s.placeLocked(recs[i].Rec, recs[i].Seq)
			switch {
			case err == nil:
				i++
				continue
			case errors.Is(err, errSpillSelf):
				job = s.detachLocked(true)
			default:
				err = s.fail(err)
				s.mu.Unlock()
				return err
			}
		}
		if job != nil {
			s.mu.Unlock()
			if err := s.runSpill(job); err != nil {
				return err
			}
			s.mu.Lock()
		}
	}
	s.mu.Unlock()
	return nil
}

// placeLocked copies one record, after its length, into the arena (s.mu held). It returns errSpillSelf
// when s must spill before the record fits.
func (s *Sorter) placeLocked(rec []byte, seq uint64) error {
	size := uvarintLen(uint64(len(rec))) + len(rec)
	for {
		if len(s.a.idx) == cap(s.a.idx) {
			if err := s.growIndex(); err != nil {
				return err
			}
			continue
		}
		if s.cur < 0 || s.slabUsed+size > len(s.a.slabs[s.cur]) {
			if s.cur+1 < len(s.a.slabs) { // a slab kept from before
				s.cur++
				s.slabUsed = 0
				continue
			}
			if s.held-int64(cap(s.spare))*entrySize >= s.p.spillAt && len(s.a.idx) > 0 && s.p.spillEarly() {
				// Big enough to be worth a run: spill it now, while the budget still has room for the
				// others to go on adding during the sort and write (unless all the input will fit).
				return errSpillSelf
			}
			if err := s.newSlab(size); err != nil {
				return err
			}
			continue
		}
		break
	}
	if len(s.a.idx) == 0 {
		s.empty.Store(false)
	}
	slabID := s.cur
	off := s.slabUsed
	slab := s.a.slabs[slabID]
	n := binary.PutUvarint(slab[off:], uint64(len(rec)))
	copy(slab[off+n:], rec)
	s.slabUsed += size
	s.a.idx = append(s.a.idx, newEntry(rec, slabID, off, seq))
	s.records++
	return nil
}

// fail records a sticky error; the caller holds s.mu.
func (s *Sorter) fail(err error) error {
	if s.err == nil {
		s.err = s.errorf("%w", err)
	}
	return s.err
}

func (s *Sorter) setHeld(h int64) {
	s.held = h
	if s.state == stateAdding {
		s.spillable.Store(h)
	} else {
		s.spillable.Store(0)
	}
}

// growIndex enlarges the index (s.mu held). Both arrays are accounted while copying. An index of
// indexMapMin entries or more lives in a mapping of its own (Pool.newIndex) and grows in place, in
// steps of an eighth: nothing is copied, and the index's unused capacity, which is accounted and
// faulted in ahead of the records (prefaultIndex), stays within an eighth of it. Copying it grew at 1M rows allocated 61-73 MB of fresh memory for an index of 32 MB: each
// step's new array, and an index projected to the arena's spill size or fair share that ended far
// larger than its records (customer-order, 5 regions: 292,129 entries for ~200,000 records a region).
func (s *Sorter) growIndex() error {
	old := cap(s.a.idx)
	newCap := 128
	inPlace := s.p.mapped(s.a.idx)
	switch {
	case old < s.idxHint:
		// The arena will likely fill as the last one did: one allocation instead of many copies.
		newCap = s.idxHint
	case inPlace && old >= indexMapMin:
		newCap = old + old/8
	case old >= 1<<16:
		newCap = old + old/4
		// Grow straight to the size the arena will have when it spills, judging by the records so far
		// (steps of 25% copy the whole index each time: about 4 times its final size for the first arena),
		// or when it holds its fair share of the arena memory: with many sorters (one per region) none
		// reaches the spill size, and indexes reserved for it took the budget and spilled the others.
		if n := int64(len(s.a.idx)); n > 0 {
			slabBytes := s.held - int64(old+cap(s.spare))*entrySize
			fair := (s.p.budget - s.p.reserveIO) / max(1, s.p.nSorters.Load())
			perRecord := slabBytes/n + entrySize
			if want := min(s.p.spillAt, fair) / perRecord; want > int64(newCap) {
				newCap = int(want + want/8)
			}
			// When the whole input fits (it will not spill at spillAt), grow straight to what the whole
			// input will need, up to the sorter's fair share: a sorter whose records came early (an input
			// in key order fills one region after another) does not take the others' share.
			if want := min(s.p.fitIndex(n), fair/perRecord); want > int64(newCap) && s.held+want*entrySize <= s.p.budget-s.p.reserveIO {
				newCap = int(want)
			}
		}
	case old > 0:
		newCap = 2 * old
	}
	if cap(s.spare) >= newCap && cap(s.spare) > old {
		outgrown := s.a.idx
		s.a.idx = append(s.spare[:0], s.a.idx...) // the spare's memory is already in s.held
		s.spare = nil
		s.p.dropIndex(outgrown)
		s.setHeld(s.held - int64(old)*entrySize)
		s.p.release(int64(old) * entrySize)
		return nil
	}
	need := int64(newCap) * entrySize
	if old > 0 && s.held+need > s.p.budget-s.p.reserveIO {
		// The grown index could never fit next to what s holds: spill s instead of growing.
		return errSpillSelf
	}
	if err := s.p.reserve(nil, need, s, true); err != nil {
		if err == errRetry { // s gave its empty memory back: start again from the new state
			return nil
		}
		return err
	}
	if idx, ok := s.p.growInPlace(s.a.idx, newCap); ok {
		s.a.idx = idx
		prefaultMapped(idx)
	} else {
		var idx []entry
		if newCap >= indexMapMin && !s.p.noIndexMap {
			idx = s.p.newIndex(len(s.a.idx), newCap, s.p.indexMapSize(newCap))
		}
		if idx == nil {
			idx = make([]entry, len(s.a.idx), newCap)
			hugeRanges.Advise(entryBytes(idx[:newCap]))
		}
		prefaultGrown(idx)
		copy(idx, s.a.idx)
		s.p.dropIndex(s.a.idx)
		s.a.idx = idx
	}
	s.setHeld(s.held + need - int64(old)*entrySize)
	s.p.release(int64(old) * entrySize)
	return nil
}

// newSlab adds a slab with room for at least n bytes (s.mu held).
func (s *Sorter) newSlab(n int) error {
	size := max(s.nextSlab, n)
	slab := s.p.takeFree(size)
	if slab == nil {
		if err := s.p.reserve(nil, int64(size), s, true); err != nil {
			if err == errRetry { // s gave its empty memory back: start again
				return nil
			}
			return err
		}
		slab = make([]byte, size)
		hugeRanges.Advise(slab)
		prefault(slab)
	}
	s.a.slabs = append(s.a.slabs, slab)
	s.cur = len(s.a.slabs) - 1
	s.slabUsed = 0
	s.setHeld(s.held + int64(size))
	s.nextSlab = min(2*s.nextSlab, s.p.slabLimit())
	return nil
}

// releaseArena drops the in-memory records and returns their memory (s.mu held).
func (s *Sorter) releaseArena() {
	h := s.held
	for i, b := range s.a.slabs {
		h -= int64(len(b))
		s.p.putFree(b)
		s.a.slabs[i] = nil
	}
	s.p.dropIndex(s.a.idx)
	s.p.dropIndex(s.spare)
	s.a.slabs, s.a.idx, s.spare = nil, nil, nil // h includes the spare index
	s.cur, s.slabUsed = -1, 0
	s.empty.Store(true)
	s.setHeld(0)
	s.p.release(h)
}

// spillJob is an arena taken out of a sorter to be sorted and written as a run outside its lock.
type spillJob struct {
	a    arena
	held int64 // accounted bytes of the arena (slabs + index)
}

// detachLocked takes the in-memory records out of s (s.mu held) and returns them as a spill job, or nil
// when s holds no records (its memory is then simply returned). With self (s spills because it needs
// room) the slabs keep growing for the records to come; a victim spilled for another sorter regrows from
// small. The job's memory stays accounted until runSpill has written it.
func (s *Sorter) detachLocked(self bool) *spillJob {
	if len(s.a.idx) == 0 {
		s.releaseArena()
		return nil
	}
	spare := int64(cap(s.spare)) * entrySize
	job := &spillJob{a: s.a, held: s.held - spare}
	if self {
		s.idxHint = cap(s.a.idx)
	}
	s.a = arena{d: s.p.dict}
	s.cur, s.slabUsed = -1, 0
	s.empty.Store(true)
	s.setHeld(spare)
	if !self {
		s.nextSlab = minSlab // a sorter spilled to make room for others may stay small
	}
	s.inflight++
	return job
}

// runSpill sorts a detached arena and writes it as a run (s.mu not held), then returns its memory and
// records the run. Errors are sticky on s.
func (s *Sorter) runSpill(job *spillJob) error {
	sl, _ := s.p.acquireSlot(nil)
	job.a.sort()
	info, err := s.writeRun(nil, sl, s.runSource(&job.a))
	s.p.releaseSlot(sl)
	h := job.held
	for i, b := range job.a.slabs {
		h -= int64(len(b))
		s.p.putFree(b)
		job.a.slabs[i] = nil
	}
	if err == nil && s.opts.CombineErr != nil {
		err = s.opts.CombineErr()
	}
	// h is now the job's index. It is handed to s only if s's lock is free right now: a goroutine
	// holding the lock may be waiting in Pool.reserve for exactly this memory, so otherwise the index is
	// released before waiting for the lock (to record the run).
	locked := s.mu.TryLock()
	if !locked {
		s.p.dropIndex(job.a.idx)
		job.a.idx = nil
		s.p.release(h)
		h = 0
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	// If s is still adding with a smaller index (it regrows from small after a detach), hand the big one
	// over instead of freeing it: growing an index step by step copies it many times over.
	// Otherwise keep it as s's spare index for its next arena (still accounted, in s.held), so that
	// two indexes take turns instead of one being allocated per spill.
	switch {
	case !locked || err != nil || s.state != stateAdding || s.err != nil:
		s.p.dropIndex(job.a.idx)
	case cap(job.a.idx) > cap(s.a.idx):
		old := int64(cap(s.a.idx)) * entrySize
		outgrown := s.a.idx
		s.a.idx = append(job.a.idx[:0], s.a.idx...)
		s.p.dropIndex(outgrown)
		s.setHeld(s.held + h - old)
		h = old
	case s.spare == nil:
		s.spare = job.a.idx[:0]
		s.setHeld(s.held + h)
		h = 0
	default:
		s.p.dropIndex(job.a.idx)
	}
	job.a.idx = nil
	s.p.release(h)
	s.inflight--
	s.spillDone.Broadcast()
	if err != nil {
		if info != nil {
			info.remove()
		}
		return s.fail(err)
	}
	s.runs = append(s.runs, info)
	s.p.spills.Add(1)
	return nil
}

// waitSpillsLocked waits until no detached arena is being written (s.mu held).
func (s *Sorter) waitSpillsLocked() {
	for s.inflight > 0 {
		s.spillDone.Wait()
	}
}

// runSource is the source of a run written from a sorted arena: a resolver, light when nothing folds
// (runWriter.add reads a view's header, cells and seq only; a combineSource compares first cells).
func (s *Sorter) runSource(a *arena) *resolver {
	r := newResolver(a)
	r.light = s.opts.Combine == nil
	return r
}

// writeRun drains src (non-overlapping views in order) into a new run, folding equal keys when Combine
// is set.
func (s *Sorter) writeRun(ctx context.Context, sl *slot, src source) (*runInfo, error) {
	w, err := s.p.createRun(sl)
	if err != nil {
		return nil, err
	}
	_, w.stable = src.(*resolver)
	if s.opts.Combine != nil {
		w.stable = false // the folded cells' records are in scratch buffers that are reused
		cs := newCombineSource(s.p, s.p.dict, src, s.opts, &sl.scratch)
		defer cs.close()
		src = cs
	}
	r, _ := src.(*resolver) // a spill's run: the resolver's next called directly, not through source
	for n := 0; ; n++ {
		if ctx != nil && n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				w.abort()
				return nil, err
			}
		}
		var ok bool
		var err error
		var v *view
		if r != nil {
			ok, err = r.next()
			v = &r.out
		} else {
			ok, err = src.next()
			v = src.cur()
		}
		if err != nil {
			w.abort()
			return nil, err
		}
		if !ok {
			break
		}
		if err := w.add(v); err != nil {
			w.abort()
			return nil, err
		}
	}
	return w.finish()
}

// Finish ends adding and returns the cells in (key, seq) order, as views: parts of records (see
// Iterator). Runs are merged as described
// in the package documentation; the Iterator must be closed. On error every run file is removed.
func (s *Sorter) Finish(ctx context.Context) (*Iterator, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateAdding {
		return nil, s.errorf("Finish called twice or after Close")
	}
	if s.err != nil {
		s.cleanupLocked()
		return nil, s.err
	}
	s.state = stateFinished
	s.spillable.Store(0)
	s.waitSpillsLocked()
	if s.err != nil {
		s.cleanupLocked()
		return nil, s.err
	}
	it, err := s.finish(ctx)
	if err != nil {
		err = s.fail(err)
		s.cleanupLocked()
		return nil, err
	}
	return it, nil
}

func (s *Sorter) finish(ctx context.Context) (*Iterator, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.opts.CombineErr != nil {
		if err := s.opts.CombineErr(); err != nil {
			return nil, err
		}
	}
	scratch := int64(0)
	if s.opts.Combine != nil {
		scratch = 2 * int64(s.p.scratchSize())
	}
	if len(s.a.idx) > 0 {
		sl, err := s.p.acquireSlot(ctx)
		if err != nil {
			return nil, err
		}
		s.a.sort()
		s.p.releaseSlot(sl)
	} else {
		s.releaseArena()
	}
	reserved := int64(-1)
	if len(s.runs) > 0 && len(s.a.idx) > 0 {
		// Keep the remainder in memory only if the final merge's buffers fit now, without waiting.
		need := sumBufs(s.runs) + scratch
		if need <= s.p.share && s.p.reserve(ctx, need, nil, false) == nil {
			reserved = need
		} else if err := s.spillFinishing(ctx); err != nil {
			return nil, err
		}
	}
	for reserved < 0 && sumBufs(s.runs) > s.p.share && len(s.runs) > 2 {
		if err := s.mergePass(ctx); err != nil {
			return nil, err
		}
	}
	if reserved < 0 {
		reserved = sumBufs(s.runs) + scratch
		if err := s.p.reserve(ctx, reserved, nil, true); err != nil {
			return nil, err
		}
	}
	return s.newIterator(ctx, reserved)
}

// spillFinishing writes the sorted remainder of a finishing sorter as a run.
func (s *Sorter) spillFinishing(ctx context.Context) error {
	sl, err := s.p.acquireSlot(ctx)
	if err != nil {
		return err
	}
	defer s.p.releaseSlot(sl)
	info, err := s.writeRun(ctx, sl, s.runSource(&s.a))
	if err != nil {
		return err
	}
	s.runs = append(s.runs, info)
	s.releaseArena()
	s.p.spills.Add(1)
	return nil
}

func sumBufs(runs []*runInfo) int64 {
	var n int64
	for _, r := range runs {
		n += r.bufBytes()
	}
	return n
}

// mergePass merges the smallest runs (at least two, as many as fit the merge share) into one.
func (s *Sorter) mergePass(ctx context.Context) error {
	sort.SliceStable(s.runs, func(i, j int) bool {
		if s.runs[i].size != s.runs[j].size {
			return s.runs[i].size < s.runs[j].size
		}
		return s.runs[i].id < s.runs[j].id
	})
	k, bufs := 0, int64(0)
	for k < len(s.runs) && (k < 2 || bufs+s.runs[k].bufBytes() <= s.p.share) {
		bufs += s.runs[k].bufBytes()
		k++
	}
	picked := s.runs[:k:k]
	if err := s.p.reserve(ctx, bufs, nil, true); err != nil {
		return err
	}
	defer s.p.release(bufs)
	sl, err := s.p.acquireSlot(ctx)
	if err != nil {
		return err
	}
	defer s.p.releaseSlot(sl)
	m, err := newMerger(ctx, s.p.dict, picked, nil)
	if err != nil {
		return err
	}
	info, err := s.writeRun(ctx, sl, m)
	if cerr := m.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if info != nil {
			info.remove()
		}
		return err
	}
	// The inputs are gone (readers remove their files); keep the rest and the new run.
	s.runs = append(append([]*runInfo(nil), s.runs[k:]...), info)
	s.p.passes.Add(1)
	if s.opts.CombineErr != nil {
		if err := s.opts.CombineErr(); err != nil {
			return err
		}
	}
	return nil
}

// cleanupLocked frees memory, removes run files and leaves the pool (s.mu held).
func (s *Sorter) cleanupLocked() error {
	s.waitSpillsLocked()
	var errs []error
	s.releaseArena()
	for _, r := range s.runs {
		if err := r.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	s.runs = nil
	s.state = stateClosed
	s.p.unregister(s)
	return errors.Join(errs...)
}

// Close discards a sorter that will not be finished (or whose Iterator was not created): it frees its
// memory and removes its run files. Closing a finished sorter is a no-op; close its Iterator instead.
func (s *Sorter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateAdding {
		return nil
	}
	return s.cleanupLocked()
}
