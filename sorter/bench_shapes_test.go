package sorter

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// shapeRow appends row i of a key shape (the seeds' key designs, whose first 8 bytes tie often):
//   - customer-order: [customer][order], about 20 orders per customer, "C041092-0001340975";
//   - host-event-revts: [host][event][reverse timestamp], 50 hosts and 8 events;
//   - salted-id: [salt][monotonic id], 16 salts, "07|000000001234".
func shapeRow(dst []byte, shape string, i int, rng *rand.Rand, rows int) []byte {
	switch shape {
	case "customer-order":
		return fmt.Appendf(dst, "C%06d-%010d", rng.IntN(max(rows/20, 1)), i)
	case "host-event-revts":
		return fmt.Appendf(dst, "host-%03d.dc1|ev%02d|%019d", rng.IntN(50), rng.IntN(8), int64(1<<62)-int64(i)*997)
	case "salted-id":
		return fmt.Appendf(dst, "%02d|%012d", i%16, i)
	}
	panic("unknown shape " + shape)
}

var benchShapes = []string{"customer-order", "host-event-revts", "salted-id"}

// shapeRows is the number of records of BenchmarkSortShapes: benchRows, or $SHAPE_ROWS (e.g. 1000000,
// whose records no longer fit the CPU's caches, as in a real load).
func shapeRows() int {
	if n, err := strconv.Atoi(os.Getenv("SHAPE_ROWS")); err == nil && n > 0 {
		return n
	}
	return benchRows
}

// shapeData returns shapeRows() records of 7 cells whose rows have the given shape, in input (export)
// order, and the bytes of the KeyValues they stand for.
func shapeData(shape string) (d *cellrec.Dict, recs [][]byte, kvBytes int) {
	rng := rand.New(rand.NewPCG(7, 7))
	d = cellrec.NewDict(benchQuals)
	val := make([]byte, 8)
	var row []byte
	rows := shapeRows()
	for i := 0; i < rows; i++ {
		row = shapeRow(row[:0], shape, i, rng, rows)
		h := cellrec.Header{Row: row, Family: []byte("d"), TS: 1700000000000, Type: kv.TypePut}
		rec := cellrec.AppendHeader(nil, h.Row, h.Family, h.TS, h.Type)
		for q := 0; q < d.Len(); q++ {
			binary.BigEndian.PutUint64(val, rng.Uint64())
			rec = d.AppendCell(rec, q, val)
			kvBytes += cellrec.KeyValueSize(&h, len(d.At(q)), len(val))
		}
		recs = append(recs, rec)
	}
	return d, recs, kvBytes
}

// BenchmarkSortShapes sorts 100k records of each key shape in memory (64 MiB budget, no spill; with
// SHAPE_ROWS larger, a budget that holds them all): copy, sort, resolve, iterate. It reports CPU time
// (cpu-ns/op) beside wall time. For instruction counts run one shape under callgrind, and subtract the same
// run of BenchmarkShapeData (the data alone; Go's goroutines move between threads, which confuses
// callgrind's per-function toggles):
//
//	go test -c -o /tmp/sorter.test ./sorter
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind /tmp/sorter.test -test.run '^$' \
//		-test.bench 'SortShapes/salted-id$' -test.benchtime 1x
func BenchmarkSortShapes(b *testing.B) {
	for _, shape := range benchShapes {
		b.Run(shape, func(b *testing.B) {
			d, recs, kvBytes := shapeData(shape)
			b.SetBytes(int64(kvBytes))
			b.ReportAllocs()
			dir := b.TempDir()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				sortShape(b, d, recs, dir)
			}
			reportCPU(b, cpu0, kvBytes)
		})
	}
}

// BenchmarkShapeData builds the data of BenchmarkSortShapes and does nothing else: the baseline to
// subtract from its instruction counts.
func BenchmarkShapeData(b *testing.B) {
	for _, shape := range benchShapes {
		b.Run(shape, func(b *testing.B) {
			_, recs, _ := shapeData(shape)
			dir := b.TempDir()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if len(recs) == 0 || dir == "" {
					b.Fatal("no data")
				}
			}
		})
	}
}

// sortShape is one sort of BenchmarkSortShapes.
func sortShape(b *testing.B, d *cellrec.Dict, recs [][]byte, dir string) {
	p, err := NewPool(PoolOptions{Memory: max(64<<20, int64(len(recs))*640), TempDir: dir, Parallelism: 2, Dict: d})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	s := p.NewSorter("bench", SorterOptions{})
	batch := make([]Record, 0, 256)
	for j, r := range recs {
		batch = append(batch, Record{Rec: r, Seq: uint64(j)})
		if len(batch) == cap(batch) || j == len(recs)-1 {
			if err := s.AddRecords(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.Next() {
		n += d.Cells(it.Cells())
	}
	if it.Err() != nil || n != len(recs)*d.Len() {
		b.Fatalf("merged %d cells, err %v", n, it.Err())
	}
}
