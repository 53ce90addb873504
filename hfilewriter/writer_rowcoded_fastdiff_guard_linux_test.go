//go:build linux

package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"syscall"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestWriterAppendRowCodedFastDiffStaysInCoded: fdRun.codedRun reads a row's coded cells through unsafe
// pointers, some values as whole words; it reads no byte outside coded. Each row's coded cells are
// placed right before an inaccessible page, then right after one (a byte read past either end faults
// and fails the test), and the files are still Append's. The rows are fixedRowCells' (values of 0 to
// 65 bytes, the last one of a row often short) and rows whose last cells have values of 0 to 8 bytes
// close to coded's end (read as the word that ends there, or byte by byte).
func TestWriterAppendRowCodedFastDiffStaysInCoded(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	if err := syscall.Mprotect(mem[2*page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	rng := rand.New(rand.NewPCG(7, 17))
	cells := fixedRowCells(rng, 300)
	for r := range 300 { // short rows: values of 0 to 8 bytes, one to three cells
		row := fmt.Appendf(nil, "%07d", 2000000+r)
		for i, q := range []string{"a", "b", "c"}[:1+r%3] {
			cells = append(cells, Cell{Row: row, Family: []byte("d"), Qualifier: []byte(q), Timestamp: 1700000000000,
				Type: kv.TypePut, Value: bytes.Repeat([]byte{byte('0' + i)}, rng.IntN(9))})
		}
	}
	o := DefaultWriterOptions()
	o.Encoding = EncodingFastDiff
	want := partsTestWrite(t, o, cells, partsAPIAppend)
	for _, atEnd := range []bool{true, false} {
		file, st, coded := rowCodedWriteBy(t, o, cells, newCodedDict(cells, rng), 1<<30, rng,
			func(w *Writer, c *Cell, quals [][]byte, enc []byte) (int, int) {
				enc = enc[:len(enc)-4] // without the 4 bytes that are not a coded cell
				start := page
				if atEnd {
					start = 2*page - len(enc)
				}
				g := mem[start : start+len(enc) : start+len(enc)]
				copy(g, enc)
				return w.AppendRowCoded(c.Row, c.Family, c.Timestamp, c.Type, quals, g)
			})
		name := fmt.Sprint("at the end: ", atEnd)
		compareBytes(t, name, file, want.file)
		if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
			t.Fatalf("%s: Stats after Close: got %+v, want %+v", name, st, want.stats[len(want.stats)-1])
		}
		if coded < len(cells)*9/10 {
			t.Fatalf("%s: AppendRowCoded took %d of %d cells: the test should have more", name, coded, len(cells))
		}
	}
}
