package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/kv"
	"github.com/klauspost/compress/zstd"
)

// newWriteCompressor is the compressor of a codec at its default level.
func newWriteCompressor(c Compression) (writeCompressor, error) { return newWriteCompressorLevel(c, 0) }

// decompressBlockPayload decompresses one block payload into a new buffer.
func decompressBlockPayload(codec CompressionCodec, src []byte, n int) ([]byte, error) {
	return decompressBlockPayloadInto(codec, src, n, nil)
}

// These fixtures derive the expected bytes by hand from the formats' specifications, independently
// of the encoder/compressor code under test.

// TestFixtureSnappyHadoopFraming: Hadoop's BlockCompressorStream writes BE int32 uncompressed length,
// then per chunk BE int32 compressed length + a raw snappy block. A raw snappy block of fewer than
// 17 bytes is literal-only: varint(uncompressed length), literal tag ((len-1)<<2 | 0), the bytes.
func TestFixtureSnappyHadoopFraming(t *testing.T) {
	payload := []byte("abcdefghij") // 10 bytes
	want := []byte{
		0, 0, 0, 10, // uncompressed length of the block
		0, 0, 0, 12, // compressed chunk length: 1 + 1 + 10
		10,     // snappy preamble: varint uncompressed length
		9 << 2, // literal of 10 bytes: (10-1)<<2 | tag 00
	}
	want = append(want, payload...)
	c, err := newWriteCompressor(CompressionSnappy)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.appendCompressed(nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("snappy block % x, want % x", got, want)
	}
	// Reader: the same payload split as Hadoop may split it: two chunks in one outer block, and
	// two outer blocks.
	twoChunks := []byte{0, 0, 0, 10, 0, 0, 0, 5, 3, 2 << 2, 'a', 'b', 'c', 0, 0, 0, 9, 7, 6 << 2, 'd', 'e', 'f', 'g', 'h', 'i', 'j'}
	twoOuter := []byte{0, 0, 0, 3, 0, 0, 0, 5, 3, 2 << 2, 'a', 'b', 'c', 0, 0, 0, 7, 0, 0, 0, 9, 7, 6 << 2, 'd', 'e', 'f', 'g', 'h', 'i', 'j'}
	for name, src := range map[string][]byte{"one": want, "two-chunks": twoChunks, "two-outer": twoOuter} {
		out, err := decompressBlockPayload(CompressionSnappy.Codec(), src, 10)
		if err != nil || !bytes.Equal(out, payload) {
			t.Errorf("%s: %q, %v", name, out, err)
		}
	}
	if _, err := decompressBlockPayload(CompressionSnappy.Codec(), want, 11); err == nil {
		t.Error("a block shorter than the header's uncompressed size was accepted")
	}
}

// TestFixtureLZ4HadoopFraming: same outer framing; a raw LZ4 block holding only literals is one
// sequence: token (literal length << 4, no match), then the literals.
func TestFixtureLZ4HadoopFraming(t *testing.T) {
	payload := []byte("abcdefghij")
	hand := append([]byte{0, 0, 0, 10, 0, 0, 0, 11, 10 << 4}, payload...)
	out, err := decompressBlockPayload(CompressionLZ4.Codec(), hand, 10)
	if err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("hand-built LZ4 block: %q, %v", out, err)
	}
	c, err := newWriteCompressor(CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.appendCompressed(nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, hand) {
		t.Fatalf("LZ4 block % x, want % x", got, hand)
	}
	// Incompressible data must still be written (as literals) and read back.
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 70000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	enc, err := c.appendCompressed(nil, noise)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := decompressBlockPayload(CompressionLZ4.Codec(), enc, len(noise)); err != nil || !bytes.Equal(back, noise) {
		t.Fatalf("incompressible LZ4 round trip: %v", err)
	}
}

// TestFixtureGzipMember: one gzip member per block, with the fixed 10-byte header Java's
// GZIPOutputStream writes (ReusableStreamGzipCodec captures it: 1f 8b 08 00, mtime 0, XFL 0, OS 0)
// and the trailer CRC-32 and ISIZE, both little-endian.
func TestFixtureGzipMember(t *testing.T) {
	payload := bytes.Repeat([]byte("hfile block "), 100)
	c, err := newWriteCompressor(CompressionGZ)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ { // the compressor is reused per block: no state leaks
		got, err := c.appendCompressed(nil, payload)
		if err != nil {
			t.Fatal(err)
		}
		if h := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(got[:10], h) {
			t.Fatalf("header % x, want % x", got[:10], h)
		}
		tr := got[len(got)-8:]
		if crc := binary.LittleEndian.Uint32(tr); crc != crc32.ChecksumIEEE(payload) {
			t.Fatalf("trailer CRC %08x, want %08x", crc, crc32.ChecksumIEEE(payload))
		}
		if n := binary.LittleEndian.Uint32(tr[4:]); n != uint32(len(payload)) {
			t.Fatalf("trailer ISIZE %d, want %d", n, len(payload))
		}
		if out, err := decompressBlockPayload(CompressionGZ.Codec(), got, len(payload)); err != nil || !bytes.Equal(out, payload) {
			t.Fatalf("gzip round trip: %v", err)
		}
	}
}

