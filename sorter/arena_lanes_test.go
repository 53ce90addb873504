package sorter

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestLanesMatchReference: input made of interleaved ascending lanes (salted keys in id order) comes
// out in the reference order without being sorted (the sorter takes the lanes as they are: a.lanes is
// set), whichever bytes key the lanes (a salt that changes its first byte within the sorter, binary
// salts, lane bytes across the two cached words, the last cached byte), also with cells that repeat
// (records of one row the resolver merges) and with lanes in pieces (a swap; batches added out of
// order, as concurrent mapping workers add them); input in random order, or with too many lanes, is
// sorted the usual way and comes out in the same reference order.
func TestLanesMatchReference(t *testing.T) {
	const n = 6000
	rng := rand.New(rand.NewPCG(14, 14))
	text := func(salts, from int) func(i int) []byte {
		return func(i int) []byte { return fmt.Appendf(nil, "%02d|%012d", from+i%salts, i) }
	}
	// prefix, then a two-byte salt whose bytes both vary (lanes need both), then the id.
	withPrefix := func(prefix string, salts int) func(i int) []byte {
		return func(i int) []byte {
			s := i % salts
			row := append([]byte(prefix), byte('a'+s/2), byte('x'+s%2))
			return binary.BigEndian.AppendUint64(row, uint64(i))
		}
	}
	// fifteen bytes, then a one-byte salt: the lane is the last cached byte alone.
	lastByte := func(i int) []byte {
		row := append([]byte("fifteen-bytes-x"), byte('a'+i%6))
		return binary.BigEndian.AppendUint64(row, uint64(i))
	}
	binarySalt := func(i int) []byte {
		return binary.BigEndian.AppendUint64([]byte{byte(i % 8 * 31)}, uint64(i)*977)
	}
	for _, tc := range []struct {
		name  string
		row   func(i int) []byte
		twice bool // every cell twice in a row (records of one row, equal keys: the resolver orders them by seq)
		swap  bool // two records of one lane swapped: pieces
		lanes bool // the sorter is expected to take the input as lanes
	}{
		{"salts 00-03", text(4, 0), false, false, true},
		{"salts 09-12", text(4, 9), false, false, true},
		{"binary salt", binarySalt, false, false, true},
		{"lane bytes 3 and 4", withPrefix("pre", 6), false, false, true},
		{"lane bytes 7 and 8", withPrefix("prefix-", 5), false, false, true},
		{"lane bytes 10 and 11", withPrefix("prefix-ten", 6), false, false, true},
		{"lane byte 15", lastByte, false, false, true},
		{"repeated cells", text(3, 0), true, false, true},
		{"one swap", text(4, 0), false, true, true},
		{"batches out of order", text(4, 0), false, false, true},
		{"repeated cells, batches", text(3, 0), true, false, true},
		{"random order", text(4, 0), false, false, false},
		{"too many lanes", text(maxLanes+1, 0), false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []rec
			for i := 0; i < n; i++ {
				row := tc.row(i)
				recs = append(recs, rec{kv.AppendKeyValue(nil, row, []byte("f"), []byte("q1"), 5, kv.TypePut, fmt.Appendf(nil, "v%d", i)), uint64(len(recs))})
				if tc.twice {
					recs = append(recs, rec{kv.AppendKeyValue(nil, row, []byte("f"), []byte("q1"), 5, kv.TypePut, []byte("w")), uint64(len(recs))})
				}
			}
			if tc.swap {
				recs[n/2], recs[n/2+8] = recs[n/2+8], recs[n/2]
			}
			added := recs // by name: "batches", blocks of 300 added in a shuffled order; "random"
			switch {
			case strings.HasPrefix(tc.name, "random"):
				added = slices.Clone(recs)
				rng.Shuffle(len(added), func(i, j int) { added[i], added[j] = added[j], added[i] })
			case strings.Contains(tc.name, "batches"):
				var blocks [][]rec
				for i := 0; i < len(recs); i += 300 {
					blocks = append(blocks, recs[i:min(i+300, len(recs))])
				}
				rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
				added = slices.Concat(blocks...)
			}
			p := newTestPool(t, 64<<20, 1)
			s := p.NewSorter(tc.name, SorterOptions{})
			for _, r := range added {
				if err := s.Add(rc(r.kv), r.seq); err != nil {
					t.Fatal(err)
				}
			}
			it, err := s.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if used := s.a.lanes != nil; used != tc.lanes {
				t.Errorf("ordered as lanes: %v, want %v", used, tc.lanes)
			}
			got, _ := collect(it, p.Dict())
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, reference(recs))
		})
	}
}

// TestLanesSpilled: lanes also order the runs a sorter spills (its arena sorted while adding goes on),
// and the merged output is the reference order.
func TestLanesSpilled(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	var recs []rec
	for i := 0; i < 40000; i++ {
		row := fmt.Appendf(nil, "%02d|%012d", i%5, i)
		recs = append(recs, rec{kv.AppendKeyValue(nil, row, []byte("f"), []byte("q1"), 5, kv.TypePut, fmt.Appendf(nil, "v%d", rng.IntN(100))), uint64(i)})
	}
	p := newTestPool(t, 4<<20, 1)
	s := p.NewSorter("spill", SorterOptions{})
	for _, r := range recs {
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
	}
	if p.Spills() == 0 {
		t.Fatal("no spill")
	}
	sameRecords(t, drain(t, s), reference(recs))
}
