package engine

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/directio"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// outputWriter turns sorted streams into HFiles, written to a Sink as <family>/<name>.
type outputWriter struct {
	spec       *Spec
	sink       Sink
	nameSeed   []byte // Spec.NameSeed's
	families   []string
	totalBytes int64
	progress   func(Progress)
	dict       *cellrec.Dict
	pool       *sorter.Pool // the budget the output buffers are reserved from (nil: not accounted)
	bufSize    int          // direct-I/O buffer size of each HFile (outputBufferSize)

	spares      spareWriters     // closed writers and verifiers whose buffers the next files take
	fileBuffers directio.Buffers // the write buffers of closed files, for the next files
	verifyWG    sync.WaitGroup
	verifySem   chan struct{}
	verifyErr   error

	mu          sync.Mutex
	files       []FileResult
	dupExamples []string
	cells       atomic.Int64
	dups        atomic.Int64
	bytesDone   atomic.Int64
}

const maxDupExamples = 5

func newOutputWriter(spec *Spec, sink Sink, families []string, totalBytes int64, pool *sorter.Pool) *outputWriter {
	return &outputWriter{spec: spec, sink: sink, families: families, totalBytes: totalBytes, progress: spec.Progress,
		dict: pool.Dict(), pool: pool, verifySem: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// Output buffers: an HFile is written through directio buffers of up to maxOutputBuffer bytes (large
// writes keep the disk busy: see directio.NewWriter), and the buffers of all HFiles written at once take
// at most a quarter of the sorter's budget.
const (
	maxOutputBuffer = 4 << 20
	minOutputBuffer = 64 << 10
)

// outputBufferSize is the directio buffer size of each of files HFiles written at once from a budget.
func outputBufferSize(budget int64, files int) int {
	size := budget / 4 / int64(max(files, 1)) / directio.WriterBuffers
	size = min(max(size, minOutputBuffer), maxOutputBuffer)
	return int(size) &^ (minOutputBuffer - 1)
}

// writeTasks runs task(region, family) for every pair with data, `workers` at a time, and stops at the
// first error. The output buffers of the `workers` files written at once are reserved from the
// sorter's budget before the first task starts (a task holding read buffers never waits for them).
func (o *outputWriter) writeTasks(ctx context.Context, regions, workers int, has func(t int) bool,
	task func(ctx context.Context, region, fam int) error) error {
	nf := len(o.families)
	o.bufSize = 1 << 20
	if o.pool != nil {
		o.bufSize = outputBufferSize(o.pool.Budget(), workers)
		perFile := directio.WriterMemory(o.bufSize)
		if bs, ok := o.sink.(BufferingSink); ok {
			// The sink's files buffer their bytes themselves (upload parts); they fit in a quarter of
			// the budget, as the write buffers above do, with fewer files at once if need be.
			perFile = bs.FileMemory()
			if fit := o.pool.Budget() / 4 / max(perFile, 1); int64(workers) > fit {
				workers = int(max(fit, 1))
			}
			if perFile > o.pool.Reservable() {
				return fmt.Errorf("output buffers: one file being uploaded holds %s of part buffers, more than the sort budget of --memory %s allows; raise --memory",
					mib(perFile), mib(cmp.Or(max(o.spec.Memory, 0), DefaultMemory)))
			}
		}
		n := int64(workers) * perFile
		if err := o.pool.Reserve(ctx, n); err != nil {
			return fmt.Errorf("output buffers: %w", err)
		}
		defer o.pool.Release(n)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tasks := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				if err := task(ctx, t/nf, t%nf); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		}()
	}
	var err error
loop:
	for t := 0; t < regions*nf; t++ {
		if !has(t) {
			continue
		}
		select {
		case tasks <- t:
		case <-ctx.Done():
			break loop
		}
	}
	close(tasks)
	wg.Wait()
	close(errc)
	for e := range errc {
		if err == nil {
			err = e
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	o.sortFiles()
	return err
}

// writeRegions merges and writes every (region, family) sorter, `workers` at a time.
func (o *outputWriter) writeRegions(ctx context.Context, sorters []*sorter.Sorter, regions, workers int) error {
	nf := len(o.families)
	has := func(t int) bool { return sorters[t].Records() > 0 }
	return o.writeTasks(ctx, regions, workers, has, func(ctx context.Context, region, fam int) error {
		it, err := sorters[region*nf+fam].Finish(ctx)
		if err != nil {
			return fmt.Errorf("sorting region %d family %s: %w", region, o.families[fam], err)
		}
		defer it.Close()
		return o.writeStream(ctx, it, o.spec.Splits, region, fam)
	})
}

// rangedSplits is the number of given split points from which a run sorts each family once and cuts
// the regions out after the sort (writeRanges) instead of sorting every region on its own.
const rangedSplits = 16

// rangeGroups is how many groups of consecutive regions writeRanges merges per worker.
const rangeGroups = 4

// writeRanges writes the regions of many or computed split points: each family's sorter holds all its
// cells. Consecutive regions are merged in groups, `workers` (group, family) pairs at a time, so that
// merging and writing run in parallel: a group's merge reads the runs' row range of its regions once
// (each run from the chunk before the group's first row) and is cut at every region's end
// (Iterator.Limit), instead of a merge per region re-reading a chunk of every run.
func (o *outputWriter) writeRanges(ctx context.Context, sorters []*sorter.Sorter, splits partition.Splits, workers int) error {
	nf := len(o.families)
	ranges := make([]*sorter.Ranges, nf)
	defer func() {
		for _, r := range ranges {
			if r != nil {
				r.Close()
			}
		}
	}()
	for f := range ranges {
		if sorters[f].Records() == 0 {
			sorters[f].Close()
			continue
		}
		r, err := sorters[f].FinishRanges(ctx)
		if err != nil {
			return fmt.Errorf("sorting family %s: %w", o.families[f], err)
		}
		ranges[f] = r
	}
	regions := len(splits) + 1
	size := max(1, regions/(rangeGroups*workers)) // regions per group
	groups := (regions + size - 1) / size
	has := func(t int) bool { return ranges[t%nf] != nil }
	return o.writeTasks(ctx, groups, workers, has, func(ctx context.Context, group, fam int) error {
		first, last := group*size, min((group+1)*size, regions)-1
		start, _ := splits.Bounds(first)
		_, end := splits.Bounds(last)
		it, err := ranges[fam].Open(ctx, start, end)
		if err != nil {
			return fmt.Errorf("sorting region %d family %s: %w", first, o.families[fam], err)
		}
		defer it.Close()
		for region := first; region <= last; region++ {
			_, end := splits.Bounds(region)
			it.Limit(end)
			if err := o.writeStream(ctx, it, splits, region, fam); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeStream writes the cells of one (region, family) iterator into that region's files.
func (o *outputWriter) writeStream(ctx context.Context, it *sorter.Iterator, splits partition.Splits, region, fam int) error {
	start, end := splits.Bounds(region)
	fw := o.newFileWriter(ctx, region, fam, start, end)
	st := o.newStream(it)
	if err := st.run(fw); err != nil {
		fw.abort()
		return err
	}
	if err := it.Err(); err != nil {
		fw.abort()
		return fmt.Errorf("sorting region %d family %s: %w", region, o.families[fam], err)
	}
	return fw.close()
}

func (o *outputWriter) sortFiles() {
	o.mu.Lock()
	defer o.mu.Unlock()
	// Region, then family; within one (region, family) stream files were appended in key order.
	famIndex := map[string]int{}
	for i, f := range o.families {
		famIndex[f] = i
	}
	sort.SliceStable(o.files, func(i, j int) bool {
		if o.files[i].Region != o.files[j].Region {
			return o.files[i].Region < o.files[j].Region
		}
		return famIndex[o.files[i].Family] < famIndex[o.files[j].Family]
	})
}

// stream applies the duplicates policy to a sorted iterator and hands each cell to write to a
// fileWriter. The iterator yields views (consecutive cells of one record); equal keys arrive in input
// order, and since the cells of a view are distinct, a cell can only equal the last cell of the previous
// view. With a combiner the sorter has folded equal keys already.
type stream struct {
	o   *outputWriter
	it  *sorter.Iterator
	d   *cellrec.Dict
	pol DuplicatePolicy

	// The last cell handed on: its seq, and with policy last its key (copies).
	prev    cellrec.Header
	prevQ   []byte
	pseq    uint64
	hasPrev bool
	prevRow []byte // backing of prev.Row
	prevFam []byte // backing of prev.Family
	heldH   cellrec.Header
	heldQ   []byte // last: the pending cell (copies)
	heldV   []byte
	heldT   []byte
	heldRow []byte
	heldFam []byte
	hasHeld bool
	keyBuf  []byte // flat keys for duplicate examples
}

func (o *outputWriter) newStream(it *sorter.Iterator) *stream {
	pol := o.spec.DuplicatePolicy()
	if o.spec.Combine != nil {
		pol = DuplicatesKeep
	}
	return &stream{o: o, it: it, d: o.dict, pol: pol}
}

// setPrev remembers the key of the last cell of a view.
func (s *stream) setPrev(h *cellrec.Header, q []byte, seq uint64) {
	if !s.hasPrev || !bytes.Equal(s.prevRow, h.Row) {
		s.prevRow = append(s.prevRow[:0], h.Row...)
	}
	if !s.hasPrev || !bytes.Equal(s.prevFam, h.Family) {
		s.prevFam = append(s.prevFam[:0], h.Family...)
	}
	s.prev = cellrec.Header{Row: s.prevRow, Family: s.prevFam, TS: h.TS, Type: h.Type}
	s.prevQ = append(s.prevQ[:0], q...)
	s.pseq = seq
	s.hasPrev = true
}

// hold keeps a copy of a cell (policy last) until the next view shows whether a later duplicate replaces it.
func (s *stream) hold(h *cellrec.Header, q, v, tags []byte) {
	s.heldRow = append(s.heldRow[:0], h.Row...)
	s.heldFam = append(s.heldFam[:0], h.Family...)
	s.heldH = cellrec.Header{Row: s.heldRow, Family: s.heldFam, TS: h.TS, Type: h.Type}
	s.heldQ = append(s.heldQ[:0], q...)
	s.heldV = append(s.heldV[:0], v...)
	s.heldT = append(s.heldT[:0], tags...)
	s.hasHeld = true
}

func (s *stream) writeHeld(fw *fileWriter) error {
	if !s.hasHeld {
		return nil
	}
	s.hasHeld = false
	if err := fw.startRow(&s.heldH); err != nil {
		return err
	}
	return fw.append(&s.heldH, s.heldQ, s.heldV, s.heldT)
}

// run writes every cell the policy keeps.
func (s *stream) run(fw *fileWriter) error {
	last := s.pol == DuplicatesLast
	for s.it.Next() {
		h, seq := s.it.Header(), s.it.Seq()
		q, v, t, rest := s.d.NextTags(s.it.Cells())
		// A duplicate equals the last cell handed on: with policy last the held one (kept in s.prev);
		// otherwise the last cell written, or one equal to it that was dropped (the writer has its key).
		var dup bool
		if last {
			dup = s.hasPrev && cellrec.Compare(&s.prev, s.prevQ, h, q) == 0
		} else {
			dup = fw.w != nil && fw.w.IsLast(h.Row, h.Family, q, h.TS, h.Type)
		}
		if dup {
			s.keyBuf = cellrec.AppendKey(s.keyBuf[:0], h, q)
			s.o.recordDup(s.keyBuf, s.pseq, seq)
		}
		if last && !dup {
			if err := s.writeHeld(fw); err != nil {
				return err
			}
		}
		if err := fw.startRow(h); err != nil {
			return err
		}
		// With policy last the first cell is written unless it ends the view (then it is held);
		// otherwise unless it is a duplicate to drop.
		written := last || !dup || s.pol == DuplicatesKeep
		switch {
		case last && len(rest) == 0:
			s.hold(h, q, v, t) // a duplicate replaces the held cell: the later input wins
		case written:
			s.hasHeld = false
			if err := fw.append(h, q, v, t); err != nil {
				return err
			}
		}
		// The rest of the view: distinct keys, each greater than the first. Once a cell of the view is
		// in the file, the next ones share its row, family, timestamp and type.
		for len(rest) > 0 {
			q, v, t, rest = s.d.NextTags(rest)
			if last && len(rest) == 0 {
				s.hold(h, q, v, t)
				break
			}
			var err error
			if written {
				err = fw.appendSameRow(h, q, v, t)
			} else {
				err = fw.append(h, q, v, t)
				written = true
			}
			if err != nil {
				return err
			}
		}
		if last {
			s.setPrev(h, q, seq)
		}
		s.pseq = seq
	}
	if err := s.it.Err(); err != nil {
		return nil // reported by writeStream
	}
	return s.writeHeld(fw)
}

func (o *outputWriter) recordDup(key []byte, seqA, seqB uint64) {
	n := o.dups.Add(1)
	if n > maxDupExamples {
		return
	}
	ex := fmt.Sprintf("%s (%s and %s)", kv.Key(key), o.rowName(seqA), o.rowName(seqB))
	o.mu.Lock()
	o.dupExamples = append(o.dupExamples, ex)
	o.mu.Unlock()
}

func (o *outputWriter) rowName(seq uint64) string {
	f, r := pipeline.SeqFile(seq), pipeline.SeqRow(seq)
	name := strconv.Itoa(f)
	if f < len(o.spec.Inputs) {
		name = o.spec.Inputs[f].Path
	}
	return fmt.Sprintf("%s data row %d", name, r+1)
}

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
	rows    int64 // distinct rows in the current file

	pendCells, pendBytes int64 // written but not yet added to o.cells and o.bytesDone
}

func (o *outputWriter) newFileWriter(ctx context.Context, region, fam int, start, end []byte) *fileWriter {
	return &fileWriter{ctx: ctx, o: o, region: region, fam: fam, regionStart: start, regionEnd: end}
}

// fileName is deterministic for an identical run and differs between runs whose seeds differ (names.go).
func (o *outputWriter) fileName(fam string, region, part int) string {
	return hfileName(o.nameSeed, o.spec.Table, fam, region, part)
}

func (fw *fileWriter) writerOptions() hfilewriter.WriterOptions {
	var opts hfilewriter.WriterOptions // HBase's defaults
	if fw.o.spec.Family != nil {
		opts = fw.o.spec.Family(fw.o.families[fw.fam])
	}
	ts := fw.o.spec.Pipeline.Timestamp
	opts.AllowDuplicateKeys = fw.o.spec.Combine == nil && fw.o.spec.DuplicatePolicy() == DuplicatesKeep
	opts.BulkLoad = &hfilewriter.BulkLoadInfo{Time: ts, SourceTask: fw.o.spec.SourceTask, MajorCompaction: true}
	return opts
}

func (fw *fileWriter) open() error {
	fam := fw.o.families[fw.fam]
	fw.name = fw.o.fileName(fam, fw.region, fw.part)
	fw.rel = filepath.Join(fam, fw.name)
	f, err := fw.o.sink.Create(fw.ctx, fam, fw.name, FileOptions{BufferSize: fw.o.bufSize, Buffers: &fw.o.fileBuffers})
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
	fw.part++
	return nil
}

// startRow prepares for cells of row h.Row: when the row is new, it rolls to a new file first if the
// current one has reached MaxFileSize, and counts the row. Call it before each view's cells (a view's
// cells share a row).
func (fw *fileWriter) startRow(h *cellrec.Header) error {
	if fw.w != nil && bytes.Equal(h.Row, fw.lastRow) {
		return nil
	}
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
	fw.lastRow = append(fw.lastRow[:0], h.Row...)
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

// count adds a written cell (its qualifier, value and tags lengths) to the local counters. They are
// published every few thousand cells: shared atomics per cell would bounce a cache line between the
// writing goroutines.
func (fw *fileWriter) count(h *cellrec.Header, qualifierLen, valueLen, tagsLen int) {
	fw.pendCells++
	fw.pendBytes += int64(fw.o.dict.KeyValueSize(h, qualifierLen, valueLen, tagsLen))
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
	st := fw.w.Stats()
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
		Family:      fw.o.families[fw.fam],
		Path:        fw.rel,
		Region:      fw.region,
		RegionStart: kv.ToStringBinary(fw.regionStart),
		RegionEnd:   kv.ToStringBinary(fw.regionEnd),
		FirstKey:    kv.Key(st.FirstKey).String(),
		LastKey:     kv.Key(st.LastKey).String(),
		FirstRow:    kv.ToStringBinary(kv.Key(st.FirstKey).Row()),
		LastRow:     kv.ToStringBinary(kv.Key(st.LastKey).Row()),
		Rows:        fw.rows,
		Cells:       st.Entries,
		Bytes:       st.BytesWritten,
	}
	fw.rows = 0
	fw.o.mu.Lock()
	fw.o.files = append(fw.o.files, fr)
	fw.o.mu.Unlock()
	return nil
}

// verify returns the run's verify mode.
func (o *outputWriter) verify() VerifyMode {
	if o.spec.Verify == "" {
		return VerifyStream
	}
	return o.spec.Verify
}

// verifyAsync re-reads a finished file in the background (at most GOMAXPROCS at a time), with the full
// check when cells is set; waitVerified returns the first failure.
func (o *outputWriter) verifyAsync(family, name string, cells bool) {
	o.verifyWG.Add(1)
	go func() {
		defer o.verifyWG.Done()
		o.verifySem <- struct{}{}
		defer func() { <-o.verifySem }()
		if err := o.verifyFile(family, name, cells); err != nil {
			o.mu.Lock()
			if o.verifyErr == nil {
				o.verifyErr = err
			}
			o.mu.Unlock()
		}
	}()
}

func (o *outputWriter) waitVerified() error {
	o.verifyWG.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.verifyErr
}

// verifyFile reads a written file back from the sink (a Reopener: Load checks) and verifies it.
func (o *outputWriter) verifyFile(family, name string, cells bool) error {
	path := filepath.Join(family, name)
	f, err := o.sink.(Reopener).Open(family, name)
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	defer f.Close()
	r, err := hfilewriter.OpenReader(f, f.Size())
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	verify := r.VerifyBlocks
	if cells {
		verify = r.Verify
	}
	if err := verify(); err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	return nil
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

// mib formats n bytes as MiB for messages.
func mib(n int64) string { return fmt.Sprintf("%d MiB", (n+(1<<20)-1)>>20) }
