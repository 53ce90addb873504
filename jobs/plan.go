package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// `hfload plan JOB.yaml`: what a run would do, from a sample of the data.
//
// PlanJob reads the first rows of the inputs a run would load (Sample rows in
// all, spread over the inputs), maps them with the job's mapping, routes the
// cells to the job's regions and extrapolates to the whole inputs by their
// sizes: input bytes per sampled row gives the rows of each file (Parquet
// files know their row count exactly), and the sample's cells and KeyValue
// bytes per region scale by rows. Estimates are of uncompressed KeyValue
// bytes: compressed HFiles are smaller. Nothing is written.

// PlanOptions are the knobs of PlanJob.
type PlanOptions struct {
	Sample int // rows to read over all inputs; 0 = 10000
	Now    func() time.Time
}

// RunPlan is what PlanJob found.
type RunPlan struct {
	Job         string          `json:"job"`
	Table       string          `json:"table"`
	Incremental bool            `json:"incremental"`
	Summary     string          `json:"summary"`
	Inputs      []PlanInput     `json:"inputs"`
	Watermark   *Watermark      `json:"watermark,omitempty"` // the last recorded one
	Families    []string        `json:"families"`
	Sample      PlanSample      `json:"sample"`
	Estimate    PlanEstimate    `json:"estimate"`
	Regions     []PlanRegion    `json:"regions"`
	KeyExamples []string        `json:"key_examples"`
	Duplicates  []string        `json:"duplicate_examples,omitempty"`
	Rejects     []string        `json:"reject_examples,omitempty"`
	Warnings    []string        `json:"warnings"`
	SplitSource string          `json:"split_source"`
	perInput    []*sampledInput // per loaded input
}

// PlanInput is one input and what a run would do with it.
type PlanInput struct {
	Path          string `json:"path"`
	Size          int64  `json:"size"`
	Action        string `json:"action"` // load | skip | changed (refused without reload) | reload
	LoadedBy      string `json:"loaded_by,omitempty"`
	EstimatedRows int64  `json:"estimated_rows,omitempty"`
}

// PlanSample describes the rows that were read.
type PlanSample struct {
	Rows         int64   `json:"rows"`          // rows read
	Filtered     int64   `json:"filtered"`      // at or below the watermark
	Keyed        int64   `json:"keyed"`         // mapped to cells
	Rejected     int64   `json:"rejected"`      // bad rows
	Cells        int64   `json:"cells"`         // cells emitted
	KVBytes      int64   `json:"kv_bytes"`      // KeyValue bytes emitted
	DupCells     int64   `json:"dup_cells"`     // cells whose key another sampled cell has
	InputBytes   int64   `json:"input_bytes"`   // input text the rows took (CSV; Parquet: by row share of the file)
	BytesPerRow  float64 `json:"bytes_per_row"` // InputBytes / Rows
	WholeInputs  int     `json:"whole_inputs"`  // inputs read to the end
	InputsOpened int     `json:"inputs_opened"`
}

// PlanEstimate extrapolates the sample to the inputs.
type PlanEstimate struct {
	Rows    int64 `json:"rows"`     // rows in the inputs to load
	Loaded  int64 `json:"loaded"`   // of which above the watermark and keyed
	Cells   int64 `json:"cells"`    // cells
	KVBytes int64 `json:"kv_bytes"` // uncompressed KeyValue bytes
	Files   int   `json:"files"`    // HFiles (per region and family, rolled at max_file_size)
}

// PlanRegion is one region's share.
type PlanRegion struct {
	Index       int    `json:"index"`
	Start       string `json:"start"` // toStringBinary; "" = table start
	End         string `json:"end"`   // "" = table end
	SampleCells int64  `json:"sample_cells"`
	Cells       int64  `json:"cells"`    // estimated
	KVBytes     int64  `json:"kv_bytes"` // estimated
	Files       int    `json:"files"`    // estimated, over families
}

type sampledInput struct {
	rows, rawBytes int64
	eof            bool
	exactRows      int64 // Parquet: rows in the file; -1 unknown
	size           int64
	compressed     bool
}

const defaultPlanSample = 10000

