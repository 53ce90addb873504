package pipeline

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

const benchYAML = `
columns:
  - {name: host, index: 0}
  - {name: ts, index: 1, type: timestamp, format: s}
  - {name: metric, index: 2, cell: "d:metric"}
  - {name: value, index: 3, type: double, cell: "d:value"}
  - {name: count, index: 4, type: long, cell: "d:count"}
  - {name: note, index: 5, cell: "d:note"}
rowkey:
  - {column: host}
  - {literal: "|"}
  - {reverse_timestamp: ts}
timestamp: {column: ts}
`

func benchBatch(rows int) *Batch {
	rs := make([][]string, rows)
	for i := range rs {
		note := NUL
		if i%3 == 0 {
			note = "restarted after upgrade"
		}
		rs[i] = []string{fmt.Sprintf("web%03d.example.com", i%200), fmt.Sprint(1700000000 + i), "cpu.user",
			fmt.Sprintf("%d.%02d", i%100, i%97), fmt.Sprint(i * 37), note}
	}
	return textBatch("bench.csv", 0, 0, rs)
}

// TestMapBatchZeroAllocs: mapping a batch of good rows allocates nothing once buffers have grown.
func TestMapBatchZeroAllocs(t *testing.T) {
	m := compileYAML(t, benchYAML)
	b := benchBatch(512)
	mp := m.NewMapper()
	var cb CellBatch
	allocs := testing.AllocsPerRun(20, func() {
		cb.Reset()
		if err := mp.MapBatch(b, nil, &cb, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per batch of 512 rows, want 0", allocs)
	}
	if c := mp.Counts(); c.RowsRejected != 0 || cb.Cells() != 512*4-(512-171) /* 4 cells, note NULL in 2 of 3 rows */ {
		t.Fatalf("counts %+v cells %d", c, cb.Cells())
	}
}

// BenchmarkMapCSVBatch measures typed + keyed + emitted CSV rows on one core: SetBytes is the raw CSV
// text, rows/s is reported as a metric.
func BenchmarkMapCSVBatch(b *testing.B) {
	var cfgT testing.T
	m := compileYAML(&cfgT, benchYAML)
	batch := benchBatch(4096)
	mp := m.NewMapper()
	var cb CellBatch
	b.SetBytes(int64(len(batch.RawData) + batch.NumRows)) // + line terminators
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := csvProcessCPU()
	for i := 0; i < b.N; i++ {
		cb.Reset()
		if err := mp.MapBatch(batch, nil, &cb, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(batch.NumRows)/b.Elapsed().Seconds(), "rows/s")
	if cpu := csvProcessCPU() - cpu0; cpu > 0 { // steadier than wall time on a shared machine
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(batch.NumRows), "cpu-ns/row")
	}
}

func benchParquetBatch(tb testing.TB, rows int) *Batch {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "host", Type: arrow.BinaryTypes.String},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64},
		{Name: "count", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("web%03d.example.com", i%200))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1700000000000 + int64(i)*1000))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 7)
		b.Field(3).(*array.Int64Builder).Append(int64(i * 37))
	}
	rec := b.NewRecord()
	return &Batch{Source: "bench.parquet", NumRows: rows, NumCols: 4, Record: rec}
}

const benchParquetYAML = `
columns:
  - {name: host}
  - {name: ts, type: timestamp}
  - {name: value, type: double, cell: "d:value"}
  - {name: count, type: long, cell: "d:count"}
rowkey: [host, "'|'", reverse_timestamp(ts)]
timestamp: {column: ts}
`

// TestMapParquetZeroAllocsPerRow: Parquet rows cost no allocations either (binding the schema's names
// allocates once per batch).
func TestMapParquetZeroAllocsPerRow(t *testing.T) {
	m := compileYAML(t, benchParquetYAML)
	small, big := benchParquetBatch(t, 16), benchParquetBatch(t, 1024)
	defer small.Release()
	defer big.Release()
	mp := m.NewMapper()
	var cb CellBatch
	run := func(b *Batch) float64 {
		return testing.AllocsPerRun(10, func() {
			cb.Reset()
			if err := mp.MapBatch(b, nil, &cb, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	run(big) // grow buffers
	if a, b := run(small), run(big); a != b {
		t.Fatalf("allocations grow with rows: %.0f for 16 rows, %.0f for 1024", a, b)
	}
	if cb.Cells() != 2048 {
		t.Fatalf("%d cells", cb.Cells())
	}
}

// BenchmarkMapParquetBatch: typed Parquet rows (string, timestamp, double, long) keyed and emitted.
func BenchmarkMapParquetBatch(b *testing.B) {
	var cfgT testing.T
	m := compileYAML(&cfgT, benchParquetYAML)
	batch := benchParquetBatch(b, 4096)
	defer batch.Release()
	mp := m.NewMapper()
	var cb CellBatch
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := csvProcessCPU()
	for i := 0; i < b.N; i++ {
		cb.Reset()
		if err := mp.MapBatch(batch, nil, &cb, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(batch.NumRows)/b.Elapsed().Seconds(), "rows/s")
	if cpu := csvProcessCPU() - cpu0; cpu > 0 { // steadier than wall time on a shared machine
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(batch.NumRows), "cpu-ns/row")
	}
}