// TestFixtureZstdFramings: the writer writes what Hadoop's ZStandardCodec (HBase 2.x's default for
// ZSTD, hbase.io.compress.zstd.codec) writes through a plain CompressorStream: one raw zstd frame
// (magic 28 b5 2f fd) per block. The reader also accepts HBase's own ZstdCodec (hbase-compression-zstd)
// framing, BlockCompressorStream: BE int32 length + BE int32 chunk length + a zstd frame (HBASE-27706).
func TestFixtureZstdFramings(t *testing.T) {
	payload := bytes.Repeat([]byte("zstd block "), 200)
	c, err := newWriteCompressor(CompressionZSTD)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.appendCompressed(nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatalf("zstd block starts % x, want the frame magic", got[:4])
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if out, err := dec.DecodeAll(got, nil); err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("independent zstd decoder: %v", err)
	}
	if out, err := decompressBlockPayload(CompressionZSTD.Codec(), got, len(payload)); err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("reader, raw frame: %v", err)
	}
	// Hadoop block framing around the two halves, each its own frame.
	var framed []byte
	framed = binary.BigEndian.AppendUint32(framed, uint32(len(payload)))
	for _, half := range [][]byte{payload[:1000], payload[1000:]} {
		f, err := c.appendCompressed(nil, half)
		if err != nil {
			t.Fatal(err)
		}
		framed = binary.BigEndian.AppendUint32(framed, uint32(len(f)))
		framed = append(framed, f...)
	}
	if out, err := decompressBlockPayload(CompressionZSTD.Codec(), framed, len(payload)); err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("reader, Hadoop block framing: %v", err)
	}
}

// fixtureDataPayload writes cells with opts and returns the first data block's type and payload
// (after the 33-byte header, before the checksums).
func fixtureDataPayload(t *testing.T, opts WriterOptions, cells []Cell) (BlockType, []byte) {
	t.Helper()
	data := writeCells(t, opts, cells)
	h, err := readParseBlockHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	return h.Type, data[BlockHeaderSize : BlockHeaderSize+h.UncompressedSizeWithoutHeader]
}

// TestFixtureFastDiffThreeCells encodes three cells with FAST_DIFF and compares the data block with
// bytes worked out by hand from FastDiffDeltaEncoder.compressSingleKeyValue. Keys are 16 bytes:
// rowLen(2) row(2) famLen(1) "f" qual(1) ts(8) type(1).
//
//	cell 1  r1/f:a/1000/Put  "v1"   first cell: flag 00, cint keyLen 10, cint valueLen 02, cint common 00,
//	                                 whole key, whole value
//	cell 2  r1/f:b/1000/Put  "v1"   common key prefix (no ts/type) = rowLen+row+famLen+fam = 6;
//	                                 flag = SAME_KEY_LENGTH 08 | SAME_VALUE_LENGTH 10 | SAME_TYPE 20 |
//	                                 SAME_VALUE 40 | common ts prefix 7 (capped at 7) = 7f;
//	                                 then cint common 06, qualifier suffix "b", ts[7:] e8. Nothing else.
//	cell 3  r2/f:a/999/Delete "xyz" rows differ after 1 row byte: common = 2+1 = 3; 1000 = ..03e8 and
//	                                 999 = ..03e7 share 7 bytes; flag = 08 | 7 = 0f; cint valueLen 03,
//	                                 cint common 03, rest of row "2", the whole qualifier "a" (family
//	                                 skipped), ts[7:] e7, type 08, value "xyz".
//
// The block starts with the encoding id 00 04 (DataBlockEncoding.FAST_DIFF id 4) and the unencoded size as int32:
// without tags and mvcc each cell counts 8 + keyLen + valueLen: 26 + 26 + 27 = 79 = 0x4f. With tags
// and mvcc each cell also gets cint tagsLength + tags + the vlong sequence id 00, and counts 2 more
// for the (unencoded) tags length plus tags plus 1 for mvcc: 26+2+11+1 + 26+3 + 27+3 = 99 = 0x63.
func TestFixtureFastDiffThreeCells(t *testing.T) {
	ts := func(v byte) []byte { return []byte{0, 0, 0, 0, 0, 0, 3, v} }
	key := func(row, q string, t []byte, typ byte) []byte {
		k := append([]byte{0, 2}, row...)
		k = append(append(append(k, 1, 'f'), q...), t...)
		return append(k, typ)
	}
	cells := []Cell{
		{Row: []byte("r1"), Family: []byte("f"), Qualifier: []byte("a"), Timestamp: 1000, Type: kv.TypePut, Value: []byte("v1")},
		{Row: []byte("r1"), Family: []byte("f"), Qualifier: []byte("b"), Timestamp: 1000, Type: kv.TypePut, Value: []byte("v1")},
		{Row: []byte("r2"), Family: []byte("f"), Qualifier: []byte("a"), Timestamp: 999, Type: kv.TypeDelete, Value: []byte("xyz")},
	}
	cell1 := append(append([]byte{0x00, 0x10, 0x02, 0x00}, key("r1", "a", ts(0xe8), 4)...), "v1"...)
	cell2 := []byte{0x7f, 0x06, 'b', 0xe8}
	cell3 := []byte{0x0f, 0x03, 0x03, '2', 'a', 0xe7, 0x08, 'x', 'y', 'z'}

	o := DefaultWriterOptions()
	o.Encoding, o.NoTags, o.NoMVCC, o.Bloom = EncodingFastDiff, true, true, BloomNone
	typ, got := fixtureDataPayload(t, o, cells)
	want := append(append(append([]byte{0x00, 0x04, 0, 0, 0, 0x4f}, cell1...), cell2...), cell3...)
	if typ != BlockEncodedData || !bytes.Equal(got, want) {
		t.Fatalf("%s block\n got % x\nwant % x", typ, got, want)
	}

	// v3 with tags and mvcc: cell 1 carries a TTL tag (cint 0b + 00 09 08 <long>), every cell ends
	// with its sequence id 00.
	cells[0].Tags = kv.TTLTag(1000)
	o.NoTags, o.NoMVCC = false, false
	typ, got = fixtureDataPayload(t, o, cells)
	want = []byte{0x00, 0x04, 0, 0, 0, 0x63}
	want = append(append(append(want, cell1...), 0x0b), kv.TTLTag(1000)...)
	want = append(want, 0x00)
	want = append(append(want, cell2...), 0x00, 0x00)
	want = append(append(want, cell3...), 0x00, 0x00)
	if typ != BlockEncodedData || !bytes.Equal(got, want) {
		t.Fatalf("%s block with tags\n got % x\nwant % x", typ, got, want)
	}
	// And our decoder reads the hand-built block back.
	dc, err := decodeDataBlock(BlockEncodedData, want, &decodeCellOptions{Tags: true, Mvcc: true, DecodeMvcc: true, Encoding: EncodingFastDiff})
	if err != nil || len(dc) != 3 || !bytes.Equal(dc[2].Key(), cells[2].Key()) || !bytes.Equal(dc[0].Tags, cells[0].Tags) || string(dc[2].Value) != "xyz" {
		t.Fatalf("decode: %v %v", dc, err)
	}
}

