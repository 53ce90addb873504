package hfilewriter

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// writeReuseFile writes n rows of two cells each with w and closes it.
func writeReuseFile(t *testing.T, w *Writer, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		row := []byte(fmt.Sprintf("row-%07d", i*31))
		for _, q := range []string{"a", "b"} {
			v := bytes.Repeat([]byte{byte('0' + i%10)}, 20+i%50)
			if err := w.AppendParts(row, []byte("f"), []byte(q), 1700000000000, kv.TypePut, v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A chain of Writers each made with NewWriterReusing from the one before writes the same bytes as
// fresh Writers, whatever the options and sizes of the files before (compressor kept or replaced,
// blocks built in a lent buffer or not, bloom chunks folded or full).
func TestWriterReusingSameBytes(t *testing.T) {
	snappyDiff := WriterOptions{Compression: CompressionSnappy, Encoding: EncodingFastDiff}
	files := []struct {
		opts WriterOptions
		rows int
		info []string // user file info keys: the sorted order of the keys changes with them
	}{
		{snappyDiff, 3, nil}, {snappyDiff, 5000, []string{"zz", "A"}}, {snappyDiff, 1, []string{"A", "zz"}}, {snappyDiff, 0, nil},
		{snappyDiff, 2, []string{"m"}}, {snappyDiff, 2, []string{"A"}},
		{WriterOptions{}, 4000, nil}, {WriterOptions{}, 2, nil},
		{WriterOptions{Compression: CompressionGZ, Bloom: BloomRowCol}, 3000, nil},
		{WriterOptions{Compression: CompressionGZ, CompressionLevel: 1}, 10, nil},
		{WriterOptions{Compression: CompressionZSTD, Bloom: BloomNone}, 2500, nil},
		{snappyDiff, 7, nil},
		// Multi-level data indexes (leaf chunks written inline, intermediate levels) before and after
		// single-level ones: the index writer's chunks are reused.
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 256}, 3000, nil}, {WriterOptions{BlockSize: 512}, 40, nil},
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 300}, 2000, []string{"k"}},
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 256}, 1, nil},
		// The trailer's buffer: a v2 trailer between v3 ones, messages shorter than the last one's.
		{WriterOptions{FormatVersion: 2, NoTags: true}, 3000, nil}, {WriterOptions{FormatVersion: 2, NoTags: true}, 1, nil},
		{snappyDiff, 4000, nil}, {snappyDiff, 0, nil},
	}
	info := func(w *Writer, keys []string) {
		for _, k := range keys {
			if err := w.AppendFileInfo(k, []byte("v-"+k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var prev *Writer
	for i, f := range files {
		var want bytes.Buffer
		w, err := NewWriter(&want, f.opts)
		if err != nil {
			t.Fatal(err)
		}
		info(w, f.info)
		writeReuseFile(t, w, f.rows)

		var got bytes.Buffer
		out := bufio.NewWriterSize(&got, 256<<10) // lends its buffer (AvailableBuffer)
		r, err := NewWriterReusing(out, f.opts, prev)
		if err != nil {
			t.Fatal(err)
		}
		info(r, f.info)
		writeReuseFile(t, r, f.rows)
		if err := out.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("file %d (%+v, %d rows): reusing writer wrote %d bytes, fresh one %d, and they differ",
				i, f.opts, f.rows, got.Len(), want.Len())
		}
		prev = r
	}
	// A Writer still open gives nothing away.
	open, err := NewWriter(&bytes.Buffer{}, snappyDiff)
	if err != nil {
		t.Fatal(err)
	}
	if err := open.AppendParts([]byte("r"), []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWriterReusing(&bytes.Buffer{}, snappyDiff, open); err != nil {
		t.Fatal(err)
	}
	writeReuseFile(t, open, 0) // still usable: closes cleanly
}

// A chain of StreamVerifiers each made with NewStreamVerifierReusing from the one before passes every
// good file and fails a damaged one, whatever came before it.
func TestStreamVerifierReusing(t *testing.T) {
	snappyDiff := WriterOptions{Compression: CompressionSnappy, Encoding: EncodingFastDiff}
	var prev *StreamVerifier
	for i, f := range []struct {
		opts   WriterOptions
		rows   int
		damage bool
		tail   bool // damage the last block before the trailer (load-on-open: kept by the verifier)
	}{
		{snappyDiff, 5000, false, false}, {snappyDiff, 3, false, false}, {snappyDiff, 4000, true, false}, {snappyDiff, 2, false, false},
		{WriterOptions{Compression: CompressionGZ}, 3000, false, false}, {WriterOptions{}, 1, true, false}, {WriterOptions{}, 10, false, false},
		{snappyDiff, 6000, false, false}, {snappyDiff, 4, true, true}, {snappyDiff, 5, false, false}, {WriterOptions{}, 2000, true, true},
		// Multi-level data indexes (the walk's buffers by depth are reused), bloom types coming and
		// going (the bloom metadata parsed into the same storage), damage in the load-on-open section
		// after each.
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 256}, 3000, false, false},
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 256}, 2500, true, true},
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 300, Bloom: BloomRowCol}, 2000, false, false},
		{WriterOptions{Bloom: BloomNone}, 30, false, false}, {WriterOptions{Bloom: BloomRowCol}, 40, true, true},
		{WriterOptions{BlockSize: 512, IndexBlockMaxSize: 256}, 1000, true, false}, {WriterOptions{}, 3, false, false},
	} {
		var file bytes.Buffer
		w, err := NewWriter(&file, f.opts)
		if err != nil {
			t.Fatal(err)
		}
		writeReuseFile(t, w, f.rows)
		data := file.Bytes()
		switch {
		case f.tail:
			data[len(data)-TrailerSizeV3-9] ^= 0x40
		case f.damage:
			data[BlockHeaderSize+7] ^= 0x40 // in the first data block
		}
		sv, err := NewStreamVerifierReusing(io.Discard, f.opts, prev)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(data); off += 1000 { // blocks span writes: the pending buffer is used
			sv.Write(data[off:min(off+1000, len(data))])
		}
		if err := sv.Finish(); (err != nil) != f.damage {
			t.Fatalf("file %d (%d rows, damaged %v): Finish returned %v", i, f.rows, f.damage, err)
		}
		prev = sv
	}
}

