package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// streamTestOptionsFor returns the options that describe r's file to a StreamVerifier, as a load
// passes the WriterOptions it wrote the file with: format version, codec, encoding, tags and mvcc.
func streamTestOptionsFor(r *Reader) (WriterOptions, error) {
	o := DefaultWriterOptions()
	o.FormatVersion = r.trailer.MajorVersion
	var ok bool
	if o.Compression, ok = r.trailer.Compression.Compression(); !ok {
		return o, fmt.Errorf("codec %s cannot be written", r.trailer.Compression)
	}
	o.Encoding = r.opts.Encoding
	o.NoTags = !r.opts.Tags
	o.NoMVCC = !r.opts.Mvcc
	_, err := o.normalize()
	return o, err
}

// streamTestChunking splits a file into the Write calls a StreamVerifier gets: next returns the size
// of the next Write, given the bytes not yet written.
type streamTestChunking struct {
	name string
	next func(rest []byte) int
}

// streamTestChunkings: the whole file in one Write, one byte per Write, random sizes (mostly small,
// some large, seeded), and one Write per block as the Writer makes them (cut by the block headers).
func streamTestChunkings(seed uint64) []streamTestChunking {
	return []streamTestChunking{
		{"whole-file", streamTestWholeFile},
		{"1-byte", func(rest []byte) int { return 1 }},
		{"random", streamTestRandomSizes(seed)},
		{"whole-blocks", streamTestNextBlock},
	}
}

func streamTestWholeFile(rest []byte) int { return len(rest) }

// streamTestRandomSizes returns Write sizes of 1-8, 1-100, 1-2000 or 1-70000 bytes, at random.
func streamTestRandomSizes(seed uint64) func(rest []byte) int {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	return func(rest []byte) int {
		switch rng.IntN(4) {
		case 0:
			return 1 + rng.IntN(8)
		case 1:
			return 1 + rng.IntN(100)
		case 2:
			return 1 + rng.IntN(2000)
		}
		return 1 + rng.IntN(70000)
	}
}

// streamTestNextBlock cuts at the block boundaries the headers give; the rest (the trailer, or
// whatever follows a header that does not parse) goes in one piece.
func streamTestNextBlock(rest []byte) int {
	if h, err := readParseBlockHeader(rest); err == nil && h.OnDiskSize() <= len(rest) {
		return h.OnDiskSize()
	}
	return len(rest)
}

// streamTestSplit cuts d into the chunks next gives.
func streamTestSplit(d []byte, next func(rest []byte) int) [][]byte {
	var out [][]byte
	for len(d) > 0 {
		n := min(max(next(d), 1), len(d))
		out = append(out, d[:n])
		d = d[n:]
	}
	return out
}

