package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"gopkg.in/yaml.v3"
)

// MappingConfig returns the job's column mapping: the ImportTsv `columns` spec, or the `mapping:`
// section (with `rowkey:` at the top level of the job file accepted as mapping.rowkey).
func (j *Job) MappingConfig() (*pipeline.MappingConfig, error) {
	cfg, err := j.mappingConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Visibility != "" && j.Labels == "" {
		return nil, fmt.Errorf("%w: a visibility column needs labels: a label=ordinal file with the ordinals of the cluster's hbase:labels table", ErrConfig)
	}
	if j.Labels != "" {
		f, err := os.Open(j.Labels)
		if err != nil {
			return nil, fmt.Errorf("%w: labels: %w", ErrConfig, err)
		}
		defer f.Close()
		if cfg.Labels, err = kv.ReadVisibilityLabels(f); err != nil {
			return nil, fmt.Errorf("%w: labels %s: %w", ErrConfig, j.Labels, err)
		}
	}
	return cfg, nil
}

func (j *Job) mappingConfig() (*pipeline.MappingConfig, error) {
	hasMapping := j.Mapping.Kind != 0
	switch {
	case j.Columns != "" && hasMapping:
		return nil, fmt.Errorf("%w: give either columns (ImportTsv spec) or mapping, not both", ErrConfig)
	case j.Columns != "":
		if j.RowKey.Kind != 0 {
			return nil, fmt.Errorf("%w: rowkey needs a mapping: section; with columns the row key is HBASE_ROW_KEY", ErrConfig)
		}
		cfg, err := pipeline.ParseColumns(j.Columns)
		if err != nil {
			return nil, fmt.Errorf("%w: columns: %w", ErrConfig, err)
		}
		return cfg, nil
	case hasMapping:
		var cfg pipeline.MappingConfig
		if err := decodeNodeStrict(&j.Mapping, &cfg); err != nil {
			return nil, fmt.Errorf("%w: mapping: %w", ErrConfig, err)
		}
		if j.RowKey.Kind != 0 {
			if len(cfg.RowKey) > 0 {
				return nil, fmt.Errorf("%w: rowkey is given both at the top level and in mapping", ErrConfig)
			}
			if err := decodeNodeStrict(&j.RowKey, &cfg.RowKey); err != nil {
				return nil, fmt.Errorf("%w: rowkey: %w", ErrConfig, err)
			}
		}
		return &cfg, nil
	}
	return nil, fmt.Errorf("%w: no column mapping: give --columns (ImportTsv spec) or a mapping: section", ErrConfig)
}

