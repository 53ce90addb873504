package beamtask

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/pipeline"
)

// Stats are the data-movement figures of a distributed run (for the cost model of docs/distributed.md).
type Stats struct {
	Shuffle       string `json:"shuffle"` // ShuffleFiles or ShuffleBeam (Task.Shuffle)
	Units         int    `json:"units"`
	Recuts        int    `json:"recuts,omitempty"` // runs again after a CSV chunk started inside a record (Task.Recut)
	Targets       int    `json:"targets"`          // (region, family) pairs with records
	ReduceTasks   int    `json:"reduce_tasks"`     // targets and their sub-ranges (Plan)
	SubRanged     int    `json:"sub_ranged"`       // targets cut into sub-ranges
	PlanBytes     int64  `json:"plan_bytes"`       // run-index bytes read to plan sub-ranges (the runs are not read)
	RunFiles      int    `json:"run_files"`        // files written by map tasks (ShuffleFiles)
	RunBytes      int64  `json:"run_bytes"`        // bytes of those files, or of the record blocks through the runner's shuffle (ShuffleBeam)
	RunRecords    int64  `json:"run_records"`      // records in them
	IndexBytes    int64  `json:"index_bytes"`      // bytes of the run files' indexes
	MapSpills     int64  `json:"map_spills"`       // maps' sorter spills to their local disk
	MapSpillBytes int64  `json:"map_spill_bytes"`  // bytes of those spills
	MapCombined   int64  `json:"map_combined"`     // cells the maps' combiners folded into others (part of the manifest's combined)
	ReadBytes     int64  `json:"read_bytes"`       // run-file bytes read by the reducers (sorted runs)
	SpillBytes    int64  `json:"spill_bytes"`      // reducers' local spills
	HFileBytes    int64  `json:"hfile_bytes"`      // bytes of HFiles written
	InputBytes    int64  `json:"input_bytes"`      // bytes of the input files
	RejectBytes   int64  `json:"reject_bytes"`     // bytes of the units' rejects files
}

// Collected is what Collect gathered.
type Collected struct {
	Load  *jobs.LoadResult
	Stats *Stats
	// Uploads are the HFiles of an output in a bucket (Task.Out): finished uploads, for the commit.
	Uploads []storage.Pending
}

