//go:build linux

package sorter

import (
	"bytes"
	"syscall"
	"testing"
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

// TestPrefaultIndex: prefaultIndex covers exactly the unused capacity of an index, and leaves its
// entries as they were.
func TestPrefaultIndex(t *testing.T) {
	idx := make([]entry, 3, 1<<16)
	for i := range idx {
		idx[i] = entry{prefix: uint64(i + 1), seq: uint64(10 * i)}
	}
	before := append([]entry(nil), idx...)
	prefaultIndex(idx)
	prefaultIndex(idx[:cap(idx)]) // no unused capacity: nothing to do
	for i := range idx {
		if idx[i] != before[i] {
			t.Fatalf("entry %d changed: %+v, want %+v", i, idx[i], before[i])
		}
	}
}
