package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

func TestWriterMidpointKey(t *testing.T) {
	key := func(row, fam, qual string, ts int64, typ Type) []byte {
		return kv.AppendKey(nil, []byte(row), []byte(fam), []byte(qual), ts, typ)
	}
	fake := func(row, fam, qual string) []byte {
		return kv.AppendKey(nil, []byte(row), []byte(fam), []byte(qual), kv.LatestTimestamp, kv.TypeMaximum)
	}
	cases := []struct {
		name        string
		left, right []byte
		want        []byte
	}{
		{"first block keeps the full key", nil, key("row-1", "cf", "q", 5, kv.TypePut), key("row-1", "cf", "q", 5, kv.TypePut)},
		{"rows: increment differing byte", key("abc", "cf", "q", 1, kv.TypePut), key("abz", "cf", "q", 1, kv.TypePut), fake("abd", "", "")},
		{"rows: adjacent bytes take right prefix", key("row-006", "cf", "q", 1, kv.TypePut), key("row-007", "cf", "q", 1, kv.TypePut), fake("row-007", "", "")},
		{"rows: left is a prefix", key("ab", "cf", "q", 1, kv.TypePut), key("abcd", "cf", "q", 1, kv.TypePut), fake("abc", "", "")},
		{"rows: left byte 0xff cannot grow", key("a\xff", "cf", "q", 1, kv.TypePut), key("b\x00\x01", "cf", "q", 1, kv.TypePut), fake("b", "", "")},
		// Signed-byte quirk: left byte 0x80 is -128 in Java, so -127 (0x81) < 0x90 and the result
		// is left[:i] + 0x81.
		{"rows: signed diff byte", key("x\x80zz", "cf", "q", 1, kv.TypePut), key("x\x90", "cf", "q", 1, kv.TypePut), fake("x\x81", "", "")},
		{"rows: signed diff byte 0xfe", key("x\xfe", "cf", "q", 1, kv.TypePut), key("x\xff", "cf", "q", 1, kv.TypePut), fake("x\xff", "", "")},
		{"qualifiers: increment", key("r", "cf", "aaa", 1, kv.TypePut), key("r", "cf", "aaz", 1, kv.TypePut), fake("r", "cf", "aab")},
		{"qualifiers: empty left", key("r", "cf", "", 1, kv.TypePut), key("r", "cf", "q", 1, kv.TypePut), fake("r", "cf", "q")},
		{"families differ", key("r", "a", "q", 1, kv.TypePut), key("r", "c", "q", 1, kv.TypePut), fake("r", "b", "")},
		{"same column: timestamps differ", key("r", "cf", "q", 9, kv.TypePut), key("r", "cf", "q", 8, kv.TypePut), key("r", "cf", "q", 8, kv.TypePut)},
		{"same column: types differ", key("r", "cf", "q", 9, kv.TypeDelete), key("r", "cf", "q", 9, kv.TypePut), key("r", "cf", "q", 9, kv.TypePut)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := appendMidpointKey(nil, tc.left, tc.right)
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("midpoint = %s, want %s", Key(got), Key(tc.want))
			}
			if tc.left != nil && kv.CompareKeys(tc.left, got) >= 0 {
				t.Fatalf("midpoint %s not after left %s", Key(got), Key(tc.left))
			}
			if kv.CompareKeys(got, tc.right) > 0 {
				t.Fatalf("midpoint %s after right %s", Key(got), Key(tc.right))
			}
		})
	}
}

func TestWriterBloomParams(t *testing.T) {
	row := BloomParams(DefaultBloomBlockSize, bloomErrorRate(BloomRow, DefaultBloomErrorRate), DefaultBloomMaxFold)
	if want := (BloomChunkParams{ByteSize: 131072, HashCount: 7, MaxKeys: 109306}); row != want {
		t.Errorf("ROW params = %+v, want %+v", row, want)
	}
	if got := bloomErrorRate(BloomRowCol, 0.01); got != float32(0.0050125583) {
		t.Errorf("ROWCOL error rate = %v, want 0.0050125583", got)
	}
	rc := BloomParams(DefaultBloomBlockSize, bloomErrorRate(BloomRowCol, DefaultBloomErrorRate), DefaultBloomMaxFold)
	if want := (BloomChunkParams{ByteSize: 131072, HashCount: 8, MaxKeys: 95069}); rc != want {
		t.Errorf("ROWCOL params = %+v, want %+v", rc, want)
	}
}

