package hfilewriter

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// reuseTestSame reports the first field (a path from name) where got, a value set up anew for the next
// file, differs from fresh, a new one: empty slices and maps are equal whatever their arrays, pointers
// equal when both are nil or point at equal values. Fields named in skip (at the top level) are not
// compared: the ones kept for their arrays.
func reuseTestSame(got, fresh reflect.Value, name string, skip map[string]bool) string {
	switch got.Kind() {
	case reflect.Struct:
		for i := range got.NumField() {
			f := got.Type().Field(i).Name
			if skip[f] {
				continue
			}
			if d := reuseTestSame(got.Field(i), fresh.Field(i), name+"."+f, nil); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Map:
		if got.Len() == 0 && fresh.Len() == 0 {
			return ""
		}
		if got.Kind() == reflect.Slice && got.Len() == fresh.Len() {
			for i := range got.Len() {
				if d := reuseTestSame(got.Index(i), fresh.Index(i), fmt.Sprintf("%s[%d]", name, i), nil); d != "" {
					return d
				}
			}
			return ""
		}
		return fmt.Sprintf("%s: %d entries, a new one has %d", name, got.Len(), fresh.Len())
	case reflect.Pointer, reflect.Interface:
		if got.IsNil() || fresh.IsNil() {
			if got.IsNil() != fresh.IsNil() {
				return name + ": nil in one only"
			}
			return ""
		}
		return reuseTestSame(got.Elem(), fresh.Elem(), name, nil)
	case reflect.Array:
		for i := range got.Len() {
			if d := reuseTestSame(got.Index(i), fresh.Index(i), fmt.Sprintf("%s[%d]", name, i), nil); d != "" {
				return d
			}
		}
		return ""
	case reflect.Func:
		if got.IsNil() != fresh.IsNil() {
			return name + ": func set in one only"
		}
		return ""
	}
	if !got.Equal(fresh) {
		return fmt.Sprintf("%s: %v, a new one has %v", name, got, fresh)
	}
	return ""
}

// The index writer and bloom writers a Writer reuses for its next file (writeIndexWriter.reuse,
// reuseWriteBloomWriter) are, field by field, what new ones are but for the arrays they keep, after
// files with a multi-level index, several bloom chunks of both blooms and a ROWCOL bloom.
func TestWriterReuseSetsFieldsAnew(t *testing.T) {
	for _, bloom := range []BloomType{BloomRow, BloomRowCol} {
		o := DefaultWriterOptions()
		o.BlockSize, o.IndexBlockMaxSize, o.BloomBlockSize, o.Bloom = 256, 128, 256, bloom
		w, err := NewWriter(&bytes.Buffer{}, o)
		if err != nil {
			t.Fatal(err)
		}
		writeMixedTypes(t, w)
		if w.index.levels < 2 || w.bloom.numChunks < 2 || (bloom == BloomRow && w.dfBloom.numChunks < 2) {
			t.Fatalf("%s: %d index levels, %d bloom chunks: the test needs more", bloom, w.index.levels, w.bloom.numChunks)
		}
		o2 := o
		o2.IndexBlockMaxSize, o2.IndexMinEntries = 4096, 4
		x := w.index.reuse(o2.IndexBlockMaxSize, o2.IndexMinEntries)
		if d := reuseTestSame(reflect.ValueOf(x).Elem(), reflect.ValueOf(newWriteIndexWriter(4096, 4)).Elem(), "index", nil); d != "" {
			t.Errorf("%s: reused %s", bloom, d)
		}
		keep := map[string]bool{"ready": true, "free": true}
		for _, bw := range []*writeBloomWriter{w.bloom, w.dfBloom} {
			if bw == nil {
				continue
			}
			typ := bw.typ
			r := reuseWriteBloomWriter(bw, typ, &o2)
			if r != bw {
				t.Fatalf("%s: the bloom writer was not reused", typ)
			}
			if d := reuseTestSame(reflect.ValueOf(r).Elem(), reflect.ValueOf(newWriteBloomWriter(typ, &o2)).Elem(), "bloom", keep); d != "" {
				t.Errorf("%s bloom: reused %s", typ, d)
			}
			if len(r.ready) != 0 {
				t.Errorf("%s bloom: %d chunks ready after reuse", typ, len(r.ready))
			}
		}
	}
}

// The Reader a stream verifier reuses for its next file (resetForStream) is, field by field, a new
// Reader on the next file's trailer but for the arrays it keeps, after a file with both blooms.
func TestReaderResetForStreamSetsFieldsAnew(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize = 256
	var cells []Cell
	for i := range 300 {
		typ := kv.TypePut
		if i%7 == 0 {
			typ = kv.TypeDeleteFamily
		}
		cells = append(cells, Cell{Row: fmt.Appendf(nil, "row-%06d", i), Family: []byte("f"), Timestamp: 5, Type: typ, Value: []byte("v")})
	}
	data := streamTestWrite(t, o, cells)
	sv := fedStreamVerifier(t, o, data)
	if err := sv.finish(); err != nil {
		t.Fatal(err)
	}
	r := sv.v.streamReader
	if r.generalBloom == nil || r.deleteBloom == nil || len(r.fileInfo) == 0 || len(r.loadOnOpen) == 0 || r.lastKey == nil {
		t.Fatal("the Reader was not used")
	}
	next := &Trailer{MajorVersion: 3}
	r.resetForStream(12345, next)
	fresh := &Reader{readAt: r.readAt, blocks: r.blocks, walk: r.walk, fileInfoLayout: r.fileInfoLayout, size: 12345, trailer: next}
	skip := map[string]bool{"readAt": true, "blocks": true, "walk": true, "fileInfoLayout": true}
	if d := reuseTestSame(reflect.ValueOf(r).Elem(), reflect.ValueOf(fresh).Elem(), "reader", skip); d != "" {
		t.Errorf("reset %s", d)
	}
	if r.trailer != next {
		t.Error("reset kept the last trailer")
	}
}
