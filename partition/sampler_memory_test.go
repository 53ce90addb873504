package partition

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// grownRows grows a row buffer to what want rows of the average length so far take and an eighth more
// (once 64 rows say what that length is), never less than twice its capacity, and always with room.
func TestGrownRows(t *testing.T) {
	for _, c := range []struct {
		len, cap, add, have, want int
		min, max                  int // bounds on the new capacity
	}{
		{0, 0, 5, 1, 1000, 5, 64},                         // too few rows to project: room, and doubling
		{100, 100, 10, 11, 1000, 200, 256},                // doubling
		{1800, 1800, 18, 101, 1000, 18000 * 9 / 8, 21000}, // 18 bytes a row, projected to 1,000 rows
		{1800, 4000, 4000, 101, 1000, 5800, 58000*9/8 + 1024},
		{1800, 1800, 18, 101, 50, 3600, 5120}, // want below have: doubling (in a size class)
	} {
		rows := make([]byte, c.len, c.cap)
		for i := range rows {
			rows[i] = byte(i)
		}
		got := grownRows(rows, c.add, c.have, c.want)
		kept := true
		for i := range got {
			kept = kept && got[i] == byte(i)
		}
		if len(got) != c.len || !kept || cap(got) < c.len+c.add || cap(got) < c.min || cap(got) > c.max {
			t.Errorf("grownRows(len %d cap %d, add %d, have %d, want %d): len %d cap %d, want len %d, cap in [%d, %d]",
				c.len, c.cap, c.add, c.have, c.want, len(got), cap(got), c.len, c.min, c.max)
		}
	}
}

