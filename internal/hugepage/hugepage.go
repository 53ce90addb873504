package hugepage

import (
	"sync/atomic"
	"unsafe"
)

// Size is the size of a transparent huge page on amd64 and arm64 (with 4 KiB base pages).
const Size = 2 << 20

// Min is the smallest buffer Ranges advises: Go's heap gives objects from 32 KiB on spans of their
// own, laid out one after another as the heap grows, so a buffer of Min bytes shares its 2 MiB page
// mostly with others of its kind.
const Min = 64 << 10

// Ranges advises buffers and counts the ranges it advised against Max. The zero value advises
// nothing (Max 0); a package keeps one for its buffers, with the bound its own use needs.
type Ranges struct {
	// Max is the most ranges Advise advises.
	Max int64
	n   atomic.Int64
}

// Count returns the ranges r has advised.
func (r *Ranges) Count() int64 { return r.n.Load() }

// SetCount sets the count of advised ranges (tests: a package's other tests may have used up Max).
func (r *Ranges) SetCount(n int64) { r.n.Store(n) }

// Advise asks for transparent huge pages for the 2 MiB pages that b overlaps, not only those inside
// it, before b is first written: Go's heap puts buffers next to each other, and a buffer of a few MiB
// is rarely aligned, so its inner huge pages alone leave half of it in small pages (the sorter's slabs
// at 1M rows: 53.8k page faults, 36.8k with inner pages only, far fewer with the pages it overlaps).
// Buffers under Min bytes, and every buffer once r has advised Max ranges, are left alone. It reports
// whether it asked.
func (r *Ranges) Advise(b []byte) bool {
	if len(b) < Min || r.n.Load() >= r.Max {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	r.n.Add(1)
	return advise(start&^(Size-1), (start+uintptr(len(b))+Size-1)&^(Size-1))
}

// AdviseCap is Advise for the memory of s's capacity.
func AdviseCap[T any](r *Ranges, s []T) bool {
	var t T
	n := uintptr(cap(s)) * unsafe.Sizeof(t)
	if n == 0 {
		return false
	}
	return r.Advise(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))), n))
}

// Make is make([]T, 0, n) with huge pages asked for its memory (AdviseCap): for buffers made once and
// then reused, which are fresh memory when made.
func Make[T any](r *Ranges, n int) []T {
	s := make([]T, 0, n)
	AdviseCap(r, s)
	return s
}

// AdviseAligned asks for huge pages for b, which starts and ends on Size boundaries (a buffer made for
// them), without counting it against any Ranges. It reports whether it asked.
func AdviseAligned(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return advise(start, start+uintptr(len(b)))
}
