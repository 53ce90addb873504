package hfilewriter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hfload/hfload/internal/directio"
	"github.com/hfload/hfload/internal/kv"
)

// plainWriter hides bytes.Buffer's AvailableBuffer: every block is copied into it.
type plainWriter struct{ b bytes.Buffer }

func (p *plainWriter) Write(b []byte) (int, error) { return p.b.Write(b) }

// TestWriterBuildsInLentBuffer writes the same cells through a directio.Writer (which lends its buffer:
// blocks are built or compressed in it and written without a copy) behind a StreamVerifier, and through
// a writer that lends nothing, and requires the same file. Small direct-I/O buffers put block after
// block across their ends, where the Writer must fall back to its own buffer; a large cell outgrows a
// lent block.
func TestWriterBuildsInLentBuffer(t *testing.T) {
	settings := []struct {
		name string
		set  func(*WriterOptions)
	}{
		{"defaults", func(*WriterOptions) {}},
		{"fast_diff", func(o *WriterOptions) { o.Encoding = EncodingFastDiff }},
		{"snappy+fast_diff", func(o *WriterOptions) { o.Encoding, o.Compression = EncodingFastDiff, CompressionSnappy }},
		{"gz+rowcol", func(o *WriterOptions) { o.Compression, o.Bloom = CompressionGZ, BloomRowCol }},
	}
	for _, st := range settings {
		for _, bufSize := range []int{3 * directio.Align, 41 * directio.Align} {
			t.Run(fmt.Sprintf("%s/buf%d", st.name, bufSize), func(t *testing.T) {
				opts := DefaultWriterOptions()
				opts.BlockSize = 4096
				st.set(&opts)
				cells := func(w *Writer) {
					for i := 0; i < 20000; i++ {
						v := []byte(fmt.Sprintf("value-%d-%s", i, bytes.Repeat([]byte{'x'}, i%50)))
						if i == 7777 {
							v = bytes.Repeat([]byte("big"), 5000) // larger than a lent block's room
						}
						row := []byte(fmt.Sprintf("row%08d", i/3))
						if err := w.AppendParts(row, []byte("d"), []byte(fmt.Sprintf("q%d", i%3)), 1700000000000, kv.TypePut, v, nil); err != nil {
							t.Fatal(err)
						}
					}
				}
				var want plainWriter
				w, err := NewWriter(&want, opts)
				if err != nil {
					t.Fatal(err)
				}
				cells(w)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if w.out.lentBlocks != 0 {
					t.Fatalf("%d blocks lent by a writer that lends nothing", w.out.lentBlocks)
				}

				path := filepath.Join(t.TempDir(), "f")
				f, err := directio.Create(path, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				dw := directio.NewWriter(f, bufSize)
				sv, err := NewStreamVerifier(dw, opts)
				if err != nil {
					t.Fatal(err)
				}
				w, err = NewWriter(sv, opts)
				if err != nil {
					t.Fatal(err)
				}
				cells(w)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if err := sv.Finish(); err != nil {
					t.Fatal(err)
				}
				if err := dw.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want.b.Bytes()) {
					t.Fatalf("file through the lending writer differs: %d bytes, want %d", len(got), want.b.Len())
				}
				if w.out.lentBlocks == 0 {
					t.Fatal("no block was built in the lent buffer")
				}
				t.Logf("%d blocks without a copy (%d data blocks)", w.out.lentBlocks, w.dataBlocks)
			})
		}
	}
}