// streamTestRun streams data, cut by next, through a StreamVerifier made with opts into a buffer and
// returns Finish's error. It checks the verifier's contract on the way: a Write error is the one
// Finish returns, and what the verifier passes on is exactly what it was given.
func streamTestRun(t testing.TB, data []byte, next func(rest []byte) int, opts WriterOptions) error {
	t.Helper()
	var out bytes.Buffer
	sv, err := NewStreamVerifier(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	in := 0
	var writeErr error
	for in < len(data) {
		c := data[in : in+min(max(next(data[in:]), 1), len(data)-in)]
		n, err := sv.Write(c)
		if n != len(c) {
			t.Fatalf("Write of %d bytes returned %d (%v); the underlying writer took them all", len(c), n, err)
		}
		in += n
		if err != nil {
			writeErr = err
			break
		}
	}
	finErr := sv.Finish()
	if writeErr != nil && (finErr == nil || finErr.Error() != writeErr.Error()) {
		t.Fatalf("Write returned %q but Finish %v", writeErr, finErr)
	}
	if again := sv.Finish(); fmt.Sprint(again) != fmt.Sprint(finErr) {
		t.Fatalf("second Finish returned %v, the first %v", again, finErr)
	}
	if !bytes.Equal(out.Bytes(), data[:in]) {
		t.Fatalf("the verifier passed on %d bytes that differ from the %d it was given", out.Len(), in)
	}
	return finErr
}

// streamTestAllChunkings streams data in every chunking and requires the same result from each.
func streamTestAllChunkings(t testing.TB, data []byte, opts WriterOptions, seed uint64) error {
	t.Helper()
	var first error
	for i, ch := range streamTestChunkings(seed) {
		err := streamTestRun(t, data, ch.next, opts)
		if i == 0 {
			first = err
		} else if fmt.Sprint(err) != fmt.Sprint(first) {
			t.Fatalf("chunking %s gives %v, whole-file gives %v", ch.name, err, first)
		}
	}
	return first
}

// streamTestVerifyBlocks is what a load ran before: open the bytes and VerifyBlocks.
func streamTestVerifyBlocks(data []byte) error {
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	return r.VerifyBlocks()
}

// streamTestWrite writes cells through a StreamVerifier into memory, requires Finish to pass and
// returns the file.
func streamTestWrite(t testing.TB, o WriterOptions, cells []Cell) []byte {
	t.Helper()
	var buf bytes.Buffer
	sv, err := NewStreamVerifier(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(sv, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cells {
		if err := w.Append(&cells[i]); err != nil {
			t.Fatalf("append cell %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sv.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return buf.Bytes()
}

// streamTestCheckWritten checks a file written through the verifier: the bytes are those the
// writer writes without it, VerifyBlocks agrees, and every chunking of the bytes passes.
func streamTestCheckWritten(t *testing.T, data []byte, o WriterOptions, cells []Cell, seed uint64) *Reader {
	t.Helper()
	if plain := writeCells(t, o, cells); !bytes.Equal(data, plain) {
		t.Fatalf("the verifier changed the file: %d bytes, %d without it", len(data), len(plain))
	}
	r := readerTestOpen(t, data)
	if err := r.VerifyBlocks(); err != nil {
		t.Fatalf("VerifyBlocks disagrees: %v", err)
	}
	if err := streamTestAllChunkings(t, data, o, seed); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStreamVerifierCodecMatrix: for every format version, codec, encoding and bloom type, with a
// one- and a multi-level data index (256-byte index and bloom chunks), tags in every v3 file and
// delete-family blooms, a file written through the verifier passes Finish, is byte-identical to the
// file written without it, passes VerifyBlocks, and its bytes pass in every chunking.
func TestStreamVerifierCodecMatrix(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		version := o.FormatVersion
		for _, multi := range []bool{false, true} {
			seed := uint64(2*i - 1)
			if multi {
				seed++
				o.IndexBlockMaxSize, o.BloomBlockSize = 256, 256
				name += "-multilevel"
			}
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 11))
				cells := matrixTestCells(t, rng, 300, version == 3)
				data := streamTestWrite(t, o, cells)
				r := streamTestCheckWritten(t, data, o, cells, seed)
				if levels := r.trailer.NumDataIndexLevels; multi && levels < 2 || !multi && levels != 1 {
					t.Fatalf("%d data index levels", levels)
				}
				if r.trailer.EntryCount != uint64(len(cells)) || r.IncludesTags() != (version == 3) {
					t.Fatalf("entry count %d of %d cells, tags %v", r.trailer.EntryCount, len(cells), r.IncludesTags())
				}
			})
		}
	})
}

// TestStreamVerifierLayouts covers what the matrix does not: sequence ids (multi-byte vlongs),
// no MVCC, v3 without tags, checksum variants, an empty file, cells bigger than a block (one of them
// bigger than the buffer the verifier keeps for reuse), a three-level index and bulk-load metadata.
func TestStreamVerifierLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seqCells := readerTestCells(rng, 500, true) // sequence ids 0, 1000, 2000
	plainCells := readerTestCells(rng, 500, false)
	for i := range plainCells {
		plainCells[i].SeqID = 0
	}
	bigCells := []Cell{
		{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: bytes.Repeat([]byte("x"), 300<<10)},
		{Row: []byte("b"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: []byte("small")},
		{Row: []byte("c"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: bytes.Repeat([]byte("yz"), 3<<20)},
	}
	manyCells := readerTestCells(rng, 6000, false)
	for i := range manyCells {
		manyCells[i].SeqID = 0
	}
	cases := []struct {
		name   string
		mod    func(o *WriterOptions)
		cells  []Cell
		levels uint32 // at least
	}{
		{"sequence-ids", func(o *WriterOptions) {}, seqCells, 1},
		{"sequence-ids-fastdiff-gz", func(o *WriterOptions) { o.Encoding, o.Compression = EncodingFastDiff, CompressionGZ }, seqCells, 1},
		{"no-mvcc", func(o *WriterOptions) { o.NoMVCC = true }, plainCells, 1},
		{"v3-no-tags", func(o *WriterOptions) { o.NoTags = true }, plainCells, 1},
		{"v2", func(o *WriterOptions) { o.FormatVersion = 2 }, plainCells, 1},
		{"crc32-33", func(o *WriterOptions) { o.Checksum, o.BytesPerChecksum = ChecksumCRC32, 33 }, plainCells, 1},
		{"checksum-null", func(o *WriterOptions) { o.Checksum = ChecksumNull }, plainCells, 1},
		{"empty", func(o *WriterOptions) {}, nil, 1},
		{"empty-v2-snappy-prefix", func(o *WriterOptions) {
			o.FormatVersion, o.Compression, o.Encoding = 2, CompressionSnappy, EncodingPrefix
		}, nil, 1},
		{"big-cells", func(o *WriterOptions) {}, bigCells, 1},
		{"big-cells-zstd-diff", func(o *WriterOptions) { o.Compression, o.Encoding = CompressionZSTD, EncodingDiff }, bigCells, 1},
		{"three-levels", func(o *WriterOptions) { o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize = 256, 256, 256 }, manyCells, 3},
		{"bulk-load", func(o *WriterOptions) {
			o.BulkLoad = &BulkLoadInfo{Time: 1700000000000, SourceTask: "task", MajorCompaction: true}
		}, plainCells, 1},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultWriterOptions()
			o.BlockSize = 2048
			tc.mod(&o)
			data := streamTestWrite(t, o, tc.cells)
			r := streamTestCheckWritten(t, data, o, tc.cells, uint64(i))
			if got := r.trailer.NumDataIndexLevels; got < tc.levels || tc.levels == 1 && got != 1 {
				t.Fatalf("%d data index levels, want %d", got, tc.levels)
			}
			if r.trailer.EntryCount != uint64(len(tc.cells)) {
				t.Fatalf("entry count %d, want %d", r.trailer.EntryCount, len(tc.cells))
			}
		})
	}
}

