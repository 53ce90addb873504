package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hfload/hfload/internal/analyze"
	"github.com/hfload/hfload/pipeline"
)

// AnalyzeOptions configure Analyze. Zero values take the documented defaults.
type AnalyzeOptions struct {
	// Sample > 0 analyzes only the first Sample rows read (good and bad, in input order) and stops
	// reading there; the report says so (Input.Sampled).
	Sample int64
	// Regions > 0 is the region count of the suggested split points. Default: the job's split_sample
	// if set, else the number of regions of the job's split points, else one per 10 GiB.
	Regions int
	// ExpectedRows is ignored: it sized the Bloom filters of earlier versions. Duplicates are now
	// counted exactly (8 bytes per input row, and a second read of the input when row-key fingerprints
	// repeat).
	ExpectedRows int64
	// Rejects receives the rejected rows as JSON Lines (nil: counted only).
	Rejects io.Writer
	// Now fixes the run timestamp for mappings whose cell timestamp is the job's start (zero: time.Now).
	Now time.Time
}

// analyzePlaceholderOut stands in for the output directory, which analysis does not need, so that
// the job passes Validate; it is never created.
const analyzePlaceholderOut = "(analyze: no output)"

// Analyze checks a job's row-key design against its data without writing anything: it validates
// the job (out and table are not required), resolves it like a run (inputs, mapping, split points),
// maps all input rows, or the first opts.Sample rows, and feeds the cells to the analysis engine.
// When two input rows share a row-key fingerprint it reads the same rows a second time to count the
// duplicates exactly on the keys (see analyze.Analyzer.Suspects); unique keys need one read.
//
// The distribution per region uses the job's split points (splits file, split_uniform or
// split_by_salt); with split_sample N (or opts.Regions) the suggested split points are computed for N
// regions. Rejected rows are counted and reported, not fatal: max_rejects is unlimited unless the job
// sets a limit (a positive max_rejects, which then fails with ErrTooManyRejects like a run).
func Analyze(ctx context.Context, job *Job, opts AnalyzeOptions) (*analyze.Report, error) {
	if opts.Sample < 0 || opts.Regions < 0 || opts.ExpectedRows < 0 {
		return nil, fmt.Errorf("%w: analyze: negative --sample, --regions or expected rows", ErrConfig)
	}
	if opts.Regions > 1_000_000 {
		return nil, fmt.Errorf("%w: analyze: --regions %d (want 1..1000000)", ErrConfig, opts.Regions)
	}
	j := *job // Validate normalizes fields; the placeholders stay local
	if j.Out == "" {
		j.Out = analyzePlaceholderOut
	}
	if j.Table == "" {
		j.Table = "TABLE"
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	spec, err := j.PrepareContext(ctx, now)
	if err != nil {
		return nil, err
	}

	regions := opts.Regions
	if regions == 0 {
		regions = spec.SplitSample
	}
	an, err := analyze.New(analyze.Options{
		Families:       spec.Mapping.Families(),
		Splits:         spec.Splits,
		SplitsFrom:     splitsFlags(&j),
		SuggestRegions: regions,
		Table:          j.Table,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}

	popts := spec.Pipeline
	if popts.MaxRejects == 0 {
		popts.MaxRejects = -1
	}
	examples := &firstLines{max: 3}
	popts.Rejects = examples
	if opts.Rejects != nil {
		popts.Rejects = io.MultiWriter(examples, opts.Rejects)
	}
	inputs := spec.Inputs
	var lim *rowLimit
	if opts.Sample > 0 {
		lim = &rowLimit{left: opts.Sample}
		inputs = lim.wrap(spec.Inputs)
	}
	counts, err := pipeline.Run(ctx, inputs, spec.Mapping, popts, an.Add)
	if err != nil {
		return nil, classifyAnalyzeError(err)
	}
	// Second pass, only when row-key fingerprints repeat: read the same rows again and confirm the
	// suspected duplicates on the keys. Standard input cannot be read twice: the report then says the
	// counts are unconfirmed.
	if an.Suspects() > 0 && rereadable(spec.Inputs) {
		popts.Rejects = nil // counted and kept in the first pass
		inputs = spec.Inputs
		if opts.Sample > 0 {
			inputs = (&rowLimit{left: opts.Sample}).wrap(spec.Inputs)
		}
		if _, err := pipeline.Run(ctx, inputs, spec.Mapping, popts, an.Confirm); err != nil {
			return nil, classifyAnalyzeError(fmt.Errorf("second pass (confirming duplicates): %w", err))
		}
	}
	r := an.Report()
	r.SetInput(analyze.Input{
		Files:          len(spec.Inputs),
		RowsRead:       counts.RowsRead,
		RowsRejected:   counts.RowsRejected,
		NullsSkipped:   counts.NullsSkipped,
		SampleLimit:    opts.Sample,
		Sampled:        lim != nil && lim.cut,
		RejectExamples: examples.lines,
	})
	return r, nil
}

// splitsFlags describes how the job's split points are made, as the flags that make them.
func splitsFlags(j *Job) string {
	switch {
	case j.Splits != "":
		return "--splits " + j.Splits
	case j.SplitsFrom != "":
		return "--splits-from: the live table's regions"
	case j.SplitUniform > 0:
		ks := j.Keyspace
		if ks == "" {
			ks = "bytes"
		}
		return fmt.Sprintf("--split-uniform %d --keyspace %s", j.SplitUniform, ks)
	case j.SplitBySalt > 0:
		return fmt.Sprintf("--split-by-salt %d", j.SplitBySalt)
	}
	return ""
}

// rereadable reports whether every input can be opened a second time (not standard input).
func rereadable(inputs []pipeline.Input) bool {
	for _, in := range inputs {
		if in.Path == "-" {
			return false
		}
	}
	return true
}

// classifyAnalyzeError maps a pipeline failure to the exit-code sentinels, as a run does.
func classifyAnalyzeError(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, ErrConfig), errors.Is(err, ErrIO), errors.Is(err, ErrTooManyRejects):
		return err
	}
	return classifyLoadError(fmt.Errorf("analyze: %w", err))
}

