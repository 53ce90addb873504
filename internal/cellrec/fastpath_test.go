package cellrec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// randomCells builds a cells region of d's records: dictionary cells (some with codes of two bytes, for
// dictionaries over 63 entries), literal cells, values of one-byte and two-byte lengths, in random order.
func randomCells(r *rand.Rand, d *Dict) []byte {
	var cells []byte
	for c := 0; c < 1+r.IntN(6); c++ {
		v := bytes.Repeat([]byte{byte('a' + c)}, r.IntN(4))
		if r.IntN(8) == 0 {
			v = make([]byte, 128+r.IntN(200))
		}
		var tags []byte
		if d.Tagged() && r.IntN(3) == 0 {
			tags = kv.TTLTag(int64(1 + r.IntN(1000)))
		}
		if r.IntN(4) == 0 {
			cells = d.AppendLiteralCellTags(cells, []byte{"abqz"[r.IntN(4)]}, v, tags)
		} else {
			cells = d.AppendCellTags(cells, r.IntN(d.Len()), v, tags)
		}
	}
	return cells
}

// AppendUntagged's one-byte loop yields what NextTags yields cell by cell: the same qualifiers and values
// up to the first cell with tags, and the same rest from it on.
func TestAppendUntaggedAgreesWithNextTags(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var quals [][]byte
	for i := 0; i < 100; i++ { // indexes 64 and up have codes of two bytes
		quals = append(quals, []byte(fmt.Sprintf("q%03d", i)))
	}
	for _, d := range []*Dict{NewDict(quals), NewTaggedDict(quals), NewDict(quals[:3])} {
		for iter := 0; iter < 5000; iter++ {
			cells := randomCells(r, d)
			var want []kv.QualifierValue
			wantRest := cells
			for len(wantRest) > 0 {
				q, v, tags, rest := d.NextTags(wantRest)
				if len(tags) > 0 {
					break
				}
				if d.Tagged() && len(rest) == len(wantRest) {
					t.Fatal("no progress")
				}
				want = append(want, kv.QualifierValue{Qualifier: q, Value: v})
				wantRest = rest
			}
			got, rest := d.AppendUntagged(nil, cells)
			if len(got) != len(want) || len(rest) != len(wantRest) {
				t.Fatalf("tagged %v, iteration %d: %d cells and %d bytes left, want %d and %d (cells %x)",
					d.Tagged(), iter, len(got), len(rest), len(want), len(wantRest), cells)
			}
			for i := range got {
				if !bytes.Equal(got[i].Qualifier, want[i].Qualifier) || !bytes.Equal(got[i].Value, want[i].Value) ||
					cap(got[i].Value) != len(got[i].Value) {
					t.Fatalf("tagged %v, iteration %d, cell %d: %q=%q, want %q=%q", d.Tagged(), iter, i,
						got[i].Qualifier, got[i].Value, want[i].Qualifier, want[i].Value)
				}
			}
		}
	}
}

// damagedHeaderRecord makes a record for the header parse tests: a row of 0-3 bytes or around the
// one-byte length's end (random bytes with randomRow, else zeros), a family of 0-2 or 127-129 bytes,
// sometimes a cell, sometimes a flipped bit, sometimes cut short.
func damagedHeaderRecord(r *rand.Rand, d *Dict, randomRow bool) []byte {
	row := make([]byte, r.IntN(4))
	if r.IntN(8) == 0 {
		row = make([]byte, 120+r.IntN(20)) // around the one-byte length's end
	}
	if randomRow {
		for i := range row {
			row[i] = byte(r.IntN(256))
		}
	}
	fam := make([]byte, r.IntN(3))
	if r.IntN(8) == 0 {
		fam = make([]byte, 127+r.IntN(3))
	}
	rec := AppendHeader(nil, row, fam, r.Int64(), kv.Type(r.IntN(256)))
	if r.IntN(2) == 0 {
		rec = d.AppendCell(rec, 0, []byte("v"))
	}
	if r.IntN(3) == 0 {
		rec[r.IntN(len(rec))] ^= byte(1 << r.IntN(8))
	}
	if r.IntN(4) == 0 {
		rec = rec[:r.IntN(len(rec)+1)]
	}
	return rec
}

