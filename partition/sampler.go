package partition

import (
	"bytes"
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/internal/hugepage"
)

// Sampler keeps a bounded, deterministic sample of the row keys of a data set with the bytes each key
// carries, and derives split points of roughly equal bytes from it.
//
// It is a bottom-k sample over distinct row keys: every key gets a pseudo-random priority from a seeded
// 64-bit hash, and the sampler keeps the capacity keys of lowest (priority, row). A key that is in the
// final sample has been in it since its first Add, so its byte total is exact; the sample is a uniform
// sample of the distinct keys, and it is the same whatever order the Adds come in (so concurrent
// producers still give deterministic split points). With fewer distinct keys than capacity the sample
// is the whole key set.
//
// Offers are collected as candidates, and whenever there are twice capacity of them they are sorted,
// the offers of one key are merged (equal rows have equal priorities, so they sort next to each other)
// and the best capacity keys kept; the priority of the worst kept key then bounds what is accepted. An
// accepted offer costs one append and its share of a sort: no map lookup, insert or delete per offer.
//
// Memory is bounded by 2·capacity keys: their bytes (the candidates' row buffer), plus about 56 bytes
// of bookkeeping each (a candidate, its place in sortEntries' second buffer and two indexes), and the
// bytes of capacity keys (the buffer a selection compacts the kept rows into). Candidates hold no
// pointers: their rows are offsets into the row buffer, so an accepted offer allocates nothing once the
// buffers have grown. The pending batches of offers hold a sixteenth of capacity each (usually two of
// them: one filling, one merging). Rows are at most 16 MiB (maxSampledRow). A Sampler is safe for
// concurrent use.
type Sampler struct {
	capacity int
	batch    int // offers a pending batch takes: capacity/16 (at least 1)
	seed     uint64

	// threshold is the priority of the worst kept key after the last selection (MaxUint64 before the
	// first), read without the lock to reject most keys cheaply.
	threshold atomic.Uint64

	adds  atomic.Int64 // Add calls
	bytes atomic.Int64 // bytes over all Add calls

	// Offers go into a pending batch under mu. The offer that fills it (batch offers) takes it and
	// merges it into the selection under sel after releasing mu, so that the other goroutines keep
	// offering (into a fresh batch) while a selection runs: with the selection under the offers' lock,
	// every concurrent offer that passed the threshold waited for it.
	mu      sync.Mutex
	pending *sampleBatch   // offers since the last batch was taken (nil: none)
	free    []*sampleBatch // merged batches, for reuse

	sel     sync.Mutex    // the selection state below
	entries []sampleEntry // the candidates: at most 2·capacity offers
	rows    []byte        // the candidates' rows (sampleEntry.off, n)
	spare   []byte        // selectLocked's second row buffer, for the kept rows (empty between selections)
	scratch []sampleEntry // sortEntries' second buffer of candidates
	order   []uint32      // sortEntries' radix sort buffers (candidate indexes)
	sorted  int           // entries[:sorted] are in (priority, row) order (the last selection's keys)
	evicted bool          // some key left the sample
}

// radixBits is the digit of sortEntries' radix sort (two passes, counts of 8 KiB each).
const (
	radixBits = 11
	radixMask = 1<<radixBits - 1
)

// sampleBatch is a batch of accepted offers with their rows (sampleEntry.off into rows).
type sampleBatch struct {
	entries []sampleEntry
	rows    []byte
}

// sampleEntry is one candidate: an accepted offer of the row rows[off:off+n], off and n packed in pos
// (24 bytes an entry, not 32: the candidates, the sort's second buffer and the batches are a quarter
// smaller, fresh memory with GOGC off, and the sort moves a quarter fewer bytes).
type sampleEntry struct {
	prio  uint64
	bytes int64
	pos   uint64 // off<<rowLenBits | n
}

// A sampled row is at most maxSampledRow bytes (16 MiB; HBase's limit is 32,767), and a row buffer at
// most maxRowBuffer bytes (offsets of 40 bits: 1 TiB); the sampler panics beyond.
const (
	rowLenBits    = 24
	maxSampledRow = 1<<rowLenBits - 1
	maxRowBuffer  = 1 << (64 - rowLenBits)
)

