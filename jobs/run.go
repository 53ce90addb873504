package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// DuplicatePolicy says what a run does with cells whose keys are exactly equal (same row, family,
// qualifier, timestamp and type), which HBase would silently collapse.
type DuplicatePolicy string

// Duplicate policies (--duplicates).
const (
	DuplicatesError DuplicatePolicy = "error" // fail, naming the first duplicate keys and their rows (default)
	DuplicatesFirst DuplicatePolicy = "first" // keep the cell of the earliest input row
	DuplicatesLast  DuplicatePolicy = "last"  // keep the cell of the latest input row
	DuplicatesKeep  DuplicatePolicy = "keep"  // write every copy (HBase then returns one of them)
)

// ParseDuplicatePolicy validates a --duplicates value.
func ParseDuplicatePolicy(s string) (DuplicatePolicy, error) {
	switch p := DuplicatePolicy(s); p {
	case "":
		return DuplicatesError, nil
	case DuplicatesError, DuplicatesFirst, DuplicatesLast, DuplicatesKeep:
		return p, nil
	}
	return "", fmt.Errorf("unknown duplicates policy %q (want error, first, last or keep)", s)
}

// RunSpec is a fully resolved load: everything a run needs, whether it came from flags or a job file.
type RunSpec struct {
	Table    string
	Inputs   []pipeline.Input
	Mapping  *pipeline.Mapping
	Pipeline pipeline.RunOptions // Workers, MaxRejects, Timestamp; Rejects is managed by Load

	// Splits are the region boundaries when known up front (a splits file, uniform or salt splits).
	// Nil with SplitSample == 0 means one region.
	Splits partition.Splits
	// SplitSample > 0 computes that many regions of equal bytes from the data itself.
	SplitSample int

	// Family returns the writer options of a family (compression, bloom, encoding, block size,
	// format version). Nil: hfilewriter.DefaultWriterOptions for every family.
	Family func(name string) hfilewriter.WriterOptions

	Memory      int64           // hard budget of the sorter (bytes); default 1 GiB
	MaxFileSize int64           // roll files at this size, at row boundaries; default 10 GiB
	Duplicates  DuplicatePolicy // default error
	// Combine, when set, folds the values of cells with equal keys (aggregation); it replaces the
	// duplicates policy.
	Combine sorter.CombineFunc
	// CombineErr reports an error Combine could not return (long overflow, ...): it fails the run.
	CombineErr func() error
	// FoldSeqLast: a folded cell carries the seq of its last input (needed when Combine keeps the last).
	FoldSeqLast bool
	// Verify is how every written file is checked before commit (VerifyStream when empty).
	Verify VerifyMode
	// TempDir holds spill files; default: a directory inside the staging area.
	TempDir string
	// SourceTask is stored as BULKLOAD_SOURCE_TASK.
	SourceTask string
	// FingerprintInputs makes Load stat and checksum every input file (LoadResult.Inputs) while it
	// writes HFiles, once the inputs have been read: the manifest's input list without a serial pass
	// over the inputs after the load.
	FingerprintInputs bool
	// Progress receives progress events; nil = none. It is called from several goroutines.
	Progress func(Progress)
}

// Progress is a snapshot of a running load.
type Progress struct {
	Phase        string // "read" or "write"
	BytesDone    int64  // read: input bytes consumed; write: cell bytes written
	BytesTotal   int64  // read: total input bytes (0 if unknown); write: total cell bytes
	RowsRead     int64
	CellsDone    int64
	CellsTotal   int64
	FilesWritten int
}