// PlanJob validates job and describes what a run of it would do (see the
// package comment above). For incremental jobs it consults the state without
// taking the lock: a changed input is shown, not an error.
func PlanJob(ctx context.Context, job *Job, opts PlanOptions) (*RunPlan, error) {
	if err := job.Validate(); err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	n := opts.Sample
	if n <= 0 {
		n = defaultPlanSample
	}
	spec, err := job.PrepareContext(ctx, now())
	if err != nil {
		return nil, err
	}
	rp := &RunPlan{Job: job.Name, Table: job.Table, Incremental: job.StateDir != "", Families: spec.Mapping.Families(),
		KeyExamples: []string{}, Warnings: []string{}}
	inputs, err := rp.planInputs(ctx, job, spec)
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return rp, nil
	}
	ps, err := rp.sample(ctx, job, spec, inputs, n)
	if err != nil {
		return nil, err
	}
	scale, compressed := rp.extrapolate(inputs)
	rp.planRegions(spec, ps.rows, scale)
	rp.warn(job, spec, ps, compressed)
	return rp, nil
}

// planInputs lists what a run would do with each input (for incremental jobs from the state) and
// returns the inputs it would load.
func (rp *RunPlan) planInputs(ctx context.Context, job *Job, spec *RunSpec) ([]pipeline.Input, error) {
	inputs := spec.Inputs
	if !rp.Incremental {
		for _, in := range inputs {
			rp.Inputs = append(rp.Inputs, PlanInput{Path: in.Path, Size: in.Size, Action: "load"})
		}
		rp.Summary = fmt.Sprintf("load %d input", len(inputs))
		if len(inputs) != 1 {
			rp.Summary += "s"
		}
		return inputs, nil
	}
	st, err := job.OpenState()
	if err != nil {
		return nil, err
	}
	p, err := planInputs(ctx, st, spec.Inputs, job.Reload)
	if err != nil && !errors.Is(err, ErrInputChanged) {
		return nil, err
	}
	rp.Watermark = p.Watermark
	rp.Summary = p.Summary()
	if err != nil {
		rp.Summary = fmt.Sprintf("a run would fail (exit %d): %d loaded inputs changed; rerun with --reload to load them again", ExitChanged, len(p.Changed))
		rp.Warnings = append(rp.Warnings, err.Error())
	}
	for _, s := range p.Skip {
		rp.Inputs = append(rp.Inputs, PlanInput{Path: s.Path, Size: s.Size, Action: "skip", LoadedBy: s.LoadedBy})
	}
	changed := map[string]bool{}
	for _, c := range p.Changed {
		changed[c.Now.Path] = true
		if !job.Reload {
			rp.Inputs = append(rp.Inputs, PlanInput{Path: c.Now.Path, Size: c.Now.Size, Action: "changed", LoadedBy: c.LoadedBy})
		}
	}
	inputs = plannedInputs(spec.Inputs, p)
	if err != nil {
		inputs = nil
	}
	for _, in := range inputs {
		abs, _ := absInput(in.Path)
		a := "load"
		if changed[abs] {
			a = "reload"
		}
		rp.Inputs = append(rp.Inputs, PlanInput{Path: in.Path, Size: in.Size, Action: a})
	}
	return inputs, nil
}

// planSampler collects what the plan needs from the sampled cells (its add is the pipeline's sink).
type planSampler struct {
	rp      *RunPlan
	mu      sync.Mutex
	first   []planKey
	seen    map[string]int
	prevRow []byte
	ordered bool // distinct row keys increase with the input order
	rows    map[string]*planRow
	kvBuf   []byte // the KeyValues of the batch in the sink (under mu)
	kvRefs  []pipeline.KVRef
	wf      *watermarkFilter // incremental jobs: the rows at or below the watermark are left out
}

