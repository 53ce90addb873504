package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/sorter"
)

// SplitSampleKeys is the capacity of the bottom-k row sample behind Spec.SplitSample, and
// SplitSampleSeed its seed: a distributed driver that samples in parts and merges them must use the
// same two to compute the split points Load computes.
const (
	SplitSampleKeys       = splitSampleKeys
	SplitSampleSeed int64 = 1
)

// WriteRegion is the write phase of Load for one (region, family) of a load whose region boundaries
// are splits: it sorts the records feed adds (all of that region and family, in any order: seq orders
// equal keys) within the spec's memory budget, spilling to spec.TempDir, applies the duplicate policy
// or the combiner, and writes the region's HFiles to sink with the names, contents and FileResults
// Load gives them (the names only if spec.NameSeed returns the seed Load's run got). The result holds Files, Cells, RowsWritten, Duplicates, DupExamples and the sorter
// figures; duplicates under policy error are counted, not failed on (see DuplicatesErr). It is what a
// distributed driver's reduce task runs.
func WriteRegion(ctx context.Context, spec *Spec, sink Sink, splits partition.Splits, region, fam int,
	feed func(add func(rec []byte, seq uint64) error) error) (*Result, error) {
	start := time.Now()
	if spec.Mapping == nil {
		return nil, errors.New("write region: no column mapping")
	}
	families := spec.Mapping.Families()
	if fam < 0 || fam >= len(families) || region < 0 || region > len(splits) {
		return nil, fmt.Errorf("write region: region %d family %d out of range", region, fam)
	}
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: spec.sortBudget(), TempDir: spec.TempDir,
		Parallelism: spec.workers(), Dict: spec.Mapping.Dict()})
	if err != nil {
		return nil, fmt.Errorf("write region: sorter: %w", err)
	}
	defer pool.Close()
	s := pool.NewSorter(fmt.Sprintf("region %d family %s", region, families[fam]),
		sorter.SorterOptions{Combine: spec.Combine, CombineErr: spec.CombineErr, FoldSeqLast: spec.FoldSeqLast})
	defer s.Close()
	if err := feed(s.Add); err != nil {
		return nil, err
	}
	return writeRegion(ctx, spec, sink, splits, region, fam, pool, start, s.Records() > 0, s.Finish)
}

// writeRegion writes one (region, family)'s HFiles from the Iterator finish returns (called only if
// has: a region without records has no files), as WriteRegion and MergeRegion do.
func writeRegion(ctx context.Context, spec *Spec, sink Sink, splits partition.Splits, region, fam int, pool *sorter.Pool,
	start time.Time, has bool, finish func(context.Context) (*sorter.Iterator, error)) (*Result, error) {
	families := spec.Mapping.Families()
	res := &Result{Splits: splits, ReadTime: time.Since(start)}
	var seed []byte
	var err error
	if spec.NameSeed != nil {
		if seed, err = spec.NameSeed(); err != nil {
			return res, err
		}
	}
	out := newOutputWriter(spec, sink, families, 0, pool)
	out.progress = nil
	out.nameSeed = seed
	if has {
		has := func(t int) bool { return t == region*len(families)+fam }
		err = out.writeTasks(ctx, len(splits)+1, 1, 1, has, func(ctx context.Context, region, fam int) error {
			it, err := finish(ctx)
			if err != nil {
				return fmt.Errorf("sorting region %d family %s: %w", region, families[fam], err)
			}
			defer it.Close()
			return out.writeStream(ctx, it, splits, region, fam)
		})
		out.closeDirs()
	}
	if verr := out.waitVerified(); err == nil {
		err = verr
	}
	out.result(res, splits, pool)
	res.Elapsed = time.Since(start)
	res.WriteTime = res.Elapsed - res.ReadTime
	return res, err
}

// DuplicatesErr is the error Load returns when a load under the duplicate policy error found
// duplicates (nil when the policy or a combiner allows them): for drivers that sum WriteRegion's counts.
func DuplicatesErr(spec *Spec, dups int64, examples []string) error {
	if dups > 0 && spec.Combine == nil && spec.DuplicatePolicy() == DuplicatesError {
		return fmt.Errorf("%w: %d cells share their key with another cell (use --duplicates first|last|keep to load them); first ones: %v",
			ErrDuplicates, dups, examples)
	}
	return nil
}