// LoadResult is what Load produced in the staging directory.
type LoadResult struct {
	Counts      pipeline.Counts
	Inputs      []InputFile // with FingerprintInputs: every input's size, mtime and checksum
	Cells       int64       // cells written to HFiles
	RowsWritten int64       // distinct rows per file, summed
	Duplicates  int64       // cells with a key equal to another cell's key (all policies count them)
	DupExamples []string
	Splits      partition.Splits // the region boundaries in force (computed ones with SplitSample)
	Files       []FileResult
	SpillBytes  int64 // bytes written to run files (spills and merge passes) in the temporary directory
	Spills      int64
	MergePasses int64 // intermediate merge passes (runs merged into runs before the final merges)
	PeakMemory  int64 // the sorter's accounted peak
	Elapsed     time.Duration
	ReadTime    time.Duration // reading, mapping and in-memory sorting/spilling (phase 1)
	WriteTime   time.Duration // merging and writing HFiles, and verifying them (phase 2)
	VerifyWait  time.Duration // part of WriteTime spent waiting for verifications after the last write
}

// FileResult describes one written HFile.
type FileResult struct {
	Family      string `json:"family"`
	Path        string `json:"path"` // relative to the output directory: <family>/<name>
	Region      int    `json:"region"`
	RegionStart string `json:"region_start"` // toStringBinary; "" = table start
	RegionEnd   string `json:"region_end"`   // toStringBinary; "" = table end
	FirstRow    string `json:"first_row"`
	LastRow     string `json:"last_row"`
	FirstKey    string `json:"first_key"`
	LastKey     string `json:"last_key"`
	Rows        int64  `json:"rows"`
	Cells       int64  `json:"cells"`
	Bytes       int64  `json:"bytes"`
}

// VerifyMode is how a run checks every HFile it wrote before committing it (--verify).
type VerifyMode string

// Verify modes.
const (
	// VerifyStream (the default; the empty mode means it) makes Reader.VerifyBlocks' checks on each
	// file's bytes as they are written (hfilewriter.StreamVerifier): every block's header, checksums
	// and decompression, the cells of unencoded blocks by their length fields, the data index against
	// the blocks, the trailer and the file-info totals. Nothing is read back.
	VerifyStream VerifyMode = "stream"
	// VerifyBlocks makes the same checks on each file read back from disk once it is written: it also
	// catches storage that returns other bytes than it was given, at the cost of reading every byte.
	VerifyBlocks VerifyMode = "blocks"
	// VerifyFull reads each file back and also decodes every cell: order and bloom-filter membership
	// (Reader.Verify, what `hfload hfile verify` runs). Several times the CPU of VerifyBlocks.
	VerifyFull VerifyMode = "full"
	// VerifyNone checks nothing (the writer still refuses out-of-order cells).
	VerifyNone VerifyMode = "none"
)

// ParseVerifyMode validates a --verify value ("" is VerifyStream).
func ParseVerifyMode(s string) (VerifyMode, error) {
	switch m := VerifyMode(s); m {
	case "":
		return VerifyStream, nil
	case VerifyStream, VerifyBlocks, VerifyFull, VerifyNone:
		return m, nil
	}
	return "", fmt.Errorf("unknown verify mode %q (want stream, blocks, full or none)", s)
}

// ErrDuplicates is returned (wrapped) when --duplicates error finds equal keys.
var ErrDuplicates = errors.New("duplicate cells")

const (
	defaultMemory      = 1 << 30
	defaultMaxFileSize = 10 << 30
	// memoryReserve is what Load keeps outside the sorter's budget for batches in flight, reject
	// buffers and one HFile writer per worker.
	memoryReserve = 48 << 20
	// splitSampleKeys is the capacity of the row sample behind --split-sample: about 1% error on the
	// bytes of each of 8 regions, a few MiB of memory.
	splitSampleKeys = 1 << 16
)

