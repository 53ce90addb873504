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
				// From the estimate kept at the previous row: a base far off changes the answer.
				q := w.rowEst
				w.rowEst.base += 1 << 40
				if !w.estimateBelow(est + 1) {
					fast++
				}
				w.rowEst = q
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
