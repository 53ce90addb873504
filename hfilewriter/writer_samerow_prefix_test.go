package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestWriterAppendRowPrefixMatchesAppend: in PREFIX blocks, AppendRow and AppendSameRowCells (the run,
// appendSameRowRunPrefix) write what Append writes, cell by cell, with the same Stats, for both format
// versions, with and without compression and blooms, in small and default blocks, on cells around the
// limits of the run (fastDiffRowCells: rows of 1 to 300 bytes, qualifiers sharing 8 or more bytes,
// values of 0 to 70 bytes) and on fixed-width rows (fixedRowCells: qualifiers of 32 bytes after ones
// they share no byte with).
func TestWriterAppendRowPrefixMatchesAppend(t *testing.T) {
	testAppendRowEncodedMatchesAppend(t, EncodingPrefix)
}

// TestWriterAppendRowDiffMatchesAppend is TestWriterAppendRowPrefixMatchesAppend in DIFF blocks
// (appendSameRowRunDiff).
func TestWriterAppendRowDiffMatchesAppend(t *testing.T) {
	testAppendRowEncodedMatchesAppend(t, EncodingDiff)
}

// testAppendRowEncodedMatchesAppend is TestWriterAppendRowPrefixMatchesAppend in blocks of encoding enc.
func testAppendRowEncodedMatchesAppend(t *testing.T, enc DataBlockEncoding) {
	i := 0
	for _, version := range []int{3, 2} {
		for _, comp := range []Compression{CompressionNone, CompressionSnappy} {
			for _, bloom := range []BloomType{BloomNone, BloomRow, BloomRowCol} {
				for _, bs := range []int{1024, 64 << 10} {
					i++
					o := DefaultWriterOptions()
					o.FormatVersion, o.Compression, o.Bloom, o.Encoding, o.BlockSize = version, comp, bloom, enc, bs
					o.BulkLoad = &BulkLoadInfo{Time: 1} // the file info then holds the time range and the earliest put
					name := fmt.Sprintf("v%d-%s-%s-%d", version, comp, bloom, bs)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(i), 19))
						for _, cells := range [][]Cell{fastDiffRowCells(rng, 400), fixedRowCells(rng, 400)} {
							want := partsTestWrite(t, o, cells, partsAPIAppend)
							got := rowRunWrite(t, o, cells, rng)
							compareBytes(t, name, got.file, want.file)
							if !reflect.DeepEqual(got.stats[1], want.stats[len(want.stats)-1]) {
								t.Fatalf("Stats after Close: got %+v, want %+v", got.stats[1], want.stats[len(want.stats)-1])
							}
							if bs == 1024 && got.stats[1].DataBlocks < 20 {
								t.Fatalf("%d data blocks: the test should span many", got.stats[1].DataBlocks)
							}
						}
					})
				}
			}
		}
	}
}

// TestWriterPrefixRunTakesCells: the cells after a row's first in fastDiffRowCells and fixedRowCells
// mostly take the PREFIX or DIFF run (so that TestWriterAppendRowPrefixMatchesAppend and
// TestWriterAppendRowDiffMatchesAppend test it), and none do in other blocks or with a ROWCOL bloom.
func TestWriterPrefixRunTakesCells(t *testing.T) {
	for _, c := range []struct {
		enc   DataBlockEncoding
		bloom BloomType
		takes bool
	}{{EncodingPrefix, BloomRow, true}, {EncodingPrefix, BloomRowCol, false}, {EncodingDiff, BloomRow, true},
		{EncodingDiff, BloomRowCol, false}, {EncodingFastDiff, BloomRow, false}, {EncodingNone, BloomRow, false}} {
		o := DefaultWriterOptions()
		o.Encoding, o.Bloom = c.enc, c.bloom
		rng := rand.New(rand.NewPCG(1, 2))
		after, taken := 0, 0
		for _, cells := range [][]Cell{fastDiffRowCells(rng, 200), fixedRowCells(rng, 200)} {
			w, err := NewWriter(&bytes.Buffer{}, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(cells); {
				j := i + 1
				for j < len(cells) && bytes.Equal(cells[j].Row, cells[i].Row) {
					j++
				}
				first := &cells[i]
				if _, err := w.AppendRow(first.Row, first.Family, first.Timestamp, first.Type, []SameRowCell{{Qualifier: first.Qualifier, Value: first.Value}}); err != nil {
					t.Fatal(err)
				}
				var run []SameRowCell
				for k := i + 1; k < j; k++ {
					run = append(run, SameRowCell{Qualifier: cells[k].Qualifier, Value: cells[k].Value})
				}
				after += len(run)
				for len(run) > 0 {
					n := 0
					if w.sameRowPX {
						n = w.appendSameRowRunEncoded(run)
					}
					taken += n
					if run = run[n:]; len(run) > 0 {
						if err := w.AppendSameRow(run[0].Qualifier, run[0].Value); err != nil {
							t.Fatal(err)
						}
						run = run[1:]
					}
				}
				i = j
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if c.takes != (taken > after*3/4) || !c.takes && taken > 0 {
			t.Fatalf("%s, %s bloom: the run took %d of %d cells after a row's first", c.enc, c.bloom, taken, after)
		}
	}
}

// TestWriterAppendRowPrefixErrors: in PREFIX blocks, AppendRow stops at the cell AppendParts (the first)
// or AppendSameRow (the others) refuses, with their error, whether the run or appendCell sees it first
// (a duplicate, a qualifier before the previous one or a prefix of it, inside a row and after 8 shared
// bytes); the cells before it are in the file, and the writer goes on as theirs does.
func TestWriterAppendRowPrefixErrors(t *testing.T) { testAppendRowErrors(t, EncodingPrefix) }

// TestWriterAppendRowDiffErrors is TestWriterAppendRowPrefixErrors in DIFF blocks.
func TestWriterAppendRowDiffErrors(t *testing.T) { testAppendRowErrors(t, EncodingDiff) }

// TestWriterAppendRowPrefixLongQualifiers: the PREFIX and DIFF runs take qualifiers of up to 32 bytes, also
// after one they share no byte with, and leave longer ones to appendCell; the file is Append's, with
// timestamps of one, two and six bytes (DIFF stores the timestamp, or the difference 0 when shorter).
func TestWriterAppendRowPrefixLongQualifiers(t *testing.T) {
	for _, enc := range []DataBlockEncoding{EncodingPrefix, EncodingDiff} {
		o := DefaultWriterOptions()
		o.Encoding = enc
		var cells []Cell
		for r := range 50 {
			row := fmt.Appendf(nil, "%07d", 1000000+r)
			for _, q := range []string{"a", strings.Repeat("b", 31+r%4), strings.Repeat("c", 32), strings.Repeat("d", 33), "e"} {
				cells = append(cells, Cell{Row: row, Family: []byte("d"), Qualifier: []byte(q), Timestamp: []int64{5, 300, 1 << 40}[r%3], Type: kv.TypePut,
					Value: bytes.Repeat([]byte{'v'}, r)})
			}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		want := partsTestWrite(t, o, cells, partsAPIAppend)
		got := rowRunWrite(t, o, cells, rng)
		compareBytes(t, fmt.Sprint(enc), got.file, want.file)
	}
}
