package jobs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// outputWriter turns sorted streams into HFiles under dir/<family>/.
type outputWriter struct {
	spec       *RunSpec
	dir        string
	families   []string
	totalBytes int64
	progress   func(Progress)

	verifyWG  sync.WaitGroup
	verifySem chan struct{}
	verifyErr error

	mu          sync.Mutex
	files       []FileResult
	dupExamples []string
	cells       atomic.Int64
	dups        atomic.Int64
	bytesDone   atomic.Int64
}

const maxDupExamples = 5

// writeRegions merges and writes every (region, family) sorter, `workers` at a time.
func (o *outputWriter) writeRegions(ctx context.Context, sorters []*sorter.Sorter, regions, workers int) error {
	nf := len(o.families)
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
				if err := o.writeOne(ctx, sorters[t], t/nf, t%nf); err != nil {
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
		if sorters[t].Records() == 0 {
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

func (o *outputWriter) writeOne(ctx context.Context, s *sorter.Sorter, region, fam int) error {
	it, err := s.Finish(ctx)
	if err != nil {
		return fmt.Errorf("sorting region %d family %s: %w", region, o.families[fam], err)
	}
	defer it.Close()
	start, end := o.spec.Splits.Bounds(region)
	fw := o.newFileWriter(region, fam, start, end)
	st := o.newStream(it)
	for st.next() {
		if err := fw.append(st.kv); err != nil {
			fw.abort()
			return err
		}
	}
	if err := st.err(); err != nil {
		fw.abort()
		return fmt.Errorf("sorting region %d family %s: %w", region, o.families[fam], err)
	}
	return fw.close()
}

// writeSampled merges one stream per family, row by row across families, and cuts regions of equal bytes
// exactly at row boundaries. It returns the split points it chose. The merging goroutine only decides
// where cells go: each family's HFiles are written by a goroutine of their own, fed chunks of cells.
func (o *outputWriter) writeSampled(ctx context.Context, sorters []*sorter.Sorter, n int, total int64) (partition.Splits, error) {
	nf := len(o.families)
	streams := make([]*stream, nf)
	for f := 0; f < nf; f++ {
		it, err := sorters[f].Finish(ctx)
		if err != nil {
			return nil, fmt.Errorf("sorting family %s: %w", o.families[f], err)
		}
		defer it.Close()
		streams[f] = o.newStream(it)
		streams[f].advance()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fws := make([]*familyWriter, nf)
	for f := range fws {
		fws[f] = o.startFamilyWriter(ctx, cancel, f)
	}
	stop := func(err error) (partition.Splits, error) {
		cancel()
		for _, fw := range fws { // a writer's own error explains a cancellation better
			if werr := fw.finish(); werr != nil && !errors.Is(werr, context.Canceled) {
				err = werr
			}
		}
		return nil, err
	}
	target := total / int64(max(n, 1))
	var splits partition.Splits
	var prevRow []byte
	region, regionBytes := 0, int64(0)
	var regionStart []byte
	for {
		if err := ctx.Err(); err != nil {
			return stop(err)
		}
		var row []byte // the smallest head row among the families
		for _, st := range streams {
			if st.ok && (row == nil || bytes.Compare(st.row(), row) < 0) {
				row = st.row()
			}
		}
		if row == nil {
			break
		}
		if prevRow != nil && regionBytes >= target && region < n-1 {
			split := shortestSeparator(prevRow, row)
			splits = append(splits, split)
			for _, fw := range fws {
				if err := fw.cut(split); err != nil {
					return stop(err)
				}
			}
			region++
			regionBytes = 0
			regionStart = split
		}
		prevRow = append(prevRow[:0], row...)
		for f, st := range streams {
			for st.ok && bytes.Equal(st.row(), prevRow) {
				if err := fws[f].add(region, regionStart, st.kv); err != nil {
					return stop(err)
				}
				regionBytes += int64(len(st.kv))
				st.advance()
			}
			if err := st.err(); err != nil {
				return stop(fmt.Errorf("sorting family %s: %w", o.families[f], err))
			}
		}
	}
	var first error
	for _, fw := range fws {
		if err := fw.finish(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	o.sortFiles()
	return splits, nil
}

// familyWriter writes one family's cells, region after region, on its own goroutine.
type familyWriter struct {
	o    *outputWriter
	fam  int
	ch   chan *cellChunk
	free chan *cellChunk
	cur  *cellChunk
	done chan error
	err  error
}

// cellChunk carries KeyValue records of one region to a familyWriter; cutEnd marks the end of a region.
type cellChunk struct {
	region      int
	regionStart []byte
	buf         []byte
	ends        []int
	cut         bool
	cutEnd      []byte
}

const cellChunkSize = 1 << 20

func (o *outputWriter) startFamilyWriter(ctx context.Context, cancel func(), fam int) *familyWriter {
	fw := &familyWriter{o: o, fam: fam, ch: make(chan *cellChunk, 2), free: make(chan *cellChunk, 4), done: make(chan error, 1)}
	for i := 0; i < 4; i++ {
		fw.free <- &cellChunk{buf: make([]byte, 0, cellChunkSize)}
	}
	go func() {
		var w *fileWriter
		var err error
		for c := range fw.ch {
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err == nil {
				start := 0
				for _, end := range c.ends {
					if w == nil {
						w = o.newFileWriter(c.region, fam, c.regionStart, nil)
					}
					if err = w.append(c.buf[start:end]); err != nil {
						break
					}
					start = end
				}
				if err == nil && c.cut && w != nil {
					w.regionEnd = c.cutEnd
					err = w.close()
					w = nil
				}
			}
			c.buf, c.ends, c.cut, c.cutEnd = c.buf[:0], c.ends[:0], false, nil
			fw.free <- c
		}
		if err == nil && w != nil {
			err = w.close()
		}
		if err != nil {
			if w != nil {
				w.abort()
			}
			cancel()
		}
		fw.done <- err
	}()
	return fw
}

// add queues one cell of the given region.
func (fw *familyWriter) add(region int, regionStart, kv []byte) error {
	if fw.cur != nil && (fw.cur.region != region || len(fw.cur.buf)+len(kv) > cellChunkSize && len(fw.cur.ends) > 0) {
		fw.flush()
	}
	if fw.cur == nil {
		select {
		case fw.cur = <-fw.free:
		case err := <-fw.done: // the writer stopped early
			fw.err = err
			return err
		}
		fw.cur.region, fw.cur.regionStart = region, regionStart
	}
	fw.cur.buf = append(fw.cur.buf, kv...)
	fw.cur.ends = append(fw.cur.ends, len(fw.cur.buf))
	return nil
}

// cut ends the current region of this family at split.
func (fw *familyWriter) cut(split []byte) error {
	if fw.cur == nil {
		select {
		case fw.cur = <-fw.free:
		case err := <-fw.done:
			fw.err = err
			return err
		}
		fw.cur.region = -1
	}
	fw.cur.cut, fw.cur.cutEnd = true, split
	fw.flush()
	return nil
}

func (fw *familyWriter) flush() {
	if fw.cur != nil {
		fw.ch <- fw.cur
		fw.cur = nil
	}
}

// finish flushes, waits for the writer goroutine and returns its error.
func (fw *familyWriter) finish() error {
	if fw.ch == nil {
		return fw.err
	}
	fw.flush()
	close(fw.ch)
	fw.ch = nil
	if fw.err != nil {
		return fw.err // done was already consumed by add/cut
	}
	fw.err = <-fw.done
	return fw.err
}

// shortestSeparator returns the shortest prefix of next that sorts after prev (prev < next).
func shortestSeparator(prev, next []byte) []byte {
	i := 0
	for i < len(prev) && i < len(next) && prev[i] == next[i] {
		i++
	}
	return append([]byte(nil), next[:min(i+1, len(next))]...)
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

// stream applies the duplicates policy to a sorted iterator (equal keys arrive in input order) and yields
// each cell to write once. With a combiner the sorter has folded equal keys already.
type stream struct {
	o       *outputWriter
	it      *sorter.Iterator
	pol     DuplicatePolicy
	kv      []byte // the current cell to write, valid until the next advance
	ok      bool
	prev    []byte // key of the previous cell read (a copy)
	pseq    uint64
	held    []byte // last: the pending cell
	hasHeld bool
	out     []byte // last: the buffer kv points into
}

func (o *outputWriter) newStream(it *sorter.Iterator) *stream {
	pol := policy(o.spec)
	if o.spec.Combine != nil {
		pol = DuplicatesKeep
	}
	return &stream{o: o, it: it, pol: pol}
}

func (s *stream) err() error { return s.it.Err() }

// row returns the row of the current cell.
func (s *stream) row() []byte { return hfilewriter.Key(hfilewriter.KVKey(s.kv)).Row() }

// next advances and reports whether there is a current cell.
func (s *stream) next() bool { s.advance(); return s.ok }

func (s *stream) advance() {
	s.ok = false
	for s.it.Next() {
		kv, seq := s.it.KV(), s.it.Seq()
		key := hfilewriter.KVKey(kv)
		dup := s.prev != nil && hfilewriter.CompareKeys(s.prev, key) == 0
		if dup {
			s.o.recordDup(key, s.pseq, seq)
		}
		s.prev = append(s.prev[:0], key...)
		s.pseq = seq
		switch s.pol {
		case DuplicatesKeep:
			s.kv, s.ok = kv, true
			return
		case DuplicatesLast:
			if s.hasHeld && !dup { // a new key: emit the held cell, hold this one
				s.out = append(s.out[:0], s.held...)
				s.held = append(s.held[:0], kv...)
				s.kv, s.ok = s.out, true
				return
			}
			s.held = append(s.held[:0], kv...)
			s.hasHeld = true
		default: // first, error: the first cell of each key
			if !dup {
				s.kv, s.ok = kv, true
				return
			}
		}
	}
	if s.hasHeld {
		s.out = append(s.out[:0], s.held...)
		s.hasHeld = false
		s.kv, s.ok = s.out, true
	}
}

func (o *outputWriter) recordDup(key []byte, seqA, seqB uint64) {
	n := o.dups.Add(1)
	if n > maxDupExamples {
		return
	}
	ex := fmt.Sprintf("%s (%s and %s)", hfilewriter.Key(key), o.rowName(seqA), o.rowName(seqB))
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
	o           *outputWriter
	region, fam int
	regionStart []byte
	regionEnd   []byte
	part        int

	f       *os.File
	bw      *bufio.Writer
	w       *hfilewriter.Writer
	rel     string
	lastRow []byte
	rows    int64        // distinct rows in the current file
	pending []FileResult // closed files whose region end is not known yet (sampled splits)
}

func (o *outputWriter) newFileWriter(region, fam int, start, end []byte) *fileWriter {
	return &fileWriter{o: o, region: region, fam: fam, regionStart: start, regionEnd: end}
}

// fileName is deterministic: 32 hex characters (like HBase's own store file names, which must not
// contain '-' or '.'), derived from table, family, region and part.
func (o *outputWriter) fileName(fam string, region, part int) string {
	h := md5.Sum([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00%d", o.spec.Table, fam, region, part)))
	return hex.EncodeToString(h[:])
}

func (fw *fileWriter) writerOptions() hfilewriter.WriterOptions {
	var opts hfilewriter.WriterOptions
	if fw.o.spec.Family != nil {
		opts = fw.o.spec.Family(fw.o.families[fw.fam])
	} else {
		opts = hfilewriter.DefaultWriterOptions()
	}
	ts := fw.o.spec.Pipeline.Timestamp
	opts.AllowDuplicateKeys = fw.o.spec.Combine == nil && policy(fw.o.spec) == DuplicatesKeep
	opts.BulkLoad = &hfilewriter.BulkLoadInfo{Time: ts, SourceTask: fw.o.spec.SourceTask, MajorCompaction: true}
	return opts
}

func (fw *fileWriter) open() error {
	fam := fw.o.families[fw.fam]
	name := fw.o.fileName(fam, fw.region, fw.part)
	fw.rel = filepath.Join(fam, name)
	path := filepath.Join(fw.o.dir, fw.rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	fw.f = f
	fw.bw = bufio.NewWriterSize(f, 1<<20)
	fw.w, err = hfilewriter.NewWriter(fw.bw, fw.writerOptions())
	if err != nil {
		f.Close()
		return fmt.Errorf("output %s: %w", path, err)
	}
	fw.part++
	return nil
}

func (fw *fileWriter) append(kv []byte) error {
	row := hfilewriter.Key(hfilewriter.KVKey(kv)).Row()
	if fw.w != nil && fw.o.spec.MaxFileSize > 0 && !bytes.Equal(row, fw.lastRow) &&
		fw.w.EstimatedSize() >= fw.o.spec.MaxFileSize {
		if err := fw.finishFile(); err != nil {
			return err
		}
	}
	if fw.w == nil {
		if err := fw.open(); err != nil {
			return err
		}
	}
	if fw.rows == 0 || !bytes.Equal(row, fw.lastRow) {
		fw.rows++
	}
	if err := fw.w.AppendKeyValue(kv); err != nil {
		return fmt.Errorf("output %s: %w", fw.rel, err)
	}
	fw.lastRow = append(fw.lastRow[:0], row...)
	fw.o.cells.Add(1)
	done := fw.o.bytesDone.Add(int64(len(kv)))
	if fw.o.progress != nil && fw.o.cells.Load()%65536 == 0 {
		fw.o.progress(Progress{Phase: "write", BytesDone: done, BytesTotal: fw.o.totalBytes, CellsDone: fw.o.cells.Load()})
	}
	return nil
}

func (fw *fileWriter) finishFile() error {
	if fw.w == nil {
		return nil
	}
	path := filepath.Join(fw.o.dir, fw.rel)
	err := fw.w.Close()
	if err == nil {
		err = fw.bw.Flush()
	}
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	st := fw.w.Stats()
	fw.w, fw.f, fw.bw = nil, nil, nil
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if fw.o.spec.Verify {
		fw.o.verifyAsync(path)
	}
	fr := FileResult{
		Family:   fw.o.families[fw.fam],
		Path:     fw.rel,
		Region:   fw.region,
		FirstKey: hfilewriter.Key(st.FirstKey).String(),
		LastKey:  hfilewriter.Key(st.LastKey).String(),
		FirstRow: hfilewriter.ToStringBinary(hfilewriter.Key(st.FirstKey).Row()),
		LastRow:  hfilewriter.ToStringBinary(hfilewriter.Key(st.LastKey).Row()),
		Rows:     fw.rows,
		Cells:    st.Entries,
		Bytes:    st.BytesWritten,
	}
	fw.rows = 0
	fw.pending = append(fw.pending, fr)
	return nil
}

// verifyAsync re-reads a finished file in the background (at most GOMAXPROCS at a time); waitVerified
// returns the first failure.
func (o *outputWriter) verifyAsync(path string) {
	o.verifyWG.Add(1)
	go func() {
		defer o.verifyWG.Done()
		o.verifySem <- struct{}{}
		defer func() { <-o.verifySem }()
		if err := verifyFile(path); err != nil {
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

func verifyFile(path string) error {
	r, c, err := hfilewriter.OpenFile(path)
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	defer c.Close()
	if err := r.Verify(); err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	return nil
}

// close finishes the current file and records every file of this stream.
func (fw *fileWriter) close() error {
	if err := fw.finishFile(); err != nil {
		return err
	}
	fw.o.mu.Lock()
	for _, fr := range fw.pending {
		fr.RegionStart = hfilewriter.ToStringBinary(fw.regionStart)
		fr.RegionEnd = hfilewriter.ToStringBinary(fw.regionEnd)
		fw.o.files = append(fw.o.files, fr)
	}
	fw.o.mu.Unlock()
	fw.pending = nil
	return nil
}

func (fw *fileWriter) abort() {
	if fw.f != nil {
		fw.f.Close()
		os.Remove(filepath.Join(fw.o.dir, fw.rel))
		fw.w, fw.f, fw.bw = nil, nil, nil
	}
}
