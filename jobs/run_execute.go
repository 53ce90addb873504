package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/internal/version"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// ExecuteOptions are the knobs of Execute that are not part of the job.
type ExecuteOptions struct {
	Progress func(Progress) // progress events; nil = none
	Log      func(string)   // warnings and notes; nil = discard
	// Verify is how every HFile is checked before commit (VerifyStream when empty).
	Verify VerifyMode
	// DefaultWorkers is the number of mapping workers when the job sets none (0: GOMAXPROCS). A
	// command that runs with more processors than cores (see cmd/hfload) passes the number of cores.
	DefaultWorkers int
	Now            func() time.Time
	// Load replaces Load (same contract: HFiles into dir, rejects to spec.Pipeline.Rejects, the
	// LoadResult Load would return): a distributed driver (cmd/hfload-beam) runs the load elsewhere and
	// keeps Execute's staging, manifest and commit. Nil: Load.
	Load func(ctx context.Context, spec *RunSpec, dir string) (*LoadResult, error)
	// LoadBucket is Load for an output in a bucket: the HFiles are uploads to out's keys, finished but
	// not completed, handed to out.Adopt; work is local scratch (rejects). Nil: the engine, uploading.
	LoadBucket func(ctx context.Context, spec *RunSpec, out *BucketStaging, work string) (*LoadResult, error)
}

// ExecuteResult is what a run did.
type ExecuteResult struct {
	OutDir            string    `json:"out"`
	Manifest          *Manifest `json:"manifest,omitempty"`
	NothingToDo       bool      `json:"nothing_to_do,omitempty"`
	Message           string    `json:"message,omitempty"`
	Splits            []string  `json:"splits,omitempty"`         // toStringBinary; the boundaries in force
	CreateCommand     string    `json:"create_command,omitempty"` // pre-split create for computed splits
	RejectsFile       string    `json:"rejects_file,omitempty"`
	DupExamples       []string  `json:"duplicate_examples,omitempty"`
	Warnings          []string  `json:"warnings,omitempty"`
	Spills            int64     `json:"spills"`
	SpillBytes        int64     `json:"spill_bytes"` // written to run files in <out>/.hfload-staging-*/.spill
	MergePasses       int64     `json:"merge_passes"`
	PeakSortBytes     int64     `json:"peak_sort_bytes"`
	Seconds           float64   `json:"seconds"`
	ReadSeconds       float64   `json:"read_seconds"`        // read, map, sort in memory and spill
	WriteSeconds      float64   `json:"write_seconds"`       // merge, write and verify HFiles
	VerifyWaitSeconds float64   `json:"verify_wait_seconds"` // part of write_seconds: verifications finishing after the last write
	CommitSeconds     float64   `json:"commit_seconds"`      // fsync and rename into place
}

// Execute runs a job from start to commit: validate, prepare, load into a staging directory, verify,
// commit atomically with _manifest.json written last, and (for jobs with a state_dir) record the run.
func Execute(ctx context.Context, job *Job, eo ExecuteOptions) (*ExecuteResult, error) {
	now := time.Now
	if eo.Now != nil {
		now = eo.Now
	}
	logf := func(format string, args ...any) {
		if eo.Log != nil {
			eo.Log(fmt.Sprintf(format, args...))
		}
	}
	if err := job.Validate(); err != nil {
		return nil, err
	}
	if job.StateDir != "" {
		return executeIncremental(ctx, job, eo, now, logf)
	}
	started := now()
	spec, err := job.PrepareContext(ctx, started)
	if err != nil {
		return nil, err
	}
	spec.Verify = eo.Verify
	if spec.Pipeline.Workers == 0 {
		spec.Pipeline.Workers = eo.DefaultWorkers
	}
	spec.Progress = eo.Progress
	spec.FingerprintInputs = true
	res := &ExecuteResult{OutDir: job.Out}
	warnOneRegion(spec, res, logf)

	runID := NewRunID(started)
	if storage.IsRemote(job.Out) {
		return executeToBucket(ctx, job, spec, res, runID, started, now, logf, eo.LoadBucket)
	}
	stg, err := NewStaging(job.Out, runID)
	if err != nil {
		return res, err
	}
	committed := false
	defer func() {
		if !committed {
			stg.Abort()
		}
	}()
	lr, err := loadStaged(ctx, job, spec, stg, job.Out, res, eo.Load, logf)
	if err != nil {
		return res, err
	}
	m, err := res.manifestFor(job, spec, lr, runID, started, now())
	if err != nil {
		return res, err
	}
	if err := res.commit(stg, m); err != nil {
		return res, err
	}
	committed = true
	res.Manifest = m
	return res, nil
}