func (ps *planSampler) add(cb *pipeline.CellBatch) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	rp := ps.rp
	var err error
	if ps.kvBuf, ps.kvRefs, err = cb.KeyValues(ps.kvBuf[:0], ps.kvRefs[:0]); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	for _, c := range ps.kvRefs {
		rec := ps.kvBuf[c.Off : c.Off+c.Len]
		key := kv.KVKey(rec)
		row := kv.Key(key).Row()
		if ps.prevRow != nil && !bytes.Equal(ps.prevRow, row) {
			if bytes.Compare(row, ps.prevRow) < 0 {
				ps.ordered = false
			}
		}
		ps.prevRow = append(ps.prevRow[:0], row...)
		if len(ps.first) < 5 && (len(ps.first) == 0 || ps.first[len(ps.first)-1].row != string(row)) {
			ps.first = append(ps.first, planKey{c.Seq, string(row)})
		}
		ps.seen[string(key)]++
		if ps.seen[string(key)] == 2 && len(rp.Duplicates) < 5 {
			rp.Duplicates = append(rp.Duplicates, kv.ToStringBinary(row))
		}
		if ps.seen[string(key)] > 1 {
			rp.Sample.DupCells++
		}
		pr := ps.rows[string(row)]
		if pr == nil {
			pr = &planRow{fam: make([]int64, len(rp.Families))}
			ps.rows[string(row)] = pr
		}
		pr.cells++
		pr.fam[c.Family] += int64(len(rec))
		rp.Sample.Cells++
		rp.Sample.KVBytes += int64(len(rec))
	}
	return nil
}

// sample maps the first rows of each input, n in all, and fills rp.Sample, the rejects and the first keys.
func (rp *RunPlan) sample(ctx context.Context, job *Job, spec *RunSpec, inputs []pipeline.Input, n int) (*planSampler, error) {
	per := (n + len(inputs) - 1) / len(inputs)
	rp.perInput = make([]*sampledInput, len(inputs))
	sampled := make([]pipeline.Input, len(inputs))
	var total int64
	for i, in := range inputs {
		si := &sampledInput{exactRows: -1, size: in.Size, compressed: isCompressed(in.Path)}
		rp.perInput[i] = si
		sampled[i] = limitInput(in, int64(per), int64(n), &total, si)
	}
	ps := &planSampler{rp: rp, seen: map[string]int{}, ordered: true, rows: map[string]*planRow{}}
	if w := job.Incremental.Watermark; w != "" {
		idx, err := watermarkIndex(job, w)
		if err != nil {
			return nil, err
		}
		if ps.wf, err = newWatermarkFilter(w, job.Incremental.WatermarkType, idx, rp.Watermark); err != nil {
			return nil, err
		}
		sampled = ps.wf.wrap(sampled)
	}
	rp.SplitSource = splitSource(job)
	var rejBuf bytes.Buffer
	popts := spec.Pipeline
	popts.Workers = 1
	popts.MaxRejects = -1
	popts.Rejects = &rejBuf
	counts, err := pipeline.Run(ctx, sampled, spec.Mapping, popts, ps.add)
	if err != nil {
		return nil, fmt.Errorf("plan: reading the sample: %w", err)
	}
	rp.Sample.Keyed = counts.RowsKeyed
	rp.Sample.Rejected = counts.RowsRejected
	if ps.wf != nil {
		rp.Sample.Filtered = ps.wf.Filtered()
	}
	rp.Sample.Rows = counts.RowsRead + rp.Sample.Filtered
	for _, l := range strings.SplitN(rejBuf.String(), "\n", 4)[:min(3, strings.Count(rejBuf.String(), "\n"))] {
		rp.Rejects = append(rp.Rejects, l)
	}
	sort.Slice(ps.first, func(i, k int) bool { return ps.first[i].seq < ps.first[k].seq })
	for _, k := range ps.first {
		rp.KeyExamples = append(rp.KeyExamples, kv.ToStringBinary([]byte(k.row)))
	}
	return ps, nil
}

