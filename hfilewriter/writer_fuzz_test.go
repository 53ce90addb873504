package hfilewriter

import (
	"bytes"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// FuzzWriterAppendKeyValue feeds arbitrary byte strings to AppendKeyValue: some are malformed
// records, some keys are out of order or duplicates. Whatever is rejected must leave no trace: the
// closed file must verify and read back exactly the accepted records. It must never panic.
func FuzzWriterAppendKeyValue(f *testing.F) {
	f.Add([]byte("\x05row-1q\x00value\x05row-2q\x01\x00\x05row-0zz\x02abc"), uint8(0))
	f.Add([]byte("\x01a\x00\x01a\x00\x01b\xff\xff\x00\x00\x00\x09garbage"), uint8(5))
	f.Add(bytes.Repeat([]byte("\x03abcq\x00xyz"), 50), uint8(10))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		o := DefaultWriterOptions()
		o.BlockSize = 64
		o.Encoding = []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingDiff, EncodingFastDiff}[mode%4]
		o.Bloom = []BloomType{BloomRow, BloomRowCol, BloomNone}[mode%3]
		var buf bytes.Buffer
		w, err := NewWriter(&buf, o)
		if err != nil {
			t.Fatal(err)
		}
		var accepted [][]byte
		var rec []byte
		for len(data) > 0 {
			// Record: rowLen byte, row, qualifier byte, type selector byte, value (rest up to 8 bytes).
			n := int(data[0]) % 8
			data = data[1:]
			if len(data) < n+2 {
				// Malformed raw bytes.
				if err := w.AppendKeyValue(data); err == nil {
					accepted = append(accepted, append([]byte(nil), data...))
				}
				break
			}
			row, q, sel := data[:n], data[n:n+1], data[n+1]
			data = data[n+2:]
			v := data[:min(len(data), int(sel)%9)]
			data = data[len(v):]
			types := []Type{kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion, kv.TypeMinimum}
			rec = kv.AppendKeyValue(rec[:0], row, []byte("f"), q, int64(sel%3), types[int(sel)%len(types)], v)
			if err := w.AppendKeyValue(rec); err == nil {
				accepted = append(accepted, append([]byte(nil), rec...))
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		it := r.Iter()
		i := 0
		for it.Next() {
			c := it.Cell()
			if i >= len(accepted) || !bytes.Equal(kv.AppendCellKeyValue(nil, c), accepted[i]) {
				t.Fatalf("cell %d: read %s, not what was accepted", i, c)
			}
			i++
		}
		if it.Err() != nil || i != len(accepted) {
			t.Fatalf("read %d cells (%v), accepted %d", i, it.Err(), len(accepted))
		}
	})
}
