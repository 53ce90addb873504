//go:build linux

package hugepage

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

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

// hugeModeOK skips t where the kernel gives no transparent huge pages.
func hugeModeOK(t *testing.T) {
	t.Helper()
	if mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || bytes.Contains(mode, []byte("[never]")) {
		t.Skipf("no transparent huge pages (%q, %v)", mode, err)
	}
}

// TestAdvise: memory given to Advise (a buffer that starts and ends inside 2 MiB pages, as Go's heap
// places them) is backed by huge pages once written, including the huge pages its ends overlap, and
// its bytes stay as they were; buffers under Min bytes and those past Max are left alone.
func TestAdvise(t *testing.T) {
	hugeModeOK(t)
	const size = 12 << 20
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	base := uintptr(unsafe.Pointer(&m[0]))
	first := int((Size - base%Size) % Size) // m's first 2 MiB boundary
	// A 4 MiB buffer from 8 KiB past a boundary: it overlaps three huge pages, wholly covers one.
	buf := m[first+8<<10 : first+8<<10+4<<20]
	buf[0] = 7
	r := Ranges{Max: 2}
	if !r.Advise(buf) || r.Count() != 1 {
		t.Fatalf("Advise of 4 MiB: count %d, want 1", r.Count())
	}
	// The first page was written before the advice: its huge page keeps small pages. The other two
	// are faulted in as huge pages when written.
	for i := len(buf) - 1; i > 0; i -= 4096 {
		buf[i] = 0
	}
	lo := base + uintptr(first)
	if got := anonHuge(t, lo, lo+3*Size); got < 2*Size>>10 {
		t.Fatalf("%d KiB of huge pages over the buffer, want at least %d", got, 2*Size>>10)
	}
	if buf[0] != 7 || !bytes.Equal(buf[1:], make([]byte, len(buf)-1)) {
		t.Fatal("Advise changed the buffer's bytes")
	}
	// Memory below Min is left alone; from Min on, the huge page around it is advised.
	if r.Advise(m[first:first+Min-1]) || r.Count() != 1 {
		t.Fatalf("Advise took %d bytes, less than Min", Min-1)
	}
	if !r.Advise(m[first+9*Size/2:first+9*Size/2+Min]) || r.Count() != 2 {
		t.Fatalf("Advise left %d bytes (Min) alone", Min)
	}
	m[first+4*Size] = 1 // the start of the huge page around the small range
	if got := anonHuge(t, lo+4*Size, lo+5*Size); got < Size>>10 {
		t.Fatalf("%d KiB of huge pages around a range of Min bytes, want %d", got, Size>>10)
	}
	// Max reached: nothing more is advised or counted.
	if r.Advise(m[first:first+Min]) || r.Count() != 2 {
		t.Fatalf("Advise past Max: count %d", r.Count())
	}
	var zero Ranges
	if zero.Advise(m[first:first+Size]) || zero.Count() != 0 {
		t.Fatal("the zero Ranges advised")
	}
}

// TestAdviseCap: AdviseCap advises the bytes of a slice's capacity (entries, not elements), Make is
// make([]T, 0, n) advised, and AdviseAligned advises an aligned buffer without counting it.
func TestAdviseCap(t *testing.T) {
	hugeModeOK(t)
	r := Ranges{Max: 10}
	type entry [3]uint64 // 24 bytes, like the sampler's candidates
	if AdviseCap(&r, make([]entry, 0, Min/24-1)) || r.Count() != 0 {
		t.Fatal("AdviseCap took a capacity under Min bytes")
	}
	if !AdviseCap(&r, make([]entry, 0, Min/24+1)) || r.Count() != 1 {
		t.Fatal("AdviseCap left a capacity of Min bytes alone")
	}
	for _, n := range []int{0, 1, Min, 3 * Min} {
		s := Make[int32](&r, n)
		if len(s) != 0 || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i, v := range s[:n] {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %d", n, i, v)
			}
		}
	}
	if r.Count() != 3 { // Make(Min) and Make(3*Min) of int32: 256 KiB and 768 KiB
		t.Fatalf("count %d after Make, want 3", r.Count())
	}
	m, err := syscall.Mmap(-1, 0, 4*Size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	base := uintptr(unsafe.Pointer(&m[0]))
	first := int((Size - base%Size) % Size)
	buf := m[first : first+Size]
	if !AdviseAligned(buf) || AdviseAligned(nil) {
		t.Fatal("AdviseAligned")
	}
	buf[0] = 1
	if got := anonHuge(t, base+uintptr(first), base+uintptr(first)+Size); got < Size>>10 {
		t.Fatalf("%d KiB of huge pages in an aligned advised buffer, want %d", got, Size>>10)
	}
}