// entryPos packs a row's offset and length into sampleEntry.pos.
func entryPos(off, n int) uint64 {
	if uint(n) > maxSampledRow || uint(off) >= maxRowBuffer {
		entryPosPanic(off, n)
	}
	return uint64(off)<<rowLenBits | uint64(n)
}

// entryPosPanic is entryPos' panic, out of line so that entryPos inlines.
//
//go:noinline
func entryPosPanic(off, n int) {
	panic(fmt.Sprintf("partition: sampled row of %d bytes at offset %d (at most %d bytes, offsets below %d)", n, off, maxSampledRow, uint64(maxRowBuffer)))
}

// off is the offset of e's row in its row buffer.
func (e *sampleEntry) off() int { return int(e.pos >> rowLenBits) }

// n is the length of e's row.
func (e *sampleEntry) n() int { return int(e.pos & maxSampledRow) }

// row returns e's row bytes (sm.sel held; valid until the next selection).
func (sm *Sampler) row(e *sampleEntry) []byte {
	off, end := e.off(), e.off()+e.n()
	return sm.rows[off:end:end]
}

// NewSampler returns a sampler keeping at most capacity distinct row keys (at least 1), with
// priorities derived from seed.
func NewSampler(capacity int, seed int64) *Sampler {
	if capacity < 1 {
		capacity = 1
	}
	// Batches of a sixteenth of capacity: the candidates still reach 2·capacity between selections, and
	// the two batches alive are 0.4 MB at 65,536 keys, where two of capacity were ~6.6 MB of fresh memory
	// and two of a quarter 1.4 MB (each page a fault with the collector off). Merging a batch is a copy
	// under the selection's lock: smaller ones cost as many instructions an offer.
	sm := &Sampler{capacity: capacity, batch: max(1, capacity/16), seed: uint64(seed)}
	sm.threshold.Store(^uint64(0))
	return sm
}

// Add records that row carries bytes more bytes (e.g. the serialized size of its cells). Call it once
// per cell or, cheaper, once per run of cells of one row. It copies row when it keeps it.
func (sm *Sampler) Add(row []byte, bytes int64) {
	sm.Count(1, bytes)
	sm.Offer(row, bytes)
}

// Count adds to the totals SampleStats reports (Add calls and their bytes) without offering rows:
// callers with batches count once per batch and Offer each row, keeping shared counters off the
// per-row path.
func (sm *Sampler) Count(adds, bytes int64) {
	sm.adds.Add(adds)
	sm.bytes.Add(bytes)
}

// Offer is Add without counting (see Count).
func (sm *Sampler) Offer(row []byte, bytes int64) {
	p := sm.priority(row)
	if p > sm.threshold.Load() {
		return
	}
	sm.mu.Lock()
	// Every offer of a key that ends in the sample passes the threshold (it only falls, and never below
	// a kept key's priority), so merging the accepted offers of a key gives its exact bytes.
	b := sm.pending
	if b == nil {
		b = sm.newBatchLocked()
		sm.pending = b
	}
	b.entries = append(b.entries, sampleEntry{prio: p, bytes: bytes, pos: entryPos(len(b.rows), len(row))})
	if len(b.rows)+len(row) > cap(b.rows) {
		b.rows = grownRows(b.rows, len(row), len(b.entries), sm.batch)
	}
	b.rows = append(b.rows, row...)
	if len(b.entries) < sm.batch {
		sm.mu.Unlock()
		return
	}
	sm.pending = nil
	sm.mu.Unlock()
	sm.mergeFull(b)
}

// newBatchLocked returns an empty batch for the pending offers, a merged one if there is one (sm.mu
// held).
func (sm *Sampler) newBatchLocked() *sampleBatch {
	if n := len(sm.free); n > 0 {
		b := sm.free[n-1]
		sm.free = sm.free[:n-1]
		return b
	}
	return &sampleBatch{entries: fresh[sampleEntry](0, sm.batch)}
}

// mergeFull merges a full batch taken from pending into the selection, selects when another batch would
// take the candidates past 2·capacity, and keeps the batch for reuse (neither lock held).
func (sm *Sampler) mergeFull(b *sampleBatch) {
	sm.sel.Lock()
	sm.mergeLocked(b)
	if len(sm.entries)+sm.batch > 2*sm.capacity {
		sm.selectLocked()
	}
	sm.sel.Unlock()
	sm.mu.Lock()
	sm.free = append(sm.free, b)
	sm.mu.Unlock()
}

