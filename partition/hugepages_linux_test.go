//go:build linux

package partition

import (
	"bytes"
	"fmt"
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

// hugePages advises the 2 MiB pages a buffer's capacity overlaps (entries, not bytes: 24 bytes each),
// from hugeMin bytes on: written after the advice, they are huge pages, and the bytes are unchanged.
// The test skips where the kernel gives no transparent huge pages.
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
	// Candidates over 3 MiB from 8 KiB past a boundary: they overlap two huge pages.
	n := 3 << 20 / int(unsafe.Sizeof(sampleEntry{}))
	es := unsafe.Slice((*sampleEntry)(unsafe.Pointer(&m[first+8<<10])), n)[:0]
	before := hugeRanges.Load()
	hugePages(es)
	if hugeRanges.Load() != before+1 {
		t.Fatalf("hugeRanges %d after one range, want %d", hugeRanges.Load(), before+1)
	}
	for i := 0; i < n; i++ {
		es = append(es, sampleEntry{prio: uint64(i)})
	}
	lo := base + uintptr(first)
	if got := anonHuge(t, lo, lo+2*hugeSize); got < 2*hugeSize>>10 {
		t.Skipf("%d KiB of huge pages over the buffer, want %d: the kernel gave none", got, 2*hugeSize>>10)
	}
	for i := range es {
		if es[i].prio != uint64(i) {
			t.Fatalf("entry %d changed", i)
		}
	}
	// Below hugeMin bytes nothing is advised.
	hugePages(make([]uint32, 0, hugeMin/4-1))
	if hugeRanges.Load() != before+1 {
		t.Fatalf("hugePages advised %d bytes, less than hugeMin", hugeMin-4)
	}
}

// A sampler of 65,536 keys makes its candidates, its row buffers, the sort's second buffer and indexes
// and its batches with huge pages asked for (fresh): a range each.
func TestSamplerHugePages(t *testing.T) {
	before := hugeRanges.Load()
	if before > maxHugeRanges-16 {
		t.Skipf("%d ranges advised by the package's tests already", before)
	}
	sm := NewSampler(1<<16, 1)
	var l OfferList
	for i := 0; i < 400000; i++ {
		l.Add([]byte(fmt.Sprintf("C%06d-%010d", (i*7919)%50000, i)), 60)
		if l.Len() == 4096 {
			sm.OfferAll(&l)
		}
	}
	sm.OfferAll(&l)
	if s := sm.Splits(10000); len(s) != 9999 {
		t.Fatalf("%d split points, want 9,999", len(s))
	}
	// entries, rows (grown once), spare, order, scratch, a batch's entries and rows.
	if got := hugeRanges.Load() - before; got < 7 {
		t.Fatalf("%d ranges advised, want at least 7", got)
	}
}
