package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
)

// fileWriter writes the cells of one (region, family) stream into one or more HFiles, rolling at
// MaxFileSize at row boundaries.
type fileWriter struct {
	ctx         context.Context
	o           *outputWriter
	region, fam int
	regionStart []byte
	regionEnd   []byte
	part        int

	f       File                        // the file, from the sink
	sv      *hfilewriter.StreamVerifier // between w and f with VerifyStream
	w       *hfilewriter.Writer
	name    string // the current file's name in its family
	rel     string // <family>/<name>
	lastRow []byte
	rowInW  bool // the last row is w's (w.LastRow(); appendNewRowCoded), not lastRow
	// rowBuf is lastRow's first array: a fileWriter is made per region, and most row keys fit it, so
	// that the first row copied (the region's first file takes at least one through startRow) costs
	// no allocation of its own.
	rowBuf [rowBufSize]byte
	rows   int64  // distinct rows in the current file
	ts     tsText // the timestamp text of the last file's keys (FileResult.setKeys), kept when reused

	pendCells, pendBytes int64 // written but not yet added to o.cells and o.bytesDone
	newRowCells          int64 // cells written by appendNewRowCells (tests)

	// share: the region's shared ROW bloom (bloomshare.go) that this stream's first file follows as
	// consumer shareID; nil without.
	share   *hfilewriter.RowBloomShare
	shareID int
}

// newFileWriter returns the file writer of stream (region, fam): a finished region's (releaseStream),
// set up anew, when one is kept, with the row buffer it grew past rowBuf.
func (o *outputWriter) newFileWriter(ctx context.Context, region, fam int, start, end []byte) *fileWriter {
	fw := o.spareStreams.fileWriter()
	if fw == nil {
		fw = new(fileWriter)
	}
	row, ts := fw.lastRow[:0], fw.ts
	*fw = fileWriter{ctx: ctx, o: o, region: region, fam: fam, regionStart: start, regionEnd: end, ts: ts}
	if cap(row) > rowBufSize {
		fw.lastRow = row
	} else {
		fw.lastRow = fw.rowBuf[:0]
	}
	return fw
}

// rowBufSize is the size of fileWriter.rowBuf.
const rowBufSize = 32

// filePath returns a file's path under the output directory (family, separator, name) and its name,
// deterministic for an identical run and differing between runs whose seeds differ (names.go).
func (o *outputWriter) filePath(fam string, region, part int) (rel, name string) {
	return hfilePath(o.nameSeed, o.spec.Table, fam, region, part)
}

func (fw *fileWriter) writerOptions() hfilewriter.WriterOptions {
	return fw.o.famOpts.get(fw.o, fw.fam)
}

// familyWriterOptions holds the writer options of each family, made once per load (they were made for
// every file, with a BulkLoadInfo allocated each time).
type familyWriterOptions struct {
	once sync.Once
	opts []hfilewriter.WriterOptions
}

// get returns family fam's writer options: Spec.Family's (HBase's defaults without), with the load's
// duplicates setting and bulk-load file info.
func (f *familyWriterOptions) get(o *outputWriter, fam int) hfilewriter.WriterOptions {
	f.once.Do(func() {
		f.opts = make([]hfilewriter.WriterOptions, len(o.families))
		bulk := &hfilewriter.BulkLoadInfo{Time: o.spec.Pipeline.Timestamp, SourceTask: o.spec.SourceTask, MajorCompaction: true}
		for i, name := range o.families {
			var opts hfilewriter.WriterOptions // HBase's defaults
			if o.spec.Family != nil {
				opts = o.spec.Family(name)
			}
			opts.AllowDuplicateKeys = o.spec.Combine == nil && o.spec.DuplicatePolicy() == DuplicatesKeep
			opts.BulkLoad = bulk // read only: the writers copy what they write
			f.opts[i] = opts
		}
	})
	return f.opts[fam]
}