// TestStreamVerifierGoldens: every file HBase wrote (all versions, codecs, encodings, blooms, tags,
// multi-level indexes, non-zero mvcc) passes the stream verifier in every chunking, given the options
// that describe it, as it passes VerifyBlocks.
func TestStreamVerifierGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/hbase-*/*.hfile")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 27 {
		t.Fatalf("found %d golden files, want at least 27", len(files))
	}
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := readerTestOpen(t, data)
		if err := r.VerifyBlocks(); err != nil {
			t.Fatalf("%s: VerifyBlocks: %v", f, err)
		}
		o, err := streamTestOptionsFor(r)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for seed := uint64(0); seed < 3; seed++ {
			if err := streamTestAllChunkings(t, data, o, uint64(i)*10+seed); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

// streamTestBase is an intact file the damage tests start from.
type streamTestBase struct {
	name string
	data []byte
	r    *Reader
	opts WriterOptions
}

func streamTestBases(t *testing.T) []streamTestBase {
	t.Helper()
	var bases []streamTestBase
	add := func(name string, data []byte) {
		r := readerTestOpen(t, data)
		o, err := streamTestOptionsFor(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.VerifyBlocks(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bases = append(bases, streamTestBase{name, data, r, o})
	}
	for _, f := range []string{corruptGolden, "testdata/hbase-2.6.4/seek-v3-none-rowbloom-256b-blocks.hfile",
		"testdata/hbase-1.0.0/v3-none-fastdiff-rowcol-tags-multilevel.hfile", "testdata/hbase-1.0.0/v2-gz-fastdiff-rowcol.hfile"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		add(strings.TrimSuffix(filepath.Base(f), ".hfile"), data)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	cells := matrixTestCells(t, rng, 600, true)
	o := DefaultWriterOptions()
	o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize = 256, 256, 256
	add("written-multilevel-tags", writeCells(t, o, cells))
	o = DefaultWriterOptions()
	o.BlockSize, o.Encoding, o.Compression = 1024, EncodingFastDiff, CompressionSnappy
	add("written-fastdiff-snappy", writeCells(t, o, cells))
	return bases
}

// streamTestErrText strips the prefixes that say which check ran (and, for the Reader, that the
// problem was met while opening the file), leaving what is wrong and where.
func streamTestErrText(err error) string {
	s := err.Error()
	for _, p := range []string{"hfile stream verify: ", "hfile verify: ", "hfile: ", "load-on-open section: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

var streamTestOffsetRe = regexp.MustCompile(`offset (\d+)`)

// streamTestFirstOffset is the first file offset an error names (-1 if none).
func streamTestFirstOffset(err error) int64 {
	m := streamTestOffsetRe.FindStringSubmatch(err.Error())
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// streamTestTrailerField returns where the value of protobuf field num of the trailer starts.
func streamTestTrailerField(t *testing.T, data []byte, r *Reader, num int) int {
	t.Helper()
	if !r.trailer.Protobuf {
		t.Fatal("not a protobuf trailer")
	}
	pos := len(data) - r.trailer.Size + 8
	l, n := binary.Uvarint(data[pos:])
	pos += n
	end := pos + int(l)
	for pos < end {
		tag, n := binary.Uvarint(data[pos:])
		pos += n
		if int(tag>>3) == num {
			return pos
		}
		switch tag & 7 {
		case 0:
			_, n = binary.Uvarint(data[pos:])
			pos += n
		case 2:
			l, n := binary.Uvarint(data[pos:])
			pos += n + int(l)
		default:
			t.Fatalf("trailer field wire type %d", tag&7)
		}
	}
	t.Fatalf("trailer has no field %d", num)
	return 0
}

// streamTestDamage is one way to damage a file: mutate returns the damaged bytes (nil when the
// damage does not apply to the base) and what both checks must say.
type streamTestDamage struct {
	name   string
	mutate func(t *testing.T, b streamTestBase) (damaged []byte, want streamTestWant)
}

// streamTestWant: same means both report the same problem at the same place (equal messages once
// streamTestErrText strips which check ran); otherwise each message must contain its substring.
//
// pass marks damage neither check is meant to catch (both must pass; Reader.Verify catches it).
type streamTestWant struct {
	same         bool
	pass         bool
	reader, strm string
}

func streamTestSame(sub string) streamTestWant {
	return streamTestWant{same: true, reader: sub, strm: sub}
}

func streamTestDamages() []streamTestDamage {
	clone := func(b streamTestBase) []byte { return append([]byte(nil), b.data...) }
	uncompressed := func(b streamTestBase) bool { return b.r.trailer.Compression == CodecNone }
	trailerOff := func(b streamTestBase) int { return len(b.data) - b.r.trailer.Size }
	flipTrailerField := func(num int, want func(b streamTestBase, old, now int64) streamTestWant) func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
		return func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			pos := streamTestTrailerField(t, d, b.r, num)
			old, _ := binary.Uvarint(d[pos:])
			d[pos] ^= 1 // the value's lowest bit: same varint length
			now, _ := binary.Uvarint(d[pos:])
			return d, want(b, int64(old), int64(now))
		}
	}
	return []streamTestDamage{
		{"flipped checksum byte", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			h, _ := readParseBlockHeader(d)
			d[h.OnDiskDataSizeWithHeader] ^= 0x01
			return d, streamTestSame("block at offset 0: checksum: CRC32C mismatch in chunk 0")
		}},
		{"flipped payload byte", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			d[BlockHeaderSize+20] ^= 0x80
			return d, streamTestSame("block at offset 0: checksum")
		}},
		{"flipped uncompressed size", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			d[15] ^= 0x01
			return d, streamTestSame("block at offset 0: checksum")
		}},
		{"flipped on-disk size", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			d[11] ^= 0x04
			return d, streamTestSame("block at offset 0: ")
		}},
		{"bad block magic", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			d[0] = 'X'
			return d, streamTestSame("block at offset 0: unknown block magic")
		}},
		{"truncated by one byte", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			return b.data[:len(b.data)-1], streamTestSame("not an HFile (no trailer)")
		}},
		{"truncated to half", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			cut := len(b.data) / 2
			if cut >= trailerOff(b) { // the trailer loses its end: both read a version from its padding
				return b.data[:cut], streamTestSame("not an HFile (no trailer)")
			}
			// The stream ends inside a block (or its header): the stream verifier names the block.
			at := 0
			for _, c := range streamTestSplit(b.data, streamTestNextBlock) {
				if at+len(c) > cut {
					break
				}
				at += len(c)
			}
			return b.data[:cut], streamTestWant{reader: "not an HFile (no trailer)", strm: fmt.Sprintf("at offset %d: ", at)}
		}},
		{"100 bytes cut before the trailer", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			to := trailerOff(b)
			d := append(append([]byte(nil), b.data[:to-100]...), b.data[to:]...)
			// The last block now takes the trailer's first bytes: it fails its checksum, or runs
			// past the stream's end if the trailer is shorter than what was cut.
			return d, streamTestWant{reader: "load-on-open", strm: "block at offset"}
		}},
		{"empty file", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			return []byte{}, streamTestWant{reader: "not an HFile (no trailer)", strm: "the stream ends at offset 0 without a trailer"}
		}},
		{"garbage after the trailer", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := append(clone(b), 0x00)
			if b.r.trailer.Size == TrailerSizeV3 {
				return d, streamTestWant{reader: "not an HFile (no trailer)",
					strm: fmt.Sprintf("more than 4096 bytes follow the trailer magic at offset %d", trailerOff(b))}
			}
			return d, streamTestSame("not an HFile (no trailer)")
		}},
		{"bad trailer magic", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			d[trailerOff(b)] = 'X'
			return d, streamTestWant{reader: "not an HFile (no trailer): no trailer magic", strm: fmt.Sprintf("block at offset %d: unknown block magic", trailerOff(b))}
		}},
		{"bad version", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			d := clone(b)
			binary.BigEndian.PutUint32(d[len(d)-4:], 0x03000009)
			return d, streamTestSame("unsupported HFile major version 9")
		}},
		{"trailer entry count", flipTrailerField(7, func(b streamTestBase, old, now int64) streamTestWant {
			if b.r.opts.Encoding != EncodingNone { // VerifyBlocks counts the cells of unencoded blocks only
				return streamTestWant{}
			}
			return streamTestSame(fmt.Sprintf("trailer entry count is %d", now))
		})},
		{"trailer first data block offset", flipTrailerField(9, func(b streamTestBase, old, now int64) streamTestWant {
			return streamTestSame(fmt.Sprintf("first data block is at offset %d but the trailer says %d", old, now))
		})},
		{"trailer last data block offset", flipTrailerField(10, func(b streamTestBase, old, now int64) streamTestWant {
			if now > old {
				return streamTestSame(fmt.Sprintf("last data block is at offset %d but the trailer says %d", old, now))
			}
			return streamTestSame(fmt.Sprintf("data block at offset %d lies after the trailer's last data block offset %d", old, now))
		})},
		{"trailer file info offset", flipTrailerField(1, func(b streamTestBase, old, now int64) streamTestWant {
			return streamTestSame(fmt.Sprintf("file info block is at offset %d but the trailer says %d", old, now))
		})},
		{"trailer load-on-open offset", flipTrailerField(2, func(b streamTestBase, old, now int64) streamTestWant {
			return streamTestWant{reader: fmt.Sprintf("block at offset %d", now), strm: fmt.Sprintf("block at offset %d: no block of the file starts there", now)}
		})},
		{"trailer data index count", flipTrailerField(5, func(b streamTestBase, old, now int64) streamTestWant {
			return streamTestSame("data index")
		})},
		{"trailer index levels", flipTrailerField(8, func(b streamTestBase, old, now int64) streamTestWant {
			return streamTestSame("data index level")
		})},
		{"trailer codec", flipTrailerField(12, func(b streamTestBase, old, now int64) streamTestWant {
			// The Reader decompresses the load-on-open section with the wrong codec; the stream
			// verifier decompressed the blocks with the options' codec, which the trailer contradicts.
			return streamTestWant{reader: "load-on-open section",
				strm: fmt.Sprintf("the trailer says compression %s, the blocks were checked as %s", CompressionCodec(now), CompressionCodec(old))}
		})},
		{"root index entry size", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			if !uncompressed(b) {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, b.r.loadOnOpen[0].Offset, func(p []byte) { p[11] ^= 0x01 })
			e := b.r.rootIndex[0]
			if b.r.trailer.NumDataIndexLevels == 1 {
				return d, streamTestSame(fmt.Sprintf("data index entry 0 (key %s) records on-disk size %d", Key(e.Key), e.Size^1))
			}
			return d, streamTestSame(fmt.Sprintf("does not match the %d recorded in the index", e.Size^1))
		}},
		{"root index key raised", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			if !uncompressed(b) || len(b.r.rootIndex) < 2 || b.r.opts.Encoding != EncodingNone {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, b.r.loadOnOpen[0].Offset, func(p []byte) {
				i := bytes.Index(p, b.r.rootIndex[1].Key)
				d := 2 + int(binary.BigEndian.Uint16(p[i:])) - 1 // the row's last byte
				p[i+d] = 0xFF
			})
			if b.r.trailer.NumDataIndexLevels == 1 {
				return d, streamTestSame("data index entry 1 (key")
			}
			return d, streamTestSame("is below its parent's key")
		}},
		{"leaf index entry offset", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			w, err := b.r.walkDataIndex()
			if err != nil {
				t.Fatal(err)
			}
			if !uncompressed(b) || len(w.LeafBlocks) == 0 {
				return nil, streamTestWant{}
			}
			d := clone(b)
			var entryOff int64
			readerTestRewrite(t, d, w.LeafBlocks[0].Offset, func(p []byte) {
				n := int(binary.BigEndian.Uint32(p))
				at := 4*(n+2) + int(binary.BigEndian.Uint32(p[8:])) // entry 1
				entryOff = int64(binary.BigEndian.Uint64(p[at:])) + 1
				binary.BigEndian.PutUint64(p[at:], uint64(entryOff))
			})
			return d, streamTestSame(fmt.Sprintf("data index entry 1 (key %s) points at offset %d where no block starts", Key(w.DataBlocks[1].Key), entryOff))
		}},
		{"blocks out of order", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			// Block 0's last cell gets row byte 0xFF, so block 0 ends after block 1's first key.
			if !uncompressed(b) || b.r.opts.Encoding != EncodingNone || b.r.trailer.DataIndexCount < 2 && b.r.trailer.NumDataIndexLevels < 2 {
				return nil, streamTestWant{}
			}
			d := clone(b)
			blk, err := b.r.readBlockAt(0, b.r.blockLimit(), 0)
			if err != nil {
				t.Fatal(err)
			}
			cells, err := decodeDataBlock(blk.Header.Type, blk.Payload, &b.r.opts)
			if err != nil {
				t.Fatal(err)
			}
			last := cells[len(cells)-1]
			readerTestRewrite(t, d, 0, func(p []byte) {
				i := bytes.LastIndex(p, last.Key())
				p[i+2] = 0xFF
			})
			return d, streamTestSame("data block 1 at offset")
		}},
		{"cells out of order inside a block", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			// The first cell's row gets first byte 0xFF: it sorts after the second cell of its block.
			// Like VerifyBlocks, the stream verifier checks key order across blocks only.
			if !uncompressed(b) || b.r.opts.Encoding != EncodingNone {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, 0, func(p []byte) { p[10] = 0xFF })
			return d, streamTestWant{pass: true, reader: "data block 0 at offset 0, cell 0 ("}
		}},
		{"value length", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			if !uncompressed(b) || b.r.opts.Encoding != EncodingNone {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, 0, func(p []byte) { p[7]++ })
			return d, streamTestSame("data block 0 at offset 0")
		}},
		{"encoding id", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			if !uncompressed(b) || b.r.opts.Encoding == EncodingNone {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, 0, func(p []byte) { p[1] ^= 0x01 })
			return d, streamTestSame("data block 0 at offset 0 does not start with the file's encoding id")
		}},
		{"file info last key", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			if !uncompressed(b) || b.r.opts.Encoding != EncodingNone {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, b.r.loadOnOpen[2].Offset, func(p []byte) {
				i := bytes.Index(p, b.r.lastKey)
				p[i+len(b.r.lastKey)-1] = byte(kv.TypeDelete)
			})
			return d, streamTestSame("file info hfile.LASTKEY is")
		}},
		{"bloom total size", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			m := b.r.generalBloom
			if !uncompressed(b) || m == nil {
				return nil, streamTestWant{}
			}
			d := clone(b)
			readerTestRewrite(t, d, m.Offset, func(p []byte) { p[11] ^= 0x01 })
			return d, streamTestSame(fmt.Sprintf("%s says %d bytes of bloom chunks", m.BlockType, m.TotalByteSize^1))
		}},
		{"bloom chunk removed", func(t *testing.T, b streamTestBase) ([]byte, streamTestWant) {
			m := b.r.generalBloom
			if m == nil {
				return nil, streamTestWant{}
			}
			c := m.Chunks[0]
			d := append(append([]byte(nil), b.data[:c.Offset]...), b.data[c.Offset+int64(c.Size):]...)
			// Everything after the chunk moved: the trailer's offsets no longer meet blocks.
			return d, streamTestWant{reader: "offset", strm: "offset"}
		}},
	}
}

// TestStreamVerifierDamage runs VerifyBlocks and the stream verifier (in every chunking) on the same
// damaged bytes, for every damage the corruption tests inject: byte flips, truncation, trailer, index,
// file info and bloom damage, order across blocks. Both must fail, naming the same problem.
func TestStreamVerifierDamage(t *testing.T) {
	applied := map[string]int{}
	for bi, b := range streamTestBases(t) {
		for ci, dmg := range streamTestDamages() {
			t.Run(b.name+"/"+dmg.name, func(t *testing.T) {
				d, want := dmg.mutate(t, b)
				if d == nil || want.reader == "" {
					t.Skip("does not apply to this file")
				}
				applied[dmg.name]++
				errR := streamTestVerifyBlocks(d)
				errS := streamTestAllChunkings(t, d, b.opts, uint64(bi*100+ci))
				if want.pass {
					if errR != nil || errS != nil {
						t.Fatalf("VerifyBlocks: %v; stream verifier: %v; want both to pass", errR, errS)
					}
					if err := readerTestOpen(t, d).Verify(); err == nil || !strings.Contains(err.Error(), want.reader) {
						t.Fatalf("Verify: %v, want an error containing %q", err, want.reader)
					}
					return
				}
				if errR == nil || errS == nil {
					t.Fatalf("VerifyBlocks: %v; stream verifier: %v", errR, errS)
				}
				if !strings.Contains(errR.Error(), want.reader) {
					t.Errorf("VerifyBlocks error %q does not contain %q", errR, want.reader)
				}
				if !strings.Contains(errS.Error(), want.strm) {
					t.Errorf("stream verifier error %q does not contain %q", errS, want.strm)
				}
				if want.same && streamTestErrText(errR) != streamTestErrText(errS) {
					t.Errorf("different errors:\nVerifyBlocks:    %v\nstream verifier: %v", errR, errS)
				}
			})
		}
	}
	for _, dmg := range streamTestDamages() {
		if applied[dmg.name] == 0 {
			t.Errorf("damage %q applied to no file", dmg.name)
		}
	}
}

// TestStreamVerifierEveryBlock flips bytes in every block (magic, size fields, previous-offset field,
// payload, checksums) and across the block area: VerifyBlocks and the stream verifier both fail, name
// the damaged block's offset first and, for a flip after the header, give the same message; two
// chunkings give the same result.
func TestStreamVerifierEveryBlock(t *testing.T) {
	for bi, b := range streamTestBases(t) {
		blockArea := len(b.data) - b.r.trailer.Size
		type flip struct {
			pos      int
			blockOff int
		}
		var flips []flip
		blocks := streamTestSplit(b.data, streamTestNextBlock)
		off := 0
		for _, blk := range blocks[:len(blocks)-1] {
			h, err := readParseBlockHeader(blk)
			if err != nil {
				t.Fatal(err)
			}
			// Magic, on-disk size, uncompressed size, previous offset, bytes per checksum, data size,
			// payload, last checksum byte.
			for _, p := range []int{0, 11, 15, 20, 28, 32, (BlockHeaderSize + h.OnDiskDataSizeWithHeader) / 2, len(blk) - 1} {
				flips = append(flips, flip{off + p, off})
			}
			off += len(blk)
		}
		if off != blockArea {
			t.Fatalf("%s: blocks end at %d, the trailer starts at %d", b.name, off, blockArea)
		}
		stride := max(1, blockArea/200)
		for i := 0; i < blockArea; i += stride {
			flips = append(flips, flip{i, -1})
		}
		for fi, f := range flips {
			d := append([]byte(nil), b.data...)
			d[f.pos] ^= 0x5A
			errR := streamTestVerifyBlocks(d)
			errS := streamTestRun(t, d, streamTestWholeFile, b.opts)
			if chunked := streamTestRun(t, d, streamTestRandomSizes(uint64(bi*100000+fi)), b.opts); fmt.Sprint(chunked) != fmt.Sprint(errS) {
				t.Fatalf("%s: flip at %d: whole file gives %v, random chunks %v", b.name, f.pos, errS, chunked)
			}
			if errR == nil || errS == nil {
				t.Fatalf("%s: flip at %d: VerifyBlocks: %v; stream verifier: %v", b.name, f.pos, errR, errS)
			}
			if f.blockOff < 0 {
				continue
			}
			if r, s := streamTestFirstOffset(errR), streamTestFirstOffset(errS); r != int64(f.blockOff) || s != int64(f.blockOff) {
				t.Errorf("%s: flip at %d in the block at %d:\nVerifyBlocks:    %v\nstream verifier: %v", b.name, f.pos, f.blockOff, errR, errS)
			}
			if f.pos-f.blockOff >= BlockHeaderSize && streamTestErrText(errR) != streamTestErrText(errS) {
				t.Errorf("%s: flip at %d: different errors:\nVerifyBlocks:    %v\nstream verifier: %v", b.name, f.pos, errR, errS)
			}
		}
	}
}

// TestStreamVerifierOptionsMismatch: a file checked with options other than those it was written
// with fails, with the difference named (the file itself is fine: VerifyBlocks passes).
func TestStreamVerifierOptionsMismatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	cells := matrixTestCells(t, rng, 200, true)
	o := DefaultWriterOptions()
	o.BlockSize = 1024
	data := writeCells(t, o, cells)
	if err := streamTestVerifyBlocks(data); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		mod  func(o *WriterOptions)
		want string
	}{
		{"encoding", func(o *WriterOptions) { o.Encoding = EncodingFastDiff }, "the file info says data block encoding NONE, the blocks were checked as FAST_DIFF"},
		{"compression", func(o *WriterOptions) { o.Compression = CompressionGZ }, "block at offset 0: decompressing"},
		{"no tags", func(o *WriterOptions) { o.NoTags = true }, "data block 0 at offset 0"},
		{"no mvcc", func(o *WriterOptions) { o.NoMVCC = true }, "data block 0 at offset 0"},
		{"v2", func(o *WriterOptions) { o.FormatVersion = 2 }, "data block 0 at offset 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vo := o
			tc.mod(&vo)
			err := streamTestAllChunkings(t, data, vo, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Options that match the layout but not the rest (block size, bloom, checksums) do not matter.
	vo := o
	vo.BlockSize, vo.Bloom, vo.Checksum = 65536, BloomRowCol, ChecksumCRC32
	if err := streamTestAllChunkings(t, data, vo, 2); err != nil {
		t.Fatal(err)
	}
}

// TestStreamVerifierMemstoreTS: with MAX_MEMSTORE_TS_KEY 0, readers take one byte per cell without
// decoding it. One-byte sequence ids then count as 0 in both checks (the file passes both); a
// multi-byte one fails both.
func TestStreamVerifierMemstoreTS(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  uint64
		want string // "" for a pass
	}{
		{"one-byte ids", 100, ""},
		{"multi-byte ids", 1000, "its sequence id takes 3 bytes, but with MAX_MEMSTORE_TS_KEY 0 readers take one byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			cells := readerTestCells(rng, 300, false)
			for i := range cells {
				cells[i].SeqID = tc.seq * uint64(i%2)
			}
			o := DefaultWriterOptions()
			o.BlockSize = 1024
			data := writeCells(t, o, cells)
			r := readerTestOpen(t, data)
			readerTestRewrite(t, data, r.loadOnOpen[2].Offset, func(p []byte) {
				i := bytes.Index(p, []byte(FileInfoMaxMemstoreTS+"\x12\x08"))
				if i < 0 {
					t.Fatal("MAX_MEMSTORE_TS_KEY not found")
				}
				clear(p[i+len(FileInfoMaxMemstoreTS)+2:][:8])
			})
			if readerTestOpen(t, data).opts.DecodeMvcc {
				t.Fatal("the rewritten file still decodes sequence ids")
			}
			o2, err := streamTestOptionsFor(r)
			if err != nil {
				t.Fatal(err)
			}
			errR := streamTestVerifyBlocks(data)
			errS := streamTestAllChunkings(t, data, o2, 3)
			if tc.want == "" {
				if errR != nil || errS != nil {
					t.Fatalf("VerifyBlocks: %v; stream verifier: %v", errR, errS)
				}
				return
			}
			if errR == nil || errS == nil || !strings.Contains(errS.Error(), tc.want) {
				t.Fatalf("VerifyBlocks: %v; stream verifier: %v (want %q)", errR, errS, tc.want)
			}
		})
	}
}

// streamTestFailingWriter fails once it has taken limit bytes.
type streamTestFailingWriter struct {
	n, limit int
}

var errStreamTestDisk = errors.New("disk full")

func (w *streamTestFailingWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n = w.limit
		return k, errStreamTestDisk
	}
	w.n += len(p)
	return len(p), nil
}

// TestStreamVerifierErrors: the underlying writer's error reaches the Writer and Finish; a bad
// block fails the Write that completes it (and so the Writer) and Finish with the same error;
// Write after Finish fails; nil writers and bad options are refused.
func TestStreamVerifierErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	cells := matrixTestCells(t, rng, 300, true)
	o := DefaultWriterOptions()
	o.BlockSize = 1024

	// The disk fills up during the fifth block.
	fw := &streamTestFailingWriter{limit: 4*1100 + 10}
	sv, err := NewStreamVerifier(fw, o)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(sv, o)
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for i := range cells {
		if werr = w.Append(&cells[i]); werr != nil {
			break
		}
	}
	if werr == nil {
		werr = w.Close()
	}
	if !errors.Is(werr, errStreamTestDisk) {
		t.Fatalf("writer error %v, want the disk's", werr)
	}
	if err := sv.Finish(); !errors.Is(err, errStreamTestDisk) || !strings.Contains(err.Error(), "the underlying writer failed at offset") {
		t.Fatalf("Finish: %v", err)
	}
	if _, err := sv.Write([]byte{1}); err == nil {
		t.Fatal("Write after Finish succeeded")
	}

	// Checked as a file without tags, the first data block misparses: the writer fails.
	var buf bytes.Buffer
	vo := o
	vo.NoTags = true
	sv, err = NewStreamVerifier(&buf, vo)
	if err != nil {
		t.Fatal(err)
	}
	if w, err = NewWriter(sv, o); err != nil {
		t.Fatal(err)
	}
	werr = nil
	for i := range cells {
		if werr = w.Append(&cells[i]); werr != nil {
			break
		}
	}
	if werr == nil {
		t.Fatal("the writer went on after the verifier rejected a block")
	}
	ferr := sv.Finish()
	if ferr == nil || !strings.Contains(werr.Error(), ferr.Error()) || !strings.Contains(ferr.Error(), "hfile stream verify: data block 0 at offset 0") {
		t.Fatalf("writer error %v, Finish %v", werr, ferr)
	}
	if buf.Len() == 0 {
		t.Fatal("the block was not passed on before it was checked")
	}

	if _, err := NewStreamVerifier(nil, o); err == nil {
		t.Fatal("nil writer accepted")
	}
	bad := o
	bad.Encoding = EncodingRowIndexV1
	if _, err := NewStreamVerifier(io.Discard, bad); err == nil {
		t.Fatal("an encoding the writer cannot write accepted")
	}
}

// TestStreamVerifierMemory: the verifier keeps the payloads of index, file info and bloom metadata
// blocks only (never data or bloom chunk bytes), and checks blocks that arrive whole in place,
// without buffering them; split blocks are buffered one at a time.
func TestStreamVerifierMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	cells := matrixTestCells(t, rng, 2000, true)
	o := DefaultWriterOptions()
	o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize = 512, 512, 256
	data := writeCells(t, o, cells)
	r := readerTestOpen(t, data)
	w, err := r.walkDataIndex()
	if err != nil {
		t.Fatal(err)
	}
	if len(w.LeafBlocks) < 2 || r.generalBloom == nil || len(r.generalBloom.Chunks) < 2 {
		t.Fatalf("%d leaf blocks, bloom %v: the file should have several of each", len(w.LeafBlocks), r.generalBloom != nil)
	}
	wantKept := len(w.LeafBlocks) + len(w.IntermediateBlocks) + len(r.loadOnOpen)
	blocks := streamTestSplit(data, streamTestNextBlock)
	largest := 0
	for _, b := range blocks[:len(blocks)-1] {
		largest = max(largest, len(b))
	}
	for _, ch := range []streamTestChunking{{"whole-blocks", streamTestNextBlock}, {"random", streamTestRandomSizes(5)}} {
		sv, err := NewStreamVerifier(io.Discard, o)
		if err != nil {
			t.Fatal(err)
		}
		maxPend := 0 // while blocks arrive (the trailer is collected in the same buffer)
		for _, c := range streamTestSplit(data, ch.next) {
			if _, err := sv.Write(c); err != nil {
				t.Fatal(err)
			}
			if !sv.inTrailer {
				maxPend = max(maxPend, cap(sv.pend))
			}
		}
		kept := 0
		for k := range sv.v.keptBlocks {
			b := &sv.v.keptBlocks[k]
			if i, ok := sv.v.keptIndex(b.Offset); !verifyKeepsPayload(b.Header.Type) || !ok || i != k {
				t.Fatalf("%s: keeps the payload of the %s block at offset %d (found at %d, %v)", ch.name, b.Header.Type, b.Offset, i, ok)
			}
			kept++
		}
		if kept != wantKept {
			t.Fatalf("%s: keeps %d block payloads, want %d (leaf and intermediate index blocks, load-on-open section)", ch.name, kept, wantKept)
		}
		if len(sv.v.blocks) != len(blocks)-1 {
			t.Fatalf("%s: scanned %d blocks, the file has %d", ch.name, len(sv.v.blocks), len(blocks)-1)
		}
		if ch.name == "whole-blocks" && maxPend > 0 {
			t.Fatalf("buffered %d bytes although every block arrived whole", maxPend)
		}
		if ch.name == "random" && (maxPend == 0 || maxPend > 2*largest) {
			t.Fatalf("pending buffer reached %d bytes; the largest block is %d", maxPend, largest)
		}
		if err := sv.Finish(); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzStreamVerifier writes arbitrary bytes, and damaged valid files, through the stream verifier
// in random chunk sizes. It must never panic; the result must not depend on the chunking; a file it
// passes must pass VerifyBlocks; and, given the options that describe a file VerifyBlocks passes, it
// must pass it too (unless a sequence id is longer than the one byte readers take, which VerifyBlocks
// does not look at).
func FuzzStreamVerifier(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/hbase-2.6.4/*.hfile")
	seeds = append(seeds, "testdata/hbase-1.0.0/v2-gz-fastdiff-rowcol.hfile") // small seeds keep minimization quick
	for i, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint64(i), uint8(i))
	}
	// Small files from the writer; without checksums, mutations reach the walk, the indexes and the
	// trailer instead of stopping at the first checksum.
	cells, err := ReadCellText(strings.NewReader("a\tf:q\t1\tPut\tv\nb\tf:q\t2\tDeleteFamily\t\nc\tf:r\t3\tPut\txyz\nd\tf:s\t4\tPut\t0123456789\n"))
	if err != nil {
		f.Fatal(err)
	}
	for i, mod := range []func(o *WriterOptions){
		func(o *WriterOptions) {},
		func(o *WriterOptions) { o.Checksum = ChecksumNull },
		func(o *WriterOptions) { o.Checksum, o.FormatVersion = ChecksumNull, 2 },
		func(o *WriterOptions) {
			o.Checksum, o.Encoding, o.Bloom = ChecksumNull, EncodingFastDiff, BloomRowCol
		},
		func(o *WriterOptions) {
			o.Checksum, o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize = ChecksumNull, 16, 64, 16
		},
		func(o *WriterOptions) { o.Compression, o.Encoding = CompressionSnappy, EncodingDiff },
		func(o *WriterOptions) { o.Checksum = ChecksumNull }, // with sequence ids (multi-byte vlongs)
	} {
		o := DefaultWriterOptions()
		mod(&o)
		if i == 6 {
			for j := range cells {
				cells[j].SeqID = uint64(j) * 1000
			}
		}
		var buf bytes.Buffer
		if _, err := WriteCells(&buf, cells, o); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), uint64(100+i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, mode uint8) {
		// Options from the mode's bits, or (high bit clear) those of the file if it opens.
		o := DefaultWriterOptions()
		o.FormatVersion = 2 + int(mode&1)
		o.Encoding = []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff}[mode>>1&3]
		o.Compression = []Compression{CompressionNone, CompressionSnappy}[mode>>3&1]
		o.NoMVCC = mode&0x10 != 0
		o.NoTags = mode&0x20 != 0
		r, openErr := OpenReader(bytes.NewReader(data), int64(len(data)))
		derived := false
		if openErr == nil && mode&0x80 == 0 {
			if fo, err := streamTestOptionsFor(r); err == nil {
				o, derived = fo, true
			}
		}
		errWhole := streamTestRun(t, data, streamTestWholeFile, o)
		if errChunked := streamTestRun(t, data, streamTestRandomSizes(seed), o); fmt.Sprint(errChunked) != fmt.Sprint(errWhole) {
			t.Fatalf("whole: %v; chunked: %v", errWhole, errChunked)
		}
		errR := openErr
		if errR == nil {
			errR = r.VerifyBlocks()
		}
		if errWhole == nil && errR != nil {
			t.Fatalf("the stream verifier passed a file VerifyBlocks rejects: %v", errR)
		}
		if derived && errR == nil && errWhole != nil && !strings.Contains(errWhole.Error(), "readers take one byte") {
			t.Fatalf("VerifyBlocks passed a file the stream verifier rejects: %v", errWhole)
		}
	})
}
