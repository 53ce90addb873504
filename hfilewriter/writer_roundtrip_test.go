package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// writerTestRandomCells returns n random cells in HBase order with distinct keys: binary and
// empty-ish rows (some 32767 bytes long), empty qualifiers, many versions of a column, every
// storable type, empty and block-sized values, tags and sequence ids when asked for.
func writerTestRandomCells(rng *rand.Rand, n int, tags, seqs bool) []Cell {
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion}
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	cells := make([]Cell, 0, n)
	for len(cells) < n {
		var row []byte
		switch rng.IntN(20) {
		case 0:
			row = bytes.Repeat([]byte{byte(rng.IntN(256))}, kv.MaxRowLength)
		case 1, 2:
			row = randBytes(1 + rng.IntN(3)) // short binary rows collide often: many cells per row
		default:
			row = []byte(fmt.Sprintf("row-%05d", rng.IntN(n)))
		}
		var qual []byte
		if rng.IntN(5) > 0 {
			qual = randBytes(rng.IntN(12))
		}
		versions := 1
		if rng.IntN(8) == 0 {
			versions = 1 + rng.IntN(6)
		}
		for v := 0; v < versions && len(cells) < n; v++ {
			c := Cell{Row: row, Family: []byte("cf"), Qualifier: qual, Type: types[rng.IntN(len(types))]}
			switch rng.IntN(10) {
			case 0:
				c.Timestamp = 0
			case 1:
				c.Timestamp = kv.LatestTimestamp - 1
			default:
				c.Timestamp = 1700000000000 + rng.Int64N(1000000)
			}
			switch rng.IntN(10) {
			case 0: // empty value
			case 1:
				c.Value = randBytes(1500 + rng.IntN(3000)) // bigger than the test block size
			case 2:
				c.Value = bytes.Repeat([]byte("same"), 4) // repeated values (FAST_DIFF SAME_VALUE)
			default:
				c.Value = randBytes(rng.IntN(40))
			}
			if tags && rng.IntN(3) == 0 {
				for k := rng.IntN(3); k >= 0; k-- {
					v := randBytes(rng.IntN(6))
					c.Tags = binary.BigEndian.AppendUint16(c.Tags, uint16(1+len(v)))
					c.Tags = append(c.Tags, byte(200+rng.IntN(50)))
					c.Tags = append(c.Tags, v...)
				}
			}
			if seqs && rng.IntN(2) == 0 {
				c.SeqID = uint64(rng.Int64N(1 << 40))
			}
			cells = append(cells, c)
		}
	}
	keys := make([][]byte, len(cells))
	idx := make([]int, len(cells))
	for i := range cells {
		keys[i], idx[i] = cells[i].Key(), i
	}
	sort.SliceStable(idx, func(a, b int) bool { return kv.CompareKeys(keys[idx[a]], keys[idx[b]]) < 0 })
	out := make([]Cell, 0, len(cells))
	for k, i := range idx {
		if k > 0 && kv.CompareKeys(keys[idx[k-1]], keys[i]) == 0 {
			continue
		}
		out = append(out, cells[i])
	}
	return out
}