// commit commits the staging directory and accounts the time it took.
func (r *ExecuteResult) commit(stg *Staging, m *Manifest) error {
	t := time.Now()
	if err := stg.Commit(m); err != nil {
		return fmt.Errorf("%w: commit: %w", ErrIO, err)
	}
	r.CommitSeconds = time.Since(t).Seconds()
	r.Seconds += r.CommitSeconds
	return nil
}

func tableOr(t string) string {
	if t == "" {
		return "TABLE"
	}
	return t
}

// classifyLoadError maps load failures to the exit-code sentinels.
func classifyLoadError(err error) error {
	switch {
	case errors.Is(err, ErrConfig), errors.Is(err, ErrIO), errors.Is(err, ErrTooManyRejects),
		errors.Is(err, context.Canceled), errors.Is(err, ErrDuplicates):
		return err
	case errors.Is(err, pipeline.ErrRejectLimit):
		return fmt.Errorf("%w: %w", ErrTooManyRejects, err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %w", ErrIO, err)
	}
	return err
}

func buildManifest(job *Job, spec *RunSpec, lr *LoadResult, runID string, started, finished time.Time) (*Manifest, error) {
	m, err := NewManifest(job, version.String(), runID, started)
	if err != nil {
		return nil, err
	}
	m.Finished = finished.UTC()
	if lr.Inputs != nil {
		m.Inputs = lr.Inputs // taken by Load while it wrote the HFiles
	} else if m.Inputs, err = fingerprintInputs(context.Background(), spec.Inputs, nil); err != nil {
		return nil, err
	}
	var bytesWritten int64
	m.Files = make([]OutputFile, 0, len(lr.Files))
	for i := range lr.Files {
		f := &lr.Files[i]
		m.Files = append(m.Files, OutputFile{Family: f.Family, Path: f.Path, Region: f.Region,
			RegionStart: f.RegionStart, RegionEnd: f.RegionEnd, FirstKey: f.FirstRow, LastKey: f.LastRow,
			Cells: f.Cells, Bytes: f.Bytes})
		bytesWritten += f.Bytes
	}
	dropped, kept := int64(0), int64(0)
	if spec.Combine == nil && spec.DuplicatePolicy() != DuplicatesKeep {
		dropped = lr.Duplicates
	} else if spec.Combine == nil {
		kept = lr.Duplicates
	}
	m.Counts = Counts{
		RowsRead:       lr.Counts.RowsRead,
		RowsKeyed:      lr.Counts.RowsKeyed,
		RowsRejected:   lr.Counts.RowsRejected,
		RowsWritten:    lr.RowsWritten,
		CellsEmitted:   lr.Counts.CellsEmitted,
		CellsWritten:   lr.Cells,
		Duplicates:     dropped,
		DuplicatesKept: kept,
		Combined:       lr.Counts.CellsEmitted - lr.Cells - dropped,
		NullsSkipped:   lr.Counts.NullsSkipped,
		BytesRead:      lr.Counts.BytesRead,
		FilesWritten:   int64(len(lr.Files)),
		BytesWritten:   bytesWritten,
	}
	if spec.Combine == nil && m.Counts.Combined != 0 {
		return nil, fmt.Errorf("internal error: %d cells unaccounted for (emitted %d, written %d, duplicates dropped %d)",
			m.Counts.Combined, lr.Counts.CellsEmitted, lr.Cells, dropped)
	}
	m.SetCommands(job.Out)
	return m, nil
}

// Summary renders the result for a terminal.
func (r *ExecuteResult) Summary() string {
	var b strings.Builder
	if r.NothingToDo {
		fmt.Fprintf(&b, "nothing to do: %s\n", r.Message)
		return b.String()
	}
	m := r.Manifest
	if m == nil {
		if len(r.DupExamples) > 0 {
			fmt.Fprintf(&b, "duplicate keys (first %d):\n", len(r.DupExamples))
			for _, d := range r.DupExamples {
				fmt.Fprintf(&b, "  %s\n", d)
			}
		}
		return b.String()
	}
	c := m.Counts
	if c.RowsFiltered > 0 {
		fmt.Fprintf(&b, "\nrows read      %d (at or below the watermark %d, keyed %d, rejected %d)\n", c.RowsRead, c.RowsFiltered, c.RowsKeyed, c.RowsRejected)
	} else {
		fmt.Fprintf(&b, "\nrows read      %d (keyed %d, rejected %d)\n", c.RowsRead, c.RowsKeyed, c.RowsRejected)
	}
	fmt.Fprintf(&b, "cells          %d emitted, %d written", c.CellsEmitted, c.CellsWritten)
	if c.Duplicates > 0 {
		fmt.Fprintf(&b, ", %d duplicates dropped", c.Duplicates)
	}
	if c.DuplicatesKept > 0 {
		fmt.Fprintf(&b, ", %d duplicates kept (HBase returns one cell per key)", c.DuplicatesKept)
	}
	if c.Combined > 0 {
		fmt.Fprintf(&b, ", %d folded by aggregation", c.Combined)
	}
	fmt.Fprintf(&b, "\nhfiles         %s, %s, %s\n", Count(c.FilesWritten, "file"), HumanSize(c.BytesWritten), Count(int64(len(r.Splits)+1), "region"))
	if r.Seconds > 0 {
		fmt.Fprintf(&b, "time           %.1fs (%.1f MB/s): read+sort %.1fs, write %.1fs", r.Seconds,
			float64(c.BytesRead)/1e6/r.Seconds, r.ReadSeconds, r.WriteSeconds)
		if r.VerifyWaitSeconds >= 0.05 {
			fmt.Fprintf(&b, " (verify %.1fs)", r.VerifyWaitSeconds) // verifications finishing after the last write
		}
		fmt.Fprintf(&b, ", commit %.1fs\nsort           %s (%s), %s, peak memory %s\n", r.CommitSeconds,
			Count(r.Spills, "spill"), HumanSize(r.SpillBytes), Count(r.MergePasses, "merge pass"), HumanSize(r.PeakSortBytes))
	}
	if r.RejectsFile != "" {
		fmt.Fprintf(&b, "rejects        %s\n", r.RejectsFile)
	}
	fmt.Fprintf(&b, "manifest       %s\n", joinOut(r.OutDir, ManifestName))
	if r.CreateCommand != "" {
		fmt.Fprintf(&b, "\nsplit points computed from the data; to pre-split a new table:\n  %s\n", r.CreateCommand)
	}
	fmt.Fprintf(&b, "\nload into HBase with:\n")
	for _, cmd := range m.Commands {
		fmt.Fprintf(&b, "  %s\n", cmd)
	}
	return b.String()
}

// loadStaged runs Load into the staging directory, with the spill files (unless tmp_dir says where)
// and the rejects file inside it, and fills res with what the load reports. finalDir is where the
// rejects file is after the commit.
func loadStaged(ctx context.Context, job *Job, spec *RunSpec, stg *Staging, finalDir string, res *ExecuteResult,
	load func(context.Context, *RunSpec, string) (*LoadResult, error), logf func(string, ...any)) (*LoadResult, error) {
	if spec.SplitSample == 0 { // the regions are known: a file per region and family at least
		stg.expectFiles((len(spec.Splits) + 1) * len(spec.Mapping.Families()))
	}
	// Once everything is staged, the commit's writeback and listing start while the manifest is built.
	return loadInto(ctx, job, spec, stg.Dir(), engine.DirSink{Dir: stg.Dir(), Closed: stg.FileWritten}, finalDir, res, load, logf, stg.settle)
}

// loadInto runs the engine writing to sink, with the rejects file in the local directory work and the
// spill files there too, or under job.TmpDir when set; it fills res with what the load reports.
// load, when not nil, replaces the engine (ExecuteOptions.Load): it writes into the directory work.
// staged, when not nil, is called once a successful load's output is complete in work: the spill
// files and an empty rejects file removed.
func loadInto(ctx context.Context, job *Job, spec *RunSpec, work string, sink engine.Sink, finalDir string, res *ExecuteResult,
	load func(context.Context, *RunSpec, string) (*LoadResult, error), logf func(string, ...any), staged func()) (*LoadResult, error) {
	spec.TempDir = filepath.Join(work, ".spill")
	if job.TmpDir != "" {
		spec.TempDir = filepath.Join(job.TmpDir, ".hfload-spill-"+filepath.Base(work))
	}
	if err := os.MkdirAll(spec.TempDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: spill directory: %w", ErrIO, err)
	}
	rejPath := job.Rejects
	if rejPath == "" {
		rejPath = filepath.Join(work, "_rejects.jsonl")
	}
	rej, err := os.Create(rejPath)
	if err != nil {
		return nil, fmt.Errorf("%w: rejects file: %w", ErrIO, err)
	}
	spec.Pipeline.Rejects = rej

	var lr *LoadResult
	if load != nil {
		lr, err = load(ctx, spec, work)
	} else {
		lr, err = loadTo(ctx, spec, sink, true) // buildManifest takes the rows of the files' keys
	}
	if cerr := rej.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: rejects file: %w", ErrIO, cerr)
	}
	os.RemoveAll(spec.TempDir)
	if lr != nil {
		res.DupExamples = lr.DupExamples
		res.Spills = lr.Spills
		res.SpillBytes = lr.SpillBytes
		res.MergePasses = lr.MergePasses
		res.PeakSortBytes = lr.PeakMemory
		res.Seconds = lr.Elapsed.Seconds()
		res.ReadSeconds, res.WriteSeconds = lr.ReadTime.Seconds(), lr.WriteTime.Seconds()
		res.VerifyWaitSeconds = lr.VerifyWait.Seconds()
	}
	if err != nil {
		return nil, classifyLoadError(err)
	}
	if lr.Counts.RowsRejected == 0 && job.Rejects == "" {
		os.Remove(rejPath)
	} else if lr.Counts.RowsRejected > 0 {
		res.RejectsFile = rejPath
		if job.Rejects == "" {
			res.RejectsFile = filepath.Join(finalDir, "_rejects.jsonl")
			if storage.IsRemote(finalDir) {
				res.RejectsFile = strings.TrimSuffix(finalDir, "/") + "/_rejects.jsonl"
			}
		}
		logf("%s rejected: see %s", Count(lr.Counts.RowsRejected, "row"), res.RejectsFile)
	}
	if staged != nil {
		staged()
	}
	if len(lr.Splits) > 0 {
		res.Splits = make([]string, 0, len(lr.Splits))
	}
	for _, s := range lr.Splits {
		res.Splits = append(res.Splits, kv.ToStringBinary(s))
	}
	return lr, nil
}

