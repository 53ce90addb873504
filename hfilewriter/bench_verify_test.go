package hfilewriter

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// benchRecordingWriter keeps what it is given and the size of every Write.
type benchRecordingWriter struct {
	buf   bytes.Buffer
	sizes []int
}

func (w *benchRecordingWriter) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.buf.Write(p)
}

// BenchmarkVerifyStream compares, in the same run, the two checks a load can make on a file it
// wrote: Reader.VerifyBlocks over the file in memory (bytes.Reader: no disk, so only the CPU of the
// re-read: the copies into the block buffer and the checks) and the StreamVerifier over the same
// bytes, handed over in the Writer's own Write calls (one per block). Each iteration runs both, so
// they share the machine's load; the file is ~32 MB of benchCodecRecords (64 KiB blocks, ROW
// bloom, v3 with tags and mvcc). Reported: MB/s of file bytes by wall clock (vb-MB/s, sv-MB/s) and
// per CPU-second (vb-cpu-MB/s, sv-cpu-MB/s; process CPU time, including GC), and the ratio of the
// CPU rates (sv/vb-cpu, above 1 when the stream verifier is cheaper).
//
// Over a file in memory both read every byte from RAM once: VerifyBlocks in the copy, the stream
// verifier in its checksum pass. In a load the stream verifier gets each block right after the
// Writer built it, still in cache; each iteration therefore also writes the file with the Writer
// alone and through a StreamVerifier (both to io.Discard), and reports the verifier's added CPU
// there (sv-in-writer-cpu-MB/s: file bytes per CPU-second of the difference; sv-in-writer/vb-cpu:
// its ratio to VerifyBlocks' CPU).
func BenchmarkVerifyStream(b *testing.B) {
	recs, _ := benchCodecRecords(32 << 20)
	for _, tc := range []struct {
		name string
		comp Compression
		enc  DataBlockEncoding
	}{
		{"NONE-NONE", CompressionNone, EncodingNone},
		{"SNAPPY-FAST_DIFF", CompressionSnappy, EncodingFastDiff},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := DefaultWriterOptions()
			o.Compression, o.Encoding = tc.comp, tc.enc
			write := func(dst io.Writer) {
				w, err := NewWriter(dst, o)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					if err := w.AppendKeyValue(r); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			rec := &benchRecordingWriter{}
			write(rec)
			data := rec.buf.Bytes()
			size := float64(len(data))
			var vbWall, svWall, vbCPU, svCPU, wCPU, wsvCPU time.Duration
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0, c0 := time.Now(), benchCPUTime()
				r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
				if err == nil {
					err = r.VerifyBlocks()
				}
				if err != nil {
					b.Fatal(err)
				}
				t1, c1 := time.Now(), benchCPUTime()
				sv, err := NewStreamVerifier(io.Discard, o)
				if err != nil {
					b.Fatal(err)
				}
				off := 0
				for _, n := range rec.sizes {
					if _, err := sv.Write(data[off : off+n]); err != nil {
						b.Fatal(err)
					}
					off += n
				}
				if err := sv.Finish(); err != nil {
					b.Fatal(err)
				}
				t2, c2 := time.Now(), benchCPUTime()
				write(io.Discard)
				c3 := benchCPUTime()
				if sv, err = NewStreamVerifier(io.Discard, o); err != nil {
					b.Fatal(err)
				}
				write(sv)
				if err := sv.Finish(); err != nil {
					b.Fatal(err)
				}
				c4 := benchCPUTime()
				vbWall += t1.Sub(t0)
				svWall += t2.Sub(t1)
				vbCPU += c1 - c0
				svCPU += c2 - c1
				wCPU += c3 - c2
				wsvCPU += c4 - c3
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(size/1e6, "file-MB")
			b.ReportMetric(n*size/1e6/vbWall.Seconds(), "vb-MB/s")
			b.ReportMetric(n*size/1e6/svWall.Seconds(), "sv-MB/s")
			if vbCPU > 0 && svCPU > 0 {
				b.ReportMetric(n*size/1e6/vbCPU.Seconds(), "vb-cpu-MB/s")
				b.ReportMetric(n*size/1e6/svCPU.Seconds(), "sv-cpu-MB/s")
				b.ReportMetric(vbCPU.Seconds()/svCPU.Seconds(), "sv/vb-cpu")
			}
			if added := wsvCPU - wCPU; added > 0 && vbCPU > 0 {
				b.ReportMetric(n*size/1e6/added.Seconds(), "sv-in-writer-cpu-MB/s")
				b.ReportMetric(vbCPU.Seconds()/added.Seconds(), "sv-in-writer/vb-cpu")
			}
		})
	}
}
