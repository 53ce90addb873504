//go:build linux

package sorter

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

// resident reports which pages of b are in memory (mincore).
func resident(t *testing.T, b []byte) []byte {
	t.Helper()
	vec := make([]byte, (len(b)+4095)/4096)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	return vec
}

// TestPopulate: populate maps fresh anonymous pages in (none resident before, all after) and changes no
// byte, also while another goroutine writes into the same memory, as newSlab's prefault does while the
// records are copied in.
func TestPopulate(t *testing.T) {
	const size = 4 << 20
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	for i, r := range resident(t, b) {
		if r&1 != 0 {
			t.Fatalf("page %d of a fresh mapping resident before populate", i)
		}
	}
	want := make([]byte, size)
	done := make(chan error)
	go func() { done <- populateErr(b) }()
	for i := 0; i < size; i += 61 { // writes racing the populate, front to back as records are copied
		b[i] = byte(i/61) | 1
		want[i] = b[i]
	}
	if err := <-done; err != nil {
		t.Fatalf("populate: %v (MADV_POPULATE_WRITE needs Linux 5.14)", err)
	}
	if !bytes.Equal(b, want) {
		t.Fatal("populate changed the bytes")
	}
	for i, r := range resident(t, b) {
		if r&1 == 0 {
			t.Fatalf("page %d not resident after populate", i)
		}
	}
}

// TestPrefaultIndex: prefaultIndex covers the unused capacity of an index, from its first page
// boundary on, also when that capacity does not start on one (madvise refuses an unaligned start), and
// leaves the entries as they were.
func TestPrefaultIndex(t *testing.T) {
	const size = 4 << 20
	esz := int(unsafe.Sizeof(entry{}))
	for _, used := range []int{0, 3, 1000, 4096 / esz, size/esz - 1, size / esz} {
		m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		idx := unsafe.Slice((*entry)(unsafe.Pointer(&m[0])), size/esz)[:used]
		for i := range idx {
			idx[i] = entry{prefix: uint64(i + 1), seq: uint64(10 * i)}
		}
		before := append([]entry(nil), idx...)
		free := indexFree(idx)
		if used*esz%4096 != 0 {
			// What prefaultIndex did before: the unused capacity from its own start.
			raw := m[used*esz:]
			if err := populateErr(raw); err == nil {
				t.Errorf("%d entries: madvise took an unaligned start", used)
			}
		}
		if err := populateErr(free); len(free) > 0 && err != nil {
			t.Fatalf("%d entries: populate of the aligned unused capacity: %v", used, err)
		}
		vec := resident(t, m) // the used entries' pages were written, the rest populated
		for i, r := range vec {
			if r&1 == 0 {
				t.Fatalf("%d entries: page %d of %d not resident after populating the unused capacity", used, i, len(vec))
			}
		}
		if want := size - (used*esz+4095)/4096*4096; len(free) != want {
			t.Errorf("%d entries: %d unused bytes from the first page boundary, want %d", used, len(free), want)
		}
		syscall.Munmap(m)
		// prefaultIndex itself, on an index in Go's heap (its goroutine may run after this returns):
		// the entries stay as they were.
		heap := append(make([]entry, 0, size/esz), before...)
		prefaultIndex(heap)
		for i := range heap {
			if heap[i] != before[i] {
				t.Fatalf("%d entries: entry %d changed: %+v, want %+v", used, i, heap[i], before[i])
			}
		}
	}
}

// TestPrefaultGrown: a freshly made index that growIndex copies a large old index into has the first
// half of its pages (which the copy writes first) resident before the copy starts, and every page once
// the goroutine that populates the rest is done; its bytes stay zero. A small old index gets
// prefaultIndex's treatment: its used part is left to the copy, the rest populated on a goroutine (the
// test once checked that rest right away and failed when that goroutine had already run).
func TestPrefaultGrown(t *testing.T) {
	const size = 8 << 20
	esz := int(unsafe.Sizeof(entry{}))
	for _, used := range []int{size / esz / 2, size/esz - 1, 3 * prefaultMin / esz, 100} {
		m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		idx := unsafe.Slice((*entry)(unsafe.Pointer(&m[0])), size/esz)[:used]
		prefaultGrown(idx)
		vec := resident(t, m)
		small := used*esz < 2*prefaultMin
		// A small index's used pages are left to the copy; its unused capacity is populated by
		// prefaultIndex's goroutine, which may run at any time, so only the used pages are checked
		// right away. A large index has its whole first half resident before prefaultGrown returns.
		usedPages := (used*esz + 4095) / 4096
		for i := 0; i < len(vec)/2; i++ {
			r := vec[i]&1 == 1
			if small && i < usedPages && r {
				t.Fatalf("%d entries: page %d of %d (used entries) resident right after prefaultGrown", used, i, len(vec))
			}
			if !small && !r {
				t.Fatalf("%d entries: page %d of %d not resident right after prefaultGrown", used, i, len(vec))
			}
		}
		from := 0
		if small {
			from = usedPages
		}
		deadline := time.Now().Add(10 * time.Second)
		for !allResident(resident(t, m)[from:]) {
			if time.Now().After(deadline) {
				t.Fatalf("%d entries: the pages from %d on not populated", used, from)
			}
			time.Sleep(time.Millisecond)
		}
		if small && resident(t, m)[0]&1 != 0 {
			t.Fatalf("%d entries: the used entries' page populated", used)
		}
		if !bytes.Equal(m, make([]byte, size)) {
			t.Fatalf("%d entries: prefaultGrown changed bytes", used)
		}
		syscall.Munmap(m)
	}
}

func allResident(vec []byte) bool {
	for _, r := range vec {
		if r&1 == 0 {
			return false
		}
	}
	return true
}

// TestSorterAdvisesHugePages: a sorter asks for huge pages (hugeRanges) for the fresh slabs and the grown
// indexes its records go into, and its records come out as they went in.
func TestSorterAdvisesHugePages(t *testing.T) {
	saved := hugeRanges.Count() // the package's other tests may have used up hugeRanges.Max
	hugeRanges.SetCount(0)
	defer hugeRanges.SetCount(saved)
	p := newTestPool(t, 64<<20, 2)
	s := p.NewSorter("one", SorterOptions{})
	defer s.Close()
	const records = 100_000
	for i := 0; i < records; i++ {
		row := fmt.Appendf(nil, "r%07d", (i*7919)%records)
		if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v"))), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := hugeRanges.Count(); n < 2 { // at least a slab and a grown index
		t.Fatalf("%d ranges advised for %d records, want at least 2", n, records)
	}
	if got := len(drain(t, s)); got != records {
		t.Fatalf("%d records out, want %d", got, records)
	}
}