// mergeLocked appends the offers of batch b to the candidates and empties b (sm.sel held).
func (sm *Sampler) mergeLocked(b *sampleBatch) {
	base := len(sm.rows)
	n := len(sm.entries)
	if len(sm.rows)+len(b.rows) > cap(sm.rows) {
		sm.rows = grownRows(sm.rows, len(b.rows), n+len(b.entries), 2*sm.capacity)
	}
	sm.rows = append(sm.rows, b.rows...)
	if n+len(b.entries) > cap(sm.entries) {
		// At most 2·capacity candidates (a selection runs at that many): grown there at the first full
		// batch, to what it needs for a smaller one (the last, or the only one).
		size := n + len(b.entries)
		if len(b.entries) >= sm.batch {
			size = max(size, 2*sm.capacity)
		}
		sm.entries = grown(sm.entries, size)
	}
	sm.entries = append(sm.entries, b.entries...)
	for es, d := sm.entries[n:], uint64(base)<<rowLenBits; len(es) > 0; es = es[1:] {
		es[0].pos += d
	}
	b.entries, b.rows = b.entries[:0], b.rows[:0]
}

// grownRows returns rows with room for add more bytes, the rows of the have-th row on (have counts the
// row being added). It grows to the bytes want rows would take at the average length so far, and an
// eighth more, at least doubling: with GOGC off (cmd/hfload) every byte a buffer grows through is fresh
// memory, faulted in page by page, and append's growth by a quarter at these sizes allocated five times
// the final buffer on the way (44.6 MB over 1M offers of the customer-order keys, for ~10 MB kept).
func grownRows(rows []byte, add, have, want int) []byte {
	need := len(rows) + add
	size := max(need, 2*cap(rows))
	if have >= 64 && want > have {
		size = max(size, need/have*want+need/have*want/8)
	}
	return grown(rows, size)
}

// grown returns s with capacity size (at least len(s)), its elements copied into new memory that is not
// cleared beyond them. slices.Grow (append's growslice) clears the whole new capacity: with GOGC off
// (cmd/hfload) that is fresh memory, so it faulted in every page of a buffer (and wrote it) before any
// was used, the sampler's projected slack included; a large make takes pages the heap got zeroed from
// the system, touched only as they are written.
func grown[T any](s []T, size int) []T {
	g := fresh[T](len(s), max(size, len(s)))
	copy(g, s)
	return g
}

// fresh is make([]T, n, c) in huge pages where the system gives them (hugeRanges): the sampler's buffers
// are made about once each and written from the start, each 4 KiB page's first write a fault (and a
// trap to the hypervisor on this project's VM) with GOGC off, as cmd/hfload runs. A huge page is
// backed whole: slack a buffer never writes (grownRows' eighth, the second buffer's unsorted half) is
// then resident too (~3.4 MB at 65,536 keys, for ~1,700 faults fewer).
func fresh[T any](n, c int) []T {
	s := make([]T, n, c)
	hugepage.AdviseCap(&hugeRanges, s)
	return s
}

// settleLocked merges the pending batch and selects (sm.sel held): the sample of every offer that has
// returned.
func (sm *Sampler) settleLocked() {
	sm.mu.Lock()
	b := sm.pending
	sm.pending = nil
	sm.mu.Unlock()
	if b != nil {
		sm.mergeLocked(b)
		sm.mu.Lock()
		sm.free = append(sm.free, b)
		sm.mu.Unlock()
	}
	sm.selectLocked()
}

