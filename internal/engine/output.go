package engine

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/directio"
	"github.com/hfload/hfload/partition"
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
	rows       *rowRecords  // the streams hold row records of every family (rowrecords.go), or nil
	bufSize    int          // direct-I/O buffer size of each HFile (planOutput)
	fileBytes  int64        // expected bytes of one file (setFileBytes; 0: unknown)

	famOpts      familyWriterOptions // each family's writer options (filewriter.go)
	spareStreams streamSpares        // finished regions' streams, for the next regions (stream.go)

	spares      spareWriters     // closed writers and verifiers whose buffers the next files take
	createLocks []sync.Mutex     // per family: FileOptions.CreateLock
	famDirs     []FamilyDir      // per family: FileOptions.Dir, used under createLocks
	fileBuffers directio.Buffers // the write buffers of closed files, for the next files
	verifyWG    sync.WaitGroup
	verifySem   chan struct{}
	verifyErr   error

	mu          sync.Mutex
	files       []FileResult
	dupExamples []string
	cells       atomic.Int64
	dups        atomic.Int64
	// sharedBloom counts the bloom chunks the files copied from their region's shared bloom (bloomshare.go).
	sharedBloom atomic.Int64
	bytesDone   atomic.Int64
}

func newOutputWriter(spec *Spec, sink Sink, families []string, totalBytes int64, pool *sorter.Pool) *outputWriter {
	return &outputWriter{spec: spec, sink: sink, families: families, totalBytes: totalBytes, progress: spec.Progress,
		dict: pool.Dict(), pool: pool, verifySem: make(chan struct{}, runtime.GOMAXPROCS(0)),
		createLocks: make([]sync.Mutex, len(families)), famDirs: make([]FamilyDir, len(families))}
}

// closeDirs closes the family directories the sink kept open (FileOptions.Dir), after the last create.
func (o *outputWriter) closeDirs() {
	for i := range o.famDirs {
		o.createLocks[i].Lock()
		o.famDirs[i].Close()
		o.createLocks[i].Unlock()
	}
}

// streams is the number of sorted streams per region: one per family, or one with row records.
func (o *outputWriter) streams() int {
	if o.rows != nil {
		return 1
	}
	return len(o.families)
}

// streamName names stream number fam of a region in messages.
func (o *outputWriter) streamName(fam int) string {
	if o.rows != nil {
		return "families " + strings.Join(o.families, ",")
	}
	return "family " + o.families[fam]
}

// filesPerTask is how many files one write task holds open at once: every family's with row records.
func (o *outputWriter) filesPerTask() int {
	if o.rows != nil {
		return len(o.families)
	}
	return 1
}

// outputMemory returns how many tasks writeTasks runs at once (at most workers) and the memory it
// reserves for their files' output buffers (filesPerTask per task), and sets o.bufSize.
func (o *outputWriter) outputMemory(workers int) (int, int64, error) {
	return o.outputMemoryAt(workers, workers)
}

// outputMemoryAt is outputMemory for `at` tasks at once (at >= workers) sharing the output memory of
// `workers` tasks (planOutput.spread).
func (o *outputWriter) outputMemoryAt(workers, at int) (int, int64, error) {
	o.bufSize = 1 << 20
	if o.pool == nil {
		return at, 0, nil
	}
	files := o.filesPerTask()
	p := planOutput(o.pool.Budget(), o.sink, files, workers, o.fileBytes).spread(o.pool.Budget(), o.sink, files, at)
	o.bufSize = p.bufSize
	if _, ok := o.sink.(BufferingSink); ok && p.perFile*int64(files) > o.pool.Reservable() {
		return 0, 0, fmt.Errorf("output buffers: one file being uploaded holds %s of part buffers, more than the sort budget of --memory %s allows; raise --memory",
			mib(p.perFile), mib(cmp.Or(max(o.spec.Memory, 0), DefaultMemory)))
	}
	return p.workers, p.memory(files), nil
}

