package pipeline

import (
	"fmt"
	"testing"
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
		cb.Buf, cb.Cells = cb.Buf[:0], cb.Cells[:0]
		if err := mp.MapBatch(b, nil, &cb, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per batch of 512 rows, want 0", allocs)
	}
	if c := mp.Counts(); c.RowsRejected != 0 || len(cb.Cells) != 512*4-(512-171) /* 4 cells, note NULL in 2 of 3 rows */ {
		t.Fatalf("counts %+v cells %d", c, len(cb.Cells))
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
	for i := 0; i < b.N; i++ {
		cb.Buf, cb.Cells = cb.Buf[:0], cb.Cells[:0]
		if err := mp.MapBatch(batch, nil, &cb, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(batch.NumRows)/b.Elapsed().Seconds(), "rows/s")
}
