package hfilewriter

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// refEncodeFastDiff is the flat-key FAST_DIFF encoder the writer used before it encoded from the key's
// parts (encodeFastDiff.encodeCell); it stays here as the reference the parts encoder must match byte
// for byte.
type refEncodeFastDiff struct{ prev encodePrev }

func (e *refEncodeFastDiff) encode(dst, key, value []byte) []byte {
	if !e.prev.has {
		dst = append(dst, 0)
		dst = encodeCInt(dst, len(key))
		dst = encodeCInt(dst, len(value))
		dst = encodeCInt(dst, 0)
		dst = append(dst, key...)
		dst = append(dst, value...)
		e.prev.set(key, value)
		return dst
	}
	pk, pv := e.prev.key, e.prev.value
	common := encodeCommonPrefix(key, pk, false)
	flag := 0
	if len(key) == len(pk) {
		flag |= fastDiffSameKeyLength
	}
	if len(value) == len(pv) {
		flag |= fastDiffSameValueLength
	}
	typ := key[len(key)-1]
	if typ == pk[len(pk)-1] {
		flag |= fastDiffSameType
	}
	ts := key[len(key)-9 : len(key)-1]
	pts := pk[len(pk)-9 : len(pk)-1]
	tsCommon := 0
	for tsCommon < 7 && ts[tsCommon] == pts[tsCommon] {
		tsCommon++
	}
	flag |= tsCommon
	sameValue := len(value) == len(pv) && bytes.Equal(value, pv)
	if sameValue {
		flag |= fastDiffSameValue
	}
	dst = append(dst, byte(flag))
	if flag&fastDiffSameKeyLength == 0 {
		dst = encodeCInt(dst, len(key))
	}
	if flag&fastDiffSameValueLength == 0 {
		dst = encodeCInt(dst, len(value))
	}
	dst = encodeCInt(dst, common)
	dst = appendKeyRest(dst, Key(key), common)
	dst = append(dst, ts[tsCommon:]...)
	if flag&fastDiffSameType == 0 {
		dst = append(dst, typ)
	}
	if !sameValue {
		dst = append(dst, value...)
	}
	e.prev.set(key, value)
	return dst
}

// fastDiffCell is one cell of a differential test sequence.
type fastDiffCell struct {
	row, fam, qual, value []byte
	ts                    int64
	typ                   Type
}

// randomFastDiffCells makes a sequence that exercises every branch of the encoder: rows of equal and
// different lengths (including lengths 256 apart and sharing the length's high byte), rows sharing
// prefixes, repeated rows with qualifiers sharing prefixes, repeated and changing values, value lengths,
// timestamps sharing 0–8 leading bytes, and changing types. Order does not matter to the encoder.
func randomFastDiffCells(rng *rand.Rand, n int) []fastDiffCell {
	pick := func(choices ...[]byte) []byte { return choices[rng.IntN(len(choices))] }
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(4)) // few symbols: many shared prefixes
		}
		return b
	}
	var cells []fastDiffCell
	var row, qual, value []byte
	ts := int64(1700000000000)
	fam := pick([]byte("d"), []byte("family"), []byte{})
	for len(cells) < n {
		switch rng.IntN(6) {
		case 0: // a new random row, sometimes long
			row = randBytes([]int{1, 5, 8}[rng.IntN(3)] + rng.IntN(3))
			if rng.IntN(8) == 0 {
				row = randBytes(250 + rng.IntN(300))
			}
		case 1: // the same row length, a shared prefix
			if len(row) > 0 {
				r := append([]byte(nil), row...)
				r[rng.IntN(len(r))] ^= 1
				row = r
			}
		}
		switch rng.IntN(4) {
		case 0:
			qual = randBytes(rng.IntN(6))
		case 1:
			qual = append(append([]byte(nil), qual...), byte(rng.IntN(4)))
		}
		switch rng.IntN(4) {
		case 0:
			value = randBytes(rng.IntN(12))
		case 1:
			value = append([]byte(nil), value...)
			if len(value) > 0 {
				value[0]++
			}
		}
		switch rng.IntN(5) {
		case 0:
			ts ^= 1 << rng.IntN(64)
		case 1:
			ts--
		}
		typ := kv.TypePut
		if rng.IntN(6) == 0 {
			typ = []Type{kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily}[rng.IntN(3)]
		}
		if row == nil {
			row = []byte{}
		}
		cells = append(cells, fastDiffCell{row: row, fam: fam, qual: qual, value: value, ts: ts, typ: typ})
	}
	return cells
}

