//go:build linux

package cellrec

import (
	"syscall"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// Validate's fast path (usualRun) reads a cell's code and value length as one 16-bit word through an
// unsafe pointer: it reads no byte past the record. Each record is placed right before an inaccessible
// page (a byte read past its end faults and fails the test): records ending in a usual cell, in a
// lone byte after one (where a word read would take the byte past the end), in a cut value, and with no
// cell.
func TestValidateStaysInRecord(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	d := NewDict([][]byte{[]byte("a"), []byte("b"), []byte("c")})
	head := AppendHeader(nil, []byte("row"), []byte("f"), 1, kv.TypePut)
	two := d.AppendCell(d.AppendCell(append([]byte(nil), head...), 0, []byte("xy")), 1, nil)
	for _, c := range []struct {
		rec  []byte
		good bool
	}{
		{two, true},
		{append(append([]byte(nil), two...), 5), false},    // a lone code byte after the cells
		{append(append([]byte(nil), two...), 0x80), false}, // a lone byte that is no code
		{d.AppendCell(append([]byte(nil), head...), 2, []byte("v")), true},
		{two[:len(two)-1], false}, // the last cell's length cut off
		{head, false},             // no cell
	} {
		g := mem[page-len(c.rec) : page : page]
		copy(g, c.rec)
		if _, err := d.Validate(g); (err == nil) != c.good {
			t.Fatalf("Validate(%x) = %v, want good %v", c.rec, err, c.good)
		}
	}
}
