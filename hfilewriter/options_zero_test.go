package hfilewriter

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriterOptionsZeroIsHBaseDefault: WriterOptions{} means HBase's defaults for a new family
// (NONE compression and encoding, ROW bloom, CRC32C per 16 KiB, 64 KiB blocks, v3). With NoTags (the
// one setting the golden file differs in: StoreFileWriter's context was built without tags) it
// reproduces the file HBase 2.6.4 wrote with its defaults byte for byte, and it writes the same
// bytes as DefaultWriterOptions().
func TestWriterOptionsZeroIsHBaseDefault(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "hbase-2.6.4", "simple-v3-none-rowbloom.hfile"))
	if err != nil {
		t.Fatal(err)
	}
	compareBytes(t, "WriterOptions{NoTags: true}", writeCells(t, WriterOptions{NoTags: true}, goldenCells(10, 2)), want)

	zero := writeCells(t, WriterOptions{}, goldenCells(10, 2))
	compareBytes(t, "WriterOptions{} vs DefaultWriterOptions()", zero, writeCells(t, DefaultWriterOptions(), goldenCells(10, 2)))
	r, err := OpenReader(bytes.NewReader(zero), int64(len(zero)))
	if err != nil {
		t.Fatal(err)
	}
	if r.BloomType() != BloomRow || r.trailer.Compression != CodecNone || r.opts.Encoding != EncodingNone || r.trailer.MajorVersion != 3 {
		t.Fatalf("WriterOptions{} wrote bloom %s, codec %s, encoding %s, v%d", r.BloomType(), r.trailer.Compression, r.opts.Encoding, r.trailer.MajorVersion)
	}
	h, err := readParseBlockHeader(zero[:BlockHeaderSize])
	if err != nil {
		t.Fatal(err)
	}
	if h.ChecksumType != ChecksumTypeCRC32C || h.BytesPerChecksum != 16384 {
		t.Fatalf("first block: checksum %s per %d bytes", h.ChecksumType, h.BytesPerChecksum)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterOptionEnumsApartFromOrdinals: the option enums' zero values are the defaults, and the
// numbers written to the file come from Codec and Type, not from the option's own number.
func TestWriterOptionEnumsApartFromOrdinals(t *testing.T) {
	var o WriterOptions
	if o.Compression != CompressionNone || o.Bloom != BloomRow || o.Checksum != ChecksumCRC32C || o.Encoding != EncodingNone {
		t.Fatal("zero options are not the defaults")
	}
	codecs := map[Compression]CompressionCodec{CompressionNone: CodecNone, CompressionGZ: CodecGZ,
		CompressionSnappy: CodecSnappy, CompressionLZ4: CodecLZ4, CompressionZSTD: CodecZSTD}
	for _, c := range Compressions() {
		if c.Codec() != codecs[c] {
			t.Errorf("%s: codec %d, want %d", c, c.Codec(), codecs[c])
		}
		if back, ok := c.Codec().Compression(); !ok || back != c {
			t.Errorf("%s: codec %s maps back to %s", c, c.Codec(), back)
		}
	}
	for _, c := range []CompressionCodec{CodecLZO, CodecBZIP2, CodecUnknown} {
		if _, ok := c.Compression(); ok {
			t.Errorf("codec %s is writable", c)
		}
	}
	if ChecksumCRC32C.Type() != 2 || ChecksumCRC32.Type() != 1 || ChecksumNull.Type() != 0 {
		t.Fatal("checksum type codes differ from HBase's ChecksumType")
	}
	if _, err := NewWriter(&bytes.Buffer{}, WriterOptions{Compression: CompressionZSTD + 1}); err == nil {
		t.Fatal("invalid compression accepted")
	}
	if _, err := NewWriter(&bytes.Buffer{}, WriterOptions{Checksum: ChecksumNull + 1}); err == nil {
		t.Fatal("invalid checksum accepted")
	}
	// The exported lists are copies: changing one changes nothing.
	Compressions()[0] = CompressionZSTD
	if Compressions()[0] != CompressionNone {
		t.Fatal("exported option lists are shared")
	}
}
