package hfilewriter

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/golang/snappy"
	"github.com/hfload/hfload/internal/kv"
	"github.com/klauspost/compress/s2"
)

// benchCodecRecords returns about size bytes of KeyValue records in HBase order that look like a
// relational export: zero-padded user ids as rows, a handful of columns (integers, dates, words
// from a small vocabulary, amounts, random hex ids), one timestamp. Deterministic.
func benchCodecRecords(size int) ([][]byte, int64) {
	rng := rand.New(rand.NewPCG(11, 12))
	words := []string{"active", "inactive", "pending", "gold", "silver", "bronze", "paris", "berlin",
		"london", "madrid", "rome", "oslo", "email", "phone", "web", "store"}
	type cell struct{ row, q, v string }
	var cells []cell
	total := 0
	for id := 0; total < size; id++ {
		row := fmt.Sprintf("user%012d", id*7+rng.IntN(7))
		cols := []cell{
			{row, "age", fmt.Sprint(18 + rng.IntN(70))},
			{row, "amount", fmt.Sprintf("%d.%02d", rng.IntN(100000), rng.IntN(100))},
			{row, "channel", words[12+rng.IntN(4)]},
			{row, "city", words[6+rng.IntN(6)]},
			{row, "created", fmt.Sprintf("2024-%02d-%02dT%02d:%02d:%02dZ", 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60))},
			{row, "ref", fmt.Sprintf("%016x", rng.Uint64())},
			{row, "status", words[rng.IntN(6)]},
		}
		for _, c := range cols {
			cells = append(cells, c)
			total += 8 + 12 + len(c.row) + 1 + len(c.q) + len(c.v)
		}
	}
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].row != cells[j].row {
			return cells[i].row < cells[j].row
		}
		return cells[i].q < cells[j].q
	})
	recs := make([][]byte, len(cells))
	var n int64
	for i, c := range cells {
		recs[i] = kv.AppendKeyValue(nil, []byte(c.row), []byte("d"), []byte(c.q), 1700000000000, kv.TypePut, []byte(c.v))
		n += int64(len(recs[i]))
	}
	return recs, n
}

type benchCountingWriter struct{ n int64 }

func (c *benchCountingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// benchmarkWriterCodec writes the records over and over (a new file each time they run out) and
// reports MB/s of KeyValue bytes in (wall clock, via SetBytes with the mean record size), cpu-MB/s
// (the bytes over the process's user+system CPU time, fairer on a shared machine; it includes GC
// and setup, so it is a lower bound) and ratio (KeyValue bytes / file bytes).
func benchmarkWriterCodec(b *testing.B, recs [][]byte, comp Compression, enc DataBlockEncoding, level int) {
	o := DefaultWriterOptions()
	o.Compression, o.Encoding, o.CompressionLevel = comp, enc, level
	var in int64
	cw := &benchCountingWriter{}
	var w *Writer
	open := func() {
		var err error
		if w, err = NewWriter(cw, o); err != nil {
			b.Fatal(err)
		}
	}
	var total int64
	for _, r := range recs {
		total += int64(len(r))
	}
	b.SetBytes(total / int64(len(recs))) // MB/s is then close to the true input rate
	b.ReportAllocs()
	open()
	cpu0 := benchCPUTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(recs)
		if j == 0 && i > 0 {
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			open()
		}
		if err := w.AppendKeyValue(recs[j]); err != nil {
			b.Fatal(err)
		}
		in += int64(len(recs[j]))
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if cpu := benchCPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(in)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
	b.ReportMetric(float64(in)/float64(cw.n), "ratio")
}

// BenchmarkWriterCodec: writer throughput and compression ratio per codec (no encoding, ROW bloom,
// v3 with tags length and mvcc, 64 KiB blocks: HBase defaults plus the codec).
func BenchmarkWriterCodec(b *testing.B) {
	recs, _ := benchCodecRecords(8 << 20)
	for _, c := range []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionLZ4, CompressionZSTD} {
		b.Run(c.String(), func(b *testing.B) { benchmarkWriterCodec(b, recs, c, EncodingNone, 0) })
	}
	// GZ at level 1 (zlib.compress.level=BEST_SPEED), for comparison with HBase at GZ level 1.
	b.Run("GZ-level1", func(b *testing.B) { benchmarkWriterCodec(b, recs, CompressionGZ, EncodingNone, 1) })
}

// BenchmarkWriterEncoding: writer throughput and ratio per data block encoding, uncompressed and
// with snappy.
func BenchmarkWriterEncoding(b *testing.B) {
	recs, _ := benchCodecRecords(8 << 20)
	for _, c := range []Compression{CompressionNone, CompressionSnappy} {
		for _, e := range []DataBlockEncoding{EncodingPrefix, EncodingDiff, EncodingFastDiff} {
			b.Run(c.String()+"-"+e.String(), func(b *testing.B) { benchmarkWriterCodec(b, recs, c, e, 0) })
		}
	}
}

// BenchmarkSnappyBlockEncoders compresses the data block payloads of uncompressed HFiles
// (benchCodecRecords, 64 KiB blocks, without encoding and with FAST_DIFF) with golang/snappy.Encode
// (what the writer used before) and with klauspost s2.EncodeSnappy (what it uses: the same
// standard snappy block format), in the same run: MB/s of payload, cpu-MB/s and ratio (payload /
// compressed bytes).
func BenchmarkSnappyBlockEncoders(b *testing.B) {
	recs, _ := benchCodecRecords(8 << 20)
	cells := make([]Cell, len(recs))
	for i, r := range recs {
		cells[i] = kv.CellFromKey(kv.KVKey(r), kv.KVValue(r))
	}
	encoders := []struct {
		name   string
		encode func(dst, src []byte) []byte
		bound  func(int) int
	}{
		{"golang-snappy", snappy.Encode, snappy.MaxEncodedLen},
		{"s2-EncodeSnappy", s2.EncodeSnappy, s2.MaxEncodedLen},
	}
	for _, enc := range []DataBlockEncoding{EncodingNone, EncodingFastDiff} {
		o := DefaultWriterOptions()
		o.Encoding = enc
		var blocks [][]byte
		var total int64
		for _, blk := range writerTestScannedBlocks(b, writeCells(b, o, cells), CompressionNone) {
			if blk.magic == string(BlockData) || blk.magic == string(BlockEncodedData) {
				blocks = append(blocks, blk.payload)
				total += int64(len(blk.payload))
			}
		}
		for _, e := range encoders {
			b.Run(enc.String()+"/"+e.name, func(b *testing.B) {
				var dst []byte
				var out int64
				b.SetBytes(total)
				b.ReportAllocs()
				cpu0 := benchCPUTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					out = 0
					for _, p := range blocks {
						if n := e.bound(len(p)); cap(dst) < n {
							dst = make([]byte, n)
						}
						out += int64(len(e.encode(dst[:cap(dst)], p)))
					}
				}
				b.StopTimer()
				if cpu := benchCPUTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(b.N)*float64(total)/1e6/cpu.Seconds(), "cpu-MB/s")
				}
				b.ReportMetric(float64(total)/float64(out), "ratio")
			})
		}
	}
}
