package hfilewriter

import (
	"fmt"
	"io"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// benchWriterNextRow increments the 20-digit decimal row of rec (a 100-byte KeyValue record:
// 20-byte row, family d, qualifier q, 58-byte value) in place, so rows strictly increase.
func benchWriterNextRow(rec []byte) {
	row := rec[8+2 : 8+2+20]
	for j := len(row) - 1; j >= 0; j-- {
		if row[j] != '9' {
			row[j]++
			return
		}
		row[j] = '0'
	}
}

func benchmarkWriter(b *testing.B, opts WriterOptions) { benchmarkWriterTo(b, opts, io.Discard) }

// benchmarkWriterTo writes b.N 100-byte cells, a row each, with opts to out, and closes the Writer.
func benchmarkWriterTo(b *testing.B, opts WriterOptions, out io.Writer) {
	rec := kv.AppendKeyValue(nil, []byte("00000000000000000000"), []byte("d"), []byte("q"), 1700000000000, kv.TypePut, make([]byte, 58))
	if len(rec) != 100 {
		b.Fatalf("record is %d bytes", len(rec))
	}
	for i := range kv.KVValue(rec) {
		kv.KVValue(rec)[i] = byte('a' + i%26)
	}
	w, err := NewWriter(out, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchWriterNextRow(rec)
		if err := w.AppendKeyValue(rec); err != nil {
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

// benchRowCells is the shape of the end-to-end load's cells: rows of 7 cells sharing row (16
// bytes), family and timestamp, with ascending 9-byte qualifiers and 8-byte values.
const benchRowCells = 7

// How benchmarkWriterRows hands cells to the writer.
const (
	benchRowsKeyValue      = iota // AppendKeyValue of prebuilt records (the writer's cost alone)
	benchRowsBuildKeyValue        // AppendKeyValue after building the record from the parts
	benchRowsParts                // AppendParts
	benchRowsSameRow              // AppendParts for a row's first cell, AppendSameRow for the others
)

// benchmarkWriterRows appends rows of benchRowCells cells, one b.N iteration per cell (ns/op is
// ns per cell). Every mode runs the same harness: the 7 cells are prebuilt KeyValue records (the
// parts are slices into them) and per row the incremented row is copied into each record.
// Reports MB/s and cpu-MB/s of KeyValue bytes.
func benchmarkWriterRows(b *testing.B, opts WriterOptions, mode int) {
	type cell struct{ rec, row, family, qualifier, value []byte }
	row := []byte("user000000000000")
	cells := make([]cell, benchRowCells)
	var total int
	for j := range cells {
		q := []byte(fmt.Sprintf("column_%02d", j))
		v := []byte(fmt.Sprintf("v%07d", j*1234567%10000000))
		rec := kv.AppendKeyValue(nil, row, []byte("d"), q, 1700000000000, kv.TypePut, v)
		k := Key(kv.KVKey(rec))
		cells[j] = cell{rec: rec, row: k.Row(), family: k.Family(), qualifier: k.Qualifier(), value: kv.KVValue(rec)}
		total += len(rec)
	}
	w, err := NewWriter(io.Discard, opts)
	if err != nil {
		b.Fatal(err)
	}
	var rec []byte
	b.SetBytes(int64(total / benchRowCells))
	b.ReportAllocs()
	cpu0 := benchCPUTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % benchRowCells
		if j == 0 {
			benchWriterIncrement(row)
			for k := range cells {
				copy(cells[k].row, row)
			}
		}
		c := &cells[j]
		switch mode {
		case benchRowsKeyValue:
			err = w.AppendKeyValue(c.rec)
		case benchRowsBuildKeyValue:
			rec = kv.AppendKeyValue(rec[:0], c.row, c.family, c.qualifier, 1700000000000, kv.TypePut, c.value)
			err = w.AppendKeyValue(rec)
		case benchRowsSameRow:
			if j == 0 {
				err = w.AppendParts(c.row, c.family, c.qualifier, 1700000000000, kv.TypePut, c.value, nil)
			} else {
				err = w.AppendSameRow(c.qualifier, c.value)
			}
		default:
			err = w.AppendParts(c.row, c.family, c.qualifier, 1700000000000, kv.TypePut, c.value, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if cpu := benchCPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(total)/benchRowCells/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}

// benchWriterIncrement increments a decimal counter in place.
func benchWriterIncrement(d []byte) {
	for j := len(d) - 1; j >= 0; j-- {
		if d[j] != '9' {
			d[j]++
			return
		}
		d[j] = '0'
	}
}

// BenchmarkWriterRows compares AppendKeyValue (the baseline), building the record then
// AppendKeyValue (what a caller holding parts had to do), AppendParts and AppendSameRow (for all but
// a row's first cell) on rows of 7 small cells with the HBase defaults (no encoding, no compression,
// ROW bloom, v3 with tags length and mvcc), and the last two with FAST_DIFF + snappy.
func BenchmarkWriterRows(b *testing.B) {
	b.Run("AppendKeyValue", func(b *testing.B) { benchmarkWriterRows(b, DefaultWriterOptions(), benchRowsKeyValue) })
	b.Run("BuildKeyValue", func(b *testing.B) { benchmarkWriterRows(b, DefaultWriterOptions(), benchRowsBuildKeyValue) })
	b.Run("AppendParts", func(b *testing.B) { benchmarkWriterRows(b, DefaultWriterOptions(), benchRowsParts) })
	b.Run("AppendSameRow", func(b *testing.B) { benchmarkWriterRows(b, DefaultWriterOptions(), benchRowsSameRow) })
	fd := DefaultWriterOptions()
	fd.Encoding, fd.Compression = EncodingFastDiff, CompressionSnappy
	b.Run("FastDiffSnappy/AppendParts", func(b *testing.B) { benchmarkWriterRows(b, fd, benchRowsParts) })
	b.Run("FastDiffSnappy/AppendSameRow", func(b *testing.B) { benchmarkWriterRows(b, fd, benchRowsSameRow) })
}