// A chunk folded while all its keys are still pending (bits set straight into the folded size) equals
// one whose bits were set in the whole chunk and then folded, for every fold depth, both bit-position
// paths (power-of-two and other chunk sizes) and counts around the pending batch size.
func TestWriterBloomFoldPendingSame(t *testing.T) {
	for _, p := range []BloomChunkParams{
		BloomParams(DefaultBloomBlockSize, bloomErrorRate(BloomRow, DefaultBloomErrorRate), DefaultBloomMaxFold),
		BloomParams(DefaultBloomBlockSize, bloomErrorRate(BloomRowCol, DefaultBloomErrorRate), DefaultBloomMaxFold),
		BloomParams(1000, 0.01, 3), // not a power of two
	} {
		for _, n := range []int{1, 2, 10, 13, 14, 500, 1023, 1024, 1025, 3000, 20000} {
			if n > p.MaxKeys {
				continue
			}
			lazy := &writeBloomChunk{size: p.ByteSize, hashCount: p.HashCount, maxKeys: p.MaxKeys}
			whole := &writeBloomChunk{bits: make([]byte, p.ByteSize), size: p.ByteSize, hashCount: p.HashCount, maxKeys: p.MaxKeys}
			for i := 0; i < n; i++ {
				key := []byte(fmt.Sprintf("row-%07d", i*7919))
				lazy.add(bloomHashes(key))
				whole.add(bloomHashes(key))
			}
			whole.setPending()
			lazy.fold()
			whole.fold()
			if lazy.size != len(lazy.bits) || lazy.maxKeys != whole.maxKeys || !bytes.Equal(lazy.bits, whole.bits) {
				t.Fatalf("params %+v, %d keys: pending fold gives %d bytes (size %d) / maxKeys %d, whole-chunk fold %d / %d (same bits: %v)",
					p, n, len(lazy.bits), lazy.size, lazy.maxKeys, len(whole.bits), whole.maxKeys, bytes.Equal(lazy.bits, whole.bits))
			}
			if n <= 14 && len(lazy.bits) >= p.ByteSize && p.ByteSize > 64 {
				t.Fatalf("params %+v, %d keys: not folded (%d bytes)", p, n, len(lazy.bits))
			}
		}
	}
}

// TestWriterBloomFolding checks the last chunk's folding against the 2.6.4 golden file: 10 keys
// fold a 131072-byte chunk to 16 bytes with maxKeys 13.
func TestWriterBloomFolding(t *testing.T) {
	c := &writeBloomChunk{bits: make([]byte, 131072), size: 131072, hashCount: 7, maxKeys: 109306}
	for i := 0; i < 10; i++ {
		c.add(bloomHashes([]byte{byte(i)}))
	}
	c.setPending()
	set := 0
	for _, b := range c.bits {
		for ; b != 0; b &= b - 1 {
			set++
		}
	}
	c.fold()
	if len(c.bits) != 16 || c.maxKeys != 13 {
		t.Fatalf("folded to %d bytes / maxKeys %d, want 16 / 13", len(c.bits), c.maxKeys)
	}
	for i := 0; i < 10; i++ {
		BloomBitPositions(HashMurmur, []byte{byte(i)}, 7, 128, func(pos int64) {
			if c.bits[pos>>3]&(1<<(pos&7)) == 0 {
				t.Fatalf("key %d: bit %d not set after folding", i, pos)
			}
		})
	}
	if set == 0 {
		t.Fatal("no bits set before folding")
	}
}

