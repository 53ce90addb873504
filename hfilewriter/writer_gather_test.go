package hfilewriter

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// gatherTestLender is a bufio.Writer (which lends its buffer: AvailableBuffer) over a bytes.Buffer that
// counts the Writes it is given.
type gatherTestLender struct {
	*bufio.Writer
	out    bytes.Buffer
	writes int
}

func newGatherTestLender(size int) *gatherTestLender {
	l := &gatherTestLender{}
	l.Writer = bufio.NewWriterSize(&l.out, size)
	return l
}

func (l *gatherTestLender) Write(p []byte) (int, error) {
	l.writes++
	return l.Writer.Write(p)
}

// TestWriterCloseGathersWrites: Close writes a file's last blocks and trailer in one Write when the
// output lends its buffer (blockOutput's gathering), and the file is the same as through a writer that
// lends nothing (a Write per block). Small buffers make the gathered bytes outgrow the lent buffer
// mid-Close, where they are written and gathering goes on in the next one; large cells and many
// rows make files with leaf index and several bloom chunks written at Close.
func TestWriterCloseGathersWrites(t *testing.T) {
	settings := []struct {
		name string
		set  func(*WriterOptions)
	}{
		{"defaults", func(*WriterOptions) {}},
		{"snappy", func(o *WriterOptions) { o.Compression = CompressionSnappy }},
		{"gz+fast_diff+rowcol", func(o *WriterOptions) {
			o.Compression, o.Encoding, o.Bloom = CompressionGZ, EncodingFastDiff, BloomRowCol
		}},
		{"v2+nobloom+small-index", func(o *WriterOptions) {
			o.FormatVersion, o.Bloom, o.IndexBlockMaxSize, o.BloomBlockSize = 2, BloomNone, 256, 512
		}},
	}
	sizes := []int{16, 600, 5000, 70000, 1 << 20}
	for _, st := range settings {
		for _, rows := range []int{1, 20, 3000} {
			t.Run(fmt.Sprintf("%s/rows%d", st.name, rows), func(t *testing.T) {
				opts := DefaultWriterOptions()
				opts.BlockSize = 4096
				st.set(&opts)
				cells := func(w *Writer) {
					for i := 0; i < rows; i++ {
						row := []byte(fmt.Sprintf("row%08d", i))
						v := []byte(fmt.Sprintf("value-%d-%s", i, bytes.Repeat([]byte{'x'}, i%70)))
						if i == rows/2 {
							v = bytes.Repeat([]byte("big"), 3000)
						}
						for q := 0; q < 3; q++ {
							if err := w.AppendParts(row, []byte("d"), []byte(fmt.Sprintf("q%d", q)), 1700000000000, kv.TypePut, v, nil); err != nil {
								t.Fatal(err)
							}
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
				for _, size := range sizes {
					l := newGatherTestLender(size)
					w, err := NewWriter(l, opts)
					if err != nil {
						t.Fatal(err)
					}
					cells(w)
					before := l.writes
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					closeWrites := l.writes - before
					if err := l.Flush(); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(l.out.Bytes(), want.b.Bytes()) {
						t.Fatalf("buffer %d: the file differs from the one written a block at a time: %d bytes, want %d",
							size, l.out.Len(), want.b.Len())
					}
					if got := w.Stats().BytesWritten; got != int64(want.b.Len()) {
						t.Fatalf("buffer %d: BytesWritten %d, want %d", size, got, want.b.Len())
					}
					if size == 1<<20 && closeWrites != 1 {
						t.Fatalf("Close made %d writes into a buffer with room for the file, want 1", closeWrites)
					}
				}
			})
		}
	}
}
