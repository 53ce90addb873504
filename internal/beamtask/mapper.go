package beamtask

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// RunRef names one run file: the records a unit routed to one target (region·families + family).
type RunRef struct {
	Target  int    `json:"target"`
	Path    string `json:"path"` // in the work area
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`

	indexBytes int64
}

// unitSummary is what a map task leaves for the launcher; its existence marks the unit done.
type unitSummary struct {
	Unit   int             `json:"unit"`
	Counts pipeline.Counts `json:"counts"`
	Input  *jobs.InputFile `json:"input,omitempty"` // owner units: the file's fingerprint
	Runs   []RunRef        `json:"runs"`
	// Spills and SpillBytes: the map's sorter's spills to the worker's local disk; IndexBytes: the
	// runs' indexes.
	Spills     int64 `json:"spills,omitempty"`
	SpillBytes int64 `json:"spill_bytes,omitempty"`
	IndexBytes int64 `json:"index_bytes,omitempty"`
	Rejects    bool  `json:"rejects,omitempty"` // the unit's rejects file exists
	// Span: a CSV chunk's (Unit.Chunked) start and end, lines and rows, numbered from the chunk's start.
	Span *pipeline.CSVSpan `json:"span,omitempty"`
	// Watermark: what the unit's watermark filter dropped and kept (incremental runs with a watermark).
	Watermark *jobs.WatermarkReport `json:"watermark,omitempty"`
}

// Map reads one unit, maps its rows with the job's mapping, routes every record to its region by
// splits and sorts the records of each (region, family) with hfload's sorter, within the job's memory
// budget (spilling to the worker's local disk, Task.TmpDir), into one sorted run file per target it has
// records for, with its index (runfile.go); rejects go to the unit's rejects file, in input order.
// The unit's reject limit is the job's (the launcher checks the total);
// a CSV chunk has none (Collect finds the reject that crosses the job's, once it knows the chunk's
// line numbers; a chunk is bounded, and the reducers write nothing once the chunks' rejects are over
// it). It returns the run files, in target order, and, for the unit that owns its input, the input's
// checksum, for a CSV chunk its span (nil for the others).
func Map(ctx context.Context, t *Task, spec *jobs.RunSpec, unit int, splits partition.Splits) ([]RunRef, *InputSum, error) {
	st, err := t.open(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	attempt := attemptID()
	targets := (len(splits) + 1) * len(spec.Mapping.Families())
	tmp, err := os.MkdirTemp(t.TmpDir, "hfload-map-")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: spill directory: %w", jobs.ErrIO, err)
	}
	defer os.RemoveAll(tmp)
	pool, err := engine.NewSortPool(&spec.Spec, tmp)
	if err != nil {
		return nil, nil, fmt.Errorf("beam: map: %w", err)
	}
	defer pool.Close()
	var mu sync.Mutex
	sorters := make([]*sorter.Sorter, targets)
	defer func() {
		for _, s := range sorters {
			if s != nil {
				s.Close()
			}
		}
	}()
	sorterOf := func(target int) *sorter.Sorter {
		mu.Lock()
		defer mu.Unlock()
		if sorters[target] == nil {
			sorters[target] = pool.NewSorter(fmt.Sprintf("unit %d target %d", unit, target), sorter.SorterOptions{})
		}
		return sorters[target]
	}
	route := router(spec, splits)
	// Each batch's records are grouped per target into slices reused from batch to batch (a pool:
	// the mapping workers call sink concurrently), then added to the targets' sorters (which copy them).
	bp := sync.Pool{New: func() any { return &batchRecords{recs: make([][]sorter.Record, targets)} }}
	sink := func(cb *pipeline.CellBatch) error {
		br := bp.Get().(*batchRecords)
		defer bp.Put(br)
		defer br.reset()
		for i := range cb.Records {
			target := route(cb, i)
			if len(br.recs[target]) == 0 {
				br.used = append(br.used, target)
			}
			br.recs[target] = append(br.recs[target], sorter.Record{Rec: cb.Record(i), Seq: cb.Records[i].Seq})
		}
		for _, target := range br.used {
			if err := sorterOf(target).AddRecords(br.recs[target]); err != nil {
				return err
			}
		}
		return nil
	}
	sum, is, err := mapUnit(ctx, t, spec, st, attempt, unit, sink)
	if err != nil {
		return nil, nil, err
	}
	every := t.indexEvery(spec)
	for target, s := range sorters {
		if s == nil {
			continue
		}
		sorters[target] = nil
		ref, err := writeSortedRun(ctx, st, s, runFileName(unit, target), attempt, every)
		if err != nil {
			return nil, nil, err
		}
		ref.Target = target
		sum.Runs = append(sum.Runs, ref)
		sum.IndexBytes += ref.indexBytes
	}
	sum.Spills, sum.SpillBytes = pool.Spills(), pool.RunBytes()
	if err := sum.put(ctx, st); err != nil {
		return nil, nil, err
	}
	return sum.Runs, is, nil
}

// writeSortedRun finishes s and writes its records, in order, as the run file rel with its index.
func writeSortedRun(ctx context.Context, st *stores, s *sorter.Sorter, rel, attempt string, every int64) (RunRef, error) {
	it, err := s.Finish(ctx)
	if err != nil {
		return RunRef{}, fmt.Errorf("beam: sorting %s: %w", rel, err)
	}
	defer it.Close()
	tmp, err := st.tmpFile(rel, attempt)
	if err != nil {
		return RunRef{}, err
	}
	w, err := createRun(rel, tmp, 1<<20, every)
	if err != nil {
		return RunRef{}, err
	}
	var rec []byte
	for it.Next() {
		rec = it.AppendRecord(rec[:0])
		if err := w.add(rec, it.Seq(), it.Header().Row); err != nil {
			w.abort()
			return RunRef{}, err
		}
	}
	if err := it.Err(); err != nil {
		w.abort()
		return RunRef{}, fmt.Errorf("beam: sorting %s: %w", rel, err)
	}
	n, err := w.commit(ctx, st)
	if err != nil {
		return RunRef{}, err
	}
	return RunRef{Path: rel, Records: w.n, Bytes: w.bytes, indexBytes: n}, nil
}

// indexEvery is how many run-file bytes may lie between two entries of a run's index: about 1/64 of
// the reduce size (so that the plan cuts a target at rows close to its byte quantiles), between 256
// bytes and 64 KiB.
func (t *Task) indexEvery(spec *jobs.RunSpec) int64 {
	limit := t.reduceSize(spec)
	if limit <= 0 {
		return 64 << 10
	}
	return min(max(limit/64, 256), 64<<10)
}

// router returns the target (region·families + family) of record i of a batch.
func router(spec *jobs.RunSpec, splits partition.Splits) func(cb *pipeline.CellBatch, i int) int {
	nf := len(spec.Mapping.Families())
	return func(cb *pipeline.CellBatch, i int) int {
		target := int(cb.Records[i].Family)
		if len(splits) > 0 {
			target += splits.Region(cellrec.Row(cb.Record(i))) * nf
		}
		return target
	}
}

// mapUnit maps one unit's rows and hands each batch to sink, which the mapping workers call
// concurrently; rejects go to the unit's rejects file. It returns the unit's summary (without its
// runs; not yet stored) and, for the unit that owns its input, the input's checksum.
func mapUnit(ctx context.Context, t *Task, spec *jobs.RunSpec, st *stores, attempt string, unit int,
	sink func(cb *pipeline.CellBatch) error) (*unitSummary, *InputSum, error) {
	if unit < 0 || unit >= len(t.Units) {
		return nil, nil, fmt.Errorf("beam: no unit %d", unit)
	}
	u := t.Units[unit]
	in, watermark, chunk, err := t.unitInput(spec, unit)
	if err != nil {
		return nil, nil, err
	}
	rejTmp, err := st.tmpFile(unitRejectsName(unit), attempt)
	if err != nil {
		return nil, nil, err
	}
	rf, err := os.Create(rejTmp)
	if err != nil {
		return nil, nil, fmt.Errorf("beam: rejects: %w", err)
	}
	defer os.Remove(rejTmp)
	rbw := bufio.NewWriter(rf)
	opts := spec.Pipeline
	opts.Rejects = rbw
	if u.Chunked {
		opts.MaxRejects = -1
	}
	counts, err := pipeline.Run(ctx, []pipeline.Input{in}, spec.Mapping, opts, sink)
	if err == nil {
		err = rbw.Flush()
	}
	if cerr := rf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	sum := &unitSummary{Unit: unit, Counts: counts, Rejects: counts.RowsRejected > 0}
	if u.Chunked {
		cs := chunk()
		if cs == nil {
			return nil, nil, fmt.Errorf("beam: unit %d: %s was not read as CSV", unit, in.Path)
		}
		sp := cs.Span()
		sum.Span = &sp
	}
	if watermark != nil {
		r := watermark()
		sum.Watermark = &r
	}
	if sum.Rejects {
		if err := st.putFile(ctx, unitRejectsName(unit), rejTmp); err != nil {
			return nil, nil, fmt.Errorf("beam: rejects: %w", err)
		}
	}
	var is *InputSum
	if u.Owner {
		fp, err := jobs.Fingerprint(ctx, in.Path, true)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: fingerprint %s: %w", jobs.ErrIO, in.Path, err)
		}
		sum.Input = &fp
		is = &InputSum{Input: u.Input, Checksum: fp.Checksum}
	}
	if sum.Span != nil {
		if is == nil {
			is = &InputSum{Input: u.Input}
		}
		is.Unit, is.Span, is.Rejected = unit, sum.Span, counts.RowsRejected
	}
	return sum, is, nil
}

// put stores the summary, which marks the unit done.
func (s *unitSummary) put(ctx context.Context, st *stores) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("beam: %w", err)
	}
	return st.put(ctx, unitSummaryName(s.Unit), b)
}

// attemptID names the temporary files of one attempt of a task, so that two attempts of the same task
// (a retry, a speculative copy) never write into each other's files.
func attemptID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// batchRecords are one batch's records grouped per target (used: the targets with records, in order of
// first appearance).
type batchRecords struct {
	recs [][]sorter.Record
	used []int
}

func (b *batchRecords) reset() {
	for _, t := range b.used {
		clear(b.recs[t])
		b.recs[t] = b.recs[t][:0]
	}
	b.used = b.used[:0]
}