// extrapolate estimates the rows of every input from its size and the sample's bytes per row, and
// returns the factor from the sample to the inputs and whether an estimate came from compressed sizes.
func (rp *RunPlan) extrapolate(inputs []pipeline.Input) (scale float64, compressed bool) {
	var sampleRows, sampleRaw int64
	for _, si := range rp.perInput {
		if si.rows > 0 {
			rp.Sample.InputsOpened++
		}
		if si.eof {
			rp.Sample.WholeInputs++
		}
		sampleRows += si.rows
		sampleRaw += si.rawBytes
	}
	rp.Sample.InputBytes = sampleRaw
	if sampleRows > 0 {
		rp.Sample.BytesPerRow = float64(sampleRaw) / float64(sampleRows)
	}
	for i, si := range rp.perInput {
		est := si.rows
		switch {
		case si.eof:
		case si.exactRows >= 0:
			est = si.exactRows
		case si.rows > 0 && si.rawBytes > 0:
			est = int64(math.Round(float64(si.size) * float64(si.rows) / float64(si.rawBytes)))
		case rp.Sample.BytesPerRow > 0:
			est = int64(math.Round(float64(si.size) / rp.Sample.BytesPerRow))
		}
		if si.compressed && !si.eof {
			compressed = true
		}
		rp.Estimate.Rows += est
		for k := range rp.Inputs {
			if rp.Inputs[k].Path == inputs[i].Path && (rp.Inputs[k].Action == "load" || rp.Inputs[k].Action == "reload") {
				rp.Inputs[k].EstimatedRows = est
			}
		}
	}
	if rp.Sample.Rows > 0 {
		scale = float64(rp.Estimate.Rows) / float64(rp.Sample.Rows)
	}
	rp.Estimate.Loaded = int64(math.Round(float64(rp.Sample.Keyed) * scale))
	rp.Estimate.Cells = int64(math.Round(float64(rp.Sample.Cells) * scale))
	rp.Estimate.KVBytes = int64(math.Round(float64(rp.Sample.KVBytes) * scale))
	return scale, compressed
}

// planRegions estimates each region's cells, bytes and files: known splits, or split_sample computed
// from the sampled keys (all of them, by bytes).
func (rp *RunPlan) planRegions(spec *RunSpec, rows map[string]*planRow, scale float64) {
	splits := spec.Splits
	keys := make([]partition.SampleKey, 0, len(rows))
	for k, pr := range rows {
		var b int64
		for _, n := range pr.fam {
			b += n
		}
		keys = append(keys, partition.SampleKey{Row: []byte(k), Bytes: b})
	}
	sort.Slice(keys, func(i, k int) bool { return bytes.Compare(keys[i].Row, keys[k].Row) < 0 })
	if spec.SplitSample > 0 {
		splits = partition.SplitsFromSample(keys, spec.SplitSample)
	}
	regCells := make([]int64, len(splits)+1)
	regBytes := make([]int64, len(splits)+1)
	famBytes := make([][]int64, len(splits)+1)
	for r := range famBytes {
		famBytes[r] = make([]int64, len(rp.Families))
	}
	for _, k := range keys {
		r := 0
		if len(splits) > 0 {
			r = splits.Region(k.Row)
		}
		pr := rows[string(k.Row)]
		regCells[r] += pr.cells
		regBytes[r] += k.Bytes
		for f, n := range pr.fam {
			famBytes[r][f] += n
		}
	}
	maxFile := spec.MaxFileSize
	for r := 0; r <= len(splits); r++ {
		start, end := splits.Bounds(r)
		pr := PlanRegion{Index: r, Start: kv.ToStringBinary(start), End: kv.ToStringBinary(end)}
		pr.SampleCells = regCells[r]
		pr.Cells = int64(math.Round(float64(regCells[r]) * scale))
		pr.KVBytes = int64(math.Round(float64(regBytes[r]) * scale))
		for f := range rp.Families {
			b := int64(math.Round(float64(famBytes[r][f]) * scale))
			if b > 0 {
				pr.Files += int((b + maxFile - 1) / maxFile)
			}
		}
		rp.Estimate.Files += pr.Files
		rp.Regions = append(rp.Regions, pr)
	}
}

