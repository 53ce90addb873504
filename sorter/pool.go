package sorter

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hfload/hfload/internal/cellrec"
)

// DefaultMemory is the pool budget when PoolOptions.Memory is 0.
const DefaultMemory = 1 << 30

// MinMemory is the smallest accepted budget.
const MinMemory = 64 << 10

const (
	minChunk = 4 << 10
	maxChunk = 1 << 20
	minSlab  = 4 << 10
	maxSlab  = 4 << 20
	// entrySize is what one index entry is accounted at: the 32-byte entry plus room for the 8-byte
	// cursor the resolver may need for it when records of one row overlap.
	entrySize = 40
	// slabClasses is the number of pooled slab sizes: minSlab, 2×minSlab, ..., maxSlab.
	slabClasses = 11
	// waitPoll bounds how long a reservation waits before it looks for spillable sorters again.
	waitPoll   = 20 * time.Millisecond
	chunkHdrSz = 13
)

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Memory is the hard budget in bytes for all sorters of the pool (default DefaultMemory).
	Memory int64
	// TempDir is where the pool creates its private spill directory (default os.TempDir()).
	TempDir string
	// Parallelism bounds concurrent spill and merge work (default GOMAXPROCS).
	Parallelism int
	// Dict is the qualifier dictionary of the records added to the pool's sorters (nil: records hold
	// literal qualifiers only). See internal/cellrec.
	Dict *cellrec.Dict
	// CompressRuns compresses run chunks (S2, snappy block format). Off by default: on the disks we
	// measured, compressing and decompressing spills cost more CPU than moving twice the bytes around the
	// page cache; it halves spill I/O where the disk, not the CPU, is the limit.
	CompressRuns bool
	// WillFit, if set, is asked when a sorter reaches the size at which it spills early (half the arena
	// memory with Parallelism > 1, so that adding goes on while that half is sorted and written) whether
	// the whole input will fit in memory instead: given the arena bytes all sorters hold now, true skips
	// the early spill. An input a little larger than half the budget is then never written to disk and
	// read back. Should the budget run out after all, sorters spill then, as they do without WillFit.
	// It is called with a sorter's lock held and must not call the pool.
	WillFit func(arenaBytes int64) bool
	// InputScale, if set with WillFit, returns the inputs' size over the part read so far (>= 1; 0 when it
	// cannot be projected). When WillFit says the whole input fits, a sorter's index that must grow past
	// 64Ki entries grows straight to its records scaled to the whole input (plus an eighth), instead of
	// in steps of a quarter that allocate and copy about three times the final index.
	InputScale func() float64
}

// Pool shares one memory budget and one spill directory among many Sorters.
type Pool struct {
	budget    int64
	par       int
	dict      *cellrec.Dict
	compress  bool
	dir       string
	chunkSize int
	slabMax   int
	reserveIO int64                       // fixed I/O reserve (all slots)
	share     int64                       // merge read-buffer share of one sorter
	spillAt   int64                       // a sorter holding this much spills on its own, leaving room to keep adding meanwhile
	willFit   func(arenaBytes int64) bool // PoolOptions.WillFit
	scale     func() float64              // PoolOptions.InputScale

	slots chan *slot // spill/merge work slots, one per unit of Parallelism

	mu      sync.Mutex
	cond    *sync.Cond
	used    int64
	peak    int64
	gen     uint64 // incremented on every release, for waiters
	closed  bool
	sorters map[*Sorter]struct{}
	// free holds unused slabs by size class (minSlab << class); freeBytes of them count in used.
	free      [slabClasses][][]byte
	freeBytes int64
	idxMaps   indexMaps // the sorters' index mappings (index_map.go)
	// noIndexMap (tests) keeps every index in Go's heap, growing by copying.
	noIndexMap bool

	fileSeq  atomic.Uint64
	nSorters atomic.Int64
	spills   atomic.Int64
	passes   atomic.Int64
	runBytes atomic.Int64
}

// slot holds the buffers of one concurrent spill or merge pass; its memory is part of the fixed reserve.
type slot struct {
	raw     []byte
	enc     []byte
	scratch [2][]byte
}

