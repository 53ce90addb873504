package partition

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestRouterMatchesRegion: the prefix fast path agrees with Splits.Region, including keys shorter than
// 8 bytes, keys with trailing zero bytes and keys sharing 8-byte prefixes with split points, with few
// split points (counted: countPrefix) and more than fewSplits (searched).
func TestRouterMatchesRegion(t *testing.T) {
	few := keys("\x00", "\x00\x00", "a", "a\x00", "a\x00\x00\x00\x00\x00\x00\x00", "a\x00\x00\x00\x00\x00\x00\x00\x01",
		"abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgi", "b", "zzzzzzzzzzzz")
	many := append(Splits{}, few[:10]...)
	for i := 0; i < 2*fewSplits; i++ { // between "abcdefgi" and "b"
		many = append(many, fmt.Appendf(nil, "abcdefgi%c", 'a'+i))
	}
	many = append(many, few[10:]...)
	for _, s := range []Splits{few, many, few[:1], few[6:10]} {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		r := NewRouter(s)
		rng := rand.New(rand.NewSource(1))
		alphabet := []byte{0, 1, 'a', 'b', 'c', 'h', 'i', 'z', 0xff}
		rows := [][]byte{nil, {}}
		rows = append(rows, s...)
		for i := 0; i < 20000; i++ {
			row := make([]byte, rng.Intn(12))
			for j := range row {
				row[j] = alphabet[rng.Intn(len(alphabet))]
			}
			if rng.Intn(3) == 0 { // start like a split point
				k := s[rng.Intn(len(s))]
				row = append(append([]byte{}, k[:rng.Intn(len(k)+1)]...), row...)
			}
			rows = append(rows, row)
		}
		for _, row := range rows {
			if got, want := r.Region(row), s.Region(row); got != want {
				t.Fatalf("%d split points: Router.Region(%q) = %d, Splits.Region = %d", len(s), row, got, want)
			}
		}
	}
	if NewRouter(nil).Region([]byte("x")) != 0 {
		t.Fatal("empty router")
	}
}

func BenchmarkRouterRegion1000(b *testing.B) {
	s, err := Uniform(1001, "hex")
	if err != nil {
		b.Fatal(err)
	}
	r := NewRouter(s)
	rows := make([][]byte, 4096)
	for i := range rows {
		rows[i] = []byte(fmt.Sprintf("%08x-order-%d", uint32(i)*2654435761, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	sum := 0
	for i := 0; i < b.N; i++ {
		sum += r.Region(rows[i&4095])
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}
