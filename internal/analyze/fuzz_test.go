package analyze

import (
	"encoding/binary"
	"testing"

	"github.com/hfload/hfload/pipeline"
)

// FuzzAdd: arbitrary buffers and cell references give an error or a report, never a panic.
func FuzzAdd(f *testing.F) {
	good := makeBatch([]string{"d", "e"}, []testCell{{row: "r", qual: "q", value: "12345678901", seq: 1},
		{row: "r", qual: "p", family: 1, value: "v", seq: 1}, {row: "s", qual: "q", value: "v", seq: 2}})
	refs := make([]byte, 0)
	for _, r := range good.Records {
		refs = binary.BigEndian.AppendUint32(refs, r.Off)
		refs = binary.BigEndian.AppendUint32(refs, r.Len)
		refs = binary.BigEndian.AppendUint32(refs, r.Cells)
		refs = binary.BigEndian.AppendUint32(refs, r.KVBytes)
		refs = binary.BigEndian.AppendUint16(refs, r.Family)
		refs = binary.BigEndian.AppendUint64(refs, r.Seq)
	}
	f.Add(good.Buf, refs)
	f.Add([]byte{1, 'r', 1, 'd', 0, 0, 0, 0, 0, 0, 0, 0, 4, 3, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 15, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, buf, refs []byte) {
		cb := &pipeline.CellBatch{Buf: buf, Dict: good.Dict}
		for len(refs) >= 26 {
			cb.Records = append(cb.Records, pipeline.RecordRef{Off: binary.BigEndian.Uint32(refs), Len: binary.BigEndian.Uint32(refs[4:]),
				Cells: binary.BigEndian.Uint32(refs[8:]), KVBytes: binary.BigEndian.Uint32(refs[12:]),
				Family: binary.BigEndian.Uint16(refs[16:]), Seq: binary.BigEndian.Uint64(refs[18:])})
			refs = refs[26:]
		}
		a, err := New(Options{Families: []string{"d", "e"}, Splits: nil, SuggestRegions: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(cb); err != nil {
			return
		}
		if a.Suspects() > 0 {
			if err := a.Confirm(cb); err != nil {
				t.Fatalf("second pass over a batch the first accepted: %v", err)
			}
		}
		r := a.Report()
		var n int64
		for _, rg := range r.Regions {
			n += rg.Cells
		}
		if n != int64(cb.Cells()) || r.Cells != n {
			t.Fatalf("cells %d, regions hold %d, batch has %d", r.Cells, n, cb.Cells())
		}
	})
}
