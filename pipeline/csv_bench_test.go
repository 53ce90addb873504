package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
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

func csvBenchRun(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		src, err := NewCSVSource(bytes.NewReader(data), "bench.csv", 0, SourceOptions{})
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