// NewPool creates a pool and its private spill directory under opts.TempDir.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.Memory < 0 || opts.Parallelism < 0 {
		return nil, fmt.Errorf("sorter: negative pool option (memory %d, parallelism %d)", opts.Memory, opts.Parallelism)
	}
	if opts.Memory == 0 {
		opts.Memory = DefaultMemory
	}
	if opts.Memory < MinMemory {
		return nil, fmt.Errorf("sorter: memory budget %d bytes is below the minimum %d", opts.Memory, MinMemory)
	}
	if opts.Parallelism == 0 {
		opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	p := &Pool{budget: opts.Memory, par: opts.Parallelism, dict: opts.Dict, compress: opts.CompressRuns,
		willFit: opts.WillFit, scale: opts.InputScale, sorters: map[*Sorter]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	// Small enough that one merge of ~100 runs (each holding a raw and a compressed chunk buffer) fits a
	// merge share without intermediate passes.
	cs := opts.Memory / int64(256*p.par)
	cs = max(min(cs, maxChunk), minChunk)
	p.chunkSize = int(cs)
	p.slabMax = floorPow2(int(max(min(opts.Memory/16, maxSlab), minSlab)))
	rawBuf, encBuf := p.slotBuffers()
	slotBytes := int64(rawBuf + encBuf + 2*p.scratchSize())
	p.reserveIO = slotBytes * int64(p.par)
	if p.reserveIO > opts.Memory/2 {
		return nil, fmt.Errorf("sorter: memory budget %d bytes too small for parallelism %d (I/O reserve %d bytes)",
			opts.Memory, p.par, p.reserveIO)
	}
	p.share = (opts.Memory - p.reserveIO) / int64(2*p.par)
	p.spillAt = opts.Memory - p.reserveIO
	if p.par > 1 {
		// Half the arena memory: one half is sorted and written while the other fills.
		p.spillAt /= 2
	}
	p.used = p.reserveIO
	p.peak = p.used
	dir, err := os.MkdirTemp(opts.TempDir, "hfload-sort-")
	if err != nil {
		return nil, fmt.Errorf("sorter: creating spill directory: %w", err)
	}
	p.dir = dir
	p.slots = make(chan *slot, p.par)
	for i := 0; i < p.par; i++ {
		p.slots <- &slot{}
	}
	return p, nil
}

// spillEarly reports whether a sorter that holds its spill size should spill now: unless WillFit says
// the whole input fits in memory.
func (p *Pool) spillEarly() bool {
	if p.willFit == nil {
		return true
	}
	p.mu.Lock()
	arena := p.used - p.freeBytes - p.reserveIO
	p.mu.Unlock()
	return !p.willFit(arena)
}

// fitIndex is the index capacity for n records of a sorter when the whole input is projected to fit in
// memory (InputScale and WillFit): n scaled to the whole input, plus an eighth; 0 otherwise.
func (p *Pool) fitIndex(n int64) int64 {
	if p.scale == nil || p.willFit == nil {
		return 0
	}
	sc := p.scale()
	if sc < 1 || p.spillEarly() {
		return 0
	}
	return int64(float64(n) * sc * 1.125)
}

// slabLimit caps slab growth at Memory/16 (at most 4 MiB) and at a fair share of the arena memory among
// the live sorters, so that hundreds of sorters do not each hold a large, mostly empty slab.
func (p *Pool) slabLimit() int {
	fair := (p.budget - p.reserveIO) / (4 * max(1, p.nSorters.Load()))
	return floorPow2(int(max(min(int64(p.slabMax), fair), minSlab)))
}

func floorPow2(n int) int { return 1 << (bits.Len(uint(n)) - 1) }

// slabClass returns the free-list class of a slab size, or -1 for sizes that are not pooled.
func slabClass(size int) int {
	if size < minSlab || size > maxSlab || size&(size-1) != 0 {
		return -1
	}
	return bits.Len(uint(size/minSlab)) - 1
}

// takeFree returns a pooled slab of exactly size bytes, or nil. Its bytes stay accounted and pass to
// the caller.
func (p *Pool) takeFree(size int) []byte {
	c := slabClass(size)
	if c < 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.free[c]
	if len(l) == 0 {
		return nil
	}
	b := l[len(l)-1]
	l[len(l)-1] = nil
	p.free[c] = l[:len(l)-1]
	p.freeBytes -= int64(size)
	return b
}

// putFree keeps a slab no longer used for reuse; it stays accounted until reserve needs the room.
// Reusing slabs keeps the Go heap close to the accounted figure instead of churning garbage.
func (p *Pool) putFree(b []byte) {
	c := slabClass(len(b))
	if c < 0 {
		p.release(int64(len(b)))
		return
	}
	p.mu.Lock()
	if p.closed {
		p.used -= int64(len(b))
	} else {
		p.free[c] = append(p.free[c], b)
		p.freeBytes += int64(len(b))
	}
	p.gen++
	p.cond.Broadcast()
	p.mu.Unlock()
}

// dropFreeLocked releases pooled slabs, largest first, until n more bytes fit (p.mu held).
func (p *Pool) dropFreeLocked(n int64) {
	for c := len(p.free) - 1; c >= 0 && p.used+n > p.budget; c-- {
		for len(p.free[c]) > 0 && p.used+n > p.budget {
			l := p.free[c]
			size := int64(len(l[len(l)-1]))
			l[len(l)-1] = nil
			p.free[c] = l[:len(l)-1]
			p.freeBytes -= size
			p.used -= size
		}
	}
}

// MaxRecord is the largest record Add accepts: an eighth of the budget left after the I/O
// reserve, so that a merge of runs holding such records still fits.
func (p *Pool) MaxRecord() int64 { return (p.budget - p.reserveIO) / 8 }

func (p *Pool) scratchSize() int { return p.chunkSize / 4 }

// Close removes the pool's spill directory with every run file left in it. Sorters and Iterators of
// the pool must not be used afterwards.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.dropFreeLocked(p.budget + 1)
	p.free = [slabClasses][][]byte{}
	p.cond.Broadcast()
	p.mu.Unlock()
	if err := os.RemoveAll(p.dir); err != nil {
		return fmt.Errorf("sorter: removing spill directory: %w", err)
	}
	return nil
}

