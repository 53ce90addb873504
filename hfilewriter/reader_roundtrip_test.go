package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// readerTestWrite writes cells with opts and returns the file bytes.
func readerTestWrite(t *testing.T, cells []Cell, opts WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := WriteCells(&buf, cells, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readerTestOpen(t *testing.T, data []byte) *Reader {
	t.Helper()
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readerTestCells returns n distinct sorted cells over n/3 rows with tags and sequence ids as asked.
func readerTestCells(rng *rand.Rand, n int, tags bool) []Cell {
	var cells []Cell
	for i := 0; len(cells) < n; i++ {
		row := []byte(fmt.Sprintf("r%06d", i*7))
		for q := 0; q < 3 && len(cells) < n; q++ {
			c := Cell{Row: row, Family: []byte("f"), Qualifier: []byte{'q', byte('a' + q)}, Timestamp: int64(1000 + rng.IntN(5)),
				Type: kv.TypePut, Value: bytes.Repeat([]byte{byte(rng.IntN(256))}, rng.IntN(50)), SeqID: uint64(rng.IntN(3) * 1000)}
			if tags && rng.IntN(3) == 0 {
				c.Tags = []byte{0, 3, 200, byte(rng.IntN(256)), 7}
			}
			cells = append(cells, c)
		}
	}
	return cells
}

func TestReaderChecksumVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cells := readerTestCells(rng, 300, true)
	for _, typ := range []Checksum{ChecksumCRC32, ChecksumCRC32C, ChecksumNull} {
		for _, bpc := range []int{33, 100, 512, DefaultBytesPerChecksum} {
			t.Run(fmt.Sprintf("%s-%d", typ, bpc), func(t *testing.T) {
				o := DefaultWriterOptions()
				o.Checksum, o.BytesPerChecksum, o.BlockSize = typ, bpc, 700
				data := readerTestWrite(t, cells, o)
				r := readerTestOpen(t, data)
				if err := r.Verify(); err != nil {
					t.Fatal(err)
				}
				got := readAllCells(t, r)
				if len(got) != len(cells) {
					t.Fatalf("read %d cells, wrote %d", len(got), len(cells))
				}
				for i := range got {
					if !bytes.Equal(got[i].Key(), cells[i].Key()) || !bytes.Equal(got[i].Value, cells[i].Value) ||
						!bytes.Equal(got[i].Tags, cells[i].Tags) || got[i].SeqID != cells[i].SeqID {
						t.Fatalf("cell %d: got %s, want %s", i, &got[i], &cells[i])
					}
				}
				// A flipped payload byte must be caught unless checksums are off.
				bad := append([]byte(nil), data...)
				bad[BlockHeaderSize+5] ^= 1
				err := corruptOpenScanVerify(bad)
				if typ != ChecksumNull && (err == nil || !strings.Contains(err.Error(), typ.String()+" mismatch")) {
					t.Fatalf("flipped byte: %v", err)
				}
			})
		}
	}
}

func TestReaderBloomNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cells := readerTestCells(rng, 3000, false)
	for _, bloom := range []BloomType{BloomRow, BloomRowCol} {
		o := DefaultWriterOptions()
		o.Bloom, o.BloomBlockSize, o.BlockSize = bloom, 256, 1024 // many chunks
		r := readerTestOpen(t, readerTestWrite(t, cells, o))
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		checkBlooms(t, r, cells)
		// Rows between existing rows (r000001 lies between r000000 and r000007) and absent columns.
		neg := 0
		for i := 0; i < 1000; i++ {
			row, q := []byte(fmt.Sprintf("r%06d", i*7+1)), []byte("qa")
			if bloom == BloomRowCol {
				row, q = []byte(fmt.Sprintf("r%06d", i*7)), []byte("zz")
			}
			ok, err := r.MayContain(row, q)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				neg++
			}
		}
		if neg < 900 {
			t.Fatalf("%s bloom rejects only %d of 1000 absent keys", bloom, neg)
		}
	}
}

func TestReaderCellTextRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cells := writerTestRandomCells(rng, 500, false, false)
	var lines []string
	for i := range cells {
		lines = append(lines, kv.FormatCellLine(&cells[i]))
	}
	shuffled := append([]string(nil), lines...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	parsed, err := ReadCellText(strings.NewReader(strings.Join(shuffled, "\r\n") + "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !sort.SliceIsSorted(parsed, func(i, j int) bool { return kv.CompareKeys(parsed[i].Key(), parsed[j].Key()) < 0 }) {
		t.Fatal("ReadCellText did not sort")
	}
	o := DefaultWriterOptions()
	o.Compression, o.Encoding, o.BlockSize = CompressionSnappy, EncodingFastDiff, 2048
	r := readerTestOpen(t, readerTestWrite(t, parsed, o))
	var out bytes.Buffer
	n, err := r.DumpCellText(&out)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(lines, "\n") + "\n"; out.String() != want || n != int64(len(cells)) {
		t.Fatalf("dump of %d cells differs from the %d formatted input cells", n, len(cells))
	}
}

// readerTestRewrite edits the payload of the (uncompressed) block at off and fixes its checksums.
func readerTestRewrite(t *testing.T, data []byte, off int64, edit func(payload []byte)) {
	t.Helper()
	h, err := readParseBlockHeader(data[off:])
	if err != nil {
		t.Fatal(err)
	}
	edit(data[int(off)+BlockHeaderSize : int(off)+h.OnDiskDataSizeWithHeader])
	corruptRechecksum(t, data, int(off))
}

func TestReaderVerifyDetectsTampering(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cells := readerTestCells(rng, 600, false)
	o := DefaultWriterOptions()
	o.BlockSize = 512
	orig := readerTestWrite(t, cells, o)
	r := readerTestOpen(t, orig)
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"bloom bits cleared", func(b []byte) {
			readerTestRewrite(t, b, r.generalBloom.Chunks[0].Offset, func(p []byte) { clear(p) })
		}, "is not in the ROW bloom filter"},
		{"index key after block's first key", func(b []byte) {
			// Raise the second root entry's key: its row "r00000N" becomes "r99999N".
			readerTestRewrite(t, b, r.loadOnOpen[0].Offset, func(p []byte) {
				i := bytes.Index(p, r.rootIndex[1].Key)
				copy(p[i+2:], "r9999")
			})
		}, "data index entry 1"},
		{"last key in file info", func(b []byte) {
			readerTestRewrite(t, b, r.loadOnOpen[2].Offset, func(p []byte) {
				i := bytes.Index(p, r.lastKey)
				p[i+len(r.lastKey)-1] = byte(kv.TypeDelete)
			})
		}, "hfile.LASTKEY"},
		{"value length changed", func(b []byte) {
			readerTestRewrite(t, b, 0, func(p []byte) { p[7]++ })
		}, "data block 0 at offset 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			tc.edit(b)
			err := corruptOpenScanVerify(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