// selectLocked merges the candidates of one key, keeps the capacity best keys by (priority, row), drops
// the others, moves the kept rows into a compact row buffer and lowers the threshold to the worst kept
// priority (sm.sel held).
//
// The new candidates above a cutoff that leaves a little more than capacity of them and the kept keys
// (cutoff) are set aside before the sort: a key's offers all have its priority, so when the capacity
// best keys after the sort are all at or below the cutoff, the ones set aside are all worse than them
// and are dropped unsorted (half of the first selection's candidates). Otherwise (keys offered many
// times, or kept keys above the cutoff whose new offers were set aside) they are sorted and merged in
// after all.
func (sm *Sampler) selectLocked() {
	if len(sm.entries) <= 1 {
		sm.sorted = len(sm.entries)
		return
	}
	if sm.sorted == len(sm.entries) {
		return // nothing offered since the last selection
	}
	var aside []sampleEntry
	cut, ok := sm.cutoff()
	if ok {
		es := sm.entries
		j := len(es)
		for i := sm.sorted; i < j; {
			if es[i].prio > cut {
				j--
				es[i], es[j] = es[j], es[i]
			} else {
				i++
			}
		}
		aside, sm.entries = es[j:], es[:j]
	}
	sm.sortEntries()
	n := sm.mergeKeys()
	if len(aside) > 0 && (n < sm.capacity || sm.entries[sm.capacity-1].prio > cut) {
		// The ones set aside are needed. They are still where the partition left them (sortEntries and
		// mergeKeys write below them, or into the other buffer), and copy overlapping ones down.
		sm.entries = append(sm.entries[:n], aside...)
		sm.sorted, aside = n, nil
		sm.sortEntries()
		n = sm.mergeKeys()
	}
	es := sm.entries
	if n > sm.capacity || len(aside) > 0 {
		n = min(n, sm.capacity)
		sm.evicted = true
		sm.threshold.Store(es[n-1].prio)
	}
	es = es[:n]
	size := 0
	for i := range es {
		size += es[i].n()
	}
	// The kept rows go to the second buffer in their new order, then back to the front of the first,
	// which takes the next merges' rows: the second buffer holds capacity rows, not the 2·capacity of
	// one the merges fill (swapping the two buffers wrote ~1.1 MB more of fresh memory at 65,536 keys;
	// the copy back is a memmove of the kept rows a selection).
	rows := sm.spare[:0]
	if size > cap(rows) {
		rows = grown(rows, size+size/8) // an eighth for later selections' longer rows: untouched until used
	}
	for i := range es {
		e := &es[i]
		off := len(rows)
		rows = append(rows, sm.row(e)...)
		e.pos = uint64(off)<<rowLenBits | e.pos&maxSampledRow // the length entryPos checked, a smaller offset
	}
	sm.entries, sm.sorted = es, n
	sm.rows, sm.spare = append(sm.rows[:0], rows...), rows[:0]
}

// cutoff returns the end of the first of 2,048 ranges of priorities (the top 11 bits below the
// threshold, which every candidate passed) at which the kept keys and the new candidates at or below it
// number capacity and a margin for keys offered more than once, and false when only the last range
// would do (sm.sel held; entries[:sorted] are sorted).
func (sm *Sampler) cutoff() (uint64, bool) {
	es, k := sm.entries, sm.sorted
	want := sm.capacity + sm.capacity>>6 + 8
	if len(es) <= want {
		return 0, false
	}
	shift := uint(max(0, bits.Len64(sm.threshold.Load())-radixBits)) & 63
	var counts [1 << radixBits]uint32
	for _, e := range es[k:] {
		counts[e.prio>>shift&radixMask]++
	}
	kept, seen := 0, 0
	for b := 0; b < len(counts)-1; b++ {
		end := uint64(b+1)<<shift - 1
		for kept < k && es[kept].prio <= end {
			kept++
		}
		seen += int(counts[b])
		if kept+seen >= want {
			return end, true
		}
	}
	return 0, false
}

// mergeKeys merges the offers of one key in the sorted candidates into one candidate with their bytes
// and returns the number of keys, now entries[:n] (sm.sel held).
func (sm *Sampler) mergeKeys() int {
	es := sm.entries
	// Up to the first pair of one key's offers, every candidate stays where it is; from there on they
	// move down over the merged ones.
	// Priorities are compared here first: they differ for all but a few neighbours, and sameKey is a
	// call (its bytes.Equal keeps it from inlining).
	n := 1
	for n < len(es) && (es[n].prio != es[n-1].prio || !sm.sameKey(&es[n], &es[n-1])) {
		n++
	}
	for i := n; i < len(es); i++ {
		e, last := &es[i], &es[n-1]
		if e.prio == last.prio && sm.sameKey(e, last) {
			last.bytes += e.bytes
			continue
		}
		es[n] = *e
		n++
	}
	return n
}

