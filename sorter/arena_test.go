package sorter

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// sharedPrefixRecords makes n one-cell records whose rows share long prefixes (the seeds' key shapes),
// with rows that end on, just before and just after 8-byte word boundaries (and the 16-byte boundary of
// the words an entry holds) and trailing zero bytes, so that ties on every word go through sortTies'
// radix passes and its small groups.
func sharedPrefixRecords(rng *rand.Rand, n int) []rec {
	out := make([]rec, n)
	for i := range out {
		var row []byte
		switch rng.IntN(7) {
		case 0: // [host][event][reverse timestamp]
			row = fmt.Appendf(nil, "host-%02d.dc1|ev%d|%019d", rng.IntN(3), rng.IntN(2), int64(1<<62)-int64(rng.IntN(5000)))
		case 1: // [customer][order], ~20 orders per customer
			row = fmt.Appendf(nil, "C%06d-%010d", rng.IntN(n/20+1), rng.IntN(1<<30))
		case 2: // [salt][id]
			row = fmt.Appendf(nil, "%02d|%012d", rng.IntN(4), rng.IntN(n))
		case 3: // 24 equal bytes (the first word after an entry's two), then 0-9 bytes
			row = []byte("twenty-four-byte-key-xyz")
			for k := rng.IntN(10); k > 0; k-- {
				row = append(row, "\x00a\xff"[rng.IntN(3)])
			}
		case 4: // short rows: one byte, then 0-20 zero or one bytes (padding ties in both words)
			row = []byte("k")
			for k := rng.IntN(21); k > 0; k-- {
				row = append(row, "\x00\x01"[rng.IntN(2)])
			}
		default: // 16 equal bytes, then 0-9 bytes of a tiny alphabet (zero bytes included)
			row = []byte("sixteen-byte-key")
			for k := rng.IntN(10); k > 0; k-- {
				row = append(row, "\x00a\xff"[rng.IntN(3)])
			}
		}
		qual := fmt.Appendf(nil, "q%d", rng.IntN(3))
		val := []byte{byte(rng.IntN(256))}
		out[i] = rec{kv.AppendKeyValue(nil, row, []byte("f"), qual, int64(rng.IntN(2)), kv.TypePut, val), uint64(i)}
	}
	return out
}

func TestSharedPrefixKeysMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{40, 3000, 20000} {
		recs := sharedPrefixRecords(rng, n)
		p := newTestPool(t, 32<<20, 2)
		s := p.NewSorter("shapes", SorterOptions{})
		for _, r := range recs {
			if err := s.Add(rc(r.kv), r.seq); err != nil {
				t.Fatal(err)
			}
		}
		sameRecords(t, drain(t, s), reference(recs))
	}
}

// TestRowWordsMatchesWord: rowWords gives the row words w and w+1 of an arena's records, and whether
// the row goes on past them, as word does on the row, for rows of 1 to 140 bytes in records whose
// lengths take one or two bytes (the in-place loads and the general path) and words 0 to 8.
func TestRowWordsMatchesWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	p := newTestPool(t, 64<<20, 1)
	s := p.NewSorter("words", SorterOptions{})
	var rows [][]byte
	for rl := 1; rl <= 140; rl++ {
		row := make([]byte, rl)
		for j := range row {
			row[j] = byte(rng.IntN(3))
		}
		val := make([]byte, []int{1, 60, 200, 5000}[rng.IntN(4)])
		if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), []byte("q0"), 1, kv.TypePut, val)), uint64(rl)); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	for i, row := range rows {
		e := &s.a.idx[i]
		for w := 0; w <= 8; w += 2 {
			k0, k1, more := s.a.rowWords(e, w)
			w0, _ := word(row, w)
			w1, wmore := word(row, w+1)
			if k0 != w0 || k1 != w1 || more != wmore {
				t.Fatalf("row of %d bytes, words %d and %d: rowWords %x %x %v, word %x %x %v", len(row), w, w+1,
					k0, k1, more, w0, w1, wmore)
			}
		}
	}
}
