package jobs

import (
	"context"

	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/partition"
)

// The pieces of Load a distributed driver (cmd/hfload-beam) runs per work unit, from the engine.

// SplitSampleKeys and SplitSampleSeed size and seed the split_sample row sample (engine).
const (
	SplitSampleKeys = engine.SplitSampleKeys
	SplitSampleSeed = engine.SplitSampleSeed
)

// WriteRegion is engine.WriteRegion with the HFiles written into dir/<family>/ (engine.DirSink).
func WriteRegion(ctx context.Context, spec *RunSpec, dir string, splits partition.Splits, region, fam int,
	feed func(add func(rec []byte, seq uint64) error) error) (*LoadResult, error) {
	return WriteRegionTo(ctx, spec, engine.DirSink{Dir: dir}, splits, region, fam, feed)
}

// DuplicatesErr is engine.DuplicatesErr: the error Load returns for duplicates under policy error.
func DuplicatesErr(spec *RunSpec, dups int64, examples []string) error {
	return engine.DuplicatesErr(&spec.Spec, dups, examples)
}
