package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/sorter"
)

// NewSortPool returns a sorter pool with the budget, parallelism and dictionary Load and WriteRegion
// sort with, spilling to tempDir: for a distributed map task that sorts its records into runs.
func NewSortPool(spec *Spec, tempDir string) (*sorter.Pool, error) {
	if spec.Mapping == nil {
		return nil, errors.New("sort pool: no column mapping")
	}
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: spec.sortBudget(), TempDir: tempDir,
		Parallelism: spec.workers(), Dict: spec.Mapping.Dict()})
	if err != nil {
		return nil, fmt.Errorf("sorter: %w", err)
	}
	return pool, nil
}

// MergeRegion is WriteRegion for records that arrive already sorted: open returns the sorted runs of
// one (region, family) (sorter.RecordSource, each in the sorter's order, e.g. written by map tasks
// from a sorter's Iterator) and the bytes of memory they hold; they are k-way merged
// (sorter.Pool.MergeSorted) instead of sorted again, and the HFiles written with the same names,
// bytes and counts WriteRegion gives for the same records. open gets the pool, to account its
// buffers; no sources (or only empty ones, which open leaves out) means no files.
func MergeRegion(ctx context.Context, spec *Spec, sink Sink, splits partition.Splits, region, fam int,
	open func(pool *sorter.Pool) ([]sorter.RecordSource, int64, error)) (*Result, error) {
	start := time.Now()
	if spec.Mapping == nil {
		return nil, errors.New("merge region: no column mapping")
	}
	families := spec.Mapping.Families()
	if fam < 0 || fam >= len(families) || region < 0 || region > len(splits) {
		return nil, fmt.Errorf("merge region: region %d family %d out of range", region, fam)
	}
	pool, err := NewSortPool(spec, spec.TempDir)
	if err != nil {
		return nil, fmt.Errorf("merge region: %w", err)
	}
	defer pool.Close()
	srcs, held, err := open(pool)
	if err != nil {
		return nil, err
	}
	finish := func(ctx context.Context) (*sorter.Iterator, error) {
		return pool.MergeSorted(ctx, fmt.Sprintf("region %d family %s", region, families[fam]),
			sorter.SorterOptions{Combine: spec.Combine, CombineErr: spec.CombineErr, FoldSeqLast: spec.FoldSeqLast}, srcs, held)
	}
	return writeRegion(ctx, spec, sink, splits, region, fam, pool, start, len(srcs) > 0, finish)
}
