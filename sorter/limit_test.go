package sorter

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Iterator.beyond, which compares the rows' first 8 bytes as integers first, agrees with bytes.Compare
// on rows and limits of 0-12 bytes from a small alphabet with zero bytes (prefixes of one another, rows
// that differ only after 8 bytes, zero padding against real zero bytes).
func TestBeyondAgreesWithCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	randRow := func() []byte {
		b := make([]byte, r.IntN(13))
		for i := range b {
			b[i] = "\x00\x01a\xff"[r.IntN(4)]
		}
		return b
	}
	var it Iterator
	var v view
	for iter := 0; iter < 200000; iter++ {
		lim, row := randRow(), randRow()
		if r.IntN(4) == 0 { // the limit a prefix of the row, or the other way round
			n := min(len(lim), len(row))
			copy(row, lim[:n])
		}
		it.Limit(lim)
		v.h.Row = row
		if got, want := it.beyond(&v), bytes.Compare(row, lim) >= 0; got != want {
			t.Fatalf("row %x, limit %x: beyond %v, want %v", row, lim, got, want)
		}
	}
	it.Limit(nil)
	v.h.Row = []byte("z")
	if it.beyond(&v) {
		t.Fatal("beyond without a limit")
	}
}
