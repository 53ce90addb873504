package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

// TestReaderWritableTrailer rewrites a v2.3 golden file's protobuf trailer in the legacy Writable
// form of v2 minor 1 (§9.4) and checks that the reader sees the same trailer and cells.
func TestReaderWritableTrailer(t *testing.T) {
	orig, err := os.ReadFile("testdata/hbase-1.0.0/v2-none-none-row-multilevel.hfile")
	if err != nil {
		t.Fatal(err)
	}
	r := readerTestOpen(t, orig)
	want := r.Trailer()
	if want.MajorVersion != 2 || want.MinorVersion != 3 || !want.Protobuf {
		t.Fatalf("unexpected golden trailer %+v", want)
	}
	be := binary.BigEndian
	tr := append([]byte(nil), TrailerMagic...)
	tr = be.AppendUint64(tr, uint64(want.FileInfoOffset))
	tr = be.AppendUint64(tr, uint64(want.LoadOnOpenOffset))
	tr = be.AppendUint32(tr, want.DataIndexCount)
	tr = be.AppendUint64(tr, want.UncompressedDataIndexSize)
	tr = be.AppendUint32(tr, want.MetaIndexCount)
	tr = be.AppendUint64(tr, want.TotalUncompressedBytes)
	tr = be.AppendUint64(tr, want.EntryCount)
	tr = be.AppendUint32(tr, uint32(want.Compression))
	tr = be.AppendUint32(tr, want.NumDataIndexLevels)
	tr = be.AppendUint64(tr, uint64(want.FirstDataBlockOffset))
	tr = be.AppendUint64(tr, uint64(want.LastDataBlockOffset))
	name := make([]byte, 128)
	copy(name, want.ComparatorClassName)
	tr = append(tr, name...)
	tr = be.AppendUint32(tr, 1<<24|2) // v2 minor 1
	if len(tr) != TrailerSizeV2 {
		t.Fatalf("built a %d-byte trailer", len(tr))
	}
	data := append(append([]byte(nil), orig[:len(orig)-TrailerSizeV2]...), tr...)
	r2 := readerTestOpen(t, data)
	got := r2.Trailer()
	if got.Protobuf || got.MinorVersion != 1 {
		t.Fatalf("trailer not read as Writable v2.1: %+v", got)
	}
	got.Protobuf, got.MinorVersion = want.Protobuf, want.MinorVersion
	if *got != *want {
		t.Fatalf("Writable trailer %+v\nwant %+v", got, want)
	}
	if err := r2.Verify(); err != nil {
		t.Fatal(err)
	}
	a, b := readAllCells(t, r), readAllCells(t, r2)
	if len(a) != len(b) || len(a) == 0 || !bytes.Equal(a[len(a)-1].Key(), b[len(b)-1].Key()) {
		t.Fatalf("read %d cells through the Writable trailer, %d through the protobuf one", len(b), len(a))
	}
}
