package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// offerRows offers each run of a batch's records of one row once, with the run's KeyValue bytes, and
// counts the runs and all the bytes: the sample (complete here) holds every row with the bytes of all
// its records, whether its records are neighbours or not, first or last in their batch, and whatever
// their rows share (the last byte, the length, everything but the length), rows of 128 bytes and more
// (two bytes of row length) included. Empty batches offer nothing.
func TestOfferRowsRunsAndBytes(t *testing.T) {
	d := cellrec.NewDict([][]byte{[]byte("a")})
	rows := []string{"a", "b", "ab", "bb", "abb", "row01", "row11", "row1", "row10", "row011", "x\x00", "x",
		strings.Repeat("r", 127), strings.Repeat("r", 128), strings.Repeat("r", 300), strings.Repeat("r", 299) + "s"}
	rng := rand.New(rand.NewPCG(5, 6))
	rt := &router{sampler: partition.NewSampler(1000, 1)}
	want := map[string]int64{}
	var runs, total int64
	var offers partition.OfferList
	for b := range 200 {
		cb := &pipeline.CellBatch{Dict: d}
		prev := ""
		for i := range b % 23 {
			row := rows[rng.IntN(len(rows))]
			if i > 0 && rng.IntN(3) == 0 {
				row = prev // a run of records of one row
			}
			rec := cellrec.AppendHeader(nil, []byte(row), []byte("f"), 1, kv.TypePut)
			rec = d.AppendCell(rec, 0, []byte("v"))
			if err := cb.AppendRecord(rec, 0, uint64(i)); err != nil {
				t.Fatal(err)
			}
			kvBytes := int64(1 + rng.IntN(1000))
			cb.Records[len(cb.Records)-1].KVBytes = uint32(kvBytes)
			if i == 0 || row != prev {
				runs++
			}
			want[row] += kvBytes
			total += kvBytes
			prev = row
		}
		rt.offerRows(cb, &offers)
	}
	st := rt.sampler.Stats()
	if st.Adds != runs || st.Bytes != total || !st.Complete || st.Kept != len(want) {
		t.Fatalf("stats %+v, want %d runs, %d bytes, %d rows, complete", st, runs, total, len(want))
	}
	for _, k := range rt.sampler.Sample() {
		if want[string(k.Row)] != k.Bytes {
			t.Fatalf("row %q: %d bytes, want %d", k.Row, k.Bytes, want[string(k.Row)])
		}
	}
	if got, wantKeys := fmt.Sprint(len(rt.sampler.Sample())), fmt.Sprint(len(want)); got != wantKeys {
		t.Fatalf("%s keys sampled, want %s", got, wantKeys)
	}
}
