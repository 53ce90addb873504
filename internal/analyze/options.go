package analyze

import (
	"fmt"

	"github.com/hfload/hfload/partition"
)

// Options configure an Analyzer. Zero numeric fields take the documented defaults.
type Options struct {
	// Families are the column family names, indexed by RecordRef.Family (pipeline).
	Families []string
	// Splits are the split points in force (nil: one region).
	Splits partition.Splits
	// SplitsFrom says how Splits were made, as the command-line flags that made them (for example
	// "--split-uniform 4 --keyspace decimal"; empty: unknown). Warnings use it to explain empty regions
	// and never advise the option that made them.
	SplitsFrom string

	// MaxExamples is how many duplicate examples the report lists per kind (default 10).
	MaxExamples int
	// ConfirmBytes bounds the memory the second pass (Confirm) spends on the keys of suspected rows
	// (default 256 MiB, counting each key's bytes plus about 100 to 160 bytes of overhead). Beyond it further keys are not
	// tracked and the duplicate counts are lower bounds (Duplicates.Partial).
	ConfirmBytes int64

	// SuggestRegions is the region count of the suggested split points. 0: the number of regions in
	// force if Splits is set, else total bytes / TargetRegionBytes (at least 1).
	SuggestRegions int
	// TargetRegionBytes is the region size used when SuggestRegions is 0 (default 10 GiB, HBase's
	// hbase.hregion.max.filesize).
	TargetRegionBytes int64
	// SampleCapacity is the number of distinct row keys the split sampler keeps (default 100,000).
	SampleCapacity int
	// Seed seeds the split sampler (deterministic for a given seed).
	Seed int64
	// Table is the table name used in the suggested create command (default "TABLE").
	Table string

	// MonotonicFraction is the share of consecutive input rows with ascending keys above which the
	// monotonic_lead warning is raised (default 0.9), when at least MinOrderPairs pairs were seen
	// (default 100).
	MonotonicFraction float64
	MinOrderPairs     int64
	// SkewFactor: a region holding more than SkewFactor times the average bytes per region raises
	// skewed_regions (default 2).
	SkewFactor float64
	// LongNamesShare: long_names is raised when shortening families to 1 byte and qualifiers to
	// 2 bytes would save more than this share of all cell bytes (default 0.10).
	LongNamesShare float64
	// NumbersShare: numbers_as_text is raised when storing decimal integer text of more than 8 bytes as
	// 8-byte longs would save more than this share of all value bytes (default 0.05).
	NumbersShare float64
	// MaxColumns bounds the per-column statistics (default 1000 columns; further columns are counted
	// under "(other)").
	MaxColumns int
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxExamples == 0 {
		o.MaxExamples = 10
	}
	if o.ConfirmBytes == 0 {
		o.ConfirmBytes = 256 << 20
	}
	if o.TargetRegionBytes == 0 {
		o.TargetRegionBytes = 10 << 30
	}
	if o.SampleCapacity == 0 {
		o.SampleCapacity = 100_000
	}
	if o.Table == "" {
		o.Table = "TABLE"
	}
	if o.MonotonicFraction == 0 {
		o.MonotonicFraction = 0.9
	}
	if o.MinOrderPairs == 0 {
		o.MinOrderPairs = 100
	}
	if o.SkewFactor == 0 {
		o.SkewFactor = 2
	}
	if o.LongNamesShare == 0 {
		o.LongNamesShare = 0.10
	}
	if o.NumbersShare == 0 {
		o.NumbersShare = 0.05
	}
	if o.MaxColumns == 0 {
		o.MaxColumns = 1000
	}
	switch {
	case o.ConfirmBytes < 0:
		return o, fmt.Errorf("confirm bytes must be positive, got %d", o.ConfirmBytes)
	case o.MaxExamples < 0 || o.SampleCapacity < 0 || o.SuggestRegions < 0 || o.MaxColumns < 0:
		return o, fmt.Errorf("negative count in options")
	case o.TargetRegionBytes < 0:
		return o, fmt.Errorf("target region bytes must be positive, got %d", o.TargetRegionBytes)
	}
	if err := o.Splits.Validate(); err != nil {
		return o, fmt.Errorf("split points: %w", err)
	}
	return o, nil
}
