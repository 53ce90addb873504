package sorter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
)

// sliceSource is a RecordSource over records in memory.
type sliceSource struct {
	recs [][]byte
	seqs []uint64
}

func (s *sliceSource) Next() ([]byte, uint64, bool, error) {
	if len(s.recs) == 0 {
		return nil, 0, false, nil
	}
	r, q := s.recs[0], s.seqs[0]
	s.recs, s.seqs = s.recs[1:], s.seqs[1:]
	return r, q, true, nil
}

// sortedRun sorts ms with its own sorter (as a map task does) and writes its views out as records.
func sortedRun(t *testing.T, ms []multi, mem int64) *sliceSource {
	t.Helper()
	p := newTestPool(t, mem, 1)
	it := addAndFinish(t, p.NewSorter("map", SorterOptions{}), ms, nil)
	src := &sliceSource{}
	for it.Next() {
		src.recs = append(src.recs, it.AppendRecord(nil))
		src.seqs = append(src.seqs, it.Seq())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	return src
}

// TestMergeSortedMatchesOneSort: records cut into parts, each sorted on its own (spilling) and written
// out as records, merged by MergeSorted, give the cells of one sort of all of them, in the same
// order, with and without Combine; the merge's memory stays in the budget.
func TestMergeSortedMatchesOneSort(t *testing.T) {
	for _, parts := range []int{1, 3, 17} {
		t.Run(fmt.Sprintf("parts=%d", parts), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(parts), 7))
			ms := randMulti(rng, 4000, 30)
			for _, combine := range []bool{false, true} {
				opts := SorterOptions{}
				if combine {
					opts.Combine = func(dst []byte, _ *cellrec.Header, _, a, b []byte) []byte {
						return fmt.Appendf(dst, "s%d", seqSum(a)+seqSum(b))
					}
				}
				// The reference: one sorter given every record, in a shuffled order.
				ref := newTestPool(t, 16<<20, 2)
				want, _ := checkViews(t, addAndFinish(t, ref.NewSorter("all", opts), ms, rng.Perm(len(ms))), ref.Dict())
				// The parts: contiguous slices of the input (seqs ascend across them, as units' do).
				var srcs []RecordSource
				for i := range parts {
					srcs = append(srcs, sortedRun(t, ms[i*len(ms)/parts:(i+1)*len(ms)/parts], 64<<10))
				}
				p := newTestPool(t, 1<<20, 2)
				base := p.UsedBytes() // the pool's I/O reserve
				it, err := p.MergeSorted(context.Background(), "merge", opts, srcs, int64(parts)*4096)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := checkViews(t, it, p.Dict())
				sameRecords(t, got, want)
				if p.UsedBytes() != base {
					t.Errorf("combine=%v: %d bytes still accounted after Close (%d before)", combine, p.UsedBytes(), base)
				}
			}
		})
	}
}

// TestMergeSortedRefusesDisorder: a source whose records are not in order, or not records, fails the
// merge with an error instead of writing cells out of order.
func TestMergeSortedRefusesDisorder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	run := sortedRun(t, randMulti(rng, 200, 50), 16<<20)
	swapped := &sliceSource{recs: append([][]byte(nil), run.recs...), seqs: append([]uint64(nil), run.seqs...)}
	n := len(swapped.recs)
	swapped.recs[n/2], swapped.recs[n/2+1] = swapped.recs[n/2+1], swapped.recs[n/2]
	swapped.seqs[n/2], swapped.seqs[n/2+1] = swapped.seqs[n/2+1], swapped.seqs[n/2]
	garbage := &sliceSource{recs: [][]byte{{0xff, 0xff, 0xff}}, seqs: []uint64{1}}
	for name, src := range map[string]*sliceSource{"out of order": swapped, "not a record": garbage} {
		p := newTestPool(t, 1<<20, 1)
		it, err := p.MergeSorted(context.Background(), "merge", SorterOptions{}, []RecordSource{src}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
		}
		err = it.Err()
		it.Close()
		if err == nil || !strings.Contains(err.Error(), "sorted source 0") {
			t.Errorf("%s: want an error naming the source, got %v", name, err)
		}
	}
}
