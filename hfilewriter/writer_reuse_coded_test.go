package hfilewriter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// codedFile writes rows of coded cells over quals (row i: the qualifiers i%len(quals) on, values
// of the row's number) with w, a new or reused writer, and returns the file and how many cells
// AppendRowCoded took.
func codedFile(t *testing.T, w *Writer, buf *bytes.Buffer, quals [][]byte, rows int) ([]byte, int) {
	t.Helper()
	took := 0
	for i := range rows {
		row := fmt.Appendf(nil, "customer-%09d", i)
		var enc []byte
		var run []SameRowCell
		for k := i % len(quals); k < len(quals); k++ {
			v := fmt.Appendf(nil, "v%d-%d", i, k)
			enc = append(append(enc, byte(2*k+1), byte(len(v))), v...)
			run = append(run, SameRowCell{Qualifier: quals[k], Value: v})
		}
		n, _ := w.AppendRowCoded(row, []byte("f"), 1700000000000, kv.TypePut, quals, enc)
		took += n
		var err error
		if n == 0 {
			n, err = w.AppendRow(row, []byte("f"), 1700000000000, kv.TypePut, run)
		} else {
			var k int
			k, err = w.AppendSameRowCells(run[n:])
			n += k
		}
		if err != nil || n != len(run) {
			t.Fatalf("row %d: %d of %d cells, %v", i, n, len(run), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes()), took
}

// TestWriterReusingKeepsCodedTable: a writer made by NewWriterReusing keeps the previous file's table of
// AppendRowCoded's qualifiers (the files of a load are given the same ones) and makes a new one when
// given others; each file is the bytes a new writer writes.
func TestWriterReusingKeepsCodedTable(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize = 1024
	a := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("e"), []byte("f")}
	b := [][]byte{[]byte("b"), []byte("bb"), []byte("q"), []byte("z")}
	var prev *Writer
	var prevQuals [][]byte
	for step, quals := range [][][]byte{a, a, b, a, a} {
		var fresh, reused bytes.Buffer
		fw, err := NewWriter(&fresh, o)
		if err != nil {
			t.Fatal(err)
		}
		want, wantTook := codedFile(t, fw, &fresh, quals, 300)
		w, err := NewWriterReusing(&reused, o, prev)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && (w != prev || w.coded == nil) {
			t.Fatalf("step %d: the previous writer was not reused", step)
		}
		if prevQuals != nil && &prevQuals[0] == &quals[0] && w.coded.first != &quals[0] {
			t.Fatalf("step %d: the table of the previous file's qualifiers was not kept", step)
		}
		table := w.coded
		got, took := codedFile(t, w, &reused, quals, 300)
		if !bytes.Equal(got, want) || took != wantTook || took < 300 {
			t.Fatalf("step %d: reused writer wrote %d bytes (%d coded cells), a new one %d (%d)", step, len(got), took, len(want), wantTook)
		}
		if w.coded != table || w.coded.first != &quals[0] || !w.coded.ok {
			t.Fatalf("step %d: the table is not of the qualifiers given", step)
		}
		prev, prevQuals = w, quals
	}
}