// sameKey reports whether candidates a and b are offers of one row (sm.sel held).
func (sm *Sampler) sameKey(a, b *sampleEntry) bool {
	return a.prio == b.prio && a.pos&maxSampledRow == b.pos&maxSampledRow && bytes.Equal(sm.row(a), sm.row(b))
}

// sortEntries sorts the candidates by (priority, row), up to the order of equal (priority, row) pairs,
// which selectLocked merges. The candidates after entries[:sorted] (the keys the last selection kept,
// in order already) are sorted by a stable radix sort of their indexes on the 22 bits of the priority
// from the highest one any of them has (two passes), moved once each into the second buffer (in place
// when there are no kept keys), sorted by (priority, row) within runs of equal 22 bits (equal rows have
// equal priorities, so those runs are mostly one key's offers or two keys), and merged with the kept
// keys. A comparison sort of all
// 2·capacity candidates took ~17 comparisons each through a function value; a radix sort on all
// eight priority bytes, eight passes.
func (sm *Sampler) sortEntries() {
	es := sm.entries
	k := min(sm.sorted, len(es))
	add := es[k:]
	m := len(add)
	if m == 0 {
		return
	}
	if cap(sm.order) < 2*m {
		sm.order = fresh[uint32](2*max(m, cap(es)), 2*max(m, cap(es)))
	}
	src, dst := sm.order[:m], sm.order[m:2*m]
	// Priorities are uniform below the threshold the candidates passed: the 22 bits from the highest
	// set bit of any of them down order all but a few (~m²/2²³ pairs tie), in two passes of 11 bits.
	var or uint64
	for i := range add {
		or |= add[i].prio
	}
	shift := max(0, bits.Len64(or)-2*radixBits)
	var counts [2][1 << radixBits]uint32
	for i := range add {
		key := add[i].prio >> shift
		src[i] = uint32(i)
		counts[0][key&radixMask]++
		counts[1][key>>radixBits&radixMask]++
	}
	for d := range counts {
		c := &counts[d]
		ds := shift + d*radixBits
		if c[add[0].prio>>ds&radixMask] == uint32(m) {
			continue // every candidate has this digit
		}
		var pos uint32
		for b, n := range c {
			c[b] = pos
			pos += n
		}
		for _, i := range src {
			b := add[i].prio >> ds & radixMask
			dst[c[b]] = i
			c[b]++
		}
		src, dst = dst, src
	}
	var out []sampleEntry
	if k == 0 {
		// No kept keys to merge with (the first selection, whose candidates are the most): the candidates
		// are put in their order in place, so that the second buffer only ever holds the later
		// selections' new candidates, about half as many (fresh memory with GOGC off).
		permute(add, src)
		out = add
	} else {
		if cap(sm.scratch) < m {
			sm.scratch = fresh[sampleEntry](0, cap(es))
		}
		out = sm.scratch[:m]
		for i, j := range src {
			out[i] = add[j]
		}
	}
	// Runs of equal keys (equal priorities among them: mostly one key's offers) by (priority, row).
	for i := 0; i < m; {
		key := out[i].prio >> shift
		j := i + 1
		for j < m && out[j].prio>>shift == key {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(out[i:j], func(a, b sampleEntry) int {
				if a.prio != b.prio {
					return cmp.Compare(a.prio, b.prio)
				}
				return bytes.Compare(sm.row(&a), sm.row(&b))
			})
		}
		i = j
	}
	if k == 0 {
		return // sorted in place
	}
	// Merge from the back: es[k:] is free (its candidates are in out), and the next place written is
	// always after the next kept key read.
	// The comparison is by (priority, row), written out: rows only when priorities tie.
	i, j := k-1, m-1
	for w := k + m - 1; j >= 0; w-- {
		if i >= 0 {
			a, b := &out[j], &es[i]
			if a.prio < b.prio || a.prio == b.prio && bytes.Compare(sm.row(a), sm.row(b)) < 0 {
				es[w] = *b
				i--
				continue
			}
		}
		es[w] = out[j]
		j--
	}
}

