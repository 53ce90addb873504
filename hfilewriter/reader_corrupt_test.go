package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

const corruptGolden = "testdata/hbase-2.6.4/simple-v3-none-rowbloom.hfile"

// corruptOpenScanVerify opens data, scans it and verifies it, returning the first error.
func corruptOpenScanVerify(data []byte) error {
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	it := r.Iter()
	for it.Next() {
	}
	if err := it.Err(); err != nil {
		return err
	}
	return r.Verify()
}

// corruptRechecksum recomputes the checksums of the block at off after its bytes were edited.
func corruptRechecksum(t *testing.T, data []byte, off int) {
	t.Helper()
	h, err := readParseBlockHeader(data[off:])
	if err != nil {
		t.Fatal(err)
	}
	end := off + h.OnDiskDataSizeWithHeader
	sums := AppendChecksums(nil, data[off:end], h.ChecksumType, h.BytesPerChecksum)
	copy(data[end:], sums)
}

func TestReaderCorruption(t *testing.T) {
	orig, err := os.ReadFile(corruptGolden)
	if err != nil {
		t.Fatal(err)
	}
	if err := corruptOpenScanVerify(orig); err != nil {
		t.Fatalf("pristine file: %v", err)
	}
	dataHdr, err := readParseBlockHeader(orig)
	if err != nil {
		t.Fatal(err)
	}
	checksumOff := dataHdr.OnDiskDataSizeWithHeader // first checksum byte of the first data block
	trailerOff := len(orig) - TrailerSizeV3
	// Where the first cell's row "row-00" starts inside the first data block: header + 8 + 2.
	firstRow := BlockHeaderSize + 8 + 2
	entryCountTag := bytes.Index(orig[trailerOff:], []byte{0x38, 10}) // entry_count = 10

	cases := []struct {
		name   string
		mutate func(b []byte) []byte
		want   string
	}{
		{"flipped checksum byte", func(b []byte) []byte { b[checksumOff] ^= 0x01; return b }, "CRC32C mismatch in chunk 0"},
		{"flipped payload byte", func(b []byte) []byte { b[BlockHeaderSize+40] ^= 0x80; return b }, "block at offset 0: checksum"},
		{"flipped header size", func(b []byte) []byte { b[12] ^= 0x01; return b }, "block at offset 0"},
		{"truncated by one byte", func(b []byte) []byte { return b[:len(b)-1] }, "not an HFile (no trailer)"},
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }, "not an HFile (no trailer)"},
		{"truncated before trailer", func(b []byte) []byte { return append(b[:trailerOff-100:trailerOff-100], b[trailerOff:]...) }, "load-on-open section"},
		{"empty file", func(b []byte) []byte { return nil }, "not an HFile (no trailer)"},
		{"bad trailer magic", func(b []byte) []byte { b[trailerOff] = 'X'; return b }, "not an HFile (no trailer): no trailer magic"},
		{"bad block magic", func(b []byte) []byte { b[0] = 'X'; return b }, "unknown block magic"},
		{"bad version", func(b []byte) []byte { binary.BigEndian.PutUint32(b[len(b)-4:], 0x03000009); return b }, "unsupported HFile major version 9"},
		{"out-of-order key", func(b []byte) []byte {
			// Turn row-00 into row-05 (a row the bloom knows) so the first key sorts after the second.
			copy(b[firstRow:], "row-05")
			corruptRechecksum(t, b, 0)
			return b
		}, "key out of order"},
		{"wrong entry count", func(b []byte) []byte { b[trailerOff+entryCountTag+1] = 11; return b }, "trailer entry count is 11"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(append([]byte(nil), orig...))
			err := corruptOpenScanVerify(b)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestReaderCorruptionAllBytes flips every byte of a small golden file in turn: the reader must never
// panic, and every flip outside the trailer's zero padding and unchecked header bytes must be caught.
func TestReaderCorruptionAllBytes(t *testing.T) {
	orig, err := os.ReadFile(corruptGolden)
	if err != nil {
		t.Fatal(err)
	}
	caught := 0
	for i := range orig {
		b := append([]byte(nil), orig...)
		b[i] ^= 0x5A
		if corruptOpenScanVerify(b) != nil {
			caught++
		}
	}
	// The block area is fully covered by checksums; only trailer padding and a few informational
	// trailer fields may flip unnoticed.
	blockArea := len(orig) - TrailerSizeV3
	if caught < blockArea {
		t.Fatalf("only %d of %d byte flips detected (block area is %d bytes)", caught, len(orig), blockArea)
	}
}

// TestReaderDecoderCorruptionNoPanic flips bytes across encoded, compressed and tag-compressed golden
// files with checksum checks disabled, so the damage reaches the decompressors and block decoders:
// every read path must return errors, never panic.
func TestReaderDecoderCorruptionNoPanic(t *testing.T) {
	for _, name := range []string{"v3-none-fastdiff-row-compressedtags", "v2-none-diff-rowcol", "v3-lz4-prefix-row-tags-edge",
		"v2-gz-fastdiff-rowcol", "v2-snappy-none-row"} {
		orig, err := os.ReadFile("testdata/hbase-1.0.0/" + name + ".hfile")
		if err != nil {
			t.Fatal(err)
		}
		limit := len(orig) - TrailerSizeV3
		if strings.HasPrefix(name, "v2") {
			limit = len(orig) - TrailerSizeV2
		}
		stride := max(1, limit/80)
		for i := 0; i < limit; i += stride {
			b := append([]byte(nil), orig...)
			b[i] ^= 0xA5
			fuzzExercise(b, true)
		}
	}
}

// TestReaderUnknownBloomType: a bloom type the reader cannot evaluate (HBase 2.2+ has
// ROWPREFIX_FIXED_LENGTH) must not make the file unreadable; MayContain then answers true.
func TestReaderUnknownBloomType(t *testing.T) {
	orig, err := os.ReadFile(corruptGolden)
	if err != nil {
		t.Fatal(err)
	}
	r := readerTestOpen(t, orig)
	b := append([]byte(nil), orig...)
	readerTestRewrite(t, b, r.loadOnOpen[2].Offset, func(p []byte) {
		i := bytes.Index(p, []byte("ROW\x0a")) // BLOOM_FILTER_TYPE value, then the next map entry
		if i < 0 {
			t.Fatal("BLOOM_FILTER_TYPE value not found")
		}
		copy(p[i:], "XYZ")
	})
	r2 := readerTestOpen(t, b)
	if r2.BloomType() != BloomNone {
		t.Fatalf("bloom type %s", r2.BloomType())
	}
	ok, err := r2.MayContain([]byte("absent"), nil)
	if err != nil || !ok {
		t.Fatalf("MayContain = %v, %v; want true", ok, err)
	}
	if err := r2.Verify(); err != nil {
		t.Fatal(err)
	}
	if got := readAllCells(t, r2); len(got) != 10 {
		t.Fatalf("read %d cells", len(got))
	}
}