// warn adds the plan's warnings.
func (rp *RunPlan) warn(job *Job, spec *RunSpec, ps *planSampler, compressed bool) {
	warn := func(format string, a ...any) { rp.Warnings = append(rp.Warnings, fmt.Sprintf(format, a...)) }
	if spec.SplitSample == 0 && len(spec.Splits) == 0 {
		warn("no split points: all output is one region (give splits, splits_from, split_uniform, split_by_salt or split_sample)")
	}
	if rp.Sample.DupCells > 0 {
		warn("%d sampled cells share their key with another sampled cell (duplicates: %s); the run fails unless duplicates is first, last or keep, or aggregate is set",
			rp.Sample.DupCells, spec.DuplicatePolicy())
	}
	if rp.Sample.Rejected > 0 {
		warn("%d of %d sampled rows were rejected (max_rejects %d)", rp.Sample.Rejected, rp.Sample.Rows, job.MaxRejects)
	}
	if ps.wf != nil && rp.Sample.Filtered > 0 && rp.Sample.Filtered*10 >= rp.Sample.Rows*9 {
		warn("%d of the %d sampled rows (the first rows of the inputs) are at or below the watermark: if the newer rows come later in the files, a run loads more than estimated here",
			rp.Sample.Filtered, rp.Sample.Rows)
	}
	if compressed {
		warn("compressed inputs: rows are estimated from compressed sizes, so the estimates are low (by the compression ratio)")
	}
	if len(rp.Regions) > 1 && rp.Sample.KVBytes > 0 && spec.SplitSample == 0 {
		for _, r := range rp.Regions {
			if r.KVBytes*2 > rp.Estimate.KVBytes && r.SampleCells > 0 {
				warn("region %d gets %.0f%% of the sampled bytes: the split points do not fit the keys", r.Index, 100*float64(r.KVBytes)/float64(max(1, rp.Estimate.KVBytes)))
				break
			}
		}
	}
	if ps.ordered && rp.Sample.Keyed > 100 {
		warn("row keys increase with the input order (first keys %v): appended data all lands in the last region (a hotspot for incremental loads); consider a salt or hash prefix", rp.KeyExamples)
	}
}

// planRow is what the sample put into one row key: cells, and KeyValue
// bytes per family.
type planRow struct {
	cells int64
	fam   []int64
}

// planKey is a sampled row key with its input position.
type planKey struct {
	seq uint64
	row string
}

func splitSource(job *Job) string {
	switch {
	case job.Splits != "":
		return "file " + job.Splits
	case job.SplitUniform > 0:
		return fmt.Sprintf("split_uniform %d", job.SplitUniform)
	case job.SplitBySalt > 0:
		return fmt.Sprintf("split_by_salt %d", job.SplitBySalt)
	case job.SplitSample > 0:
		return fmt.Sprintf("split_sample %d (computed here from the sample; the run computes them from all rows)", job.SplitSample)
	case job.SplitsFrom != "":
		return fmt.Sprintf("the regions of table %s from the HBase REST server %s", job.Table, job.SplitsFrom)
	}
	return "none (one region)"
}

func isCompressed(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".gz") || strings.HasSuffix(p, ".zst")
}

// limitInput wraps in to yield at most per rows, and none once *total has
// reached all; it records what it read in si.
func limitInput(in pipeline.Input, per, all int64, total *int64, si *sampledInput) pipeline.Input {
	open := in.Open
	in.Open = func() (pipeline.Source, error) {
		src, err := open()
		if err != nil {
			return nil, err
		}
		if ps, ok := src.(*pipeline.ParquetSource); ok {
			si.exactRows = ps.NumRows()
		}
		ls := &limitSource{src: src, per: per, all: all, total: total, si: si}
		if hs, ok := src.(pipeline.HeaderSource); ok {
			ls.header = hs.Header()
		}
		return ls, nil
	}
	return in
}

type limitSource struct {
	src    pipeline.Source
	header []string
	per    int64
	all    int64
	total  *int64
	si     *sampledInput
}

func (s *limitSource) Header() []string { return s.header }
func (s *limitSource) Close() error     { return s.src.Close() }