// Offering keys allocates each buffer of the sampler about once, at the size it ends with, batches of a
// sixteenth of capacity and a second row buffer of capacity rows: with GOGC off every byte a buffer grew
// through was fresh memory, faulted in (append's growth by a quarter allocated five times the final row
// buffers).
func TestSamplerOfferAllocations(t *testing.T) {
	const capacity, keys, rowLen = 4096, 100000, 18
	sm := NewSampler(capacity, 1)
	rows := make([][]byte, keys)
	for i := range rows {
		rows[i] = []byte(fmt.Sprintf("C%06d-%010d", (i*7919)%50000, i))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, r := range rows {
		sm.Offer(r, 100)
	}
	runtime.ReadMemStats(&after)
	// What the buffers hold at most: a batch of capacity/16 (entries and rows), 2·capacity candidates and
	// their sort's second buffer and indexes, the candidates' row buffer of 2·capacity rows and the
	// second one of capacity. Batches of capacity allocated 1,157,024 bytes here (32-byte entries),
	// against 990,368; now 740,360.
	entry := int(unsafeSizeofEntry())
	least := capacity/16*(entry+rowLen) + 2*capacity*(2*entry+8) + 3*capacity*rowLen
	got := int(after.TotalAlloc - before.TotalAlloc)
	if got > least*9/8 {
		t.Fatalf("offers allocated %d bytes, want at most %d (9/8 of the buffers' %d)", got, least*9/8, least)
	}
	for _, b := range append(sm.free, sm.pending) {
		if b != nil && (cap(b.entries) > capacity/16 || cap(b.rows) > capacity/16*rowLen*2) {
			t.Fatalf("a batch holds %d offers and %d row bytes, want at most %d offers", cap(b.entries), cap(b.rows), capacity/16)
		}
	}
}

func unsafeSizeofEntry() uintptr { return unsafe.Sizeof(sampleEntry{}) }

// The candidates stay in their buffer through the selections (the first one, which has no kept keys to
// merge with, sorts them in place instead of through the second buffer and swapping buffers), and the
// sort's second buffer is written only up to the candidates a later selection sorts: swapped, the next
// merges went on into the second buffer's unwritten part, fresh memory with GOGC off. The rows stay in theirs too (the kept ones
// copied back to its front), the second row buffer sized for the kept rows only. Grown buffers keep
// their contents.
func TestSamplerSelectionKeepsBuffers(t *testing.T) {
	const capacity = 1024
	sm := NewSampler(capacity, 3)
	key := func(i int) []byte { return []byte(fmt.Sprintf("C%06d-%010d", (i*7919)%50000, i)) }
	i := 0
	for ; sm.entries == nil; i++ {
		sm.Offer(key(i), 10)
	}
	first, firstRows := unsafe.SliceData(sm.entries), unsafe.SliceData(sm.rows)
	selections := 0
	for ; selections < 3 && i < 1000000; i++ {
		th := sm.threshold.Load()
		sm.Offer(key(i), 10)
		if sm.threshold.Load() != th { // a selection evicted keys
			selections++
			if got := unsafe.SliceData(sm.entries); got != first {
				t.Fatalf("selection %d moved the candidates to another buffer", selections)
			}
			if unsafe.SliceData(sm.scratch) == first {
				t.Fatalf("selection %d: the second buffer is the candidates'", selections)
			}
			// The kept rows are back at the front of the candidates' row buffer; the second row buffer
			// holds about capacity rows (18 bytes each here), not 2·capacity.
			if unsafe.SliceData(sm.rows) != firstRows {
				t.Fatalf("selection %d moved the rows to another buffer", selections)
			}
			if max := capacity * 18 * 5 / 4; cap(sm.spare) > max {
				t.Fatalf("selection %d: second row buffer of %d bytes, want at most %d", selections, cap(sm.spare), max)
			}
			for k := range sm.entries {
				if e := &sm.entries[k]; sm.priority(sm.row(e)) != e.prio {
					t.Fatalf("selection %d: candidate %d's row %q does not have its priority", selections, k, sm.row(e))
				}
			}
		}
	}
	if selections < 3 {
		t.Fatalf("%d selections over %d offers, want 3", selections, i)
	}
	s := []int{1, 2, 3}
	g := grown(s, 10)
	if len(g) != 3 || cap(g) != 10 || g[0] != 1 || g[2] != 3 || unsafe.SliceData(g) == unsafe.SliceData(s) {
		t.Fatalf("grown(%v, 10) = %v (cap %d)", s, g, cap(g))
	}
}

// A candidate is 24 bytes, its row's offset and length packed into one word: offsets move by adding a
// (possibly negative) base to the word, lengths up to maxSampledRow, longer rows panic.
func TestEntryPos(t *testing.T) {
	if s := unsafe.Sizeof(sampleEntry{}); s != 24 {
		t.Fatalf("sampleEntry is %d bytes, want 24", s)
	}
	for _, c := range []struct{ off, n, base int }{{0, 0, 0}, {5, 18, 100}, {1 << 30, maxSampledRow, -(1 << 29)}, {maxRowBuffer - 1, 1, 0}, {700, 3, -700}} {
		e := sampleEntry{pos: entryPos(c.off, c.n)}
		if e.off() != c.off || e.n() != c.n {
			t.Fatalf("entryPos(%d, %d): off %d n %d", c.off, c.n, e.off(), e.n())
		}
		e.pos += uint64(c.base) << rowLenBits
		if e.off() != c.off+c.base || e.n() != c.n {
			t.Fatalf("entryPos(%d, %d) moved by %d: off %d n %d", c.off, c.n, c.base, e.off(), e.n())
		}
	}
	for _, c := range []struct{ off, n int }{{0, maxSampledRow + 1}, {maxRowBuffer, 1}, {0, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("entryPos(%d, %d) did not panic", c.off, c.n)
				}
			}()
			entryPos(c.off, c.n)
		}()
	}
}

// permute puts entries in the order a gather through the indexes gives, for every permutation shape
// (fixed points, one long cycle, many short ones), and leaves the indexes the identity.
func TestPermuteAsGather(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 200; round++ {
		n := rng.Intn(300)
		es := make([]sampleEntry, n)
		for i := range es {
			es[i] = sampleEntry{prio: rng.Uint64(), bytes: int64(i), pos: entryPos(i, i%7)}
		}
		order := make([]uint32, n)
		for i, p := range rng.Perm(n) {
			order[i] = uint32(p)
		}
		if round%3 == 0 { // mostly fixed points
			for i := range order {
				order[i] = uint32(i)
			}
			for s := 0; s < n/10; s++ {
				a, b := rng.Intn(n), rng.Intn(n)
				order[a], order[b] = order[b], order[a]
			}
		}
		want := make([]sampleEntry, n)
		for i, j := range order {
			want[i] = es[j]
		}
		permute(es, order)
		if !slices.Equal(es, want) {
			t.Fatalf("round %d (%d entries): permuted entries differ from the gather", round, n)
		}
		for i, j := range order {
			if int(j) != i {
				t.Fatalf("round %d: order[%d] = %d after permute, want the identity", round, i, j)
			}
		}
	}
}
