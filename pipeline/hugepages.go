package pipeline

import "unsafe"

// hugeMake is make([]T, 0, n) with transparent huge pages asked for its memory (hugePages): for the
// buffers of batches, made once and then reused, which are fresh memory when made.
func hugeMake[T any](n int) []T {
	s := make([]T, 0, n)
	var t T
	hugePages(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:n]))), uintptr(n)*unsafe.Sizeof(t)))
	return s
}