// Load reads the inputs, maps rows to cells, routes them to regions, sorts each region's cells within the
// memory budget and writes HFiles into dir/<family>/<name>. It does not commit anything: see Staging.
func Load(ctx context.Context, spec *RunSpec, dir string) (*LoadResult, error) {
	start := time.Now()
	if spec.Mapping == nil {
		return nil, errors.New("run: no column mapping")
	}
	families := spec.Mapping.Families()
	if len(families) == 0 {
		return nil, errors.New("run: the mapping has no column family")
	}
	memory := spec.Memory
	if memory <= 0 {
		memory = defaultMemory
	}
	sortBudget := memory - memoryReserve
	if sortBudget < 16<<20 {
		sortBudget = min(memory, 16<<20)
	}
	workers := spec.Pipeline.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: sortBudget, TempDir: spec.TempDir, Parallelism: workers,
		Dict: spec.Mapping.Dict()})
	if err != nil {
		return nil, fmt.Errorf("run: sorter: %w", err)
	}
	defer pool.Close()

	// With computed splits, or from rangedSplits given split points on, each family has one sorter whatever
	// the splits, cut into regions after the sort (writeRanges): a sorter per region would spill tiny runs
	// and cost every record a routing step.
	ranged := spec.SplitSample > 0 || len(spec.Splits) >= rangedSplits
	regions := 1
	if !ranged && len(spec.Splits) > 0 {
		regions = len(spec.Splits) + 1
	}
	nf := len(families)
	sorters := make([]*sorter.Sorter, regions*nf)
	sopts := sorter.SorterOptions{Combine: spec.Combine, CombineErr: spec.CombineErr, FoldSeqLast: spec.FoldSeqLast}
	for r := 0; r < regions; r++ {
		for f, fam := range families {
			sorters[r*nf+f] = pool.NewSorter(fmt.Sprintf("region %d family %s", r, fam), sopts)
		}
	}
	defer func() {
		for _, s := range sorters {
			s.Close()
		}
	}()

	// Phase 1: read, map, route, sort (spilling as the budget requires).
	var familyBytes = make([]atomic.Int64, nf)
	var rowsRead, bytesRead atomic.Int64
	var totalInput int64
	for _, in := range spec.Inputs {
		if in.Size > 0 {
			totalInput += in.Size
		}
	}
	inputs := spec.Inputs
	var digests []*inputDigest
	if spec.FingerprintInputs {
		digests = digestInputs(inputs)
	}
	if spec.Progress != nil {
		inputs = progressInputs(inputs, func(rows, bytes int64) {
			spec.Progress(Progress{Phase: "read", BytesDone: bytesRead.Add(bytes), BytesTotal: totalInput,
				RowsRead: rowsRead.Add(rows)})
		})
	}
	splits := spec.Splits
	// Computed splits come from a deterministic bottom-k sample of the rows with their bytes (the same
	// sample whatever order batches arrive in), fed once per run of cells of one row.
	var sampler *partition.Sampler
	if spec.SplitSample > 0 {
		sampler = partition.NewSampler(splitSampleKeys, 1)
	}
	// The sink groups each batch's records by sorter (a counting sort of record indexes) and adds each
	// group under one lock acquisition. Scratch slices are reused across batches through a sync.Pool.
	var scratch sync.Pool
	sink := func(cb *pipeline.CellBatch) error {
		sc, _ := scratch.Get().(*sinkScratch)
		if sc == nil {
			sc = &sinkScratch{}
		}
		defer scratch.Put(sc)
		refs := cb.Records
		sc.target = sc.target[:0]
		sc.count = resized(sc.count, len(sorters)+1)
		famBytes := resized(sc.famBytes, nf)
		var sampleRow []byte
		var sampleBytes, sampleRows, sampleTotal int64
		for i := range refs {
			r := &refs[i]
			t := int(r.Family)
			if regions > 1 {
				t += splits.Region(cellrec.Row(cb.Record(i))) * nf
			} else if sampler != nil {
				// Once per run of records of one row, with the bytes of the KeyValues they stand for.
				row := cellrec.Row(cb.Record(i))
				if sampleRow == nil || !bytes.Equal(row, sampleRow) {
					if sampleRow != nil {
						sampler.Offer(sampleRow, sampleBytes)
					}
					sampleRow, sampleBytes = row, 0
					sampleRows++
				}
				sampleBytes += int64(r.KVBytes)
				sampleTotal += int64(r.KVBytes)
			}
			sc.target = append(sc.target, int32(t))
			sc.count[t+1]++
			famBytes[r.Family] += int64(r.KVBytes)
		}
		if sampleRow != nil {
			sampler.Offer(sampleRow, sampleBytes)
			sampler.Count(sampleRows, sampleTotal)
		}
		for t := 1; t < len(sc.count); t++ {
			sc.count[t] += sc.count[t-1]
		}
		if cap(sc.recs) < len(refs) {
			sc.recs = make([]sorter.Record, len(refs))
		}
		recs := sc.recs[:len(refs)]
		next := append(sc.next[:0], sc.count[:len(sorters)]...)
		for i := range refs {
			t := sc.target[i]
			recs[next[t]] = sorter.Record{Rec: cb.Record(i), Seq: refs[i].Seq}
			next[t]++
		}
		sc.next = next
		for t := range sorters {
			if lo, hi := sc.count[t], sc.count[t+1]; hi > lo {
				if err := sorters[t].AddRecords(recs[lo:hi]); err != nil {
					return err
				}
			}
		}
		for f, n := range famBytes {
			familyBytes[f].Add(n)
		}
		sc.famBytes = famBytes
		clear(recs) // drop references to the batch buffer
		return nil
	}
	popts := spec.Pipeline
	counts, err := pipeline.Run(ctx, inputs, spec.Mapping, popts, sink)
	for _, in := range inputs {
		in.SetTee(nil)
	}
	res := &LoadResult{Counts: counts}
	if err != nil {
		return res, err
	}

	// Phase 2: merge each stream and write HFiles, while the inputs are checksummed for the manifest.
	res.ReadTime = time.Since(start)
	var fpDone chan error
	if spec.FingerprintInputs {
		fpDone = make(chan error, 1)
		go func() {
			var err error
			res.Inputs, err = fingerprintInputs(ctx, spec.Inputs, digests)
			fpDone <- err
		}()
	}
	var total int64
	for i := range familyBytes {
		total += familyBytes[i].Load()
	}
	out := &outputWriter{spec: spec, dir: dir, families: families, totalBytes: total, tagged: spec.Mapping.CellTags(), dict: pool.Dict(), pool: pool,
		verifySem: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if spec.Progress != nil {
		out.progress = spec.Progress
	}
	if ranged {
		if spec.SplitSample > 0 {
			splits = sampler.Splits(spec.SplitSample)
		}
		// Twice as many range merges as workers: a merge waits for its run reads and output writes, and
		// the read buffers of four merges fit the budget the sorters no longer need for arenas.
		err = out.writeRanges(ctx, sorters, splits, 2*workers)
	} else {
		err = out.writeRegions(ctx, sorters, regions, workers)
	}
	waitStart := time.Now()
	if verr := out.waitVerified(); err == nil {
		err = verr
	}
	res.VerifyWait = time.Since(waitStart)
	if fpDone != nil {
		if ferr := <-fpDone; err == nil {
			err = ferr
		}
	}
	res.Splits = splits
	res.Files = out.files
	for _, f := range out.files {
		res.RowsWritten += f.Rows
	}
	res.Cells = out.cells.Load()
	res.Duplicates = out.dups.Load()
	res.DupExamples = out.dupExamples
	res.Spills = pool.Spills()
	res.SpillBytes = pool.RunBytes()
	res.MergePasses = pool.MergePasses()
	res.PeakMemory = pool.PeakBytes()
	res.Elapsed = time.Since(start)
	res.WriteTime = res.Elapsed - res.ReadTime
	if err != nil {
		return res, err
	}
	if res.Duplicates > 0 && spec.Combine == nil && policy(spec) == DuplicatesError {
		return res, fmt.Errorf("%w: %d cells share their key with another cell (use --duplicates first|last|keep to load them); first ones: %v",
			ErrDuplicates, res.Duplicates, res.DupExamples)
	}
	return res, nil
}