// manifestFor sets the create-table command of a sampled load and builds and reconciles the manifest of
// lr: the step between loading and committing that local and bucket outputs share.
func (res *ExecuteResult) manifestFor(job *Job, spec *RunSpec, lr *LoadResult, runID string, started, finished time.Time) (*Manifest, error) {
	if spec.SplitSample > 0 {
		res.CreateCommand = partition.CreateTableCommand(tableOr(job.Table), spec.Mapping.Families(), lr.Splits)
	}
	m, err := buildManifest(job, spec, lr, runID, started, finished)
	if err != nil {
		return nil, err
	}
	if err := m.Reconcile(); err != nil {
		return nil, fmt.Errorf("internal error, refusing to commit: %w", err)
	}
	return m, nil
}

// warnOneRegion warns (in res and the log) when a run has no split points: all output is one region.
func warnOneRegion(spec *RunSpec, res *ExecuteResult, logf func(string, ...any)) {
	if spec.SplitSample == 0 && len(spec.Splits) == 0 {
		w := "no split points given: all output is one region. If the table already has regions, pass " +
			"--splits (one key per line, e.g. from list_regions); for a new table, --split-sample N computes " +
			"N equal regions from the data and prints the pre-split create command"
		res.Warnings = append(res.Warnings, w)
		logf("warning: %s", w)
	}
}
