package pipeline

import (
	"cmp"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow/go/v15/parquet/metadata"
)

// Parquet from a bucket: the Parquet reader reads each column chunk of a row group with a ReadAt of its
// own, which on object storage is a ranged GET per column chunk. A row group's chunks are adjacent in
// the file, so rowGroupRanges reads the whole row group with one GET before its chunks are read and
// serves their ReadAts from that buffer. Only row groups of at most maxCoalescedRowGroup bytes are
// read at once: a request's fixed cost matters for small chunks, and a large row group's chunks are
// read as before (each is large, and no extra buffer of the row group's size is held).
const maxCoalescedRowGroup = 8 << 20

// rowGroupRanges is an io.ReaderAt over r that serves reads inside the loaded row group from memory.
type rowGroupRanges struct {
	r     io.ReaderAt
	limit int64 // the largest row group read at once; 0 = maxCoalescedRowGroup

	mu  sync.Mutex
	off int64  // file offset of buf
	buf []byte // the loaded row group's bytes; reused for the next one
	n   int    // valid bytes in buf
}

func (g *rowGroupRanges) ReadAt(p []byte, off int64) (int, error) {
	g.mu.Lock()
	if off >= g.off && off+int64(len(p)) <= g.off+int64(g.n) {
		n := copy(p, g.buf[off-g.off:g.n])
		g.mu.Unlock()
		return n, nil
	}
	g.mu.Unlock()
	return g.r.ReadAt(p, off)
}

// load reads row group rg's column chunks (the span from the first chunk's first page to the end of the
// last) with one read, if the span is at most maxCoalescedRowGroup bytes; otherwise it drops what was
// loaded, and the chunks are read one by one.
func (g *rowGroupRanges) load(rg *metadata.RowGroupMetaData, size int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n = 0
	start, end, ok := rowGroupSpan(rg, size)
	if !ok || end-start > cmp.Or(g.limit, maxCoalescedRowGroup) {
		return nil
	}
	if int64(cap(g.buf)) < end-start {
		g.buf = make([]byte, end-start)
	}
	buf := g.buf[:end-start]
	n, err := g.r.ReadAt(buf, start)
	if n != len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("parquet row group %d: bytes %d-%d: %w", rg.Ordinal(), start, end, err)
	}
	g.off, g.n = start, n
	return nil
}

// drop releases the buffer.
func (g *rowGroupRanges) drop() {
	g.mu.Lock()
	g.buf, g.n = nil, 0
	g.mu.Unlock()
}

// rowGroupSpan is the byte range holding rg's column chunks, computed as the Parquet reader computes
// each chunk's range (row_group_reader.go: from the dictionary page if it comes first, for
// TotalCompressedSize bytes); ok is false when the metadata is not usable (the reader then reports it).
func rowGroupSpan(rg *metadata.RowGroupMetaData, size int64) (start, end int64, ok bool) {
	var sum int64
	for i := 0; i < rg.NumColumns(); i++ {
		col, err := rg.ColumnChunk(i)
		if err != nil {
			return 0, 0, false
		}
		s := col.DataPageOffset()
		if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && s > col.DictionaryPageOffset() {
			s = col.DictionaryPageOffset()
		}
		e := s + col.TotalCompressedSize()
		if s < 0 || e < s || e > size {
			return 0, 0, false
		}
		if i == 0 || s < start {
			start = s
		}
		end = max(end, e)
		sum += e - s
	}
	// Chunks that are not adjacent (something else stored between them) are read one by one.
	return start, end, rg.NumColumns() > 0 && end-start <= 2*sum
}
