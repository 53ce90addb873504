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
	for _, c := range good.Cells {
		refs = binary.BigEndian.AppendUint32(refs, c.Off)
		refs = binary.BigEndian.AppendUint32(refs, c.Len)
		refs = binary.BigEndian.AppendUint16(refs, c.Family)
		refs = binary.BigEndian.AppendUint64(refs, c.Seq)
	}
	f.Add(good.Buf, refs)
	f.Add([]byte{0, 0, 0, 12, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 8, 0, 0})
	f.Fuzz(func(t *testing.T, buf, refs []byte) {
		cb := &pipeline.CellBatch{Buf: buf}
		for len(refs) >= 18 {
			cb.Cells = append(cb.Cells, pipeline.CellRef{Off: binary.BigEndian.Uint32(refs), Len: binary.BigEndian.Uint32(refs[4:]),
				Family: binary.BigEndian.Uint16(refs[8:]), Seq: binary.BigEndian.Uint64(refs[10:])})
			refs = refs[18:]
		}
		a, err := New(Options{Families: []string{"d", "e"}, ExpectedRows: 100, Splits: nil, SuggestRegions: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(cb); err != nil {
			return
		}
		r := a.Report()
		var n int64
		for _, rg := range r.Regions {
			n += rg.Cells
		}
		if n != int64(len(cb.Cells)) || r.Cells != n {
			t.Fatalf("cells %d, regions hold %d, batch has %d", r.Cells, n, len(cb.Cells))
		}
	})
}