// decodeNodeStrict decodes a YAML node, rejecting unknown keys with their line numbers in the job file.
func decodeNodeStrict(n *yaml.Node, v any) error {
	if err := checkKeys("", n, reflect.TypeOf(v).Elem(), ""); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		if strings.Contains(err.Error(), "line ") {
			return err
		}
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// SourceOptions returns the input options of the job.
func (j *Job) SourceOptions() (pipeline.SourceOptions, error) {
	opts := pipeline.SourceOptions{Format: j.Format, Dialect: j.Dialect, Header: j.Header, Null: j.Null}
	if j.Separator != "" {
		b, err := SeparatorByte(j.Separator)
		if err != nil {
			return opts, fmt.Errorf("%w: separator: %w", ErrConfig, err)
		}
		opts.Separator = b
	}
	var err error
	if opts.Quote, opts.NoQuote, err = charOrNone(j.Quote); err != nil {
		return opts, fmt.Errorf("%w: quote: %w", ErrConfig, err)
	}
	if opts.Escape, opts.NoEscape, err = charOrNone(j.Escape); err != nil {
		return opts, fmt.Errorf("%w: escape: %w", ErrConfig, err)
	}
	if j.Columns != "" {
		// The column spec fixes the field count (ImportTsv: missing trailing fields are NULL, more is
		// a bad row), so a malformed first line cannot decide it.
		opts.ExpectedFields = len(strings.Split(j.Columns, ","))
		opts.PadShort = true
	}
	return opts, nil
}

// WriterOptions returns the HFile writer options of a family: job-wide settings overridden by the
// family's `families:` entry, defaults for what neither sets.
func (j *Job) WriterOptions(family string) (hfilewriter.WriterOptions, error) {
	opts := hfilewriter.DefaultWriterOptions()
	f := j.Family(family)
	var err error
	if f.Compression != "" {
		if opts.Compression, err = hfilewriter.ParseCompression(f.Compression); err != nil {
			return opts, fmt.Errorf("%w: family %s: %w", ErrConfig, family, err)
		}
	}
	if f.Bloom != "" {
		if opts.Bloom, err = hfilewriter.ParseBloom(f.Bloom); err != nil {
			return opts, fmt.Errorf("%w: family %s: %w", ErrConfig, family, err)
		}
	}
	if f.Encoding != "" {
		if opts.Encoding, err = hfilewriter.ParseEncoding(f.Encoding); err != nil {
			return opts, fmt.Errorf("%w: family %s: %w", ErrConfig, family, err)
		}
	}
	if f.BlockSize > 0 {
		opts.BlockSize = int(f.BlockSize)
	}
	if j.FormatVersion != 0 {
		opts.FormatVersion = j.FormatVersion
	}
	return opts, nil
}

// SplitPoints returns the split points known before reading data (file, live table via the HBase
// REST server, uniform or salt); nil for one region or for split_sample, which computes them from
// the data.
func (j *Job) SplitPoints() (partition.Splits, error) {
	return j.SplitPointsContext(context.Background())
}

// restSplitsTimeout bounds the request for a live table's regions (splits_from).
const restSplitsTimeout = 30 * time.Second

// SplitPointsContext is SplitPoints with a context for the splits_from request.
func (j *Job) SplitPointsContext(ctx context.Context) (partition.Splits, error) {
	switch {
	case j.SplitsFrom != "":
		if j.Table == "" {
			return nil, fmt.Errorf("%w: splits_from: needs table (the table whose regions are read)", ErrConfig)
		}
		ctx, cancel := context.WithTimeout(ctx, restSplitsTimeout)
		defer cancel()
		s, err := partition.FetchRESTSplits(ctx, &http.Client{Timeout: restSplitsTimeout}, j.SplitsFrom, j.Table)
		if err != nil {
			// An unreachable or failing server is an I/O failure (exit 3); a missing table, an
			// unexpected answer or regions that do not tile the key space are configuration errors.
			var ue *url.Error
			var se *partition.RESTStatusError
			if errors.As(err, &ue) || (errors.As(err, &se) && se.StatusCode >= 500) {
				return nil, fmt.Errorf("%w: splits_from %s: %w", ErrIO, j.SplitsFrom, err)
			}
			return nil, fmt.Errorf("%w: splits_from %s: %w", ErrConfig, j.SplitsFrom, err)
		}
		return s, nil
	case j.Splits != "":
		f, err := os.Open(j.Splits)
		if err != nil {
			return nil, fmt.Errorf("%w: splits: %w", ErrConfig, err)
		}
		defer f.Close()
		s, err := partition.ParseSplits(f)
		if err != nil {
			return nil, fmt.Errorf("%w: splits %s: %w", ErrConfig, j.Splits, err)
		}
		return s, nil
	case j.SplitUniform > 0:
		ks := j.Keyspace
		if ks == "" {
			ks = "bytes"
		}
		s, err := partition.Uniform(j.SplitUniform, ks)
		if err != nil {
			return nil, fmt.Errorf("%w: split_uniform: %w", ErrConfig, err)
		}
		return s, nil
	case j.SplitBySalt > 0:
		return partition.BySalt(j.SplitBySalt), nil
	}
	return nil, nil
}

// Prepare resolves a validated job into a RunSpec: expands the inputs, compiles the mapping, reads the
// split points and fixes the run timestamp (now, unless the job sets one).
func (j *Job) Prepare(now time.Time) (*RunSpec, error) {
	return j.PrepareContext(context.Background(), now)
}

// PrepareContext is Prepare with a context, which cancels reading the split points from a live cluster
// (splits_from).
func (j *Job) PrepareContext(ctx context.Context, now time.Time) (*RunSpec, error) {
	srcOpts, err := j.SourceOptions()
	if err != nil {
		return nil, err
	}
	inputs, err := pipeline.ExpandInputsContext(ctx, j.Input, srcOpts)
	if storage.IsStorageError(err) { // a bucket could not be listed or read: I/O, exit 3
		return nil, classify(ErrIO, fmt.Errorf("input: %w", err))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: input: %w", ErrConfig, err)
	}
	cfg, err := j.MappingConfig()
	if err != nil {
		return nil, err
	}
	dup, err := ParseDuplicatePolicy(j.Duplicates)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	agg, err := j.Aggregation(cfg, dup) // before Compile: it may add the _one column
	if err != nil {
		return nil, err
	}
	m, err := pipeline.Compile(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	splits, err := j.SplitPointsContext(ctx)
	if err != nil {
		return nil, err
	}
	ts := j.Timestamp
	if ts == 0 {
		ts = now.UnixMilli()
	}
	famOpts := map[string]hfilewriter.WriterOptions{}
	for _, fam := range m.Families() {
		o, err := j.WriterOptions(fam)
		if err != nil {
			return nil, err
		}
		if m.CellTags() && (o.FormatVersion == 2 || o.NoTags) {
			return nil, fmt.Errorf("%w: family %s: cell tags (ttl/visibility columns) need HFile format version 3", ErrConfig, fam)
		}
		famOpts[fam] = o
	}
	if m.CellTags() && agg != nil {
		return nil, fmt.Errorf("%w: aggregate cannot be combined with cell tags (ttl/visibility columns)", ErrConfig)
	}
	for fam := range j.Families {
		if _, ok := famOpts[fam]; !ok {
			return nil, fmt.Errorf("%w: families: %q is not a family of the mapping (families: %v)", ErrConfig, fam, m.Families())
		}
	}
	spec := &RunSpec{Spec: engine.Spec{
		Table:       j.Table,
		Inputs:      inputs,
		Mapping:     m,
		Pipeline:    pipeline.RunOptions{Workers: j.Workers, MaxRejects: j.MaxRejects, Timestamp: ts},
		Splits:      splits,
		SplitSample: j.SplitSample,
		Family:      func(name string) hfilewriter.WriterOptions { return famOpts[name] },
		Memory:      int64(j.Memory),
		MaxFileSize: int64(j.MaxFileSize),
		Duplicates:  dup,
		SourceTask:  "hfload",
	}}
	if spec.MaxFileSize == 0 {
		spec.MaxFileSize = engine.DefaultMaxFileSize
	}
	if agg != nil {
		agg.Apply(spec)
	}
	return spec, nil
}