// ParseHeader's one-byte path gives what the general parse gives, on records and every damage to them.
func TestParseHeaderFastPathAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	d := NewDict([][]byte{[]byte("a")})
	for iter := 0; iter < 20000; iter++ {
		rec := damagedHeaderRecord(r, d, false)
		h, cells, err := ParseHeader(rec)
		wh, wcells, werr := parseHeader(rec)
		if (err == nil) != (werr == nil) {
			t.Fatalf("iteration %d: error %v, the general parse says %v (record %x)", iter, err, werr, rec)
		}
		if err != nil {
			continue
		}
		if !bytes.Equal(h.Row, wh.Row) || !bytes.Equal(h.Family, wh.Family) || h.TS != wh.TS || h.Type != wh.Type ||
			!bytes.Equal(cells, wcells) || cap(h.Row) != len(h.Row) || cap(h.Family) != len(h.Family) ||
			len(rec)-len(cells) != len(rec)-len(wcells) {
			t.Fatalf("iteration %d: %+v %x, the general parse says %+v %x (record %x)", iter, h, cells, wh, wcells, rec)
		}
	}
}

// ParseHeaderTo gives what ParseHeader gives (header, cells, error), over a header left by another
// record, on records and every damage to them.
func TestParseHeaderToAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	d := NewDict([][]byte{[]byte("a")})
	var into Header
	for iter := 0; iter < 20000; iter++ {
		rec := damagedHeaderRecord(r, d, true)
		wh, wcells, werr := ParseHeader(rec)
		cells, err := ParseHeaderTo(&into, rec)
		if (err == nil) != (werr == nil) {
			t.Fatalf("iteration %d: error %v, ParseHeader says %v (record %x)", iter, err, werr, rec)
		}
		if err != nil {
			continue
		}
		if !bytes.Equal(into.Row, wh.Row) || !bytes.Equal(into.Family, wh.Family) || into.TS != wh.TS ||
			into.Type != wh.Type || !bytes.Equal(cells, wcells) || cap(into.Row) != cap(wh.Row) ||
			cap(into.Family) != cap(wh.Family) || len(cells) != len(wcells) || cap(cells) != cap(wcells) {
			t.Fatalf("iteration %d: %+v %x, ParseHeader says %+v %x (record %x)", iter, into, cells, wh, wcells, rec)
		}
	}
}

// Next and NextTags (with their one-byte paths) decode what the checked decoder (nextCode) decodes, cell
// by cell, on regions with dictionary and literal cells, one- and two-byte codes and lengths, and tags.
func TestNextAgreesWithCheckedDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var quals [][]byte
	for i := 0; i < 100; i++ {
		quals = append(quals, []byte(fmt.Sprintf("q%03d", i)))
	}
	for _, d := range []*Dict{NewDict(quals), NewTaggedDict(quals), NewDict(quals[:3])} {
		for iter := 0; iter < 5000; iter++ {
			cells := randomCells(r, d)
			for rest := cells; len(rest) > 0; {
				wq, wv, wt, wrest, _, err := d.nextCode(rest)
				if err != nil {
					t.Fatal(err)
				}
				q, v, tags, trest := d.NextTags(rest)
				nq, nv, nrest := d.Next(rest)
				if !bytes.Equal(q, wq) || !bytes.Equal(v, wv) || !bytes.Equal(tags, wt) || len(trest) != len(wrest) ||
					!bytes.Equal(nq, wq) || !bytes.Equal(nv, wv) || len(nrest) != len(wrest) || cap(v) != len(v) || cap(nv) != len(nv) {
					t.Fatalf("tagged %v, iteration %d: NextTags %q=%q %x (%d left), Next %q=%q (%d left); want %q=%q %x (%d left)",
						d.Tagged(), iter, q, v, tags, len(trest), nq, nv, len(nrest), wq, wv, wt, len(wrest))
				}
				rest = wrest
			}
		}
	}
}
