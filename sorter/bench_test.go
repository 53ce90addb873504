package sorter

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hfload/hfload/hfilewriter"
)

const benchRecords = 100_000

// benchData returns benchRecords KeyValue records of exactly 100 bytes each (20-byte rows with a shared
// 4-byte prefix, 8-byte qualifiers, 51-byte values) in random order.
func benchData() [][]byte {
	rng := rand.New(rand.NewPCG(42, 42))
	recs := make([][]byte, benchRecords)
	row := make([]byte, 20)
	copy(row, "user")
	val := make([]byte, 51)
	for i := range recs {
		for j := 4; j < len(row); j++ {
			row[j] = 'a' + byte(rng.IntN(26))
		}
		q := binary.BigEndian.AppendUint64(nil, rng.Uint64()%16)
		recs[i] = hfilewriter.AppendKeyValue(nil, row, []byte("d"), q, 1700000000000, hfilewriter.TypePut, val)
		if len(recs[i]) != 100 {
			panic("bench record is not 100 bytes")
		}
	}
	return recs
}

func benchSort(b *testing.B, mem int64) {
	recs := benchData()
	dir := b.TempDir()
	b.SetBytes(int64(len(recs) * 100))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	spills := int64(0)
	for i := 0; i < b.N; i++ {
		p, err := NewPool(PoolOptions{Memory: mem, TempDir: dir, Parallelism: 2})
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
			n += len(it.KV())
		}
		if it.Err() != nil || n != len(recs)*100 {
			b.Fatalf("merged %d bytes, err %v", n, it.Err())
		}
		it.Close()
		spills += p.Spills()
		p.Close()
	}
	b.ReportMetric(float64(spills)/float64(b.N), "spills/op")
	reportCPU(b, cpu0, len(recs)*100)
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

// BenchmarkSortInMemory: 10 MB of 100-byte records, budget 64 MiB (no spill): copy into the arena,
// sort the index, iterate.
func BenchmarkSortInMemory(b *testing.B) { benchSort(b, 64<<20) }

// BenchmarkSortSpill: the same records with a 2 MiB budget: several snappy runs plus a heap merge.
func BenchmarkSortSpill(b *testing.B) { benchSort(b, 2<<20) }

// BenchmarkBaselineSortSlice is the naive reference: copy each record into its own []byte and
// sort.Slice the [][]byte with bytes.Compare (not HBase order; a floor for "sort 10 MB in Go").
func BenchmarkBaselineSortSlice(b *testing.B) {
	recs := benchData()
	b.SetBytes(int64(len(recs) * 100))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		cp := make([][]byte, len(recs))
		for j, r := range recs {
			cp[j] = append([]byte(nil), r...)
		}
		sort.Slice(cp, func(x, y int) bool { return bytes.Compare(cp[x], cp[y]) < 0 })
	}
	reportCPU(b, cpu0, len(recs)*100)
}

// BenchmarkBaselineSortSliceHBase is the same with the HBase comparator (hfilewriter.CompareKeyValues).
func BenchmarkBaselineSortSliceHBase(b *testing.B) {
	recs := benchData()
	b.SetBytes(int64(len(recs) * 100))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		cp := make([][]byte, len(recs))
		for j, r := range recs {
			cp[j] = append([]byte(nil), r...)
		}
		sort.Slice(cp, func(x, y int) bool { return hfilewriter.CompareKeyValues(cp[x], cp[y]) < 0 })
	}
	reportCPU(b, cpu0, len(recs)*100)
}