// Dict returns the qualifier dictionary of the pool's records.
func (p *Pool) Dict() *cellrec.Dict { return p.dict }

// Dir returns the pool's private spill directory.
func (p *Pool) Dir() string { return p.dir }

// Budget returns the pool's memory budget in bytes.
func (p *Pool) Budget() int64 { return p.budget }

// Reservable is the largest request Reserve accepts: the budget less the fixed I/O reserve.
func (p *Pool) Reservable() int64 { return p.budget - p.reserveIO }

// ChunkSize returns the target raw size of a run chunk.
func (p *Pool) ChunkSize() int { return p.chunkSize }

// UsedBytes returns the bytes accounted right now (including the fixed I/O reserve).
func (p *Pool) UsedBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}

// PooledBytes returns the bytes of unused slabs kept for reuse (part of UsedBytes; given back whenever
// a reservation needs the room).
func (p *Pool) PooledBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.freeBytes
}

// PeakBytes returns the highest accounted total so far (including the fixed I/O reserve).
func (p *Pool) PeakBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// Spills returns how many runs have been spilled from memory; MergePasses how many intermediate merge
// passes ran; RunBytes how many bytes were written to run files (spills and merge passes: with no merge
// pass, the temporary disk space the runs need at once). All are for tests and progress reporting.
func (p *Pool) Spills() int64      { return p.spills.Load() }
func (p *Pool) MergePasses() int64 { return p.passes.Load() }
func (p *Pool) RunBytes() int64    { return p.runBytes.Load() }

var errPoolClosed = errors.New("sorter: pool closed")

// errNoMemory is returned by reserve when wait is false and the memory is not available.
var errNoMemory = errors.New("sorter: memory budget exhausted")

// errSpillSelf is returned by reserve when self is the sorter to spill: the caller detaches self's
// records, lets go of its lock, spills them and tries again.
var errSpillSelf = errors.New("sorter: spill self")

// errRetry is returned by reserve when self gave its empty memory back while waiting: the caller starts
// placing its record again from self's new state.
var errRetry = errors.New("sorter: retry")