// The file info put straight into the last file's message (writeFileInfoMap.direct) is the one a
// fresh Writer writes: a chain of reused Writers over small files whose info has the same keys with
// values of the same lengths (taken in place) or not (other row lengths, user keys, options, no
// cells: put again), against fresh Writers.
func TestWriterReusingFileInfoDirect(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	optsList := []WriterOptions{
		{Compression: CompressionSnappy, Encoding: EncodingFastDiff},
		{},
		{Bloom: BloomRowCol},
		{FormatVersion: 2, NoTags: true},
		{BulkLoad: &BulkLoadInfo{Time: 1700000000000, SourceTask: "t"}},
		{BulkLoad: &BulkLoadInfo{Time: 1700000000001, SourceTask: "task", MajorCompaction: true}},
	}
	infos := [][]string{nil, {"user.a"}, {"user.b"}, {"user.a", "user.c"}}
	var prev *Writer
	direct := 0
	opt, info, rowLen := 0, 0, 9
	for i := 0; i < 400; i++ {
		switch rng.Intn(12) { // mostly the same shape as the file before
		case 0:
			opt = rng.Intn(len(optsList))
		case 1:
			info = rng.Intn(len(infos))
		case 2:
			rowLen = 9 + rng.Intn(2)
		}
		rows := 1 + rng.Intn(3)
		if rng.Intn(40) == 0 {
			rows = 0
		}
		write := func(w *Writer) {
			for _, k := range infos[info] {
				if err := w.AppendFileInfo(k, []byte(fmt.Sprint("v", i%3))); err != nil {
					t.Fatal(err)
				}
			}
			for r := 0; r < rows; r++ {
				row := []byte(fmt.Sprintf("%0*d", rowLen, i*10+r))
				v := bytes.Repeat([]byte{'v'}, 1+rng.Intn(30))
				ts := int64(1700000000000 + rng.Intn(1000))
				if err := w.AppendParts(row, []byte("f"), []byte("q"), ts, kv.TypePut, v, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		state := rng.Int63()
		var want bytes.Buffer
		fresh, err := NewWriter(&want, optsList[opt])
		if err != nil {
			t.Fatal(err)
		}
		rng.Seed(state)
		write(fresh)
		var got bytes.Buffer
		r, err := NewWriterReusing(&got, optsList[opt], prev)
		if err != nil {
			t.Fatal(err)
		}
		rng.Seed(state)
		write(r)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("file %d (%+v, %d rows of %d bytes, info %v): the reused writer's bytes differ from a fresh one's",
				i, optsList[opt], rows, rowLen, infos[info])
		}
		if r.fi.direct != nil {
			direct++
		}
		prev = r
	}
	if direct < 100 {
		t.Fatalf("file info put in place for %d files of 400", direct)
	}
}