func TestWriterRejectsOutOfOrderAndDuplicates(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "hbase-2.6.4", "simple-v3-none-rowbloom.hfile"))
	if err != nil {
		t.Fatal(err)
	}
	cells := goldenCells(10, 2)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, golden264Options(0, 10))
	if err != nil {
		t.Fatal(err)
	}
	for i := range cells {
		if err := w.Append(&cells[i]); err != nil {
			t.Fatal(err)
		}
		if i == 4 {
			dup := cells[4]
			err := w.Append(&dup)
			if err == nil || !strings.Contains(err.Error(), "duplicate key") ||
				strings.Count(err.Error(), "row-04/cf:q/1700000000000/Put") != 2 {
				t.Fatalf("duplicate: got error %v, want one naming both keys", err)
			}
			back := cells[2]
			err = w.Append(&back)
			if err == nil || !strings.Contains(err.Error(), "out of order") ||
				!strings.Contains(err.Error(), "row-02/cf:q/1700000000000/Put") ||
				!strings.Contains(err.Error(), "row-04/cf:q/1700000000000/Put") {
				t.Fatalf("out of order: got error %v, want one naming both keys", err)
			}
			other := cells[5]
			other.Family = []byte("zz")
			other.Row = []byte("row-04x")
			if err := w.Append(&other); err == nil || !strings.Contains(err.Error(), "family") {
				t.Fatalf("second family: got error %v", err)
			}
			if err := w.AppendKeyValue([]byte{0, 0, 0, 99, 0, 0}); err == nil {
				t.Fatal("malformed record accepted")
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The rejected cells left no trace: the file is still HBase's.
	compareBytes(t, "after rejected appends", buf.Bytes(), want)
	if err := w.Append(&cells[0]); err != ErrWriterClosed {
		t.Fatalf("append after close: %v", err)
	}
}

func TestWriterOptionsValidation(t *testing.T) {
	bad := []WriterOptions{
		{FormatVersion: 4},                 // unknown version
		{Compression: CompressionZSTD + 1}, // no such codec
	}
	o := DefaultWriterOptions()
	o.BytesPerChecksum = 10
	bad = append(bad, o)
	o = DefaultWriterOptions()
	o.Encoding = EncodingRowIndexV1
	bad = append(bad, o)
	o = DefaultWriterOptions()
	o.BloomErrorRate = 2
	bad = append(bad, o)
	for i, o := range bad {
		if _, err := NewWriter(&bytes.Buffer{}, o); err == nil {
			t.Errorf("options %d accepted: %+v", i, o)
		}
	}
	for _, s := range []string{"none", "GZ", "snappy", "lz4", "zstd"} {
		if _, err := ParseCompression(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseCompression("brotli"); err == nil {
		t.Error("brotli accepted")
	}
	if e, err := ParseEncoding("FAST_DIFF"); err != nil || e != EncodingFastDiff {
		t.Errorf("ParseEncoding(FAST_DIFF) = %v, %v", e, err)
	}
	if b, err := ParseBloom("rowcol"); err != nil || b != BloomRowCol {
		t.Errorf("ParseBloom(rowcol) = %v, %v", b, err)
	}
	if _, err := ParseBloom("prefix"); err == nil {
		t.Error("ParseBloom(prefix) accepted")
	}
}

// TestWriterEmptyFile checks the structure HBase gives an empty file.
func TestWriterEmptyFile(t *testing.T) {
	data := writeCells(t, DefaultWriterOptions(), nil)
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Trailer()
	if tr.EntryCount != 0 || tr.FirstDataBlockOffset != -1 || tr.LastDataBlockOffset != -1 || tr.DataIndexCount != 0 || tr.NumDataIndexLevels != 1 {
		t.Fatalf("empty file trailer: %+v", tr)
	}
	if _, ok := r.FileInfoValue(FileInfoLastKey); ok {
		t.Fatal("empty file has LASTKEY")
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterBulkLoadFileInfo checks HFileOutputFormat2's keys, the time range and earliest put.
func TestWriterBulkLoadFileInfo(t *testing.T) {
	o := DefaultWriterOptions()
	o.BulkLoad = &BulkLoadInfo{Time: 1700000000123, SourceTask: "attempt_1", MajorCompaction: true}
	cells := []Cell{
		{Row: []byte("a"), Family: []byte("d"), Qualifier: []byte("q"), Timestamp: 50, Type: kv.TypePut},
		{Row: []byte("b"), Family: []byte("d"), Timestamp: 70, Type: kv.TypeDeleteFamily},
		{Row: []byte("b"), Family: []byte("d"), Qualifier: []byte("q"), Timestamp: 40, Type: kv.TypePut},
	}
	data := writeCells(t, o, cells)
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	long := func(k string) int64 {
		v, ok := r.FileInfoValue(k)
		if !ok || len(v) != 8 {
			t.Fatalf("%s: %x, present %v", k, v, ok)
		}
		return int64(binary.BigEndian.Uint64(v))
	}
	if got := long(FileInfoBulkloadTime); got != 1700000000123 {
		t.Errorf("BULKLOAD_TIMESTAMP = %d", got)
	}
	if got := long(FileInfoEarliestPutTS); got != 40 {
		t.Errorf("EARLIEST_PUT_TS = %d", got)
	}
	if got := long(FileInfoDeleteFamilyCnt); got != 1 {
		t.Errorf("DELETE_FAMILY_COUNT = %d", got)
	}
	tr, _ := r.FileInfoValue(FileInfoTimeRange)
	if len(tr) != 16 || int64(binary.BigEndian.Uint64(tr)) != 0 || int64(binary.BigEndian.Uint64(tr[8:])) != 70 {
		t.Errorf("TIMERANGE = %x, want min 0 (DeleteFamily includes 0) max 70", tr)
	}
	if v, _ := r.FileInfoValue(FileInfoBulkloadTask); string(v) != "attempt_1" {
		t.Errorf("BULKLOAD_SOURCE_TASK = %q", v)
	}
	if v, _ := r.FileInfoValue(FileInfoMajorCompaction); !bytes.Equal(v, []byte{0xff}) {
		t.Errorf("MAJOR_COMPACTION_KEY = %x", v)
	}
	if v, _ := r.FileInfoValue(FileInfoExcludeMinor); !bytes.Equal(v, []byte{0}) {
		t.Errorf("EXCLUDE_FROM_MINOR_COMPACTION = %x", v)
	}
	if v, _ := r.FileInfoValue(FileInfoMaxTagsLen); len(v) != 4 {
		t.Errorf("MAX_TAGS_LEN = %x (default v3 writes tags)", v)
	}
	ok, err := r.MayContainDeleteFamily([]byte("b"))
	if err != nil || !ok {
		t.Errorf("delete-family bloom lookup of b = %v, %v", ok, err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	// File info keys are sorted (unsigned bytes).
	fi := r.FileInfo()
	for i := 1; i < len(fi); i++ {
		if bytes.Compare([]byte(fi[i-1].Key), []byte(fi[i].Key)) >= 0 {
			t.Fatalf("file info not sorted: %q before %q", fi[i-1].Key, fi[i].Key)
		}
	}
}

// TestWriterCodecFraming checks the Java-compatible gzip member header and Hadoop block framing of
// payloads larger than one Snappy/LZ4 chunk, and reads such files back.
func TestWriterCodecFraming(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz"), 20000) // 720000 bytes
	cells := []Cell{
		{Row: []byte("a"), Family: []byte("d"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: big},
		{Row: []byte("b"), Family: []byte("d"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: []byte("small")},
	}
	for _, comp := range []Compression{CompressionGZ, CompressionSnappy, CompressionLZ4, CompressionZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			o := DefaultWriterOptions()
			o.Compression = comp
			data := writeCells(t, o, cells)
			payload := data[BlockHeaderSize:]
			switch comp {
			case CompressionGZ:
				if want := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(payload[:10], want) {
					t.Fatalf("gzip header % x, want % x", payload[:10], want)
				}
			case CompressionSnappy, CompressionLZ4:
				uncompressed := binary.BigEndian.Uint32(data[12:])
				if got := binary.BigEndian.Uint32(payload); got != uncompressed {
					t.Fatalf("outer length %d, want %d", got, uncompressed)
				}
				// Several chunks: the first chunk's length is followed by more data than it covers.
				first := binary.BigEndian.Uint32(payload[4:])
				onDiskPayload := int(binary.BigEndian.Uint32(data[29:])) - BlockHeaderSize
				if int(8+first) >= onDiskPayload {
					t.Fatalf("payload of %d bytes compressed as a single chunk of %d", uncompressed, first)
				}
			}
			writerTestReadBack(t, data, cells, o)
		})
	}
}

// writerTestFailingWriter fails every write after the first limit bytes.
type writerTestFailingWriter struct{ limit, n int }

func (f *writerTestFailingWriter) Write(p []byte) (int, error) {
	if f.n+len(p) > f.limit {
		return 0, errors.New("disk full")
	}
	f.n += len(p)
	return len(p), nil
}

// TestWriterWriteErrorIsSticky checks that an io.Writer error surfaces, with context, from Append
// and Close, and that the writer refuses further work instead of writing a corrupt file.
func TestWriterWriteErrorIsSticky(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize = 256
	w, err := NewWriter(&writerTestFailingWriter{limit: 1000}, o)
	if err != nil {
		t.Fatal(err)
	}
	cells := goldenCells(200, 3)
	var appendErr error
	for i := range cells {
		if appendErr = w.Append(&cells[i]); appendErr != nil {
			break
		}
	}
	if appendErr == nil || !strings.Contains(appendErr.Error(), "disk full") {
		t.Fatalf("append error %v, want the write error", appendErr)
	}
	if err := w.Append(&cells[199]); err == nil {
		t.Fatal("append after a write error succeeded")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("close error %v", err)
	}
}

// TestWriterEstimatedSize checks EstimatedSize grows with the data and is close to the size the
// file has once closed (it is what callers use to roll files).
func TestWriterEstimatedSize(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	var rec []byte
	prev := int64(0)
	for i := 0; i < 20000; i++ {
		rec = kv.AppendKeyValue(rec[:0], []byte(fmt.Sprintf("row-%08d", i)), []byte("d"), []byte("q"), 1, kv.TypePut, bytes.Repeat([]byte{'v'}, 50))
		if err := w.AppendKeyValue(rec); err != nil {
			t.Fatal(err)
		}
		est := w.EstimatedSize()
		if est < prev {
			t.Fatalf("estimate went down from %d to %d", prev, est)
		}
		prev = est
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	final := int64(buf.Len())
	if diff := prev - final; diff < -final/100 || diff > final/100 {
		t.Fatalf("last estimate %d, final size %d", prev, final)
	}
	t.Logf("last estimate %d, final size %d", prev, final)
}

func TestWriterAllowDuplicateKeys(t *testing.T) {
	c := Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: kv.TypePut, Value: []byte("a")}
	for _, allow := range []bool{false, true} {
		opts := DefaultWriterOptions()
		opts.AllowDuplicateKeys = allow
		var buf bytes.Buffer
		w, err := NewWriter(&buf, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(&c); err != nil {
			t.Fatal(err)
		}
		d := c
		d.Value = []byte("b")
		err = w.Append(&d)
		if allow != (err == nil) {
			t.Fatalf("allow=%v: second append err %v", allow, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]uint64{false: 1, true: 2}[allow]; r.EntryCount() != want {
			t.Fatalf("allow=%v: %d entries, want %d", allow, r.EntryCount(), want)
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("allow=%v: verify: %v", allow, err)
		}
	}
}

// encodeCommonBytes agrees with a byte-by-byte reference for every length and mismatch position.
func TestEncodeCommonBytesMatchesReference(t *testing.T) {
	ref := func(a, b []byte) int {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		return i
	}
	for la := 0; la <= 20; la++ {
		for lb := 0; lb <= 20; lb++ {
			for diff := -1; diff < max(la, lb); diff++ {
				a := make([]byte, la)
				b := make([]byte, lb)
				for i := range a {
					a[i] = byte(i * 7)
				}
				for i := range b {
					b[i] = byte(i * 7)
				}
				if diff >= 0 && diff < lb {
					b[diff] ^= 0x10
				}
				if got, want := kv.CommonPrefix(a, b), ref(a, b); got != want {
					t.Fatalf("len %d/%d, diff at %d: %d, want %d", la, lb, diff, got, want)
				}
			}
		}
	}
}
