package hfilewriter

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// estimatedSizeRef is EstimatedSize computed from scratch, as it was before sizeEstimate kept a part.
func estimatedSizeRef(w *Writer) int64 {
	n := w.out.offset
	if w.blkOpen {
		n += int64(len(w.blk)) + 4
	}
	n += int64(w.index.cur.nonRootSize()+w.index.root.rootSize) + 2*blockOverhead
	for _, bw := range []*writeBloomWriter{w.bloom, w.dfBloom} {
		if bw == nil || bw.totalKeys == 0 {
			continue
		}
		for _, c := range bw.ready {
			n += int64(len(c.bits)) + blockOverhead
		}
		if c := bw.chunk; c != nil {
			size, maxKeys := c.size, c.maxKeys
			for size&1 == 0 && maxKeys > c.keyCount<<1 {
				size >>= 1
				maxKeys >>= 1
			}
			n += int64(size) + blockOverhead
		}
		n += int64(bw.index.rootSize+len(bw.ready)*64+64) + blockOverhead
	}
	lastKeyLen := 0
	if w.entries > 0 {
		lastKeyLen = kv.KeyInfrastructureSize + len(w.lastRow) + len(w.family) + len(w.lastQual)
	}
	n += blockOverhead + blockOverhead + 512 + 2*int64(lastKeyLen)
	if w.opts.FormatVersion == 2 {
		return n + TrailerSizeV2
	}
	return n + TrailerSizeV3
}

// TestEstimatedSizeKeptPart: EstimatedSize, which keeps the part that changes only as blocks are
// written and bloom chunks start, equals the estimate computed from scratch after every cell, with
// every bloom type, bloom chunks of a few hundred keys, small blocks (leaf index blocks), encoded and
// compressed blocks, delete-family cells, rows of one to three cells, a row bloom shared with another
// file, and a writer reused for a second file.
func TestEstimatedSizeKeptPart(t *testing.T) {
	small := func(o WriterOptions) WriterOptions {
		o.BlockSize, o.BloomBlockSize = 512, 256
		return o
	}
	cases := []struct {
		name  string
		opts  func(WriterOptions) WriterOptions
		share bool
	}{
		{name: "default", opts: func(o WriterOptions) WriterOptions { return o }},
		{name: "small-row", opts: small},
		{name: "small-rowcol", opts: func(o WriterOptions) WriterOptions { o = small(o); o.Bloom = BloomRowCol; return o }},
		{name: "small-none-v2", opts: func(o WriterOptions) WriterOptions {
			o = small(o)
			o.Bloom, o.FormatVersion = BloomNone, 2
			return o
		}},
		{name: "small-fastdiff-snappy", opts: func(o WriterOptions) WriterOptions {
			o = small(o)
			o.Encoding, o.Compression = EncodingFastDiff, CompressionSnappy
			return o
		}},
		{name: "small-shared", opts: small, share: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts(DefaultWriterOptions())
			var share *RowBloomShare
			if c.share {
				var err error
				if share, err = NewRowBloomShare(opts, 1); err != nil {
					t.Fatal(err)
				}
			}
			var spare *Writer
			checked := 0
			for file := 0; file < 2; file++ {
				w, err := NewWriterReusing(io.Discard, opts, spare)
				if err != nil {
					t.Fatal(err)
				}
				if share != nil && file == 0 {
					w.ShareRowBloom(share, 0)
				}
				check := func(what string) {
					t.Helper()
					if got, want := w.EstimatedSize(), estimatedSizeRef(w); got != want {
						t.Fatalf("file %d, %s: EstimatedSize %d, from scratch %d", file, what, got, want)
					}
					checked++
				}
				check("empty")
				for i := 0; i < 6000; i++ {
					row := []byte(fmt.Sprintf("C%06d-%010d", i/20, i))
					if share != nil && file == 0 {
						share.Add(HashRow(row))
					}
					typ := kv.TypePut
					if i%97 == 0 {
						typ = kv.TypeDeleteFamily // the delete-family bloom
					}
					if err := w.AppendParts(row, []byte("f"), nil, 5, typ, nil, nil); err != nil {
						t.Fatal(err)
					}
					check(fmt.Sprintf("cell %d", i))
					if typ == kv.TypeDeleteFamily {
						continue
					}
					for q := 0; q < i%3; q++ {
						v := bytes.Repeat([]byte{byte('a' + i%26)}, 10+i%40)
						if err := w.AppendParts(row, []byte("f"), []byte{byte('a' + q)}, 5, kv.TypePut, v, nil); err != nil {
							t.Fatal(err)
						}
						check(fmt.Sprintf("cell %d/%d", i, q))
					}
				}
				if share != nil && file == 0 {
					share.Finish()
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				spare = w
			}
			t.Logf("%d estimates compared", checked)
		})
	}
}

// BenchmarkEstimatedSize is a call on a writer 50,000 rows in (what a file that rolls at a size
// pays for every row it starts).
func BenchmarkEstimatedSize(b *testing.B) {
	w, err := NewWriter(io.Discard, DefaultWriterOptions())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 50000; i++ {
		row := []byte(fmt.Sprintf("C%06d-%010d", i/20, i))
		if err := w.AppendParts(row, []byte("a"), []byte("v"), 1, kv.TypePut, []byte("value1234"), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var s int64
	for i := 0; i < b.N; i++ {
		s += w.EstimatedSize()
	}
	if s == 0 {
		b.Fatal("no estimate")
	}
}

// TestFoldedSizeUntil: the folded size foldedSize reports holds for every key count below the bound it
// reports and no further: for each chunk shape (the default chunk, odd and tiny ones) and every key
// count up to capacity, the cached answer is fold's loop's.
func TestFoldedSizeUntil(t *testing.T) {
	loop := func(size, maxKeys, keyCount int) int {
		for size&1 == 0 && maxKeys > keyCount<<1 {
			size >>= 1
			maxKeys >>= 1
		}
		return size
	}
	def := BloomParams(128*1024, 0.01, 7)
	for _, sh := range [][2]int{{def.ByteSize, def.MaxKeys}, {1024, 853}, {1024, 854}, {96, 77}, {7, 5}, {8, 1}, {2, 2}} {
		size, maxKeys := sh[0], sh[1]
		cached, until := foldedSize(size, maxKeys, 0)
		changes := 0
		for k := 0; k <= maxKeys; k++ {
			if k >= until {
				cached, until = foldedSize(size, maxKeys, k)
				changes++
			}
			if want := loop(size, maxKeys, k); cached != want {
				t.Fatalf("chunk %d bytes, %d keys max, %d keys: cached folded size %d, fold's %d", size, maxKeys, k, cached, want)
			}
			if until <= k {
				t.Fatalf("chunk %d bytes, %d keys: bound %d not above the key count", size, maxKeys, until)
			}
		}
		if size == def.ByteSize && changes < 5 {
			t.Fatalf("default chunk: the folded size changed %d times up to capacity; want several", changes)
		}
	}
}