// setFileBytes records the expected size of one file of regions regions (the KeyValue bytes spread
// evenly over them and the families), which caps the output buffers (planOutput).
func (o *outputWriter) setFileBytes(regions int) {
	o.fileBytes = o.totalBytes / int64(max(1, regions*len(o.families)))
}

// writeTasks runs task(region, family) for every pair with data (family: the stream; 0 with row
// records), `workers` at a time, and stops at the first error. The output buffers of the files written
// at once (filesPerTask per task) are reserved from the sorter's budget before the first task starts
// (a task holding read buffers never waits for them). With at > workers, at tasks run at once,
// sharing the output memory of `workers` tasks.
func (o *outputWriter) writeTasks(ctx context.Context, regions, workers, at int, has func(t int) bool,
	task func(ctx context.Context, region, fam int) error) error {
	nf := o.streams()
	workers, n, err := o.outputMemoryAt(workers, max(workers, at))
	if err != nil {
		return err
	}
	if n > 0 {
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
	nf := o.streams()
	o.setFileBytes(regions)
	has := func(t int) bool { return sorters[t].Records() > 0 }
	return o.writeTasks(ctx, regions, workers, regionTasksAtOnce(sorters, workers), has, func(ctx context.Context, region, fam int) error {
		it, err := sorters[region*nf+fam].Finish(ctx)
		if err != nil {
			return fmt.Errorf("sorting region %d %s: %w", region, o.streamName(fam), err)
		}
		defer it.Close()
		return o.writeStream(ctx, it, o.spec.Splits, region, fam)
	})
}

// regionTasksAtOnce is how many sorters writeRegions merges and writes at once. When every sorter
// holds its records in memory (no runs to merge, so no read buffers to wait for), up to 4 per worker:
// 5 equal regions on 2 workers then share both processors to the end (2.5 files' time) instead of
// taking 3 rounds, the last file alone on one processor. The output buffers of the files written at
// once share the memory of `workers` tasks' (planOutput.spread).
func regionTasksAtOnce(sorters []*sorter.Sorter, workers int) int {
	tasks := 0
	for _, s := range sorters {
		if s.Records() == 0 {
			continue
		}
		if s.Runs() > 0 {
			return workers
		}
		tasks++
	}
	return max(workers, min(tasks, 4*workers))
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
// (Iterator.Limit), instead of a merge per region re-reading a chunk of every run. A family's sorted
// in-memory remainder is read in place when the budget holds it beside the output buffers, instead of
// being written as one more run and read back. splitsOf returns the split points; with computed ones
// (the sampler's) it is called while the first family's records are sorted (RangesOptions.Plan), so
// that working them out overlaps the sort instead of running before it on one processor.
func (o *outputWriter) writeRanges(ctx context.Context, sorters []*sorter.Sorter, splitsOf func() partition.Splits, workers int) error {
	nf := o.streams()
	var (
		splits  partition.Splits
		opens   int
		out     int64
		planned bool
		planErr error
	)
	// plan sets the output plan, which depends on the number of regions, once.
	plan := func(ro *sorter.RangesOptions) error {
		if !planned {
			planned = true
			splits = splitsOf()
			o.setFileBytes(len(splits) + 1)
			opens, out, planErr = o.outputMemory(workers)
		}
		ro.Opens, ro.Leave = opens, out
		return planErr
	}
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
		r, err := sorters[f].FinishRangesWith(ctx, sorter.RangesOptions{Plan: plan})
		if planErr != nil {
			return planErr
		}
		if err != nil {
			return fmt.Errorf("sorting %s: %w", o.streamName(f), err)
		}
		ranges[f] = r
	}
	if err := plan(&sorter.RangesOptions{}); err != nil {
		return err
	}
	regions := len(splits) + 1
	size := max(1, regions/(rangeGroups*workers)) // regions per group
	groups := (regions + size - 1) / size
	has := func(t int) bool { return ranges[t%nf] != nil }
	return o.writeTasks(ctx, groups, workers, workers, has, func(ctx context.Context, group, fam int) error {
		first, last := group*size, min((group+1)*size, regions)-1
		start, _ := splits.Bounds(first)
		_, end := splits.Bounds(last)
		it, err := ranges[fam].Open(ctx, start, end)
		if err != nil {
			return fmt.Errorf("sorting region %d %s: %w", first, o.streamName(fam), err)
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

// writeStream writes the cells of one (region, family) iterator into that region's files; with row
// records, the cells of every family into each family's files.
func (o *outputWriter) writeStream(ctx context.Context, it *sorter.Iterator, splits partition.Splits, region, fam int) error {
	start, end := splits.Bounds(region)
	var fws []*fileWriter
	if o.rows != nil {
		fws = make([]*fileWriter, len(o.rows.fam))
		for rank, f := range o.rows.fam {
			fws[rank] = o.newFileWriter(ctx, region, f, start, end)
		}
	} else {
		fws = []*fileWriter{o.newFileWriter(ctx, region, fam, start, end)}
	}
	abort := func(fws []*fileWriter) {
		for _, fw := range fws {
			fw.abort()
		}
	}
	st := o.newStream(it, fws)
	var err error
	if o.rows != nil {
		st.share = rowBloomShare(fws)
		fw := newFamilyWriters(fws, o.rows)
		err = st.runRows(fw)
		if ferr := fw.finish(err == nil); err == nil {
			err = ferr
		}
	} else {
		err = st.run()
	}
	if err != nil {
		abort(fws)
		return err
	}
	if err := it.Err(); err != nil {
		abort(fws)
		return fmt.Errorf("sorting region %d %s: %w", region, o.streamName(fam), err)
	}
	for i, fw := range fws {
		if err := fw.close(); err != nil {
			abort(fws[i+1:])
			return err
		}
	}
	o.releaseStream(st)
	return nil
}

func (o *outputWriter) sortFiles() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.files = sortFileResults(o.files, o.families)
}

// sortFileResults puts files in region order, then in the order of families, each (region, family)
// stream's files in the order they have in files (appended in key order): sort.SliceStable's order,
// with a family not in families taken as the first. It sorts in place and returns files. Each file's
// place is its key, region × families + family, and the keys of a load are few and dense (one stream per
// region and family): a counting sort finds every file's place, and the files are then moved there
// along the permutation's cycles, without a second slice of them (the comparison sort and copy it
// replaces took ~2 ms of the serial end of a load at 10,000 files, after the last file was written,
// much of it the page faults of the fresh copy). Keys out of that range (negative, or far more keys
// than files) are ordered by a comparison sort.
func sortFileResults(files []FileResult, families []string) []FileResult {
	nf := max(len(families), 1)
	place := make([]int, len(files)) // each file's key, then its place
	sorted, lo, hi := true, 0, 0
	for i := range files {
		k := files[i].Region*nf + familyIndex(families, files[i].Family)
		place[i] = k
		if i > 0 && k < place[i-1] {
			sorted = false
		}
		lo, hi = min(lo, k), max(hi, k)
	}
	if sorted {
		return files
	}
	if lo < 0 || hi >= 4*len(files)+64 {
		order := make([]int, len(files))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(place[a], place[b]) })
		for j, i := range order {
			place[i] = j
		}
	} else {
		at := make([]int, hi+2) // at[k+1]: how many files have key k; then where key k's files start
		for _, k := range place {
			at[k+1]++
		}
		for k := 1; k < len(at); k++ {
			at[k] += at[k-1]
		}
		for i, k := range place {
			place[i] = at[k]
			at[k]++
		}
	}
	for i := range files {
		for j := place[i]; j != i; j = place[i] { // the file at i belongs at j: swap it there
			files[i], files[j] = files[j], files[i]
			place[i], place[j] = place[j], j
		}
	}
	return files
}

// familyIndex is family's place in families, 0 if it is not there. A load has a few families: a
// scan of them costs less than a map lookup.
func familyIndex(families []string, family string) int {
	for i, f := range families {
		if f == family {
			return i
		}
	}
	return 0
}

// mib formats n bytes as MiB for messages.
func mib(n int64) string { return fmt.Sprintf("%d MiB", (n+(1<<20)-1)>>20) }