// permute puts es in the order of the indexes order (es[i] becomes the old es[order[i]]) in place,
// following each cycle of the permutation once; order is left the identity.
func permute(es []sampleEntry, order []uint32) {
	for i := range order {
		if int(order[i]) == i {
			continue // in place, or its cycle is done
		}
		tmp, cur := es[i], i
		for {
			next := int(order[cur])
			order[cur] = uint32(cur)
			if next == i {
				es[cur] = tmp
				break
			}
			es[cur] = es[next]
			cur = next
		}
	}
}

// SampleStats summarizes a sampler.
type SampleStats struct {
	Adds        int64 // Add calls
	Bytes       int64 // bytes over all Add calls
	Kept        int   // distinct keys in the sample
	SampleBytes int64 // bytes carried by the kept keys
	Complete    bool  // the sample holds every distinct key seen (it never had to drop one)
}

// Stats returns the sampler's counters.
func (sm *Sampler) Stats() SampleStats {
	sm.sel.Lock()
	defer sm.sel.Unlock()
	sm.settleLocked()
	st := SampleStats{Adds: sm.adds.Load(), Bytes: sm.bytes.Load(), Kept: len(sm.entries), Complete: !sm.evicted}
	for _, e := range sm.entries {
		st.SampleBytes += e.bytes
	}
	return st
}

// SampleKey is one kept key with its bytes.
type SampleKey struct {
	Row   []byte
	Bytes int64
}

// priority is the seeded hash that orders the keys: FNV-1a 64 over the row (fnvFrom), then a splitmix64
// finalizer with the seed mixed in (finish).
func (sm *Sampler) priority(row []byte) uint64 {
	return sm.finish(fnvFrom(fnvOffset, row))
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvFrom continues FNV-1a 64 from h over row. Sixteen bytes a step, then 8, 4, 2, 1: the same hash,
// with a loop test per sixteen bytes instead of one per byte.
func fnvFrom(h uint64, row []byte) uint64 {
	const prime = fnvPrime
	for len(row) >= 16 {
		r := (*[16]byte)(row)
		h = (h ^ uint64(r[0])) * prime
		h = (h ^ uint64(r[1])) * prime
		h = (h ^ uint64(r[2])) * prime
		h = (h ^ uint64(r[3])) * prime
		h = (h ^ uint64(r[4])) * prime
		h = (h ^ uint64(r[5])) * prime
		h = (h ^ uint64(r[6])) * prime
		h = (h ^ uint64(r[7])) * prime
		h = (h ^ uint64(r[8])) * prime
		h = (h ^ uint64(r[9])) * prime
		h = (h ^ uint64(r[10])) * prime
		h = (h ^ uint64(r[11])) * prime
		h = (h ^ uint64(r[12])) * prime
		h = (h ^ uint64(r[13])) * prime
		h = (h ^ uint64(r[14])) * prime
		h = (h ^ uint64(r[15])) * prime
		row = row[16:]
	}
	if len(row) >= 8 {
		r := (*[8]byte)(row)
		h = (h ^ uint64(r[0])) * prime
		h = (h ^ uint64(r[1])) * prime
		h = (h ^ uint64(r[2])) * prime
		h = (h ^ uint64(r[3])) * prime
		h = (h ^ uint64(r[4])) * prime
		h = (h ^ uint64(r[5])) * prime
		h = (h ^ uint64(r[6])) * prime
		h = (h ^ uint64(r[7])) * prime
		row = row[8:]
	}
	if len(row) >= 4 {
		r := (*[4]byte)(row)
		h = (h ^ uint64(r[0])) * prime
		h = (h ^ uint64(r[1])) * prime
		h = (h ^ uint64(r[2])) * prime
		h = (h ^ uint64(r[3])) * prime
		row = row[4:]
	}
	switch len(row) {
	case 3:
		h = (h ^ uint64(row[0])) * prime
		h = (h ^ uint64(row[1])) * prime
		h = (h ^ uint64(row[2])) * prime
	case 2:
		h = (h ^ uint64(row[0])) * prime
		h = (h ^ uint64(row[1])) * prime
	case 1:
		h = (h ^ uint64(row[0])) * prime
	}
	return h
}

// finish is priority's finalizer of an FNV-1a hash h.
func (sm *Sampler) finish(h uint64) uint64 {
	h ^= sm.seed * 0x9E3779B97F4A7C15
	h ^= h >> 30
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 27
	h *= 0x94D049BB133111EB
	h ^= h >> 31
	return h
}
