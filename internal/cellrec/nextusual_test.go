package cellrec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// NextUsual decodes what Next decodes for the usual cell (a one-byte dictionary code and value length,
// no tags) and refuses every other first cell (a literal qualifier, a two-byte code or value length,
// a tagged dictionary, a nil one), leaving the cells as they were.
func TestNextUsualAgreesWithNext(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var quals [][]byte
	for i := 0; i < 100; i++ { // indexes 64 and up have codes of two bytes
		quals = append(quals, []byte(fmt.Sprintf("q%03d", i)))
	}
	taken, refused := 0, 0
	for _, d := range []*Dict{NewDict(quals), NewTaggedDict(quals), NewDict(quals[:3])} {
		for iter := 0; iter < 3000; iter++ {
			cells := randomCells(r, d)
			for len(cells) > 0 {
				q, v, rest := d.Next(cells)
				usual := !d.Tagged() && cells[0] < 0x80 && cells[0]&1 == 1 && cells[1] < 0x80
				gq, gv, grest, ok := d.NextUsual(cells)
				if ok != usual {
					t.Fatalf("tagged %v: cell %x: ok %v, want %v", d.Tagged(), cells, ok, usual)
				}
				if ok {
					taken++
					if !bytes.Equal(gq, q) || !bytes.Equal(gv, v) || len(grest) != len(rest) {
						t.Fatalf("cell %x: %q %q and %d bytes left, want %q %q and %d", cells, gq, gv, len(grest), q, v, len(rest))
					}
				} else {
					refused++
					if gq != nil || gv != nil || len(grest) != len(cells) {
						t.Fatalf("refused cell %x: decoded %q %q, %d bytes left of %d", cells, gq, gv, len(grest), len(cells))
					}
				}
				cells = rest
			}
		}
	}
	if taken < 1000 || refused < 1000 {
		t.Fatalf("%d cells taken, %d refused: the test should have many of both", taken, refused)
	}
	var nilDict *Dict
	if _, _, rest, ok := nilDict.NextUsual([]byte{1, 0}); ok || len(rest) != 2 {
		t.Fatalf("a nil dictionary: ok %v, %d bytes left", ok, len(rest))
	}
}

// UsualQualifiers gives the qualifier NextUsual decodes for every code of a dictionary without tags, and
// nil for a tagged or nil dictionary.
func TestUsualQualifiers(t *testing.T) {
	var quals [][]byte
	for i := 0; i < 70; i++ {
		quals = append(quals, []byte(fmt.Sprintf("q%03d", i)))
	}
	d := NewDict(quals)
	qs := d.UsualQualifiers()
	if len(qs) != len(quals) {
		t.Fatalf("%d qualifiers, want %d", len(qs), len(quals))
	}
	for code := range 64 { // the codes of one byte
		q, _, _, ok := d.NextUsual([]byte{byte(code<<1 | 1), 1, 'v'})
		if !ok || !bytes.Equal(qs[code], q) {
			t.Fatalf("code %d: %q, NextUsual %q (%v)", code, qs[code], q, ok)
		}
	}
	var nilDict *Dict
	if qs := NewTaggedDict(quals).UsualQualifiers(); qs != nil {
		t.Fatalf("tagged: %d qualifiers, want none", len(qs))
	}
	if qs := nilDict.UsualQualifiers(); qs != nil {
		t.Fatalf("nil dictionary: %d qualifiers, want none", len(qs))
	}
}
