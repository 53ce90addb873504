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
}

// unitSummary is what a map task leaves for the launcher; its existence marks the unit done.
type unitSummary struct {
	Unit    int             `json:"unit"`
	Counts  pipeline.Counts `json:"counts"`
	Input   *jobs.InputFile `json:"input,omitempty"` // owner units: the file's fingerprint
	Runs    []RunRef        `json:"runs"`
	Rejects bool            `json:"rejects,omitempty"` // the unit's rejects file exists
	// Watermark: what the unit's watermark filter dropped and kept (incremental runs with a watermark).
	Watermark *jobs.WatermarkReport `json:"watermark,omitempty"`
}

// Map reads one unit, maps its rows with the job's mapping, routes every record to its region by
// splits and writes one run file per (region, family) it has records for; rejects go to the unit's
// rejects file, in input order. The unit's reject limit is the job's (the launcher checks the total).
// It returns the run files, in target order, and, for the unit that owns its input, the input's
// checksum (nil for the others).
func Map(ctx context.Context, t *Task, spec *jobs.RunSpec, unit int, splits partition.Splits) ([]RunRef, *InputSum, error) {
	st, err := t.open(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	attempt := attemptID()
	targets := (len(splits) + 1) * len(spec.Mapping.Families())
	// Each target's buffer: a share of a quarter of the memory budget, between 16 KiB and 1 MiB.
	memory := spec.Memory
	if memory <= 0 {
		memory = 1 << 30
	}
	bufSize := int(min(max(memory/4/int64(targets), 16<<10), 1<<20))

	var mu sync.Mutex
	writers := make([]*runWriter, targets)
	defer func() {
		for _, w := range writers {
			if w != nil && w.f != nil {
				w.abort()
			}
		}
	}()
	writer := func(target int) (*runWriter, error) {
		mu.Lock()
		defer mu.Unlock()
		if w := writers[target]; w != nil {
			return w, nil
		}
		rel := runFileName(unit, target)
		tmp, err := st.tmpFile(rel, attempt)
		if err != nil {
			return nil, err
		}
		w, err := createRun(rel, tmp, bufSize)
		if err != nil {
			return nil, err
		}
		writers[target] = w
		return w, nil
	}
	out := func(target int, frames []byte, n int64) error {
		w, err := writer(target)
		if err != nil {
			return err
		}
		return w.write(frames, n)
	}
	sum, is, err := mapUnit(ctx, t, spec, st, attempt, unit, splits, out)
	if err != nil {
		return nil, nil, err
	}
	for target, w := range writers {
		if w == nil {
			continue
		}
		err := w.commit(ctx, st)
		w.f = nil
		if err != nil {
			return nil, nil, err
		}
		sum.Runs = append(sum.Runs, RunRef{Target: target, Path: w.rel, Records: w.n, Bytes: w.bytes})
	}
	if err := sum.put(ctx, st); err != nil {
		return nil, nil, err
	}
	return sum.Runs, is, nil
}

// mapUnit maps one unit's rows and hands each batch's records, framed per target (appendFrame), to
// out, which the mapping workers call concurrently; rejects go to the unit's rejects file. It returns
// the unit's summary (without its runs; not yet stored) and, for the unit that owns its input, the
// input's checksum.
func mapUnit(ctx context.Context, t *Task, spec *jobs.RunSpec, st *stores, attempt string, unit int, splits partition.Splits,
	out func(target int, frames []byte, n int64) error) (*unitSummary, *InputSum, error) {
	if unit < 0 || unit >= len(t.Units) {
		return nil, nil, fmt.Errorf("beam: no unit %d", unit)
	}
	u := t.Units[unit]
	in, watermark, err := t.input(spec, unit)
	if err != nil {
		return nil, nil, err
	}
	nf := len(spec.Mapping.Families())
	targets := (len(splits) + 1) * nf
	// Each batch's records are framed per target into buffers reused from batch to batch (a pool:
	// the mapping workers call sink concurrently), then handed to out target by target.
	pool := sync.Pool{New: func() any { return &batchFrames{frames: make([][]byte, targets), counts: make([]int64, targets)} }}
	sink := func(cb *pipeline.CellBatch) error {
		bf := pool.Get().(*batchFrames)
		defer pool.Put(bf)
		defer bf.reset()
		for i := range cb.Records {
			rec := cb.Record(i)
			target := int(cb.Records[i].Family)
			if len(splits) > 0 {
				target += splits.Region(cellrec.Row(rec)) * nf
			}
			if bf.counts[target] == 0 {
				bf.used = append(bf.used, target)
			}
			bf.frames[target] = appendFrame(bf.frames[target], rec, cb.Records[i].Seq)
			bf.counts[target]++
		}
		for _, target := range bf.used {
			if err := out(target, bf.frames[target], bf.counts[target]); err != nil {
				return err
			}
		}
		return nil
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

// batchFrames are one batch's records framed per target (used: the targets with records, in order of
// first appearance).
type batchFrames struct {
	frames [][]byte
	counts []int64
	used   []int
}

func (b *batchFrames) reset() {
	for _, t := range b.used {
		b.frames[t], b.counts[t] = b.frames[t][:0], 0
	}
	b.used = b.used[:0]
}