// TestFastDiffPartsEncoderMatchesFlatKeyEncoder: the parts encoder the writer uses gives exactly the
// bytes of the flat-key encoder (checked against HBase by the golden files) on random sequences, both
// through encodeCell and through encode, and through encodeSameRow for each cell that shares the previous
// cell's row, family, timestamp and type (the Writer's same-row path) and encodeCell for the others.
func TestFastDiffPartsEncoderMatchesFlatKeyEncoder(t *testing.T) {
	sameRows := 0
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cells := randomFastDiffCells(rng, 1+rng.IntN(300))
		var ref refEncodeFastDiff
		var parts, flat, same encodeFastDiff
		want := encodeStart(nil, EncodingFastDiff)
		got := parts.start(nil)
		gotFlat := flat.start(nil)
		gotSame := same.start(nil)
		ref.prev.reset()
		var prevRow, prevQual []byte // as the Writer keeps them for the parts encoder
		for i, c := range cells {
			key := kv.AppendKey(nil, c.row, c.fam, c.qual, c.ts, c.typ)
			n := len(want)
			want = ref.encode(want, key, c.value)
			got = parts.encodeCell(got, c.row, c.fam, c.qual, c.ts, c.typ, c.value, prevRow, prevQual)
			if p := cells[max(i-1, 0)]; i > 0 && bytes.Equal(c.row, p.row) && c.ts == p.ts && c.typ == p.typ {
				gotSame = same.encodeSameRow(gotSame, 2+len(c.row)+1+len(c.fam), len(key), c.qual, c.value, prevQual)
				sameRows++
			} else {
				gotSame = same.encodeCell(gotSame, c.row, c.fam, c.qual, c.ts, c.typ, c.value, prevRow, prevQual)
			}
			prevRow, prevQual = c.row, c.qual
			gotFlat = flat.encode(gotFlat, key, c.value)
			if !bytes.Equal(got, want) || !bytes.Equal(gotFlat, want) || !bytes.Equal(gotSame, want) {
				t.Fatalf("seed %d cell %d (%s): encoded\n parts %x\n flat  %x\n same  %x\nwant   %x", seed, i, Key(key),
					got[min(n, len(got)):], gotFlat[min(n, len(gotFlat)):], gotSame[min(n, len(gotSame)):], want[n:])
			}
		}
	}
	if sameRows < 5000 {
		t.Fatalf("only %d cells took encodeSameRow: the test should have more", sameRows)
	}
}

// The Writer hands the FAST_DIFF parts encoder its own copies of the previous row and qualifier; the
// file must be the one the flat-key path (encode, which keeps its own) writes, across blocks, rows,
// versions of one column, delete types and tags.
func TestWriterFastDiffPartsPathMatchesFlatPath(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		cells := matrixTestCells(t, rng, 400, seed%2 == 0)
		o := DefaultWriterOptions()
		o.Encoding, o.BlockSize = EncodingFastDiff, 512
		var parts, flat bytes.Buffer
		for _, out := range []*bytes.Buffer{&parts, &flat} {
			w, err := NewWriter(out, o)
			if err != nil {
				t.Fatal(err)
			}
			if out == &flat {
				w.cenc = nil // every cell through encode and a flat key
			}
			for i := range cells {
				if err := w.Append(&cells[i]); err != nil {
					t.Fatalf("seed %d cell %d: %v", seed, i, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(parts.Bytes(), flat.Bytes()) {
			t.Fatalf("seed %d: the parts path wrote %d bytes, the flat path %d, and they differ", seed, parts.Len(), flat.Len())
		}
	}
}
