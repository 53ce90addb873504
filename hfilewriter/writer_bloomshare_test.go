package hfilewriter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// Files that share a RowBloomShare are byte for byte the files written without it, whether their rows
// are the producer's (bits copied), miss some (the consumer leaves at the difference), start late or
// end early (a rolled file), over full chunks, a last chunk big enough to share and a small one.
func TestRowBloomShareSameBytes(t *testing.T) {
	const rows = 40000
	rowKey := func(r int) []byte { return []byte(fmt.Sprintf("C%06d-%010d", r/20, r*7919)) }
	// Each consumer's rows: which producer rows its file holds.
	consumers := []struct {
		name   string
		has    func(r int) bool
		shared int // chunks copied from the producer with 16 KiB chunks and all rows, at least
	}{
		{"all rows", func(r int) bool { return true }, 3},
		{"misses a row in chunk 2", func(r int) bool { return r != 20000 }, 1},
		{"starts late", func(r int) bool { return r >= 7 }, 0},
		{"ends early", func(r int) bool { return r < 30000 }, 2},
		{"ends early, closed at once", func(r int) bool { return r < 30000 }, 2},
		{"every other row", func(r int) bool { return r%2 == 0 }, 0},
		{"no rows", func(r int) bool { return false }, 0}, // holds chunk 0 until it closes
	}
	const early = 4                                      // consumers[early] is closed at its last row (a file rolled), the others after Finish
	for _, blockSize := range []int{16 << 10, 2 << 10} { // 13,661 and 1,707 keys a chunk
		for _, last := range []int{rows, 27400} { // last chunk 40000-3*13661 = 13017 keys (shared) / 27400-2*13661 = 78 (not)
			opts := DefaultWriterOptions()
			opts.BloomBlockSize = blockSize
			share, err := NewRowBloomShare(opts, len(consumers))
			if err != nil {
				t.Fatal(err)
			}
			var plain, shared []*Writer
			var plainBuf, sharedBuf []*bytes.Buffer
			for i := range consumers {
				for _, set := range []struct {
					ws  *[]*Writer
					bs  *[]*bytes.Buffer
					shr bool
				}{{&plain, &plainBuf, false}, {&shared, &sharedBuf, true}} {
					b := &bytes.Buffer{}
					w, err := NewWriter(b, opts)
					if err != nil {
						t.Fatal(err)
					}
					if set.shr {
						w.ShareRowBloom(share, i)
					}
					*set.ws, *set.bs = append(*set.ws, w), append(*set.bs, b)
				}
			}
			got := make([]int, len(consumers)) // the producer's index of each consumer's last row
			for i := range got {
				got[i] = -1
			}
			for r := 0; r < last; r++ {
				for i := range consumers { // what the producer sees: a consumer that did not get the last row
					if got[i] != r-1 {
						share.Drop(i)
					}
				}
				row := rowKey(r)
				rh := HashRow(row)
				share.Add(rh)
				for i, c := range consumers {
					if !c.has(r) {
						continue
					}
					got[i] = r
					if err := shared[i].AppendPartsRowHash(row, []byte("f"), []byte("r"), 1, kv.TypePut, row, nil, rh); err != nil {
						t.Fatal(err)
					}
					if err := plain[i].AppendParts(row, []byte("f"), []byte("r"), 1, kv.TypePut, row, nil); err != nil {
						t.Fatal(err)
					}
				}
				if r == 30000 { // consumers[early] closes its file here, before the producer's chunk is full
					closeBoth(t, plain[early], shared[early])
				}
			}
			live := 0
			for _, c := range share.chunks {
				if c != nil {
					live++
				}
			}
			if live > 3 {
				t.Errorf("chunk hint %d, %d rows: the producer keeps %d chunks while the consumers are level with it", blockSize, last, live)
			}
			share.Finish()
			for i, c := range consumers {
				if last < rows && i == early {
					closeBoth(t, plain[i], shared[i])
				} else if i != early {
					closeBoth(t, plain[i], shared[i])
				}
				if !bytes.Equal(plainBuf[i].Bytes(), sharedBuf[i].Bytes()) {
					t.Errorf("chunk hint %d, %d rows, %s: the file written with the share differs (%d bytes, %d without)",
						blockSize, last, c.name, sharedBuf[i].Len(), plainBuf[i].Len())
				}
				want := c.shared
				switch {
				case blockSize == 2<<10 && want > 0:
					want = 10
				case last < rows && want == 3:
					want = 2 // the last chunk's 78 keys are too few to share
				}
				if n := shared[i].bloom.sharedChunks; n < want {
					t.Errorf("chunk hint %d, %d rows, %s: %d chunks copied from the producer, want at least %d", blockSize, last, c.name, n, want)
				}
			}
			if len(share.chunks) != 0 {
				t.Errorf("chunk hint %d, %d rows: the producer still keeps %d chunks after every consumer closed", blockSize, last, len(share.chunks))
			}
		}
	}
}

func closeBoth(t *testing.T, a, b *Writer) {
	t.Helper()
	if a.done {
		return
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
