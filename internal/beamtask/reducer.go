package beamtask

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/sorter"
)

// reduceSummary is what a reduce task leaves for the launcher; its existence marks the target done.
type reduceSummary struct {
	Target      int               `json:"target"`
	Sub         int               `json:"sub"`        // the sub-range (SubTask.Sub)
	Records     int64             `json:"records"`    // records of the task read from the run files
	ReadBytes   int64             `json:"read_bytes"` // run-file bytes read (sorted runs; 0 for the record shuffle)
	Files       []jobs.FileResult `json:"files"`
	Cells       int64             `json:"cells"`
	RowsWritten int64             `json:"rows_written"`
	Duplicates  int64             `json:"duplicates"`
	DupExamples []string          `json:"duplicate_examples,omitempty"`
	Spills      int64             `json:"spills"`
	SpillBytes  int64             `json:"spill_bytes"`
	MergePasses int64             `json:"merge_passes"`
	PeakMemory  int64             `json:"peak_memory"`
	// Uploads are the HFiles of an output in a bucket: finished, not completed (the launcher's commit).
	Uploads  []storage.Pending `json:"uploads,omitempty"`
	NameSeed string            `json:"name_seed"` // hex: the seed the files were named with
}

// Reduce merges the sorted run files of one reduce task (a target, i.e. one region and family, or a
// sub-range of it: see Plan) within the job's memory budget: a k-way merge of the runs the map tasks
// sorted (each read from the index entry before the sub-range's first row up to its last), applying
// the duplicates policy or aggregate, and writes the HFiles into the staging directory or as uploads
// to the output bucket: duplicates and aggregates are exact across the whole input (a row's records
// all go to one task). The file names are those of `hfload run` given the
// run's name seed (Task.NameSeed of sums, every map task's InputSum; sub-ranges after the first:
// subRangeName), so a retried task writes the same names with the same bytes. The records of a CSV
// chunk get the row ordinals of the whole file (the spans in sums), so duplicates resolve as in
// `hfload run` and are named by their rows.
func Reduce(ctx context.Context, t *Task, spec *jobs.RunSpec, splits partition.Splits, task SubTask, sums []InputSum) error {
	seed, err := t.NameSeed(sums)
	if err != nil {
		return err
	}
	offs, err := t.chunkOffsets(spec, spans(sums))
	if err != nil {
		return err
	}
	if max := spec.Pipeline.MaxRejects; max >= 0 && chunkRejects(sums) > max {
		// The chunks, which have no reject limit of their own, rejected more rows than the job allows:
		// the run fails, so writing is wasted. Collect, which reads the rejects before the reduce
		// summaries, names the reject that crossed the limit, as hfload run does.
		return nil
	}
	st, err := t.open(ctx, spec)
	if err != nil {
		return err
	}
	runs := append([]string(nil), task.Runs...)
	sort.Strings(runs)
	var srcs []*runSource
	defer func() {
		for _, r := range srcs {
			r.close()
		}
	}()
	open := func(pool *sorter.Pool) ([]sorter.RecordSource, int64, error) {
		// Each run's read buffer: a share of an eighth of the budget, between 16 KiB and 1 MiB.
		buf := int(min(max(pool.Reservable()/8/int64(max(len(runs), 1)), 16<<10), 1<<20))
		var out []sorter.RecordSource
		for _, p := range runs {
			ix, err := readRunIndex(ctx, st, p)
			if err != nil {
				return nil, 0, err
			}
			r, err := openRunSource(ctx, st, p, ix, task.Lo, task.Hi, uint64(offs[runUnit(p)].Rows), buf)
			if err != nil {
				return nil, 0, err
			}
			if r != nil {
				srcs = append(srcs, r)
				out = append(out, r)
			}
		}
		return out, int64(len(out)) * int64(buf), nil
	}
	return reduceMerged(ctx, t, st, spec, splits, task, seed, open, func() (records, read int64) {
		for _, r := range srcs {
			records += r.records
			read += r.read
		}
		return records, read
	})
}

// reduceMerged is reduce for sorted runs: engine.MergeRegion instead of WriteRegion.
func reduceMerged(ctx context.Context, t *Task, st *stores, spec *jobs.RunSpec, splits partition.Splits, task SubTask, seed []byte,
	open func(pool *sorter.Pool) ([]sorter.RecordSource, int64, error), counts func() (records, read int64)) error {
	return reduceWith(ctx, t, st, spec, splits, task, seed, func(ctx context.Context, rs *jobs.RunSpec, sink engine.Sink, region, fam int) (*engine.Result, error) {
		return engine.MergeRegion(ctx, &rs.Spec, sink, splits, region, fam, open)
	}, counts)
}

// reduce writes one reduce task's HFiles from the records feed gives (records: how many it gave, read
// once feed is done), sorting them, and stores the task's summary.
func reduce(ctx context.Context, t *Task, st *stores, spec *jobs.RunSpec, splits partition.Splits, task SubTask, seed []byte,
	feed func(add func(rec []byte, seq uint64) error) error, records *int64) error {
	return reduceWith(ctx, t, st, spec, splits, task, seed, func(ctx context.Context, rs *jobs.RunSpec, sink engine.Sink, region, fam int) (*engine.Result, error) {
		return engine.WriteRegion(ctx, &rs.Spec, sink, splits, region, fam, feed)
	}, func() (int64, int64) { return *records, 0 })
}

// reduceWith writes one reduce task's HFiles with write (WriteRegion or MergeRegion, given the task's
// RunSpec and sink) and stores the task's summary (counts: the records and run-file bytes it read).
func reduceWith(ctx context.Context, t *Task, st *stores, spec *jobs.RunSpec, splits partition.Splits, task SubTask, seed []byte,
	write func(ctx context.Context, rs *jobs.RunSpec, sink engine.Sink, region, fam int) (*engine.Result, error), counts func() (records, read int64)) error {
	nf := len(spec.Mapping.Families())
	region, fam := task.Target/nf, task.Target%nf
	tmp, err := os.MkdirTemp(t.TmpDir, "hfload-reduce-")
	if err != nil {
		return fmt.Errorf("%w: spill directory: %w", jobs.ErrIO, err)
	}
	defer os.RemoveAll(tmp)
	rs := *spec
	rs.TempDir = tmp
	rs.NameSeed = func() ([]byte, error) { return seed, nil }
	var sink engine.Sink = engine.DirSink{Dir: t.Dir}
	var ups *uploadSink
	if st.out != nil {
		ups = &uploadSink{st: st.out, prefix: st.outKey}
		sink = ups
	}
	if task.Sub > 0 {
		sink = subRangeSink{Sink: sink, sub: task.Sub}
	}
	res, err := write(ctx, &rs, sink, region, fam)
	if err != nil {
		return err
	}
	lr := jobs.LoadResult{Result: *res}
	renameResults(lr.Files, task.Sub)
	records, read := counts()
	sum := reduceSummary{Target: task.Target, Sub: task.Sub, Records: records, ReadBytes: read, Files: lr.Files, Cells: lr.Cells, RowsWritten: lr.RowsWritten,
		Duplicates: lr.Duplicates, DupExamples: lr.DupExamples, Spills: lr.Spills, SpillBytes: lr.SpillBytes,
		MergePasses: lr.MergePasses, PeakMemory: lr.PeakMemory, NameSeed: hex.EncodeToString(seed)}
	if ups != nil {
		sum.Uploads = ups.pending()
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("beam: %w", err)
	}
	return st.put(ctx, reduceSummaryName(task.Target, task.Sub), b)
}
