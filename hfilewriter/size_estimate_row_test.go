package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestWriterEstimateBelowMatchesEstimatedSize: before every row of files whose blocks, index chunks and
// bloom chunks fill often (rows of 8 to 55 bytes, values of 0 to 29, through AppendNewRowCoded, some
// through Append, some with a delete-family cell first, in both formats and with and without encoding),
// estimateBelow(x) is EstimatedSize() < x for x around the estimate, and it answers from the estimate
// it kept at the previous row (not EstimatedSize) for most rows. Under make test-checkptr it is also
// the test whose empty last values (each key head size, FAST_DIFF too) the coded runs must not point
// past.
func TestWriterEstimateBelowMatchesEstimatedSize(t *testing.T) {
	for _, tc := range []struct {
		version int
		enc     DataBlockEncoding
		bloom   BloomType
	}{{2, EncodingNone, BloomRow}, {3, EncodingNone, BloomRow}, {3, EncodingFastDiff, BloomRow}, {3, EncodingNone, BloomNone}} {
		t.Run(fmt.Sprintf("v%d-%s-%s", tc.version, tc.enc, tc.bloom), func(t *testing.T) {
			o := DefaultWriterOptions()
			o.FormatVersion, o.Encoding, o.Bloom = tc.version, tc.enc, tc.bloom
			o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize = 1024, 512, 256
			w, err := NewWriter(&bytes.Buffer{}, o)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(22, uint64(tc.version)))
			fam := []byte("f")
			quals := [][]byte{[]byte("a"), []byte("bb"), []byte("col-c")}
			rows, fast, checks := 6000, 0, 0
			for r := range rows {
				est := w.EstimatedSize()
				if estimateBelowKept(w, est) {
					fast++
				}
				for _, d := range []int64{0, -3, -1, 1, 2, 500} {
					if got := w.estimateBelow(est + d); got != (d > 0) {
						t.Fatalf("row %d: estimateBelow(%d) = %v, EstimatedSize %d", r, est+d, got, est)
					}
					checks++
				}
				row := fmt.Appendf(nil, "%08d%s", r, bytes.Repeat([]byte{'x'}, rng.IntN(48))) // heads of 12 to 59 bytes
				var coded []byte
				vals := make([][]byte, len(quals))
				for i := range quals {
					vals[i] = bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(30))
					coded = append(append(coded, byte(2*i+1), byte(len(vals[i]))), vals[i]...)
				}
				ts := int64(1000 + r)
				n := 0
				switch k := rng.IntN(10); {
				case k == 0: // a delete-family cell first: the rest through Append
					if err := w.Append(&Cell{Row: row, Family: fam, Timestamp: ts, Type: kv.TypeDeleteFamily}); err != nil {
						t.Fatal(err)
					}
				case k == 1: // Append alone
				default:
					n, _ = w.AppendNewRowCoded(row, fam, ts, kv.TypePut, quals, coded, 0)
				}
				for i := n; i < len(quals); i++ {
					c := &Cell{Row: row, Family: fam, Qualifier: quals[i], Timestamp: ts, Type: kv.TypePut, Value: vals[i]}
					if err := w.Append(c); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.out.offset < 50*1024 {
				t.Fatalf("%d bytes written: too few blocks for the test", w.out.offset)
			}
			if tc.bloom == BloomRow && fast < rows/2 {
				t.Fatalf("%d of %d rows answered from the kept estimate", fast, rows)
			}
			if tc.bloom == BloomNone && fast != 0 {
				t.Fatalf("no bloom: %d rows answered from a kept estimate", fast)
			}
			t.Logf("%d checks, %d rows of %d from the kept estimate", checks, fast, rows)
		})
	}
}

// estimateBelowKept reports whether w's estimateBelow answers from the estimate it kept (rowEstimate),
// not from EstimatedSize (est): with the kept base far below, the kept estimate says "below est",
// EstimatedSize does not. w's kept estimate is left as it was.
func estimateBelowKept(w *Writer, est int64) bool {
	q := w.rowEst
	w.rowEst.base -= 1 << 40
	kept := w.estimateBelow(est)
	w.rowEst = q
	return kept
}

// TestWriterEstimateBelowUpperBound: a writer rolling at a size far above its file (the usual case: a
// region's file of a few rows, default options) answers the roll check of nearly every row from the
// bound it keeps (rowEstimate.upper), not from EstimatedSize each time the ROW chunk's folded size
// changes (its keys double); the answers are EstimatedSize's. Rows that write a data block (the
// offset changes) and the first ones take EstimatedSize.
func TestWriterEstimateBelowUpperBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*WriterOptions)
	}{
		{"defaults", func(*WriterOptions) {}},
		{"snappy+fast_diff", func(o *WriterOptions) { o.Compression, o.Encoding = CompressionSnappy, EncodingFastDiff }},
		{"v2+small-bloom", func(o *WriterOptions) { o.FormatVersion, o.BloomBlockSize = 2, 4096 }},
	} {
		for _, rows := range []int{20, 300, 5000} {
			t.Run(fmt.Sprintf("%s/rows%d", tc.name, rows), func(t *testing.T) {
				o := DefaultWriterOptions()
				tc.set(&o)
				w, err := NewWriter(&bytes.Buffer{}, o)
				if err != nil {
					t.Fatal(err)
				}
				const maxSize = 1 << 40
				fam := []byte("f")
				quals := [][]byte{[]byte("a"), []byte("bb"), []byte("col-c")}
				coded := []byte{1, 3, 'x', 'y', 'z', 3, 0, 5, 2, 'v', 'w'}
				kept, blocks := 0, int64(0)
				for r := range rows {
					est := w.EstimatedSize()
					if r > 0 && estimateBelowKept(w, est) {
						kept++
					}
					if !w.estimateBelow(maxSize) {
						t.Fatalf("row %d: estimateBelow(%d) false, EstimatedSize %d", r, int64(maxSize), est)
					}
					// From the state the roll check left and from the one each of these leaves.
					q := w.rowEst
					for _, x := range []int64{est, est + 1, est - 1, est + 2, est} {
						if got := w.estimateBelow(x); got != (x > est) {
							t.Fatalf("row %d: estimateBelow(%d) = %v, EstimatedSize %d", r, x, got, est)
						}
					}
					w.rowEst = q
					before := w.dataBlocks
					row := fmt.Appendf(nil, "row-%08d", r)
					n, _ := w.AppendNewRowCoded(row, fam, int64(1000+r), kv.TypePut, quals, coded, maxSize)
					for i := n; i < len(quals); i++ { // a block's first row's cells
						c := &Cell{Row: row, Family: fam, Qualifier: quals[i], Timestamp: int64(1000 + r), Type: kv.TypePut, Value: []byte("xyz")}
						if err := w.Append(c); err != nil {
							t.Fatal(err)
						}
					}
					blocks += w.dataBlocks - before
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				// The first row has no estimate to keep; the second finds the chunk just started; a
				// row after a data block was written finds another offset, one after a chunk filled
				// another chunk (and the row before it finds the chunk full).
				chunks := w.bloom.numChunks
				if slow := rows - 1 - kept; int64(slow) > blocks+2*int64(chunks) {
					t.Fatalf("%d of %d rows took EstimatedSize (%d data blocks written before Close, %d bloom chunks)", slow, rows, blocks, chunks)
				}
			})
		}
	}
}
