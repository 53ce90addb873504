package partition

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// Sample's row order (rowOrder) is bytes.Compare's for keys built position by position from alphabets
// (one byte for every key, decimal digits, sixteen values of one high half, letters, bytes whose high
// halves differ) at any position of the 16 sorted on and after them, and in every other round rows of any
// length (prefixes of others, shorter than 16 bytes). Splits gives what SplitsFromSample gives for the
// sample, with bytes and without (every key 0 bytes).
func TestRowOrderAndSplits(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	alphabets := []string{"C", "0123456789", "0123456789:;<=>?", "0123456789abcdefz", "\x00\x01\x7f\x80\xff", "-"}
	d := alphabets[1]
	fixed := [][]string{{"C", d, d, d, d, d, d, "-", d, d, d, d, d, d, d, d, d, d}} // customer-order keys
	for round := 0; round < 200; round++ {
		width := 4 + rng.Intn(18)
		shape := make([]string, width)
		for i := range shape {
			shape[i] = alphabets[rng.Intn(len(alphabets))]
		}
		if round < len(fixed) {
			shape, width = fixed[round], len(fixed[round])
		}
		sm := NewSampler(50+rng.Intn(500), int64(round))
		want := map[string]int64{}
		zero := round%4 == 0
		for i := 0; i < 3000; i++ {
			row := make([]byte, width)
			for k, a := range shape {
				row[k] = a[rng.Intn(len(a))]
			}
			if round%2 == 1 && rng.Intn(5) == 0 {
				row = row[:rng.Intn(width+1)]
			}
			n := int64(1 + rng.Intn(50))
			if zero {
				n = 0
			}
			sm.Add(row, n)
			want[string(row)] += n
		}
		got := sm.Sample()
		if !slices.IsSortedFunc(got, func(a, b SampleKey) int { return bytes.Compare(a.Row, b.Row) }) {
			t.Fatalf("round %d (shape %q): sample not in row order", round, shape)
		}
		for i, k := range got {
			if i > 0 && bytes.Equal(got[i-1].Row, k.Row) {
				t.Fatalf("round %d: key %q twice", round, k.Row)
			}
			if w, ok := want[string(k.Row)]; !ok || w != k.Bytes {
				t.Fatalf("round %d: key %q with %d bytes, want %d (seen %v)", round, k.Row, k.Bytes, w, ok)
			}
		}
		for _, n := range []int{2, 3, 10, 100, 1000} {
			s, w := sm.Splits(n), SplitsFromSample(got, n)
			if fmt.Sprintf("%q", s) != fmt.Sprintf("%q", w) {
				t.Fatalf("round %d: Splits(%d) = %q, SplitsFromSample gives %q", round, n, s, w)
			}
		}
	}
}
