//go:build linux

package sorter

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
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

// anonHuge sums the AnonHugePages of the mappings of /proc/self/smaps that overlap [lo, hi), in KiB.
func anonHuge(t *testing.T, lo, hi uintptr) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("smaps: %v", err)
	}
	in, sum := false, 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if a, b, ok := strings.Cut(f[0], "-"); ok && len(f) >= 5 {
			start, err1 := strconv.ParseUint(a, 16, 64)
			end, err2 := strconv.ParseUint(b, 16, 64)
			if err1 == nil && err2 == nil {
				in = uintptr(start) < hi && uintptr(end) > lo
				continue
			}
		}
		if in && f[0] == "AnonHugePages:" && len(f) >= 2 {
			n, _ := strconv.Atoi(f[1])
			sum += n
		}
	}
	return sum
}

// TestHugePages: memory given to hugePages (a slab that starts and ends inside 2 MiB pages, as Go's heap
// places them) is backed by huge pages once populated, including the huge pages its ends overlap,
// and its bytes stay as they were. The test skips where the kernel gives no transparent huge pages.
func TestHugePages(t *testing.T) {
	if mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || bytes.Contains(mode, []byte("[never]")) {
		t.Skipf("no transparent huge pages (%q, %v)", mode, err)
	}
	const size = 12 << 20
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	base := uintptr(unsafe.Pointer(&m[0]))
	first := int((hugeSize - base%hugeSize) % hugeSize) // m's first 2 MiB boundary
	// A 4 MiB slab from 8 KiB past a boundary: it overlaps three huge pages, wholly covers one.
	slab := m[first+8<<10 : first+8<<10+4<<20]
	slab[0] = 7
	// The package's other tests may have used up maxHugeRanges.
	saved := hugeRanges.Load()
	hugeRanges.Store(0)
	defer hugeRanges.Store(saved)
	before := hugeRanges.Load()
	hugePages(slab)
	if hugeRanges.Load() != before+1 {
		t.Fatalf("hugeRanges %d after one range, want %d", hugeRanges.Load(), before+1)
	}
	// The first page was written before the advice: its huge page keeps small pages. The other two
	// are faulted in by populate as huge pages.
	if err := populateErr(slab); err != nil {
		t.Skipf("populate: %v", err)
	}
	lo := base + uintptr(first)
	if got := anonHuge(t, lo, lo+3*hugeSize); got < 2*hugeSize>>10 {
		t.Fatalf("%d KiB of huge pages over the slab, want at least %d", got, 2*hugeSize>>10)
	}
	if slab[0] != 7 || !bytes.Equal(slab[1:], make([]byte, len(slab)-1)) {
		t.Fatal("hugePages or populate changed the slab's bytes")
	}
	// Memory below hugeMin is left alone; from hugeMin on, the huge page around it is advised.
	hugePages(m[first : first+hugeMin-1])
	if hugeRanges.Load() != before+1 {
		t.Fatalf("hugePages advised %d bytes, less than hugeMin", hugeMin-1)
	}
	hugePages(m[first+9*hugeSize/2 : first+9*hugeSize/2+hugeMin])
	if hugeRanges.Load() != before+2 {
		t.Fatalf("hugePages left %d bytes (hugeMin) alone", hugeMin)
	}
	m[first+4*hugeSize] = 1 // the start of the huge page around the small range
	if got := anonHuge(t, lo+4*hugeSize, lo+5*hugeSize); got < hugeSize>>10 {
		t.Fatalf("%d KiB of huge pages around a range of hugeMin bytes, want %d", got, hugeSize>>10)
	}
}
