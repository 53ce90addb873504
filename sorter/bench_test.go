package sorter

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

const benchRows = 100_000

var benchQuals = [][]byte{[]byte("customer_id"), []byte("product_id"), []byte("order_ts"), []byte("quantity"),
	[]byte("unit_price"), []byte("status"), []byte("comment")}

// benchData returns benchRows export-like rows in random order, as records of 7 cells each (20-byte rows
// with a shared 4-byte prefix, dictionary qualifiers, 8-byte values) and as the same cells in one-cell
// records (one sort entry per cell, the unit the sorter had before records), with the dictionary and
// the bytes of the KeyValues the cells stand for.
func benchData() (d *cellrec.Dict, rows, cells [][]byte, kvBytes int) {
	rng := rand.New(rand.NewPCG(42, 42))
	d = cellrec.NewDict(benchQuals)
	row := make([]byte, 20)
	copy(row, "user")
	val := make([]byte, 8)
	for i := 0; i < benchRows; i++ {
		for j := 4; j < len(row); j++ {
			row[j] = 'a' + byte(rng.IntN(26))
		}
		h := cellrec.Header{Row: row, Family: []byte("d"), TS: 1700000000000, Type: kv.TypePut}
		rec := cellrec.AppendHeader(nil, h.Row, h.Family, h.TS, h.Type)
		for q := 0; q < d.Len(); q++ {
			binary.BigEndian.PutUint64(val, rng.Uint64())
			rec = d.AppendCell(rec, q, val)
			one := d.AppendCell(cellrec.AppendHeader(nil, h.Row, h.Family, h.TS, h.Type), q, val)
			cells = append(cells, one)
			kvBytes += cellrec.KeyValueSize(&h, len(d.At(q)), len(val))
		}
		rows = append(rows, rec)
	}
	return d, rows, cells, kvBytes
}

func benchSort(b *testing.B, mem int64, oneCell bool) {
	d, rows, cells, kvBytes := benchData()
	recs := rows
	if oneCell {
		recs = cells
	}
	dir := b.TempDir()
	b.SetBytes(int64(kvBytes))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	spills := int64(0)
	for i := 0; i < b.N; i++ {
		p, err := NewPool(PoolOptions{Memory: mem, TempDir: dir, Parallelism: 2, Dict: d})
		if err != nil {
			b.Fatal(err)
		}
		s := p.NewSorter("bench", SorterOptions{})
		for j, r := range recs {
			if err := s.Add(r, uint64(j)); err != nil {
				b.Fatal(err)
			}
		}
		it, err := s.Finish(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for it.Next() {
			n += d.Cells(it.Cells())
		}
		if it.Err() != nil || n != len(cells) {
			b.Fatalf("merged %d cells, err %v", n, it.Err())
		}
		it.Close()
		spills += p.Spills()
		p.Close()
	}
	b.ReportMetric(float64(spills)/float64(b.N), "spills/op")
	reportCPU(b, cpu0, kvBytes)
}

// reportCPU reports process CPU time per op and the throughput per CPU second.
func reportCPU(b *testing.B, cpu0 int64, bytesPerOp int) {
	cpu := processCPU() - cpu0
	if cpu <= 0 {
		return
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/(float64(cpu)/1e9)/1e6, "MB/cpu-s")
}

// BenchmarkSortInMemory: 100k rows of 7 cells (25 MB as KeyValues), budget 64 MiB (no spill): copy into
// the arena, sort the index, iterate. MB/s are KeyValue bytes.
func BenchmarkSortInMemory(b *testing.B) { benchSort(b, 64<<20, false) }

// BenchmarkSortSpill: the same rows with a 2 MiB budget: several compressed runs plus a heap merge.
func BenchmarkSortSpill(b *testing.B) { benchSort(b, 2<<20, false) }

// BenchmarkSortCellsInMemory and BenchmarkSortCellsSpill are the baselines: the same cells added as
// one-cell records, one sort entry and one heap step per cell.
func BenchmarkSortCellsInMemory(b *testing.B) { benchSort(b, 64<<20, true) }
func BenchmarkSortCellsSpill(b *testing.B)    { benchSort(b, 2<<20, true) }
