package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/hfload/hfload/internal/gen"
)

// csvBenchData builds an orders-like export of about n bytes: mostly plain fields, some quoted.
func csvBenchData(n int, quotedEvery int) []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < n; i++ {
		comment := "standard delivery"
		if quotedEvery > 0 && i%quotedEvery == 0 {
			comment = `"leave at door, ring ""twice"""`
		}
		fmt.Fprintf(&buf, "%d,%d,%d,2024-03-%02d 12:%02d:%02d,%d,%d.%02d,SHIPPED,%s\n",
			1000000+i, 5000+i%977, 300+i%53, 1+i%28, i%60, (i*7)%60, 1+i%9, 10+i%90, i%100, comment)
	}
	return buf.Bytes()
}

func csvBenchRun(b *testing.B, data []byte) { csvBenchRunOpts(b, data, SourceOptions{}) }

func csvBenchRunOpts(b *testing.B, data []byte, opts SourceOptions) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx := context.Background()
	cpu0 := csvProcessCPU()
	defer func() {
		if cpu := (csvProcessCPU() - cpu0).Seconds(); cpu > 0 {
			b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu, "MB/cpu-s")
		}
	}()
	for b.Loop() {
		src, err := NewCSVSource(bytes.NewReader(data), "bench.csv", 0, opts)
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
			rows += batch.NumRows + len(batch.Bad)
		}
		if rows == 0 {
			b.Fatal("no rows")
		}
	}
}

// BenchmarkCSVParse measures the CSV source on plain (unquoted) orders rows. Target: ≥ 150 MB/s/core.
func BenchmarkCSVParse(b *testing.B) { csvBenchRun(b, csvBenchData(32<<20, 0)) }

// BenchmarkCSVParseQuoted has a quoted comment with separators and doubled quotes on every 4th row.
func BenchmarkCSVParseQuoted(b *testing.B) { csvBenchRun(b, csvBenchData(32<<20, 4)) }

// BenchmarkCSVParseOrders parses the generator's orders dataset (NULLs, quoted comments with
// commas, quotes and line breaks).
func BenchmarkCSVParseOrders(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Dataset: "orders", TargetBytes: 32 << 20, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	csvBenchRun(b, buf.Bytes())
}

// BenchmarkDialectPlain reads the same escape-free tab-separated orders rows in every dialect: none of
// them may cost more than the csv dialect on data without quotes or escapes.
func BenchmarkDialectPlain(b *testing.B) {
	data := bytes.ReplaceAll(csvBenchData(32<<20, 0), []byte(","), []byte("\t"))
	for _, d := range Dialects() {
		b.Run(d, func(b *testing.B) { csvBenchRunOpts(b, data, SourceOptions{Dialect: d, Separator: '\t'}) })
	}
}

// BenchmarkDialectEscaped reads PostgreSQL TEXT rows with an escaped comment (\t, \n, \\) on every 4th row.
func BenchmarkDialectEscaped(b *testing.B) {
	data := bytes.ReplaceAll(csvBenchData(32<<20, 0), []byte(","), []byte("\t"))
	data = bytes.ReplaceAll(data, []byte("standard delivery"), []byte(`leave\tat\ndoor\\ring`))
	csvBenchRunOpts(b, data, SourceOptions{Dialect: DialectPostgresText})
}
