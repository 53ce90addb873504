package partition

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// splitsBySearch is SplitsFromSample as it was written first: a binary search per split point, each
// point cloned on its own. TestSplitsFromSampleAsSearch holds the walking version to it.
func splitsBySearch(keys []SampleKey, n int) Splits {
	if n <= 1 || len(keys) < 2 {
		return nil
	}
	cum := make([]float64, len(keys)+1)
	for i, k := range keys {
		cum[i+1] = cum[i] + float64(max(k.Bytes, 0))
	}
	total := cum[len(keys)]
	if total == 0 {
		for i := range cum {
			cum[i] = float64(i)
		}
		total = cum[len(keys)]
	}
	var out Splits
	last := 0
	for i := 1; i < n; i++ {
		t := total * float64(i) / float64(n)
		j := sort.Search(len(keys)-1, func(j int) bool { return cum[j+1] >= t }) + 1
		if j > 1 && t-cum[j-1] < cum[j]-t {
			j--
		}
		if j >= len(keys) {
			j = len(keys) - 1
		}
		if j <= last {
			continue
		}
		last = j
		hi, lo := keys[j].Row, keys[j-1].Row
		l := 0
		for l < len(lo) && l < len(hi) && lo[l] == hi[l] {
			l++
		}
		out = append(out, slices.Clone(hi[:min(l+1, len(hi))]))
	}
	return out
}

// TestSplitsFromSampleAsSearch: the split points are those of a binary search per point, for random
// samples (rows sharing prefixes; bytes zero, negative, equal or skewed; all zero) and region counts
// below, near and above the number of keys; each point is a slice of its own capacity (appending to one
// cannot change the next).
func TestSplitsFromSampleAsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := 0; round < 400; round++ {
		nk := 1 + rng.IntN(300)
		set := map[string]bool{}
		for len(set) < nk {
			row := make([]byte, 1+rng.IntN(6))
			for i := range row {
				row[i] = "abc\x00\xff"[rng.IntN(5)]
			}
			set[string(row)] = true
		}
		rows := make([]string, 0, nk)
		for r := range set {
			rows = append(rows, r)
		}
		slices.Sort(rows)
		keys := make([]SampleKey, nk)
		mode := round % 5
		for i, r := range rows {
			var b int64
			switch mode {
			case 0:
				b = rng.Int64N(1000)
			case 1:
				b = 7
			case 2:
				b = rng.Int64N(3) - 1 // zeros and negatives
			case 3:
				b = 0
			case 4:
				if rng.IntN(20) == 0 {
					b = rng.Int64N(1 << 40)
				} else {
					b = rng.Int64N(10)
				}
			}
			keys[i] = SampleKey{Row: []byte(r), Bytes: b}
		}
		for _, n := range []int{0, 1, 2, 3, nk / 2, nk, nk + 1, 2*nk + 3, 10000} {
			got, want := SplitsFromSample(keys, n), splitsBySearch(keys, n)
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) || (got == nil) != (want == nil) {
				t.Fatalf("round %d (mode %d, %d keys), n %d:\n got %q\nwant %q", round, mode, nk, n, got, want)
			}
			for i, s := range got {
				if cap(s) != len(s) {
					t.Fatalf("split %d has capacity %d beyond its %d bytes", i, cap(s), len(s))
				}
				if i > 0 && bytes.Compare(got[i-1], s) >= 0 {
					t.Fatalf("splits not ascending at %d: %q, %q", i, got[i-1], s)
				}
			}
		}
	}
}

// separatorLen, eight bytes at a time while both rows have them, is the byte-by-byte answer for rows
// that first differ at any position up to 24, and for a row that is a prefix of the other.
func TestSeparatorLenAsBytewise(t *testing.T) {
	ref := func(lo, hi []byte) int {
		l := 0
		for l < len(lo) && l < len(hi) && lo[l] == hi[l] {
			l++
		}
		return min(l+1, len(hi))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 20000; round++ {
		a := make([]byte, rng.IntN(25))
		for i := range a {
			a[i] = "ab\x00\xff"[rng.IntN(4)]
		}
		b := slices.Clone(a[:rng.IntN(len(a)+1)])
		for n := rng.IntN(10); n > 0; n-- {
			b = append(b, "ab\x00\xff"[rng.IntN(4)])
		}
		lo, hi := a, b
		switch c := bytes.Compare(lo, hi); {
		case c == 0:
			continue
		case c > 0:
			lo, hi = hi, lo
		}
		if got, want := separatorLen(lo, hi), ref(lo, hi); got != want {
			t.Fatalf("separatorLen(%q, %q) = %d, want %d", lo, hi, got, want)
		}
	}
}
