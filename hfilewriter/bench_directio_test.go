package hfilewriter

import (
	"path/filepath"
	"testing"

	"github.com/hfload/hfload/internal/directio"
)

// BenchmarkWriterDirectIO is the write path of hfload run: the Writer, a StreamVerifier and a
// directio.Writer with 4 MiB buffers to a file, one 100-byte cell per row (BenchmarkWriterNoneRowBloom's
// cells), defaults and FAST_DIFF + snappy.
func BenchmarkWriterDirectIO(b *testing.B) {
	for _, st := range []struct {
		name string
		set  func(*WriterOptions)
	}{
		{"defaults", func(*WriterOptions) {}},
		{"snappy+fast_diff", func(o *WriterOptions) { o.Encoding, o.Compression = EncodingFastDiff, CompressionSnappy }},
	} {
		b.Run(st.name, func(b *testing.B) {
			opts := DefaultWriterOptions()
			st.set(&opts)
			f, err := directio.Create(filepath.Join(b.TempDir(), "f"), 0o644)
			if err != nil {
				b.Fatal(err)
			}
			dw := directio.NewWriter(f, 4<<20)
			sv, err := NewStreamVerifier(dw, opts)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkWriterTo(b, opts, sv)
			if err := sv.Finish(); err != nil {
				b.Fatal(err)
			}
			if err := dw.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