func (s *limitSource) Next(ctx context.Context) (*pipeline.Batch, error) {
	left := min(s.per-s.si.rows, s.all-*s.total)
	if left <= 0 {
		return nil, io.EOF
	}
	b, err := s.src.Next(ctx)
	if err == io.EOF {
		s.si.eof = true
	}
	if b == nil || err != nil {
		return b, err
	}
	if int64(b.NumRows) > left {
		k := int(left)
		if b.Record != nil {
			nr := b.Record.NewSlice(0, int64(k))
			b.Record.Release()
			b.Record = nr
		} else {
			nc := b.NumCols
			b.Ends, b.Nulls = b.Ends[:k*nc], b.Nulls[:k*nc]
			if len(b.Lines) > k {
				b.Lines = b.Lines[:k]
			}
			if len(b.RawEnds) > k {
				b.RawEnds = b.RawEnds[:k]
			}
		}
		b.NumRows = k
	}
	rows := int64(b.NumRows + len(b.Bad))
	s.si.rows += rows
	*s.total += rows
	if len(b.RawEnds) > 0 {
		s.si.rawBytes += int64(b.RawEnds[len(b.RawEnds)-1]) + int64(b.NumRows)
	}
	for _, bad := range b.Bad {
		s.si.rawBytes += int64(len(bad.Raw)) + 1
	}
	if s.si.exactRows > 0 && s.si.size > 0 {
		// Parquet: the rows' share of the file.
		s.si.rawBytes = int64(float64(s.si.size) * float64(s.si.rows) / float64(s.si.exactRows))
	}
	return b, nil
}

// WriteText prints the plan for a terminal.
func (rp *RunPlan) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s → table %s: %s\n", rp.Job, tableOr(rp.Table), rp.Summary)
	if rp.Watermark != nil {
		fmt.Fprintf(&b, "watermark: rows with %s > %s (%s)\n", rp.Watermark.Column, rp.Watermark.Value, rp.Watermark.Type)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, in := range rp.Inputs {
		extra := ""
		if in.LoadedBy != "" {
			extra = "loaded by run " + in.LoadedBy
		}
		if in.EstimatedRows > 0 {
			extra = fmt.Sprintf("~%d rows", in.EstimatedRows)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", in.Action, in.Path, FormatSize(in.Size), extra)
	}
	tw.Flush()
	if rp.Sample.Rows == 0 && len(rp.perInput) == 0 {
		fmt.Fprintf(&b, "nothing to sample\n")
	} else {
		s := rp.Sample
		fmt.Fprintf(&b, "\nsample: %d rows from %d inputs (%s, %.0f bytes/row): %d keyed, %d rejected", s.Rows, s.InputsOpened,
			FormatSize(s.InputBytes), s.BytesPerRow, s.Keyed, s.Rejected)
		if s.Filtered > 0 {
			fmt.Fprintf(&b, ", %d at or below the watermark", s.Filtered)
		}
		fmt.Fprintf(&b, "; %d cells, %s of KeyValues\n", s.Cells, FormatSize(s.KVBytes))
		e := rp.Estimate
		fmt.Fprintf(&b, "estimate: %d rows, %d loaded → %d cells, %s of KeyValues (uncompressed) in %d HFiles, families %s\n",
			e.Rows, e.Loaded, e.Cells, FormatSize(e.KVBytes), e.Files, strings.Join(rp.Families, ","))
		fmt.Fprintf(&b, "\nregions (%s):\n", rp.SplitSource)
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  REGION\tSTART\tEND\tCELLS\tBYTES\tFILES\n")
		for _, r := range rp.Regions {
			fmt.Fprintf(tw, "  %d\t'%s'\t'%s'\t%d\t%s\t%d\n", r.Index, r.Start, r.End, r.Cells, FormatSize(r.KVBytes), r.Files)
		}
		tw.Flush()
		if len(rp.KeyExamples) > 0 {
			fmt.Fprintf(&b, "\nrow keys (first of the sample):\n")
			for _, k := range rp.KeyExamples {
				fmt.Fprintf(&b, "  %s\n", k)
			}
		}
		if len(rp.Rejects) > 0 {
			fmt.Fprintf(&b, "\nrejected rows (first of the sample):\n")
			for _, r := range rp.Rejects {
				fmt.Fprintf(&b, "  %s\n", r)
			}
		}
		if len(rp.Duplicates) > 0 {
			fmt.Fprintf(&b, "\nduplicate keys in the sample (rows): %s\n", strings.Join(rp.Duplicates, ", "))
		}
	}
	if len(rp.Warnings) > 0 {
		fmt.Fprintf(&b, "\nwarnings:\n")
		for _, w := range rp.Warnings {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the plan as indented JSON.
func (rp *RunPlan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rp)
}
