package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// longRowCells returns the cells of about n rows of 1 to 140 random bytes (so key heads of 4 to 148
// bytes, around both ends of AppendRowCoded's 16 to 64), in family, in order: each row one to six
// cells of a timestamp and type (mostly puts), with qualifiers of 0 to 10 bytes and values mostly of 0
// to 40 bytes (some of 200, longer than a coded cell's).
func longRowCells(rng *rand.Rand, n int, family []byte) []Cell {
	rows := randomRows(rng, n, 140, 'a')
	quals := [][]byte{{}, []byte("a"), []byte("b"), []byte("bb"), []byte("c"), []byte("ddddddd"),
		[]byte("eeeeeeee"), []byte("fffffffff"), []byte("g"), []byte("hhhhhhhhhh")}
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete}
	var cells []Cell
	for _, row := range rows {
		ts, typ := rng.Int64N(1<<42), types[rng.IntN(len(types))]
		first := rng.IntN(len(quals))
		for k := first; k < len(quals) && k < first+1+rng.IntN(6); k++ {
			v := bytes.Repeat([]byte{byte('0' + rng.IntN(10))}, rng.IntN(41))
			if rng.IntN(20) == 0 {
				v = bytes.Repeat([]byte{'v'}, 200)
			}
			cells = append(cells, Cell{Row: row, Family: family, Qualifier: quals[k], Timestamp: ts, Type: typ, Value: v})
		}
	}
	return cells
}

// TestWriterAppendRowCodedLongRows: rows of 1 to 140 bytes given to AppendRowCoded (then AppendRow or
// AppendSameRowCells for the cells it does not take) are the file Append writes, with the same Stats,
// for every format version, codec, encoding and bloom type, in families of 1, 2 and 5 bytes; and where
// blocks are unencoded and there is no ROWCOL bloom, it takes cells of rows whose key heads are up to
// 15 bytes, 16 to 32 and 33 to 64, and none of rows with heads over 64.
func TestWriterAppendRowCodedLongRows(t *testing.T) {
	families := [][]byte{[]byte("f"), []byte("cf"), []byte("fam05")}
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		o.BulkLoad = &BulkLoadInfo{Time: 1}
		if i%2 == 0 {
			o.BlockSize = 4096
		}
		fam := families[i%len(families)]
		t.Run(fmt.Sprintf("%s-%s-%d", name, fam, o.BlockSize), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 140))
			cells := longRowCells(rng, 400, fam)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			file, st, _ := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 10, rng)
			compareBytes(t, name, file, want.file)
			if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
				t.Fatalf("Stats after Close: got %+v, want %+v", st, want.stats[len(want.stats)-1])
			}
			if o.Encoding != EncodingNone || o.Bloom == BloomRowCol || o.Compression != CompressionNone {
				return
			}
			// Which heads it takes: each row alone, after a first row, in a writer of its own.
			var tiny, short, long int
			for _, rowLen := range []int{1, 12, 13, 20, 29, 30, 31, 32, 40, 58, 59, 60, 61, 62, 100, 140} {
				head := 3 + rowLen + len(fam)
				w, err := NewWriter(&bytes.Buffer{}, o)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Append(&Cell{Row: []byte{'a'}, Family: fam, Type: kv.TypePut, Value: make([]byte, 300)}); err != nil {
					t.Fatal(err)
				}
				n, _ := w.AppendRowCoded(bytes.Repeat([]byte{'b'}, rowLen), fam, 5, kv.TypePut,
					[][]byte{[]byte("a"), []byte("b")}, []byte{1, 1, 'x', 3, 2, 'y', 'z'})
				switch {
				case head < 16 && n == 2:
					tiny++
				case head >= 16 && head <= 32 && n == 2:
					short++
				case head > 32 && head <= 64 && n == 2:
					long++
				case head > 64 && n == 0:
				default:
					t.Fatalf("row of %d bytes (head %d): AppendRowCoded took %d cells", rowLen, head, n)
				}
			}
			if tiny == 0 || short == 0 || long == 0 {
				t.Fatalf("AppendRowCoded took rows with heads of up to 15 bytes %d times, 16 to 32 %d times, 33 to 64 %d times", tiny, short, long)
			}
		})
	})
}

// randomRows returns about n distinct rows of 1 to maxLen random bytes, each one of the four from first
// on, in order.
func randomRows(rng *rand.Rand, n, maxLen int, first byte) [][]byte {
	rows := make([][]byte, n)
	for i := range rows {
		rows[i] = make([]byte, 1+rng.IntN(maxLen))
		for k := range rows[i] {
			rows[i][k] = first + byte(rng.IntN(4))
		}
	}
	slices.SortFunc(rows, bytes.Compare)
	return slices.CompactFunc(rows, bytes.Equal)
}