func (fw *fileWriter) open() error {
	fam := fw.o.families[fw.fam]
	fw.rel, fw.name = fw.o.filePath(fam, fw.region, fw.part) // filepath.Join's result: both are plain names
	f, err := fw.o.sink.Create(fw.ctx, fam, fw.name, FileOptions{BufferSize: fw.o.bufSize, Buffers: &fw.o.fileBuffers,
		SizeHint: fw.o.fileBytes, CreateLock: &fw.o.createLocks[fw.fam], Dir: &fw.o.famDirs[fw.fam]})
	if err != nil {
		return err
	}
	fw.f = f
	opts := fw.writerOptions()
	var out io.Writer = fw.f
	spareW, spareSV := fw.o.spares.get()
	if fw.o.verify() == VerifyStream {
		if fw.sv, err = hfilewriter.NewStreamVerifierReusing(fw.f, opts, spareSV); err != nil {
			fw.f.Abort()
			fw.f = nil
			return fmt.Errorf("output %s: %w", fw.rel, err)
		}
		out = fw.sv
	}
	fw.w, err = hfilewriter.NewWriterReusing(out, opts, spareW)
	if err != nil {
		fw.f.Abort()
		fw.f = nil
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	if fw.part == 0 && fw.share != nil {
		fw.w.ShareRowBloom(fw.share, fw.shareID) // a later file (rolled) starts mid-region: it cannot
	}
	fw.part++
	return nil
}

// startRow prepares for cells of row h.Row: when the row is new, it rolls to a new file first if the
// current one has reached MaxFileSize, and counts the row. Call it before each view's cells (a view's
// cells share a row).
func (fw *fileWriter) startRow(h *cellrec.Header) error {
	if fw.w != nil {
		last := fw.lastRow
		if fw.rowInW {
			last = fw.w.LastRow()
		}
		if bytes.Equal(h.Row, last) {
			return nil
		}
	}
	if err := fw.startNewRow(); err != nil {
		return err
	}
	fw.lastRow = append(fw.lastRow[:0], h.Row...)
	fw.rowInW = false
	return nil
}

// startNewRow is startRow for a row the caller knows this stream's files have not had: a caller that
// knows it for every row (familyWriters) calls only this, and lastRow stays unused.
func (fw *fileWriter) startNewRow() error {
	if fw.w != nil && fw.o.spec.MaxFileSize > 0 && fw.w.EstimatedSize() >= fw.o.spec.MaxFileSize {
		if err := fw.finishFile(); err != nil {
			return err
		}
	}
	if fw.w == nil {
		if err := fw.open(); err != nil {
			return err
		}
	}
	fw.rows++
	return nil
}

// append writes one cell of the row given to the last startRow, with its tags (nil without).
func (fw *fileWriter) append(h *cellrec.Header, q, v, tags []byte) error {
	if err := fw.w.AppendParts(h.Row, h.Family, q, h.TS, h.Type, v, tags); err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	fw.count(h, len(q), len(v), len(tags))
	return nil
}

// appendRowHash is append with the row's bloom hash (rh = hfilewriter.HashRow(h.Row)) computed already.
func (fw *fileWriter) appendRowHash(h *cellrec.Header, q, v, tags []byte, rh hfilewriter.RowHash) error {
	if err := fw.w.AppendPartsRowHash(h.Row, h.Family, q, h.TS, h.Type, v, tags, rh); err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	fw.count(h, len(q), len(v), len(tags))
	return nil
}

// appendNewRowCells writes cells, each the only cell of a row these files have not had (family's puts
// without tags, their rows hashed): startNewRow and appendRowHash for each in turn, the cells that go
// to one file in one call to its writer (hfilewriter.Writer.AppendNewRowCells, which checks the size
// before each row as startNewRow does).
func (fw *fileWriter) appendNewRowCells(family []byte, d *hfilewriter.NewRowData, cells []hfilewriter.NewRowCell) error {
	for len(cells) > 0 {
		if err := fw.startNewRow(); err != nil { // rolls or opens for cells[0], and counts it
			return err
		}
		before := fw.w.KeyValueBytes()
		n, err := fw.w.AppendNewRowCells(family, d, cells, max(fw.o.spec.MaxFileSize, 0))
		if n > 1 {
			fw.rows += int64(n - 1)
		}
		// What count adds for each cell: KeyValueSize of each, without tags (with the tags length when
		// the records carry tags), which is the writer's KeyValueBytes for the cells (8 + key + value
		// bytes each) and that difference per cell.
		h := cellrec.Header{Family: family}
		size := int(fw.w.KeyValueBytes()-before) + n*(fw.o.dict.KeyValueSize(&h, 0, 0, 0)-cellrec.KeyValueSize(&h, 0, 0))
		fw.newRowCells += int64(n)
		fw.counted(n, size)
		if err != nil {
			return fmt.Errorf("output %s: %w", fw.rel, err)
		}
		cells = cells[n:]
	}
	return nil
}

// count adds a written cell (its qualifier, value and tags lengths) to the local counters. They are
// published every few thousand cells: shared atomics per cell would bounce a cache line between the
// writing goroutines.
func (fw *fileWriter) count(h *cellrec.Header, qualifierLen, valueLen, tagsLen int) {
	fw.counted(1, fw.o.dict.KeyValueSize(h, qualifierLen, valueLen, tagsLen))
}

// counted adds n written cells of bytes KeyValue bytes in all to the local counters (count).
func (fw *fileWriter) counted(n, bytes int) {
	fw.pendCells += int64(n)
	fw.pendBytes += int64(bytes)
	if fw.pendCells >= 4096 {
		fw.publish()
	}
}

// appendSameRow is append for a cell of h right after another cell of h.
func (fw *fileWriter) appendSameRow(h *cellrec.Header, q, v, tags []byte) error {
	if err := fw.w.AppendSameRowTags(q, v, tags); err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	fw.count(h, len(q), len(v), len(tags))
	return nil
}

// appendRow is append for cells[0], a cell that starts its row (startRow), and appendSameRowCells for
// the others, in one call to the writer (cells of h without tags).
func (fw *fileWriter) appendRow(h *cellrec.Header, cells []hfilewriter.SameRowCell) error {
	before := fw.w.KeyValueBytes()
	n, err := fw.w.AppendRow(h.Row, h.Family, h.TS, h.Type, cells)
	fw.countUntagged(n, fw.w.KeyValueBytes()-before)
	if err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	return nil
}

// appendRowCoded is appendRow for the first of cells, usual cells of h (quals: the dictionary's
// qualifiers), as they are in the record, that the writer's run takes (hfilewriter.Writer.AppendRowCoded):
// it returns the bytes of cells written, 0 when none.
func (fw *fileWriter) appendRowCoded(h *cellrec.Header, quals [][]byte, cells []byte) int {
	before := fw.w.KeyValueBytes()
	n, used := fw.w.AppendRowCoded(h.Row, h.Family, h.TS, h.Type, quals, cells)
	fw.countUntagged(n, fw.w.KeyValueBytes()-before)
	return used
}

// appendNewRowCoded is startRow and appendRowCoded in one call to the writer for a row after the
// file's last row (hfilewriter.Writer.AppendNewRowCoded, which checks the size as startNewRow does): it
// returns the bytes of cells written, 0 when none (nothing changed: the caller then takes startRow
// and the usual way). The row is then the writer's last row (rowInW), not copied to lastRow. The
// caller has checked that the writer may take such rows (fw.w not nil, NewRowCodedOK); quals are the
// dictionary's usual qualifiers, so the records carry no tags.
func (fw *fileWriter) appendNewRowCoded(h *cellrec.Header, quals [][]byte, cells []byte) int {
	w := fw.w
	before := w.KeyValueBytes()
	n, used := w.AppendNewRowCoded(h.Row, h.Family, h.TS, h.Type, quals, cells, fw.o.spec.MaxFileSize)
	if n == 0 {
		return 0
	}
	fw.rows++
	fw.rowInW = true
	fw.counted(n, int(w.KeyValueBytes()-before)) // countUntagged: the records have no tags (quals)
	return used
}

// countUntagged is count for n cells without tags that made kvBytes of KeyValues in the writer
// (Writer.KeyValueBytes, which leaves out the tags length that a record with tags counts for each).
func (fw *fileWriter) countUntagged(n int, kvBytes int64) {
	if n == 0 {
		return
	}
	if fw.o.dict.Tagged() {
		kvBytes += 2 * int64(n)
	}
	fw.counted(n, int(kvBytes))
}

// appendSameRowCells is appendSameRow for each of cells in turn (cells without tags of the last row).
func (fw *fileWriter) appendSameRowCells(cells []hfilewriter.SameRowCell) error {
	before := fw.w.KeyValueBytes()
	n, err := fw.w.AppendSameRowCells(cells)
	fw.countUntagged(n, fw.w.KeyValueBytes()-before)
	if err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	return nil
}

// publish adds the locally counted cells and bytes to the shared totals and reports progress.
func (fw *fileWriter) publish() {
	if fw.pendCells == 0 {
		return
	}
	cells := fw.o.cells.Add(fw.pendCells)
	done := fw.o.bytesDone.Add(fw.pendBytes)
	fw.pendCells, fw.pendBytes = 0, 0
	if fw.o.progress != nil && cells/65536 != (cells-4096)/65536 {
		fw.o.progress(Progress{Phase: "write", BytesDone: done, BytesTotal: fw.o.totalBytes, CellsDone: cells})
	}
}

func (fw *fileWriter) finishFile() error {
	if fw.w == nil {
		return nil
	}
	err := fw.w.Close()
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && fw.sv != nil {
		if verr := fw.sv.Finish(); verr != nil {
			err = fmt.Errorf("verify: %w", verr)
		}
	}
	st := fw.w.StatsWithoutKeys()
	var keyArr [256]byte // the first and last keys, flat: on the stack unless they are long
	keys := fw.w.AppendFirstKey(keyArr[:0])
	firstLen := len(keys)
	keys = fw.w.AppendLastKey(keys)
	fw.o.sharedBloom.Add(st.SharedBloomChunks)
	if err == nil {
		fw.o.spares.put(fw.w, fw.sv)
	}
	fw.w, fw.f, fw.sv = nil, nil, nil
	if err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	if m := fw.o.verify(); m == VerifyBlocks || m == VerifyFull {
		fw.o.verifyAsync(fw.o.families[fw.fam], fw.name, m == VerifyFull)
	}
	fr := FileResult{
		Family: fw.o.families[fw.fam],
		Path:   fw.rel,
		Region: fw.region,
		Rows:   fw.rows,
		Cells:  st.Entries,
		Bytes:  st.BytesWritten,
	}
	fr.setKeys(fw.regionStart, fw.regionEnd, keys[:firstLen], keys[firstLen:], &fw.ts, fw.o.spec.RowBoundsOnly)
	fw.rows = 0
	fw.o.mu.Lock()
	if fw.o.files == nil {
		fw.o.files = make([]FileResult, 0, fw.o.expectedFiles())
	}
	fw.o.files = appendFileResult(fw.o.files, fr)
	fw.o.mu.Unlock()
	return nil
}

// expectedFiles is how many files a load whose regions are known up front (Spec.Splits) writes at
// least when every stream has records: one per region and family. The list of results is made that
// long at the first file: doubled from 64 it was moved 8 times on the way to 10,000 files, ~3.6 MB of
// fresh memory for a 1.8 MB list. Unknown regions (a sampled load) give 0: the list doubles.
func (o *outputWriter) expectedFiles() int {
	if o.spec.Splits == nil {
		return 0
	}
	return min(o.spec.Splits.Len()*max(len(o.families), 1), maxExpectedFiles)
}

// maxExpectedFiles bounds the list expectedFiles makes at the first file (~12 MB of results), in case
// a load of many regions has few files; more files than that double it.
const maxExpectedFiles = 1 << 16

// appendFileResult appends fr to files, doubling the list when it is full: append grows a long list
// by a quarter at a time, and each step moves it into fresh memory, page faults and all (10,000 files
// of ~200 bytes: ~2 MB, moved ~20 times).
func appendFileResult(files []FileResult, fr FileResult) []FileResult {
	if n := len(files); n == cap(files) {
		files = slices.Grow(files, max(n, 64))
	}
	return append(files, fr)
}

// close finishes the current file of this stream.
func (fw *fileWriter) close() error {
	fw.publish()
	return fw.finishFile()
}

func (fw *fileWriter) abort() {
	fw.publish()
	if fw.f != nil {
		fw.f.Abort()
		fw.w, fw.f, fw.sv = nil, nil, nil
	}
}
