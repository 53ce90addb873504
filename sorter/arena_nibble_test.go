package sorter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestSortNibbleMatchesCompare: small buckets (nibbleMin to radixCutoff entries) of keys whose first
// differing byte is a decimal digit, at every byte position of the cached words (and past them), are
// sorted by radixSort exactly as by arena.compare, through sortNibble; buckets whose first differing
// byte is a letter or a hex digit, or whose cached bytes are all equal, are left to sortSmall.
func TestSortNibbleMatchesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	p := newTestPool(t, 64<<20, 1)
	s := p.NewSorter("nibble", SorterOptions{})
	groups := map[string][]int{}
	seq := uint64(0)
	for pre := 0; pre <= 17; pre++ {
		for _, kind := range []string{"digit", "letter", "hex", "tied"} {
			name := fmt.Sprintf("%s/%d", kind, pre)
			for range 200 {
				var row []byte
				switch kind {
				case "digit": // pre shared bytes, then digits: ~4 rows per first digit pair
					row = fmt.Appendf(nil, "%s%04d-%d", "x0123456789abcdefgh"[:pre], rng.IntN(2000), rng.IntN(50))
				case "letter":
					row = fmt.Appendf(nil, "%s%c%d", "x0123456789abcdefgh"[:pre], 'a'+rng.IntN(26), rng.IntN(1000))
				case "hex":
					row = fmt.Appendf(nil, "%s%x", "x0123456789abcdefgh"[:pre], rng.Uint32())
				default: // 16 equal bytes, then digits
					row = fmt.Appendf(nil, "sixteen-byte-key%03d", rng.IntN(100))
				}
				qual := []byte{'q', byte('0' + rng.IntN(2))}
				if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), qual, int64(rng.IntN(2)), kv.TypePut, nil)), seq); err != nil {
					t.Fatal(err)
				}
				groups[name] = append(groups[name], len(s.a.idx)-1)
				seq++
			}
		}
	}
	a := &s.a
	nibbles := 0
	for name, pos := range groups {
		for k := 0; k < 30; k++ {
			n := nibbleMin + rng.IntN(radixCutoff-nibbleMin)
			v := make([]entry, n)
			for i := range v {
				v[i] = a.idx[pos[rng.IntN(len(pos))]]
			}
			want := slices.Clone(v)
			slices.SortFunc(want, func(x, y entry) int { return a.compare(&x, &y) })
			took := a.sortNibble(slices.Clone(v), 0, 0)
			if took {
				nibbles++
			}
			// Expected: the first cached byte in which the entries differ has one high half.
			expect := false
		scan:
			for d := 0; d < 16; d++ {
				b0 := cachedBytes(&v[0])[d]
				for i := range v {
					if b := cachedBytes(&v[i])[d]; b != b0 {
						expect = true
						for j := range v {
							expect = expect && cachedBytes(&v[j])[d]>>4 == b0>>4
						}
						break scan
					}
				}
			}
			if took != expect {
				t.Fatalf("%s, %d entries: sortNibble %v, want %v", name, n, took, expect)
			}
			a.radixSort(v, 0, 0)
			if i := firstDiff(v, want); i >= 0 {
				t.Fatalf("%s, %d entries: entry %d differs from the comparison sort", name, n, i)
			}
		}
	}
	if nibbles < 14*30 {
		t.Fatalf("sortNibble sorted %d buckets", nibbles)
	}
}
