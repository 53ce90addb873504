package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// matrixTestCells returns about n random cells in HBase order: a few hundred rows with several
// qualifiers and versions, every storable type, repeated and random values and, when tags is set,
// TTL and visibility tags built from text as `hfload hfile write` builds them (plus raw tags).
func matrixTestCells(t *testing.T, rng *rand.Rand, n int, tags bool) []Cell {
	t.Helper()
	labels := map[string]int{"secret": 1, "topsecret": 2, "public": 3, "pii": 4}
	tagTexts := []string{"", "", "ttl=86400000", "visibility=secret|topsecret", "visibility=(secret|pii)&!public,ttl=60000",
		"visibility=public", "tag200=0xcafe", "ttl=1"}
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion}
	var cells []Cell
	for len(cells) < n {
		var row []byte
		if rng.IntN(10) == 0 {
			row = []byte{byte(rng.IntN(256)), byte(rng.IntN(256))}
		} else {
			row = []byte(fmt.Sprintf("user%06d", rng.IntN(100000)))
		}
		for q := rng.IntN(4); q >= 0; q-- {
			qual := []byte(fmt.Sprintf("c%d", rng.IntN(20)))
			for v := rng.IntN(3); v >= 0; v-- {
				c := Cell{Row: row, Family: []byte("cf"), Qualifier: qual, Type: types[rng.IntN(len(types))],
					Timestamp: 1700000000000 + rng.Int64N(1000)}
				switch rng.IntN(4) {
				case 0:
					c.Value = []byte("repeated-value")
				case 1:
				default:
					c.Value = make([]byte, rng.IntN(200))
					for i := range c.Value {
						c.Value[i] = byte('a' + rng.IntN(6)) // compressible but not trivially
					}
				}
				if tags {
					tt, err := kv.ParseTags(tagTexts[rng.IntN(len(tagTexts))], labels)
					if err != nil {
						t.Fatal(err)
					}
					if len(tt) > 0 {
						c.Tags = tt
					}
				}
				cells = append(cells, c)
			}
		}
	}
	sort.SliceStable(cells, func(i, j int) bool { return kv.CompareKeys(cells[i].Key(), cells[j].Key()) < 0 })
	out := cells[:0]
	for i := range cells {
		if i > 0 && kv.CompareKeys(cells[i-1].Key(), cells[i].Key()) == 0 {
			continue
		}
		out = append(out, cells[i])
	}
	return out
}

// TestCodecMatrixRoundTrip writes random cells for every combination of format version, codec,
// data block encoding and bloom type (2 x 5 x 4 x 3 = 120 files, tags in every v3 file), with small
// blocks so each file has dozens of data blocks, and checks that the reader returns exactly the
// cells written, that Reader.Verify (what `hfload hfile verify` runs) passes, and that trailer and
// file info carry the codec, the encoding and the tags metadata.
func TestCodecMatrixRoundTrip(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		seed := uint64(i)
		version, comp, enc, bloom := o.FormatVersion, o.Compression, o.Encoding, o.Bloom
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			cells := matrixTestCells(t, rng, 300, version == 3)
			data := writeCells(t, o, cells)
			r := writerTestReadBack(t, data, cells, o) // cells, Verify, entry count, blooms
			if tr := r.Trailer(); tr.MajorVersion != version || tr.Compression != comp.Codec() {
				t.Fatalf("trailer v%d codec %s", tr.MajorVersion, tr.Compression)
			}
			if r.DataBlockEncoding() != enc || r.BloomType() != bloom {
				t.Fatalf("reader sees encoding %s bloom %s", r.DataBlockEncoding(), r.BloomType())
			}
			if st := r.Trailer(); st.DataIndexCount < 2 && st.NumDataIndexLevels < 2 {
				t.Fatalf("only %d data blocks: the test should span several", st.DataIndexCount)
			}
			v, ok := r.FileInfoValue(FileInfoDataBlockEnc)
			if enc != EncodingNone && (!ok || string(v) != enc.String()) {
				t.Fatalf("DATA_BLOCK_ENCODING = %q (%v), want %s", v, ok, enc)
			}
			_, hasMax := r.FileInfoValue(FileInfoMaxTagsLen)
			tc, hasTC := r.FileInfoValue(FileInfoTagsCompressed)
			if version == 3 {
				maxTags := 0
				for i := range cells {
					maxTags = max(maxTags, len(cells[i].Tags))
				}
				if got, _, err := r.FileInfoInt(FileInfoMaxTagsLen); err != nil || !hasMax || int(got) != maxTags || maxTags == 0 {
					t.Fatalf("MAX_TAGS_LEN %d (%v), want %d", got, err, maxTags)
				}
				if !hasTC || !bytes.Equal(tc, []byte{0}) {
					t.Fatalf("TAGS_COMPRESSED = %x, want 00 (false, as HFileOutputFormat2 writes)", tc)
				}
			} else if hasMax || hasTC || r.IncludesTags() {
				t.Fatal("v2 file carries tags metadata")
			}
		})
	})
}

// writerMatrix calls f for every combination of format version, codec, data block encoding and bloom
// type (2 x 5 x 4 x 3 = 120), always in the same order, with its position i (from 1), a subtest name
// and default options of that combination with 1 KiB data blocks.
func writerMatrix(f func(i int, name string, o WriterOptions)) {
	comps := []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionLZ4, CompressionZSTD}
	encs := []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff}
	blooms := []BloomType{BloomNone, BloomRow, BloomRowCol}
	i := 0
	for _, version := range []int{3, 2} {
		for _, comp := range comps {
			for _, enc := range encs {
				for _, bloom := range blooms {
					i++
					o := DefaultWriterOptions()
					o.FormatVersion, o.Compression, o.Encoding, o.Bloom = version, comp, enc, bloom
					o.BlockSize = 1024
					f(i, fmt.Sprintf("v%d-%s-%s-%s", version, comp, enc, bloom), o)
				}
			}
		}
	}
}

// TestCodecMatrixV2RefusesTags: a v2 file cannot hold tags; the writer says so instead of dropping them.
func TestCodecMatrixV2RefusesTags(t *testing.T) {
	o := DefaultWriterOptions()
	o.FormatVersion = 2
	c := Cell{Row: []byte("r"), Family: []byte("f"), Type: kv.TypePut, Tags: kv.TTLTag(5)}
	_, err := WriteCells(&bytes.Buffer{}, []Cell{c}, o)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("tags")) {
		t.Fatalf("v2 with tags: %v", err)
	}
}