// TestFixtureTagsInUnencodedBlock: in an unencoded v3 block a cell is the KeyValue record, then the
// tags length as a 2-byte int, the tags, then the mvcc vlong.
func TestFixtureTagsInUnencodedBlock(t *testing.T) {
	c := Cell{Row: []byte("r1"), Family: []byte("f"), Qualifier: []byte("a"), Timestamp: 1000, Type: kv.TypePut, Value: []byte("v1")}
	tags, err := kv.ParseTags("visibility=secret,ttl=86400000", map[string]int{"secret": 1})
	if err != nil {
		t.Fatal(err)
	}
	c.Tags = tags
	o := DefaultWriterOptions()
	o.Bloom = BloomNone
	_, got := fixtureDataPayload(t, o, []Cell{c})
	want := []byte{0, 0, 0, 16, 0, 0, 0, 2, 0, 2, 'r', '1', 1, 'f', 'a', 0, 0, 0, 0, 0, 0, 3, 0xe8, 4, 'v', '1',
		0, 19, // tags length: 4 + 4 + 11
		0, 2, 4, 1, // serialization format tag
		0, 2, 2, 1, // visibility clause [1]
		0, 9, 8, 0, 0, 0, 0, 5, 0x26, 0x5c, 0, // TTL 86400000
		0, // mvcc
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("block\n got % x\nwant % x", got, want)
	}
}

// TestCompressionLevel: levels change the gzip/zstd bytes but not what is read back; invalid
// levels (or a level for a codec without one) are rejected.
func TestCompressionLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cells := matrixTestCells(t, rng, 400, true)
	for _, comp := range []Compression{CompressionGZ, CompressionZSTD} {
		files := map[int][]byte{}
		for _, level := range []int{0, 1, 9, 22} {
			if comp == CompressionGZ && level > 9 {
				continue
			}
			o := DefaultWriterOptions()
			o.Compression, o.CompressionLevel = comp, level
			files[level] = writeCells(t, o, cells)
			writerTestReadBack(t, files[level], cells, o)
		}
		if bytes.Equal(files[0], files[1]) || bytes.Equal(files[1], files[9]) {
			t.Errorf("%s: the level does not change the output", comp)
		}
		if comp == CompressionGZ && len(files[1]) <= len(files[9]) {
			t.Errorf("gz: level 1 file (%d bytes) not larger than level 9 (%d)", len(files[1]), len(files[9]))
		}
	}
	for _, tc := range []struct {
		c Compression
		l int
	}{{CompressionGZ, 10}, {CompressionGZ, -1}, {CompressionZSTD, 23}, {CompressionSnappy, 1}, {CompressionNone, 3}} {
		o := DefaultWriterOptions()
		o.Compression, o.CompressionLevel = tc.c, tc.l
		if _, err := NewWriter(&bytes.Buffer{}, o); err == nil {
			t.Errorf("%s level %d accepted", tc.c, tc.l)
		}
	}
}
