package pipeline

import (
	"context"
	"strings"
	"testing"
	"unsafe"
)

// TestCellBatchReserve: reserve gives an empty batch room for twice a text batch's data plus 64 KiB and
// a quarter more references than rows, keeps a batch that has the room as it is (the same buffers, so
// a worker's batch is reused), leaves Parquet batches (no text) to grow by appending, and the batch
// stays empty with its Dict.
func TestCellBatchReserve(t *testing.T) {
	b := &Batch{Data: make([]byte, 100_000), NumRows: 1000}
	var cb CellBatch
	cb.reserve(&Batch{NumRows: 5}) // no text: nothing made
	if cap(cb.Buf) != 0 || cap(cb.Records) != 0 {
		t.Fatalf("a batch without text reserved %d bytes and %d references", cap(cb.Buf), cap(cb.Records))
	}
	cb.reserve(b)
	if len(cb.Buf) != 0 || len(cb.Records) != 0 {
		t.Fatalf("reserve left %d bytes and %d references in the batch", len(cb.Buf), len(cb.Records))
	}
	if want := 2*len(b.Data) + 64<<10; cap(cb.Buf) < want {
		t.Fatalf("reserved %d bytes, want at least %d", cap(cb.Buf), want)
	}
	if want := b.NumRows + b.NumRows/4; cap(cb.Records) < want {
		t.Fatalf("reserved %d references, want at least %d", cap(cb.Records), want)
	}
	buf, recs := unsafe.SliceData(cb.Buf), unsafe.SliceData(cb.Records)
	cb.Buf = append(cb.Buf, "record"...)
	cb.Records = append(cb.Records, RecordRef{Len: 6})
	cb.Reset()
	cb.reserve(&Batch{Data: make([]byte, 90_000), NumRows: 900})
	if unsafe.SliceData(cb.Buf) != buf || unsafe.SliceData(cb.Records) != recs {
		t.Fatal("reserve replaced buffers that had room")
	}
	cb.reserve(&Batch{Data: make([]byte, 200_000), NumRows: 900})
	if want := 2*200_000 + 64<<10; cap(cb.Buf) < want || unsafe.SliceData(cb.Records) != recs {
		t.Fatalf("a larger batch: %d bytes reserved (want at least %d), references replaced: %v", cap(cb.Buf), want,
			unsafe.SliceData(cb.Records) != recs)
	}
}

// TestHugeMake: hugeMake is make([]T, 0, n): empty, n of capacity, zero.
func TestHugeMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 64 << 10, 3 << 20} {
		s := hugeMake[int32](n)
		if len(s) != 0 || cap(s) != n {
			t.Fatalf("hugeMake(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i, v := range s[:n] {
			if v != 0 {
				t.Fatalf("hugeMake(%d)[%d] = %d", n, i, v)
			}
		}
	}
}

// TestCSVFirstBatchRoom: a CSV source's first batch starts with room for BatchRows rows of 64 bytes
// (its text and raw text), made at once instead of grown from nothing, and the batch holds the rows.
func TestCSVFirstBatchRoom(t *testing.T) {
	src, err := NewCSVSource(strings.NewReader("a,1\nb,2\nc,3\n"), "t.csv", 0, SourceOptions{BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := src.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b.NumRows != 3 || string(b.Data) != "a1b2c3" {
		t.Fatalf("batch of %d rows, data %q", b.NumRows, b.Data)
	}
	if cap(b.Data) < 100*64 || cap(b.RawData) < 100*64 {
		t.Fatalf("first batch's room: %d bytes of text, %d raw, want at least %d", cap(b.Data), cap(b.RawData), 100*64)
	}
}
