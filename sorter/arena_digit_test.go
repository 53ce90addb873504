package sorter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// cachedBytes returns the 16 row bytes an entry caches (prefix, then next, big-endian).
func cachedBytes(e *entry) []byte {
	b := make([]byte, 16)
	for d := range b {
		b[d] = byte(e.digit(d))
	}
	return b
}

// TestDigitOrdersItsBytes: a pass's digit orders any two entries as their cached bytes from depth on
// over its width do, and is a nibble pair exactly when those two bytes lie in one word and differ in
// their low halves only. Bytes drawn from decimal digits (pairs), letters and digits (bytes), a few
// values of either half, and zero padding after a digit (bytes).
func TestDigitOrdersItsBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	alphabets := []string{"0123456789", "0123456789abcdef", "09", "\x00123456789", "ACEGIKMO", "\x01\x11\x21", "\x30\x31"}
	pairs := 0
	for k := 0; k < 3000; k++ {
		depth := rng.IntN(16)
		base := make([]byte, 16)
		for d := range base {
			base[d] = byte(rng.IntN(256))
		}
		v := make([]entry, 2+rng.IntN(30))
		a0, a1 := alphabets[rng.IntN(len(alphabets))], alphabets[rng.IntN(len(alphabets))]
		for i := range v {
			b := slices.Clone(base)
			b[depth] = a0[rng.IntN(len(a0))]
			if depth+1 < 16 {
				b[depth+1] = a1[rng.IntN(len(a1))]
			}
			v[i] = entry{prefix: beWord(b[:8]), next: beWord(b[8:])}
		}
		dp, dn := diffBits(v)
		if got := diffDepthFrom(dp, dn, depth); got < depth {
			t.Fatalf("first differing byte %d before depth %d", got, depth)
		}
		g := digitAt(dp, dn, depth)
		w := g.width()
		wantPair := depth%8 < 7
		for i := range v {
			x, y := cachedBytes(&v[i]), cachedBytes(&v[0])
			if !wantPair || x[depth]>>4 != y[depth]>>4 || x[depth+1]>>4 != y[depth+1]>>4 {
				wantPair = false
			}
		}
		if (w == 2) != wantPair {
			t.Fatalf("depth %d, entries %x: width %d, want a pair %v", depth, v, w, wantPair)
		}
		if w == 2 {
			pairs++
		}
		for i := range v {
			for j := range v {
				x, y := cachedBytes(&v[i]), cachedBytes(&v[j])
				want := bytes.Compare(x[depth:depth+w], y[depth:depth+w])
				wx, wy := v[i].prefix, v[j].prefix
				if g.next {
					wx, wy = v[i].next, v[j].next
				}
				got := 0
				if gx, gy := g.of(wx), g.of(wy); gx < gy {
					got = -1
				} else if gx > gy {
					got = 1
				}
				if got != want {
					t.Fatalf("depth %d width %d: digits of %x and %x compare %d, their bytes %d", depth, w, x, y, got, want)
				}
			}
		}
	}
	if pairs < 500 {
		t.Fatalf("only %d of 3000 passes took a nibble pair", pairs)
	}
}

func beWord(b []byte) uint64 {
	var k uint64
	for _, c := range b {
		k = k<<8 | uint64(c)
	}
	return k
}

// TestDigitKeysMatchReference: rows of decimal digits (passes of nibble pairs, which end on both sides of
// the 8-byte word boundary and of the 16 cached bytes), mixed with letters and short rows (byte passes in
// between), come out in the reference order, sorted serially and on several workers.
func TestDigitKeysMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	const n = parallelSortMin + 3000
	recs := make([]rec, n)
	for i := range recs {
		var row []byte
		switch rng.IntN(5) {
		case 0: // [customer][order]
			row = fmt.Appendf(nil, "C%06d-%010d", rng.IntN(5000), rng.IntN(1<<30))
		case 1: // order ids of 1-20 digits
			row = fmt.Appendf(nil, "%d", rng.Int64N(1<<62)>>rng.IntN(62))
		case 2: // digits, a letter, digits: pairs broken at every position
			row = fmt.Appendf(nil, "%0*d%c%d", rng.IntN(15), rng.IntN(100), 'a'+rng.IntN(3), rng.IntN(1000))
		case 3: // [salt][id]
			row = fmt.Appendf(nil, "%02d|%012d", rng.IntN(16), rng.IntN(n))
		default: // hex digits: a-f differ from 0-9 in the high half
			row = fmt.Appendf(nil, "%x", rng.Uint64()>>rng.IntN(60))
		}
		recs[i] = rec{kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), int64(rng.IntN(2)), kv.TypePut, nil), uint64(i)}
	}
	want := reference(recs)
	for _, par := range []int{1, 2} {
		p := newTestPool(t, 64<<20, par)
		s := p.NewSorter("digits", SorterOptions{})
		for _, r := range recs {
			if err := s.Add(rc(r.kv), r.seq); err != nil {
				t.Fatal(err)
			}
		}
		sameRecords(t, drain(t, s), want)
	}
}