// fingerprintInputs stats and checksums the inputs (standard input is listed with size -1). An input
// whose digest (see digestInputs; digests may be nil) saw exactly the file's size in bytes takes its
// checksum from it; the others (Parquet, or a text input not read to its end exactly once) are read
// again and hashed.
func fingerprintInputs(ctx context.Context, inputs []pipeline.Input, digests []*inputDigest) ([]InputFile, error) {
	out := make([]InputFile, 0, len(inputs))
	for i, in := range inputs {
		if in.Path == "-" {
			out = append(out, InputFile{Path: "-", Size: -1})
			continue
		}
		fp, err := Fingerprint(ctx, in.Path, false)
		if err == nil {
			if i < len(digests) && digests[i] != nil && digests[i].n == fp.Size {
				fp.Checksum = "sha256:" + hex.EncodeToString(digests[i].h.Sum(nil))
			} else {
				fp.Checksum, err = ChecksumFile(ctx, in.Path)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: fingerprint %s: %w", ErrIO, in.Path, err)
		}
		out = append(out, fp)
	}
	return out, nil
}

// inputDigest is the SHA-256 of an input's bytes as the load reads them, and how many it saw.
type inputDigest struct {
	h hash.Hash
	n int64
}

func (d *inputDigest) Write(p []byte) (int, error) {
	d.h.Write(p)
	d.n += int64(len(p))
	return len(p), nil
}

// digestInputs makes the text files among ins checksummed as they are loaded (Input.SetTee): one pass
// over each file instead of a second read, and a checksum of exactly the bytes that were loaded.
// digests[i] is nil where input i cannot be (Parquet, standard input). The caller clears the tees.
func digestInputs(ins []pipeline.Input) []*inputDigest {
	digests := make([]*inputDigest, len(ins))
	for i, in := range ins {
		d := &inputDigest{h: sha256.New()}
		if in.SetTee(d) {
			digests[i] = d
		}
	}
	return digests
}

// sinkScratch holds the per-batch grouping buffers of Load's sink.
type sinkScratch struct {
	target   []int32
	count    []int
	next     []int
	recs     []sorter.Record
	famBytes []int64
}

// resized returns s with length n, all zero, reusing its array when it is large enough.
func resized[T int | int64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func policy(spec *RunSpec) DuplicatePolicy {
	if spec.Duplicates == "" {
		return DuplicatesError
	}
	return spec.Duplicates
}

// progressInputs wraps each input's source to report rows and bytes as batches are read.
func progressInputs(ins []pipeline.Input, report func(rows, bytes int64)) []pipeline.Input {
	out := make([]pipeline.Input, len(ins))
	for i, in := range ins {
		in := in
		open := in.Open
		in.Open = func() (pipeline.Source, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			return &progressSource{Source: src, size: in.Size, report: report}, nil
		}
		out[i] = in
	}
	return out
}

type progressSource struct {
	pipeline.Source
	size     int64
	reported int64
	rows     int64
	report   func(rows, bytes int64)
	mu       sync.Mutex
}

// Header passes the inner source's column names through (pipeline.HeaderSource), so that mappings that
// name their columns keep working when progress is reported.
func (p *progressSource) Header() []string {
	if hs, ok := p.Source.(pipeline.HeaderSource); ok {
		return hs.Header()
	}
	return nil
}

func (p *progressSource) Next(ctx context.Context) (*pipeline.Batch, error) {
	b, err := p.Source.Next(ctx)
	if b != nil {
		rows := int64(b.NumRows + len(b.Bad))
		var bytes int64
		if len(b.RawEnds) > 0 {
			bytes = int64(b.RawEnds[len(b.RawEnds)-1]) + int64(b.NumRows) // raw text plus line ends
		}
		if p.size > 0 && p.reported+bytes > p.size {
			bytes = max(0, p.size-p.reported)
		}
		p.reported += bytes
		p.report(rows, bytes)
	}
	if err != nil && p.size > p.reported {
		p.report(0, p.size-p.reported) // end of file (or failure): account the rest
		p.reported = p.size
	}
	return b, err
}
