package hfilewriter

import (
	"io"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

func TestWriterIsLast(t *testing.T) {
	w, err := NewWriter(io.Discard, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	r, f, q := []byte("row1"), []byte("d"), []byte("q2")
	if w.IsLast(r, f, q, 5, kv.TypePut) {
		t.Fatal("IsLast before any cell")
	}
	if err := w.AppendParts([]byte("row1"), f, []byte("q1"), 5, kv.TypePut, []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSameRow(q, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if !w.IsLast(r, f, q, 5, kv.TypePut) {
		t.Fatal("IsLast is false for the last cell's key")
	}
	for _, c := range []struct {
		row, fam, qual string
		ts             int64
		typ            Type
	}{
		{"row2", "d", "q2", 5, kv.TypePut}, {"row1", "e", "q2", 5, kv.TypePut}, {"row1", "d", "q1", 5, kv.TypePut},
		{"row1", "d", "q2", 4, kv.TypePut}, {"row1", "d", "q2", 5, kv.TypeDelete},
	} {
		if w.IsLast([]byte(c.row), []byte(c.fam), []byte(c.qual), c.ts, c.typ) {
			t.Errorf("IsLast is true for %+v", c)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