// reserve accounts n bytes, spilling sorters (largest in-memory first) to make room. self is the sorter
// whose lock the caller holds, or nil; it may be spilled directly. With wait false it returns errNoMemory
// instead of waiting for memory that no spill can free. ctx may be nil (Add has no context).
func (p *Pool) reserve(ctx context.Context, n int64, self *Sorter, wait bool) error {
	if n <= 0 {
		return nil
	}
	if n > p.budget-p.reserveIO {
		return fmt.Errorf("sorter: request of %d bytes exceeds the memory budget (%d bytes, %d reserved for I/O)",
			n, p.budget, p.reserveIO)
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return errPoolClosed
		}
		if p.used+n > p.budget && p.freeBytes > 0 {
			p.dropFreeLocked(n)
		}
		if p.used+n <= p.budget {
			p.used += n
			if p.used > p.peak {
				p.peak = p.used
			}
			p.mu.Unlock()
			return nil
		}
		gen := p.gen
		cands := p.victimsLocked(self)
		p.mu.Unlock()

		spilled, err := p.spillOne(cands, self)
		if err != nil {
			return err
		}
		if spilled != nil {
			continue
		}
		if !wait {
			return errNoMemory
		}
		if ctx != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		selfReleased := false
		if self != nil && self.empty.Load() && self.held > 0 {
			// A waiter holds nothing: give back self's empty index and slabs, so that sorters waiting
			// for each other's idle memory cannot block one another; start again after the wait.
			self.releaseArena()
			selfReleased = true
		}
		// The first busy candidate (its lock was taken) is asked to give its memory back at its next Add;
		// the wait also ends after a short poll interval, to look for sorters that went idle.
		for _, v := range cands {
			if v != self {
				v.pleaseSpill.Store(true)
				break
			}
		}
		p.mu.Lock()
		if selfReleased {
			gen = p.gen
		}
		woken := false
		wake := func() {
			p.mu.Lock()
			woken = true
			p.cond.Broadcast()
			p.mu.Unlock()
		}
		timer := time.AfterFunc(waitPoll, wake)
		var stop func() bool
		if ctx != nil {
			stop = context.AfterFunc(ctx, wake)
		}
		for p.gen == gen && !p.closed && !woken && p.used-p.freeBytes+n > p.budget {
			p.cond.Wait()
		}
		p.mu.Unlock()
		timer.Stop()
		if stop != nil {
			stop()
		}
		if selfReleased {
			return errRetry
		}
		if ctx != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// victimsLocked lists sorters holding spillable memory: those without records first, then the largest
// first (p.mu held).
func (p *Pool) victimsLocked(self *Sorter) []*Sorter {
	type cand struct {
		s     *Sorter
		n     int64
		empty bool
	}
	var cs []cand
	for s := range p.sorters {
		if s == self && s.empty.Load() {
			// Freeing self's empty index or slabs only to allocate them again makes no progress
			// (and would livelock); self with records spills in place and reuses its memory.
			continue
		}
		if n := s.spillable.Load(); n > 0 {
			cs = append(cs, cand{s, n, s.empty.Load()})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].empty != cs[j].empty { // memory without records is freed without I/O: take it first
			return cs[i].empty
		}
		if cs[i].n != cs[j].n {
			return cs[i].n > cs[j].n
		}
		return cs[i].s.id < cs[j].s.id
	})
	out := make([]*Sorter, len(cs))
	for i, c := range cs {
		out[i] = c.s
	}
	return out
}

// spillOne spills the first candidate that can be spilled without waiting for its lock and returns it.
// When that is self (whose lock the caller holds) it returns errSpillSelf for the caller to spill.
func (p *Pool) spillOne(cands []*Sorter, self *Sorter) (*Sorter, error) {
	for _, v := range cands {
		if v == self {
			if v.spillable.Load() == 0 {
				continue
			}
			return nil, errSpillSelf
		}
		if !v.mu.TryLock() {
			continue
		}
		if v.spillable.Load() == 0 {
			v.mu.Unlock()
			continue
		}
		job := v.detachLocked(false)
		v.mu.Unlock()
		if job != nil {
			if err := v.runSpill(job); err != nil {
				return nil, fmt.Errorf("spilling sorter %q to make room: %w", v.name, err)
			}
		}
		return v, nil
	}
	return nil, nil
}

// Reserve accounts n bytes of the caller's own memory (output buffers, say) against the pool's
// budget, so that it shares the budget with the sorters: it spills sorters or waits for memory as an
// Add does. Release gives the bytes back. A request larger than the budget less the I/O reserve is an
// error.
func (p *Pool) Reserve(ctx context.Context, n int64) error {
	if err := p.reserve(ctx, n, nil, true); err != nil {
		return fmt.Errorf("sorter: reserving %d bytes: %w", n, err)
	}
	return nil
}

// Release gives back n bytes taken with Reserve.
func (p *Pool) Release(n int64) { p.release(n) }

// charge accounts n bytes without waiting (may exceed the budget; shows in PeakBytes).
func (p *Pool) charge(n int64) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.used += n
	if p.used > p.peak {
		p.peak = p.used
	}
	p.mu.Unlock()
}

// release returns n accounted bytes and wakes waiters.
func (p *Pool) release(n int64) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.used -= n
	p.gen++
	p.cond.Broadcast()
	p.mu.Unlock()
}

// acquireSlot takes a spill/merge slot (bounded by Parallelism).
func (p *Pool) acquireSlot(ctx context.Context) (*slot, error) {
	if ctx == nil {
		return <-p.slots, nil
	}
	select {
	case s := <-p.slots:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Pool) releaseSlot(s *slot) { p.slots <- s }

func (p *Pool) register(s *Sorter) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errPoolClosed
	}
	p.sorters[s] = struct{}{}
	p.nSorters.Store(int64(len(p.sorters)))
	return nil
}

func (p *Pool) unregister(s *Sorter) {
	p.mu.Lock()
	delete(p.sorters, s)
	p.nSorters.Store(int64(len(p.sorters)))
	p.mu.Unlock()
}
