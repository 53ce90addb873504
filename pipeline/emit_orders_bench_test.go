package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/hfload/hfload/internal/gen"
)

// ordersColumns is the ImportTsv spec of make bench-cli (scripts/bench-cli.sh): the 1 GB load.
const ordersColumns = "HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment"

// ordersYAML is the typed mapping of examples/orders.yaml.
const ordersYAML = `
columns:
  - {name: order_id, type: long}
  - {name: customer_id}
  - {name: product_id, type: int, cell: "o:product"}
  - {name: order_ts, type: timestamp, format: "2006-01-02 15:04:05", cell: "o:ts"}
  - {name: quantity, type: int, cell: "o:qty"}
  - {name: unit_price, type: decimal, cell: "o:price"}
  - {name: status, cell: "o:status"}
  - {name: comment, cell: "o:comment"}
rowkey: ["hash(customer_id, 4)", {column: order_id, flip_sign: true}]
timestamp: {column: order_ts}
`

// ordersBatches reads about 4 MB of the generator's orders export (CSV with a header, or Parquet) into
// batches, kept unreleased so that the benchmark maps the same batches again and again.
func ordersBatches(tb testing.TB, format string) ([]*Batch, []string) {
	tb.Helper()
	var buf bytes.Buffer
	opts := gen.Options{Dataset: "orders", Seed: 1, Header: true, Format: format}
	if format == "parquet" {
		opts.Rows = 40000
	} else {
		opts.TargetBytes = 4 << 20
	}
	if _, err := gen.Write(&buf, opts); err != nil {
		tb.Fatal(err)
	}
	var src Source
	var err error
	if format == "parquet" {
		src, err = NewParquetSource(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "orders.parquet", 0, SourceOptions{})
	} else {
		src, err = NewCSVSource(bytes.NewReader(buf.Bytes()), "orders.csv", 0, SourceOptions{Header: true})
	}
	if err != nil {
		tb.Fatal(err)
	}
	var header []string
	if hs, ok := src.(HeaderSource); ok {
		header = hs.Header()
	}
	var batches []*Batch
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		batches = append(batches, b)
	}
	tb.Cleanup(func() {
		for _, b := range batches {
			b.Release()
		}
		src.Close()
	})
	return batches, header
}

// benchMapOrders maps the batches on one core and reports ns/row, process CPU time per row (steadier than
// wall time on a shared machine) and the bytes emitted per row.
func benchMapOrders(b *testing.B, m *Mapping, format string) {
	batches, header := ordersBatches(b, format)
	mp := m.NewMapper()
	mp.JobTimestamp = 1700000000000
	rows, emitted := 0, 0
	for _, bt := range batches {
		rows += bt.NumRows
	}
	var cb CellBatch
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := csvProcessCPU()
	for i := 0; i < b.N; i++ {
		emitted = 0
		for _, bt := range batches {
			cb.Reset()
			if err := mp.MapBatch(bt, header, &cb, nil); err != nil {
				b.Fatal(err)
			}
			emitted += len(cb.Buf)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	if cpu := csvProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(rows), "cpu-ns/row")
	}
	b.ReportMetric(float64(emitted)/float64(rows), "B/row")
}

// BenchmarkMapOrdersCSV: the orders export with the ImportTsv spec of make bench-cli (7 text cells a row).
func BenchmarkMapOrdersCSV(b *testing.B) {
	cfg, err := ParseColumns(ordersColumns)
	if err != nil {
		b.Fatal(err)
	}
	benchMapOrders(b, mustCompile(b, cfg), "csv")
}

// BenchmarkMapOrdersCSVTyped: the same export with the typed mapping of examples/orders.yaml.
func BenchmarkMapOrdersCSVTyped(b *testing.B) {
	benchMapOrders(b, compileYAML(b, ordersYAML), "csv")
}

// BenchmarkMapOrdersParquet: the orders export as Parquet with the typed mapping of examples/orders.yaml.
func BenchmarkMapOrdersParquet(b *testing.B) {
	benchMapOrders(b, compileYAML(b, ordersYAML), "parquet")
}

// BenchmarkCellBatchKeyValues: expanding the records of the orders export (ImportTsv spec of make
// bench-cli) into KeyValues, as the run's sink does for the sorter, reusing its buffers.
func BenchmarkCellBatchKeyValues(b *testing.B) {
	cfg, err := ParseColumns(ordersColumns)
	if err != nil {
		b.Fatal(err)
	}
	m := mustCompile(b, cfg)
	batches, header := ordersBatches(b, "csv")
	mp := m.NewMapper()
	mp.JobTimestamp = 1700000000000
	cbs := make([]CellBatch, len(batches))
	rows, cells := 0, 0
	for i, bt := range batches {
		if err := mp.MapBatch(bt, header, &cbs[i], nil); err != nil {
			b.Fatal(err)
		}
		rows += bt.NumRows
		cells += cbs[i].Cells()
	}
	var kv []byte
	var refs []KVRef
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range cbs {
			if kv, refs, err = cbs[j].KeyValues(kv[:0], refs[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
	if len(refs) != cbs[len(cbs)-1].Cells() {
		b.Fatalf("%d KeyValues for %d cells", len(refs), cbs[len(cbs)-1].Cells())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cells), "ns/cell")
}
