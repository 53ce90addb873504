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
)

// reduceSummary is what a reduce task leaves for the launcher; its existence marks the target done.
type reduceSummary struct {
	Target      int               `json:"target"`
	Records     int64             `json:"records"` // records read from the run files
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

// Reduce sorts every record of the given run files (all of one target, i.e. one region and family)
// within the job's memory budget, spilling to the worker's local disk, applies the duplicates policy or
// aggregate, and writes the region's HFiles into the staging directory (jobs.WriteRegion): duplicates
// and aggregates are exact across the whole input. The file names are those of `hfload run` given the
// run's name seed (Task.NameSeed), so a retried task overwrites its own output with the same bytes.
func Reduce(ctx context.Context, t *Task, spec *jobs.RunSpec, splits partition.Splits, target int, runs []string, seed []byte) error {
	nf := len(spec.Mapping.Families())
	region, fam := target/nf, target%nf
	st, err := t.open(ctx, spec)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(t.TmpDir, "hfload-reduce-")
	if err != nil {
		return fmt.Errorf("%w: spill directory: %w", jobs.ErrIO, err)
	}
	defer os.RemoveAll(tmp)
	rs := *spec
	rs.TempDir = tmp
	rs.NameSeed = func() ([]byte, error) { return seed, nil }
	runs = append([]string(nil), runs...)
	sort.Strings(runs)
	var records int64
	feed := func(add func(rec []byte, seq uint64) error) error {
		for _, p := range runs {
			n, err := readRun(ctx, st, p, add)
			records += n
			if err != nil {
				return err
			}
		}
		return nil
	}
	var sink engine.Sink = engine.DirSink{Dir: t.Dir}
	var ups *uploadSink
	if st.out != nil {
		ups = &uploadSink{st: st.out, prefix: st.outKey}
		sink = ups
	}
	lr, err := jobs.WriteRegionTo(ctx, &rs, sink, splits, region, fam, feed)
	if err != nil {
		return err
	}
	sum := reduceSummary{Target: target, Records: records, Files: lr.Files, Cells: lr.Cells, RowsWritten: lr.RowsWritten,
		Duplicates: lr.Duplicates, DupExamples: lr.DupExamples, Spills: lr.Spills, SpillBytes: lr.SpillBytes,
		MergePasses: lr.MergePasses, PeakMemory: lr.PeakMemory, NameSeed: hex.EncodeToString(seed)}
	if ups != nil {
		sum.Uploads = ups.pending()
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("beam: %w", err)
	}
	return st.put(ctx, reduceSummaryName(target), b)
}
