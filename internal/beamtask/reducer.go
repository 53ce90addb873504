package beamtask

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
)

// reduceSummary is what a reduce task leaves for the launcher; its existence marks the target done.
type reduceSummary struct {
	Target      int               `json:"target"`
	Sub         int               `json:"sub"`     // the sub-range (SubTask.Sub)
	Records     int64             `json:"records"` // records of the task read from the run files
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

// Reduce sorts the records of one reduce task (a target, i.e. one region and family, or a sub-range
// of it: see Plan) from its run files within the job's memory budget, spilling to the worker's local
// disk, applies the duplicates policy or aggregate, and writes the HFiles into the staging directory or
// as uploads to the output bucket: duplicates and aggregates are exact across the whole input (a row's
// records all go to one task). The file names are those of `hfload run` given the
// run's name seed (Task.NameSeed; sub-ranges after the first: subRangeName), so a retried task writes the same names with the same bytes.
func Reduce(ctx context.Context, t *Task, spec *jobs.RunSpec, splits partition.Splits, task SubTask, seed []byte) error {
	st, err := t.open(ctx, spec)
	if err != nil {
		return err
	}
	runs := append([]string(nil), task.Runs...)
	sort.Strings(runs)
	var records int64
	feed := func(add func(rec []byte, seq uint64) error) error {
		keep := add
		if task.Subs > 1 {
			keep = func(rec []byte, seq uint64) error {
				if !task.in(cellrec.Row(rec)) {
					return nil
				}
				records++
				return add(rec, seq)
			}
		}
		for _, p := range runs {
			n, err := readRun(ctx, st, p, keep)
			if task.Subs <= 1 {
				records += n
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return reduce(ctx, t, st, spec, splits, task, seed, feed, &records)
}

// reduce writes one reduce task's HFiles from the records feed gives (records: how many it gave, read
// once feed is done) and stores the task's summary.
func reduce(ctx context.Context, t *Task, st *stores, spec *jobs.RunSpec, splits partition.Splits, task SubTask, seed []byte,
	feed func(add func(rec []byte, seq uint64) error) error, records *int64) error {
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
	lr, err := jobs.WriteRegionTo(ctx, &rs, sink, splits, region, fam, feed)
	if err != nil {
		return err
	}
	renameResults(lr.Files, task.Sub)
	sum := reduceSummary{Target: task.Target, Sub: task.Sub, Records: *records, Files: lr.Files, Cells: lr.Cells, RowsWritten: lr.RowsWritten,
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
