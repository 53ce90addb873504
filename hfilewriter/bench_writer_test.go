package hfilewriter

import (
	"io"
	"testing"
)

// benchWriterNextRow increments the 20-digit decimal row of kv (a 100-byte KeyValue record:
// 20-byte row, family d, qualifier q, 58-byte value) in place, so rows strictly increase.
func benchWriterNextRow(kv []byte) {
	row := kv[8+2 : 8+2+20]
	for j := len(row) - 1; j >= 0; j-- {
		if row[j] != '9' {
			row[j]++
			return
		}
		row[j] = '0'
	}
}

func benchmarkWriter(b *testing.B, opts WriterOptions) {
	kv := AppendKeyValue(nil, []byte("00000000000000000000"), []byte("d"), []byte("q"), 1700000000000, TypePut, make([]byte, 58))
	if len(kv) != 100 {
		b.Fatalf("record is %d bytes", len(kv))
	}
	for i := range KVValue(kv) {
		KVValue(kv)[i] = byte('a' + i%26)
	}
	w, err := NewWriter(io.Discard, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(kv)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchWriterNextRow(kv)
		if err := w.AppendKeyValue(kv); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriterNoneRowBloom measures the hot path: 100-byte cells, one per row, compression NONE,
// ROW bloom, v3 with tags and mvcc (the defaults).
func BenchmarkWriterNoneRowBloom(b *testing.B) { benchmarkWriter(b, DefaultWriterOptions()) }

// BenchmarkWriterSnappyFastDiff is the same data with FAST_DIFF encoding and Snappy compression.
func BenchmarkWriterSnappyFastDiff(b *testing.B) {
	o := DefaultWriterOptions()
	o.Compression = CompressionSnappy
	o.Encoding = EncodingFastDiff
	benchmarkWriter(b, o)
}