// Collect reads every unit's and reduce task's summary after the pipeline has succeeded, checks that
// they reconcile (every unit done, every target with records reduced, as many records read by the
// reducers as the maps wrote), appends the units' rejects in input order to spec.Pipeline.Rejects, and
// returns the LoadResult Load would have returned for the same run. Load and Stats are set as far
// as they were gathered when it fails.
func Collect(ctx context.Context, t *Task, spec *jobs.RunSpec) (*Collected, error) {
	res := &jobs.LoadResult{}
	st := &Stats{Units: len(t.Units), Shuffle: ShuffleFiles}
	if t.shuffleBeam() {
		st.Shuffle = ShuffleBeam
	}
	out := &Collected{Load: res, Stats: st}
	fail := func(err error) (*Collected, error) { return &Collected{}, err }
	sto, err := t.open(ctx, spec)
	if err != nil {
		return fail(err)
	}
	splits := t.splits()
	if spec.SplitSample > 0 {
		b, err := sto.get(ctx, splitsFile)
		if err != nil {
			return fail(fmt.Errorf("beam: the split points were not computed: %w", err))
		}
		if splits, err = DecodeSplits(b); err != nil {
			return fail(err)
		}
	}
	res.Splits = splits
	nf := len(spec.Mapping.Families())
	mapped := map[int]int64{}
	sums := make([]unitSummary, len(t.Units))
	chunkSpans := map[int]pipeline.CSVSpan{}
	for _, u := range t.Units {
		sum := &sums[u.Index]
		if err := readJSON(ctx, sto, unitSummaryName(u.Index), sum); err != nil {
			return fail(fmt.Errorf("beam: unit %d (%s) has no summary: %w", u.Index, spec.Inputs[u.Input].Path, err))
		}
		if sum.Span != nil {
			chunkSpans[u.Index] = *sum.Span
		}
	}
	offs, err := t.chunkOffsets(spec, chunkSpans)
	if err != nil {
		return fail(err)
	}
	rej := &rejectsOut{w: spec.Pipeline.Rejects, max: spec.Pipeline.MaxRejects}
	for _, u := range t.Units {
		sum := &sums[u.Index]
		res.Counts.Add(sum.Counts)
		if sum.Watermark != nil {
			if err := spec.AddWatermarkReport(*sum.Watermark); err != nil {
				return fail(fmt.Errorf("beam: unit %d: %w", u.Index, err))
			}
		}
		if sum.Input != nil {
			res.Inputs = append(res.Inputs, *sum.Input)
			st.InputBytes += sum.Input.Size
		}
		st.IndexBytes += sum.IndexBytes
		st.MapSpills += sum.Spills
		st.MapSpillBytes += sum.SpillBytes
		st.MapCombined += sum.Combined
		for _, r := range sum.Runs {
			if r.Target >= (len(splits)+1)*nf {
				return fail(fmt.Errorf("beam: unit %d routed to target %d of %d", u.Index, r.Target, (len(splits)+1)*nf))
			}
			mapped[r.Target] += r.Records
			if r.Path != "" {
				st.RunFiles++
			}
			st.RunBytes += r.Bytes
			st.RunRecords += r.Records
		}
		if sum.Rejects {
			n, err := rej.appendUnit(ctx, sto, unitRejectsName(u.Index), offs[u.Index].Lines)
			st.RejectBytes += n
			if errors.Is(err, pipeline.ErrRejectLimit) {
				return out, err
			}
			if err != nil {
				return fail(fmt.Errorf("%w: rejects file: %w", jobs.ErrIO, err))
			}
		}
	}
	if len(res.Inputs) != len(spec.Inputs) {
		return fail(fmt.Errorf("beam: %d input fingerprints for %d inputs", len(res.Inputs), len(spec.Inputs)))
	}
	// Every reducer must have named its files with the seed `hfload run` would use for these inputs.
	seed := hex.EncodeToString(jobs.NameSeed(spec.SettingsSeed, jobs.Checksums(res.Inputs)))
	if t.Seed != nil {
		seed = hex.EncodeToString(t.Seed)
	}
	for target := 0; target < (len(splits)+1)*nf; target++ {
		if mapped[target] == 0 {
			continue
		}
		st.Targets++
		region, fam := target/nf, target%nf
		var plan targetPlan
		if err := readJSON(ctx, sto, planName(target), &plan); err != nil {
			return fail(fmt.Errorf("beam: region %d family %d has no reduce plan: %w", region, fam, err))
		}
		if len(plan.Bounds) > 0 {
			st.SubRanged++
			st.PlanBytes += plan.IndexBytes
		}
		var records int64
		var files []jobs.FileResult
		for sub := 0; sub <= len(plan.Bounds); sub++ {
			st.ReduceTasks++
			var sum reduceSummary
			if err := readJSON(ctx, sto, reduceSummaryName(target, sub), &sum); err != nil {
				return fail(fmt.Errorf("beam: region %d family %d (sub-range %d) has no reduce summary: %w", region, fam, sub, err))
			}
			if sum.NameSeed != seed {
				return fail(fmt.Errorf("beam: region %d family %d: files named with seed %s, the inputs' checksums give %s",
					region, fam, sum.NameSeed, seed))
			}
			records += sum.Records
			st.ReadBytes += sum.ReadBytes
			files = append(files, sum.Files...)
			res.Cells += sum.Cells
			res.RowsWritten += sum.RowsWritten
			res.Duplicates += sum.Duplicates
			for _, ex := range sum.DupExamples {
				if len(res.DupExamples) < 5 {
					res.DupExamples = append(res.DupExamples, ex)
				}
			}
			res.Spills += sum.Spills
			res.SpillBytes += sum.SpillBytes
			st.SpillBytes += sum.SpillBytes
			res.MergePasses += sum.MergePasses
			res.PeakMemory = max(res.PeakMemory, sum.PeakMemory)
			if sto.out != nil && len(sum.Uploads) != len(sum.Files) {
				return fail(fmt.Errorf("beam: region %d family %d: %d files written, %d uploads", region, fam, len(sum.Files), len(sum.Uploads)))
			}
			out.Uploads = append(out.Uploads, sum.Uploads...)
		}
		if records != mapped[target] {
			return fail(fmt.Errorf("beam: region %d family %d: reduce read %d records, the maps wrote %d",
				region, fam, records, mapped[target]))
		}
		if len(files) > MaxFilesPerRegionFamily {
			return fail(fmt.Errorf("%w: region %d family %s: %d HFiles, more than the %d HBase's bulk load takes for one family of one region "+
				"(hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily); raise max_file_size, add split points, or raise that property on the cluster and load with hfload run",
				jobs.ErrConfig, region, spec.Mapping.Families()[fam], len(files), MaxFilesPerRegionFamily))
		}
		for _, f := range files {
			st.HFileBytes += f.Bytes
		}
		res.Files = append(res.Files, files...)
	}
	// The maps' folds are part of the run's: what the manifest counts as combined (cells mapped less
	// cells written, less the duplicates a policy dropped) holds them.
	if st.MapCombined > res.Counts.CellsEmitted-res.Cells {
		return fail(fmt.Errorf("beam: the maps folded %d cells, but only %d of %d mapped cells are not in the HFiles",
			st.MapCombined, res.Counts.CellsEmitted-res.Cells, res.Counts.CellsEmitted))
	}
	if err := jobs.DuplicatesErr(spec, res.Duplicates, res.DupExamples); err != nil {
		return out, err
	}
	return out, nil
}

func readJSON(ctx context.Context, s *stores, rel string, v any) error {
	b, err := s.get(ctx, rel)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// rejectsOut writes the units' rejects, in input order, to the run's rejects, as one Run over all
// inputs would: CSV chunks' line numbers offset to the whole file's, and the reject that takes the
// total over the job's limit written last and returned as Run's error for it.
type rejectsOut struct {
	w   io.Writer
	max int64 // the job's limit (-1: none)
	n   int64 // rejects written
	// long holds a reject longer than the reader's buffer, out the shifted reject.
	long, out []byte
}

// appendUnit appends the rejects file rel with lines added to its line numbers. It returns the bytes
// it read.
func (r *rejectsOut) appendUnit(ctx context.Context, s *stores, rel string, lines int64) (int64, error) {
	if r.w == nil {
		return 0, errors.New("no rejects writer")
	}
	f, err := s.reader(ctx, rel)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	var read int64
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a long raw row
			r.long = append(r.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				r.long = append(r.long, line...)
			}
			line = r.long
		}
		read += int64(len(line))
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return read, nil
		}
		if err != nil {
			return read, fmt.Errorf("%s: %w", rel, err)
		}
		if r.out, err = pipeline.ShiftRejectLine(r.out[:0], line, lines); err != nil {
			return read, err
		}
		if _, err := r.w.Write(r.out); err != nil {
			return read, err
		}
		r.n++
		if r.max >= 0 && r.n > r.max {
			return read, pipeline.RejectLimitError(r.out, r.max)
		}
	}
}
