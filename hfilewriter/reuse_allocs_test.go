package hfilewriter

import (
	"bytes"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// smallFileAllocs is how many heap allocations one small file (a few rows) costs with a Writer and a
// StreamVerifier reused from the file before (NewWriterReusing, NewStreamVerifierReusing), in the
// steady state: with thousands of regions per load, every allocation of a file is thousands of them.
func smallFileAllocs(t *testing.T, opts WriterOptions) float64 {
	t.Helper()
	var out bytes.Buffer
	var w *Writer
	var sv *StreamVerifier
	rows := [][]byte{[]byte("C000001-0000000001"), []byte("C000001-0000000002"), []byte("C000002-0000000003")}
	quals := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	family, value := []byte("d"), []byte("value 123456")
	file := func() {
		out.Reset()
		var err error
		if sv, err = NewStreamVerifierReusing(&out, opts, sv); err != nil {
			t.Fatal(err)
		}
		if w, err = NewWriterReusing(sv, opts, w); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if err := w.AppendParts(row, family, quals[0], 1700000000000, kv.TypePut, value, nil); err != nil {
				t.Fatal(err)
			}
			for _, q := range quals[1:] {
				if err := w.AppendSameRow(q, value); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sv.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	file() // the first file grows the buffers
	file()
	return testing.AllocsPerRun(20, file)
}

// A small file written and stream-verified with the previous file's Writer and StreamVerifier
// allocates nothing: the Writer, its block output, index and bloom writers, and the verifier with the
// Reader, Trailer, indexes, file info and bloom metadata its Finish parses are all reused.
func TestSmallFileAllocs(t *testing.T) {
	for _, c := range []struct {
		name string
		opts WriterOptions
	}{
		{"snappy", WriterOptions{Compression: CompressionSnappy, BulkLoad: &BulkLoadInfo{Time: 1, SourceTask: "t", MajorCompaction: true}}},
		{"none", WriterOptions{}},
		{"fastdiff-rowcol", WriterOptions{Encoding: EncodingFastDiff, Bloom: BloomRowCol}},
		{"snappy-nobloom", WriterOptions{Compression: CompressionSnappy, Bloom: BloomNone}},
	} {
		if n := smallFileAllocs(t, c.opts); n != 0 {
			t.Errorf("%s: %.1f allocations a file, want 0", c.name, n)
		}
	}
}