// firstLines keeps the first max complete lines written to it (without the newline) and discards
// the rest. It is written to by the pipeline's reject sink, under its lock.
type firstLines struct {
	mu      sync.Mutex
	max     int
	partial []byte
	lines   []string
}

func (f *firstLines) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rest := p
	for len(f.lines) < f.max && len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			f.partial = append(f.partial, rest...)
			break
		}
		f.partial = append(f.partial, rest[:i]...)
		f.lines = append(f.lines, string(f.partial))
		f.partial = f.partial[:0]
		rest = rest[i+1:]
	}
	return len(p), nil
}

// rowLimit stops a run's reading after a number of rows (good and bad, in input order). The
// pipeline reads its inputs one after another on one goroutine, so the counter needs no lock.
type rowLimit struct {
	left int64
	cut  bool // the limit stopped the reading before the end of the input
}

// wrap returns inputs whose sources stop at the limit. Inputs after it are opened only to see
// whether they hold more rows (then the reading was cut short).
func (l *rowLimit) wrap(inputs []pipeline.Input) []pipeline.Input {
	out := make([]pipeline.Input, len(inputs))
	for i, in := range inputs {
		open := in.Open
		in.Open = func() (pipeline.Source, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			return &limitedSource{Source: src, l: l}, nil
		}
		out[i] = in
	}
	return out
}

// limitedSource passes batches through until the limit, truncating the batch that reaches it.
type limitedSource struct {
	pipeline.Source
	l *rowLimit
}

// Header forwards the header of a CSV source (pipeline.HeaderSource), used to map columns by name.
func (s *limitedSource) Header() []string {
	if hs, ok := s.Source.(pipeline.HeaderSource); ok {
		return hs.Header()
	}
	return nil
}

func (s *limitedSource) Next(ctx context.Context) (*pipeline.Batch, error) {
	if s.l.left <= 0 {
		// Is there more? Peek one batch so that a limit exactly at the end is not called a sample.
		b, err := s.Source.Next(ctx)
		if err == nil {
			s.l.cut = true
			b.Release()
			return nil, io.EOF
		}
		return nil, err
	}
	b, err := s.Source.Next(ctx)
	if err != nil {
		return nil, err
	}
	n := int64(b.NumRows + len(b.Bad))
	if n <= s.l.left {
		s.l.left -= n
		return b, nil
	}
	truncateBatch(b, int(s.l.left))
	s.l.left = 0
	s.l.cut = true
	return b, nil
}

// truncateBatch keeps the first keep rows of b, good and bad merged in input order. The mapping
// reads only NumRows rows and the Bad list, so shortening those is enough.
func truncateBatch(b *pipeline.Batch, keep int) {
	good, bad := 0, 0
	for good+bad < keep {
		switch {
		case good < b.NumRows && (bad >= len(b.Bad) || batchRowLine(b, good) < b.Bad[bad].Line):
			good++
		case bad < len(b.Bad):
			bad++
		default:
			return
		}
	}
	b.NumRows = good
	b.Bad = b.Bad[:bad]
}

// batchRowLine is where row i of b starts: its CSV line, or its ordinal in the file (Parquet), the
// numbering BadRow.Line uses.
func batchRowLine(b *pipeline.Batch, i int) int64 {
	if b.Record == nil && i < len(b.Lines) {
		return b.Lines[i]
	}
	return b.FirstRow + int64(i)
}
