package hfilewriter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// readerBenchFile writes n cells (~100-byte values) with the given codec and encoding.
func readerBenchFile(b *testing.B, n int, comp Compression, enc DataBlockEncoding) []byte {
	b.Helper()
	o := DefaultWriterOptions()
	o.Compression, o.Encoding = comp, enc
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		b.Fatal(err)
	}
	val := bytes.Repeat([]byte("value-bytes-"), 8)
	for i := 0; i < n; i++ {
		c := Cell{Row: []byte(fmt.Sprintf("user%010d", i)), Family: []byte("d"), Qualifier: []byte("col"),
			Timestamp: 1700000000000, Type: kv.TypePut, Value: val}
		if err := w.Append(&c); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReaderScan measures a full sequential scan (checksums, decompression, decoding).
func BenchmarkReaderScan(b *testing.B) {
	for _, tc := range []struct {
		comp Compression
		enc  DataBlockEncoding
	}{{CompressionNone, EncodingNone}, {CompressionSnappy, EncodingFastDiff}, {CompressionGZ, EncodingDiff}} {
		b.Run(fmt.Sprintf("%s-%s", tc.comp, tc.enc), func(b *testing.B) {
			const n = 100000
			data := readerBenchFile(b, n, tc.comp, tc.enc)
			r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			var raw int64
			for it := r.Iter(); it.Next(); {
				c := it.Cell()
				raw += int64(8 + c.KeyLen() + len(c.Value))
			}
			b.SetBytes(raw) // throughput in uncompressed KeyValue bytes
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				it := r.Iter()
				cells := 0
				for it.Next() {
					cells++
				}
				if it.Err() != nil || cells != n {
					b.Fatalf("scanned %d cells: %v", cells, it.Err())
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
