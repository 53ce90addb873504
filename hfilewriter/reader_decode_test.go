package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestDecodeTagDictLRU checks the LRUDictionary semantics tag decompression depends on: 127 entries,
// then the least recently used entry (lookups count as use) is replaced and its index reused.
func TestDecodeTagDictLRU(t *testing.T) {
	o := &decodeCellOptions{Tags: true, CompressTags: true}
	d := newDecodeTagDict(o)
	tag := func(i int) []byte { return []byte{200, byte(i), byte(i >> 8)} } // type + 2 value bytes
	serialized := func(tags ...[]byte) []byte {
		var out []byte
		for _, tg := range tags {
			out = binary.BigEndian.AppendUint16(out, uint16(len(tg)))
			out = append(out, tg...)
		}
		return out
	}
	literal := func(tg []byte) []byte { return append([]byte{0xFF, byte(len(tg))}, tg...) }
	ref := func(i int) []byte { return []byte{byte(i >> 8), byte(i)} }

	var stream []byte
	var want []byte
	for i := 0; i < 127; i++ {
		stream = append(stream, literal(tag(i))...)
		want = append(want, serialized(tag(i))...)
	}
	stream = append(stream, ref(0)...) // touch entry 0: entry 1 becomes least recently used
	want = append(want, serialized(tag(0))...)
	stream = append(stream, literal(tag(500))...) // evicts entry 1, takes index 1
	want = append(want, serialized(tag(500))...)
	stream = append(stream, ref(1)...)
	want = append(want, serialized(tag(500))...)
	stream = append(stream, ref(0)...)
	want = append(want, serialized(tag(0))...)
	stream = append(stream, ref(2)...)
	want = append(want, serialized(tag(2))...)

	c := &decodeCursor{b: stream}
	got := d.uncompress(c, len(want))
	if c.err != nil {
		t.Fatal(c.err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded tags differ:\n got %x\nwant %x", got, want)
	}
	if c.remaining() != 0 {
		t.Fatalf("%d bytes left", c.remaining())
	}
	// An index beyond the dictionary is an error, not a panic.
	d2 := newDecodeTagDict(o)
	c2 := &decodeCursor{b: ref(5)}
	if d2.uncompress(c2, 4); c2.err == nil {
		t.Fatal("reference to an empty dictionary accepted")
	}
}

// TestDecodeRowIndexV1 decodes a hand-built ROW_INDEX_V1 block (RowIndexEncoderV1 layout).
func TestDecodeRowIndexV1(t *testing.T) {
	cells := []Cell{
		{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("1"), Timestamp: 5, Type: kv.TypePut, Value: []byte("x"), Tags: []byte{0, 2, 201, 9}, SeqID: 300},
		{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("2"), Timestamp: 5, Type: kv.TypeDelete, SeqID: 0},
		{Row: []byte("b"), Family: []byte("f"), Timestamp: 7, Type: kv.TypePut, Value: []byte("yy")},
	}
	var data []byte
	var rowOffsets []int
	for i := range cells {
		c := &cells[i]
		if i == 0 || !bytes.Equal(c.Row, cells[i-1].Row) {
			rowOffsets = append(rowOffsets, len(data))
		}
		data = kv.AppendCellKeyValue(data, c)
		data = binary.BigEndian.AppendUint16(data, uint16(len(c.Tags)))
		data = append(data, c.Tags...)
		data = AppendVLong(data, int64(c.SeqID))
	}
	payload := binary.BigEndian.AppendUint16(nil, uint16(EncodingRowIndexV1))
	payload = append(payload, data...)
	payload = binary.BigEndian.AppendUint32(payload, uint32(len(rowOffsets)))
	for _, off := range rowOffsets {
		payload = binary.BigEndian.AppendUint32(payload, uint32(off))
	}
	payload = binary.BigEndian.AppendUint32(payload, uint32(len(data)))

	o := &decodeCellOptions{Tags: true, Mvcc: true, Encoding: EncodingRowIndexV1}
	got, err := decodeDataBlock(BlockEncodedData, payload, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cells) {
		t.Fatalf("decoded %d cells, want %d", len(got), len(cells))
	}
	for i := range got {
		if !bytes.Equal(got[i].Key(), cells[i].Key()) || !bytes.Equal(got[i].Value, cells[i].Value) ||
			!bytes.Equal(got[i].Tags, cells[i].Tags) || got[i].SeqID != cells[i].SeqID {
			t.Fatalf("cell %d: got %s tags %x, want %s tags %x", i, &got[i], got[i].Tags, &cells[i], cells[i].Tags)
		}
	}
	// The encoding id must match the file's.
	o.Encoding = EncodingFastDiff
	if _, err := decodeDataBlock(BlockEncodedData, payload, o); err == nil {
		t.Fatal("block with a different encoding id accepted")
	}
}
