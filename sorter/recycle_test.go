package sorter

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

// TestTakeFreeTakesTheLargestThatFits: takeFree returns the largest pooled slab of at most the size asked
// for and at least the record's size, and nothing when every pooled slab is too small or too large.
func TestTakeFreeTakesTheLargestThatFits(t *testing.T) {
	p := newTestPool(t, 64<<20, 2)
	for _, size := range []int{4 << 10, 16 << 10, 1 << 20} {
		p.charge(int64(size))
		p.putFree(make([]byte, size))
	}
	if b := p.takeFree(512<<10, 100); len(b) != 16<<10 {
		t.Fatalf("took a slab of %d bytes for at most 512 KiB, want the 16 KiB one", len(b))
	}
	if b := p.takeFree(64<<10, 5000); b != nil {
		t.Fatalf("took a slab of %d bytes for a 5,000-byte record: only a 4 KiB one is pooled below 64 KiB", len(b))
	}
	if b := p.takeFree(1000, 100); b != nil {
		t.Fatalf("took a slab of %d bytes for at most 1,000 bytes", len(b))
	}
	if b := p.takeFree(8<<20, 100); len(b) != 1<<20 {
		t.Fatalf("took a slab of %d bytes for at most 8 MiB, want the 1 MiB one", len(b))
	}
	if got := p.PooledBytes(); got != 4<<10 {
		t.Fatalf("%d bytes pooled after taking two slabs, want 4 KiB", got)
	}
}

// TestRecycleIndexAccounting: a replaced index is pooled as slabs of slab sizes, largest first, that
// share its memory; what they do not cover (less than the smallest slab, and the accounting of an
// entry beyond its 32 bytes) is released.
func TestRecycleIndexAccounting(t *testing.T) {
	p := newTestPool(t, 64<<20, 2)
	const n = 1000 // 32,000 bytes: slabs of 16, 8 and 4 KiB, 3,328 bytes left over
	base := p.UsedBytes()
	p.charge(n * entrySize)
	idx := make([]entry, 10, n)
	p.recycleIndex(idx)
	if got, want := p.PooledBytes(), int64(28<<10); got != want {
		t.Fatalf("%d bytes pooled from an index of %d entries, want %d", got, n, want)
	}
	if got := p.UsedBytes(); got != base+28<<10 {
		t.Fatalf("%d bytes accounted after recycling, want %d (the pooled slabs)", got, base+28<<10)
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(idx)))
	off := map[int]uintptr{16 << 10: 0, 8 << 10: 16 << 10, 4 << 10: 24 << 10}
	for size, at := range off {
		b := p.takeFree(size, 1)
		if len(b) != size || cap(b) != size {
			t.Fatalf("took a slab of %d bytes (capacity %d), want %d", len(b), cap(b), size)
		}
		if got := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - start; got != at {
			t.Fatalf("the %d-byte slab lies %d bytes into the index, want %d", size, got, at)
		}
	}
}

// TestReplacedIndexBecomesASlab: when a sorter's index grows, the index it leaves (its entries were
// written, its pages are resident) is pooled as a slab and taken by the next slab the sorters need,
// instead of fresh memory; the records placed there come out intact, and the accounting adds up.
func TestReplacedIndexBecomesASlab(t *testing.T) {
	p := newTestPool(t, 64<<20, 2)
	s := p.NewSorter("one", SorterOptions{})
	defer s.Close()
	value := bytes.Repeat([]byte("v"), 100)
	var want []rec
	add := func(i int) {
		kvb := kv.AppendKeyValue(nil, fmt.Appendf(nil, "row-%07d", (i*7919)%5000), []byte("f"), []byte("q"), 1, kv.TypePut, value)
		if err := s.Add(rc(kvb), uint64(i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, rec{kv: kvb, seq: uint64(i)})
	}
	i := 0
	for ; i < 128; i++ {
		add(i)
	}
	s.mu.Lock()
	if cap(s.a.idx) != 128 {
		t.Fatalf("index capacity %d after 128 records, want 128", cap(s.a.idx))
	}
	first := unsafe.SliceData(s.a.idx)
	s.mu.Unlock()
	for ; i < 5000; i++ {
		add(i)
	}
	s.mu.Lock()
	taken := false
	for _, b := range s.a.slabs {
		taken = taken || unsafe.Pointer(unsafe.SliceData(b)) == unsafe.Pointer(first)
	}
	held := s.held
	s.mu.Unlock()
	if !taken {
		t.Fatal("the first index (128 entries, a 4 KiB slab's size) is not among the sorter's slabs")
	}
	if got, want := p.UsedBytes(), p.reserveIO+held+p.PooledBytes(); got != want {
		t.Fatalf("%d bytes accounted, want %d: the I/O reserve, the sorter's %d and %d pooled", got, want, held, p.PooledBytes())
	}
	sameRecords(t, drain(t, s), reference(want))
}
