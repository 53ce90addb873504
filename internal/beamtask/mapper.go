package beamtask

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
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
	// Combined: the cells the map's combiner folded into others (Task.mapCombine).
	Combined int64 `json:"combined,omitempty"`
	Rejects  bool  `json:"rejects,omitempty"` // the unit's rejects file exists
	// Span: a CSV chunk's (Unit.Chunked) start and end, lines and rows, numbered from the chunk's start.
	Span *pipeline.CSVSpan `json:"span,omitempty"`
	// Watermark: what the unit's watermark filter dropped and kept (incremental runs with a watermark).
	Watermark *jobs.WatermarkReport `json:"watermark,omitempty"`
}

// Map reads one unit, maps its rows with the job's mapping, routes every record to its region by
// splits and sorts the records of each (region, family) with hfload's sorter, within the job's memory
// budget (spilling to the worker's local disk, Task.TmpDir), into one sorted run file per target it has
// records for, with its index (runfile.go); rejects go to the unit's rejects file, in input order.
// An aggregating job's equal keys are folded in the map's sorters where the aggregates allow it
// (mapCombine), so the run holds one cell per key of the unit.
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
	ms, err := newMapSorters(t, spec, unit, (len(splits)+1)*len(spec.Mapping.Families()))
	if err != nil {
		return nil, nil, err
	}
	defer ms.close()
	sum, is, err := mapUnit(ctx, t, spec, st, attempt, unit, ms.sink(spec, splits))
	if err != nil {
		return nil, nil, err
	}
	every := t.indexEvery(spec)
	var w *runWriter
	defer func() {
		if w != nil {
			w.abort()
		}
	}()
	add := func(target int, rec []byte, seq uint64, row []byte) error {
		if w == nil {
			rel := runFileName(unit, target)
			tmp, err := st.tmpFile(rel, attempt)
			if err != nil {
				return err
			}
			if w, err = createRun(rel, tmp, 1<<20, every); err != nil {
				return err
			}
		}
		return w.add(rec, seq, row)
	}
	done := func(target int) error {
		if w == nil {
			return nil
		}
		n, err := w.commit(ctx, st)
		ref := RunRef{Target: target, Path: w.rel, Records: w.n, Bytes: w.bytes}
		w = nil
		if err != nil {
			return err
		}
		sum.Runs = append(sum.Runs, ref)
		sum.IndexBytes += n
		return nil
	}
	cells, err := ms.each(ctx, add, done)
	if err != nil {
		return nil, nil, err
	}
	if sum.Combined, err = ms.combined(sum.Counts, cells); err != nil {
		return nil, nil, err
	}
	sum.Spills, sum.SpillBytes = ms.pool.Spills(), ms.pool.RunBytes()
	if err := sum.put(ctx, st); err != nil {
		return nil, nil, err
	}
	return sum.Runs, is, nil
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
