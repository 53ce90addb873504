package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/hfload/hfload/internal/gen"
)

// BenchmarkParquetRead reads the generator's orders dataset as Parquet (snappy, 64Ki-row groups);
// bytes are the Parquet file size.
func BenchmarkParquetRead(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Dataset: "orders", Rows: 500000, Seed: 1, Format: "parquet"}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx := context.Background()
	cpu0 := csvProcessCPU()
	for b.Loop() {
		src, err := NewParquetSource(bytes.NewReader(data), int64(len(data)), "bench.parquet", 0, SourceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for {
			batch, err := src.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows += batch.NumRows
			batch.Release()
		}
		if rows != 500000 {
			b.Fatalf("%d rows", rows)
		}
		src.Close()
	}
	b.ReportMetric(float64(500000*b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu := (csvProcessCPU() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(500000*b.N)/cpu, "rows/cpu-s")
	}
}