// writerTestReadBack opens data with the reader, verifies it and checks it yields exactly cells.
func writerTestReadBack(t *testing.T, data []byte, cells []Cell, opts WriterOptions) *Reader {
	t.Helper()
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := r.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
	it := r.Iter()
	i := 0
	for it.Next() {
		got := it.Cell()
		if i >= len(cells) {
			t.Fatalf("extra cell %s", got)
		}
		want := &cells[i]
		if !bytes.Equal(got.Key(), want.Key()) || !bytes.Equal(got.Value, want.Value) ||
			!bytes.Equal(got.Tags, want.Tags) || got.SeqID != want.SeqID {
			t.Fatalf("cell %d: got %s value %x tags %x, want %s value %x tags %x", i, got, got.Value, got.Tags, want, want.Value, want.Tags)
		}
		i++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(cells) {
		t.Fatalf("read %d cells, wrote %d", i, len(cells))
	}
	if r.EntryCount() != uint64(len(cells)) {
		t.Fatalf("entry count %d, want %d", r.EntryCount(), len(cells))
	}
	if opts.Bloom != BloomNone {
		for i := range cells {
			ok, err := r.MayContain(cells[i].Row, cells[i].Qualifier)
			if err != nil || !ok {
				t.Fatalf("bloom says cell %s absent (%v)", &cells[i], err)
			}
		}
	}
	return r
}

func TestWriterRoundTrip(t *testing.T) {
	comps := []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionLZ4, CompressionZSTD}
	encs := []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff}
	blooms := []BloomType{BloomRow, BloomRowCol, BloomNone}
	seed := uint64(1)
	for ci, comp := range comps {
		for ei, enc := range encs {
			k := ci*len(encs) + ei
			o := DefaultWriterOptions()
			o.Compression, o.Encoding, o.Bloom = comp, enc, blooms[k%len(blooms)]
			o.BlockSize = 512
			o.IndexBlockMaxSize = 512 + 256*(k%3)
			o.BloomBlockSize = 64 << (k % 4)
			switch k % 4 {
			case 1:
				o.NoTags = true
			case 2:
				o.FormatVersion = 2
			case 3:
				o.NoMVCC = true
			}
			name := fmt.Sprintf("%s-%s-%s-v%d-tags=%v-mvcc=%v", comp, enc, o.Bloom, o.FormatVersion, o.includesTags(), !o.NoMVCC)
			t.Run(name, func(t *testing.T) {
				seed++
				rng := rand.New(rand.NewPCG(seed, 42))
				cells := writerTestRandomCells(rng, 800, o.includesTags(), !o.NoMVCC)
				data := writeCells(t, o, cells)
				r := writerTestReadBack(t, data, cells, o)
				if tr := r.Trailer(); tr.MajorVersion != o.FormatVersion || tr.MinorVersion != 3 || tr.Compression != comp.Codec() {
					t.Fatalf("trailer %+v", tr)
				}
				if r.DataBlockEncoding() != enc || r.IncludesTags() != o.includesTags() || r.IncludesMvcc() != !o.NoMVCC {
					t.Fatalf("reader sees encoding %s tags %v mvcc %v", r.DataBlockEncoding(), r.IncludesTags(), r.IncludesMvcc())
				}
			})
		}
	}
}

// TestWriterMultiLevelIndex forces root -> intermediate(s) -> leaf -> data indexes with long keys
// and small index chunks (1024 bytes), then reads everything back.
func TestWriterMultiLevelIndex(t *testing.T) {
	for _, tc := range []struct{ cells, levels int }{{300, 3}, {1000, 4}} {
		t.Run(fmt.Sprintf("%d-levels", tc.levels), func(t *testing.T) {
			o := DefaultWriterOptions()
			o.BlockSize = 256
			o.IndexBlockMaxSize = 1024
			var cells []Cell
			for i := 0; i < tc.cells; i++ {
				row := fmt.Sprintf("%0200d", i) // long keys: few entries per index chunk
				cells = append(cells, Cell{Row: []byte(row), Family: []byte("f"), Qualifier: []byte("q"),
					Timestamp: int64(i), Type: kv.TypePut, Value: []byte(row[190:])})
			}
			var buf bytes.Buffer
			w, err := NewWriter(&buf, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range cells {
				if err := w.Append(&cells[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := w.Stats().IndexLevels; got != tc.levels {
				t.Fatalf("index levels = %d, want %d", got, tc.levels)
			}
			r := writerTestReadBack(t, buf.Bytes(), cells, o)
			if got := r.Trailer().NumDataIndexLevels; got != uint32(tc.levels) {
				t.Fatalf("trailer index levels = %d, want %d", got, tc.levels)
			}
			if !bytes.Contains(buf.Bytes(), []byte(BlockIntermediateIndex)) {
				t.Fatal("no intermediate index block")
			}
			if !bytes.Equal(r.FirstKey(), cells[0].Key()) || !bytes.Equal(r.LastKey(), cells[len(cells)-1].Key()) {
				t.Fatalf("first/last key %s / %s", Key(r.FirstKey()), Key(r.LastKey()))
			}
		})
	}
}

// TestWriterBigBloom adds more rows than one bloom chunk holds (109306), so full chunks are
// written inline between data blocks.
func TestWriterBigBloom(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 120000 cells")
	}
	o := DefaultWriterOptions()
	o.NoTags = true
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	var rec []byte
	const n = 120000
	for i := 0; i < n; i++ {
		rec = kv.AppendKeyValue(rec[:0], []byte(fmt.Sprintf("r%07d", i)), []byte("d"), nil, 1, kv.TypePut, []byte("v"))
		if err := w.AppendKeyValue(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if c := bytes.Count(data, []byte(BlockBloomChunk)); c != 2 {
		t.Fatalf("%d bloom chunks, want 2", c)
	}
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 109305, 109306, n - 1} {
		if ok, err := r.MayContain([]byte(fmt.Sprintf("r%07d", i)), nil); err != nil || !ok {
			t.Fatalf("row %d: %v %v", i, ok, err)
		}
	}
}
