package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// Load reads the inputs, maps rows to cells, routes them to regions, sorts each region's cells within
// the memory budget and writes one or more HFiles per (region, family) to sink, as <family>/<name>.
// It commits nothing: the caller decides what becomes visible, and when (see jobs.Staging).
func Load(ctx context.Context, spec *Spec, sink Sink) (*Result, error) {
	start := time.Now()
	if spec.Mapping == nil {
		return nil, errors.New("run: no column mapping")
	}
	families := spec.Mapping.Families()
	if len(families) == 0 {
		return nil, errors.New("run: the mapping has no column family")
	}
	if sink == nil {
		return nil, errors.New("run: no output sink")
	}
	if m := spec.Verify; m == VerifyBlocks || m == VerifyFull {
		if _, ok := sink.(Reopener); !ok {
			return nil, fmt.Errorf("run: --verify %s re-reads every file, and this output cannot be read back", m)
		}
	}
	workers := spec.workers()
	ranged := spec.ranged()
	dict := spec.Mapping.Dict()
	var rows *rowRecords
	if !spec.familyRecords && useRowRecords(len(families), workers, sink, spec.sortBudget()) {
		var err error
		if rows, err = newRowRecords(spec.Mapping, families); err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		dict = rows.rd.Dict()
	}
	fit := &inputFit{total: inputBytes(spec.Inputs)}
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: spec.sortBudget(), TempDir: spec.TempDir, Parallelism: workers,
		Dict: dict, WillFit: fit.willFit, InputScale: fit.scale})
	if err != nil {
		return nil, fmt.Errorf("run: sorter: %w", err)
	}
	defer pool.Close()

	// Phase 1: read, map, route, sort (spilling as the budget requires).
	rt := newRouter(spec, pool, families, rows)
	defer rt.close()
	fit.kv, fit.leave, fit.room = rt.totalBytes, spec.outputLeave(pool.Budget(), sink, len(families), rows != nil), pool.Reservable()
	inputs := spec.Inputs
	popts := spec.Pipeline
	if rows != nil {
		popts.Rows = rows.rd
	}
	var report func(rows, bytes int64)
	if spec.Progress != nil {
		popts.Rejected = new(atomic.Int64)
		report = readProgress(spec, popts.Rejected)
	}
	if report != nil || fit.total > 0 {
		inputs = progressInputs(inputs, fit.counting(report))
	}
	counts, err := pipeline.Run(ctx, inputs, spec.Mapping, popts, rt.add)
	res := &Result{Counts: counts}
	if err != nil {
		return res, err
	}
	res.ReadTime = time.Since(start)
	var seed []byte
	if spec.NameSeed != nil {
		if seed, err = spec.NameSeed(); err != nil {
			return res, err
		}
	}

	// Phase 2: merge each stream and write HFiles.
	out := newOutputWriter(spec, sink, families, rt.totalBytes(), pool)
	out.nameSeed = seed
	out.rows = rows
	splits := spec.Splits
	if ranged {
		splitsOf := func() partition.Splits { return spec.Splits }
		if spec.SplitSample > 0 {
			// The sampler works out the split points while the records are sorted (writeRanges).
			computed := make(chan partition.Splits, 1)
			go func() { computed <- rt.sampler.Splits(spec.SplitSample) }()
			splitsOf = sync.OnceValue(func() partition.Splits { return <-computed })
		}
		// Twice as many range merges as workers: a merge waits for its run reads and output writes, and
		// the read buffers of four merges fit the budget the sorters no longer need for arenas.
		err = out.writeRanges(ctx, rt.sorters, splitsOf, 2*workers) // as outputLeave plans
		splits = splitsOf()
	} else {
		err = out.writeRegions(ctx, rt.sorters, rt.regions, workers)
	}
	out.closeDirs()
	waitStart := time.Now()
	if verr := out.waitVerified(); err == nil {
		err = verr
	}
	res.VerifyWait = time.Since(waitStart)
	out.result(res, splits, pool)
	res.Elapsed = time.Since(start)
	res.WriteTime = res.Elapsed - res.ReadTime
	if err != nil {
		return res, err
	}
	return res, DuplicatesErr(spec, res.Duplicates, res.DupExamples)
}

// result fills res with what the output writer and the pool counted.
func (o *outputWriter) result(res *Result, splits partition.Splits, pool *sorter.Pool) {
	res.Splits = splits
	res.Files = o.files
	for _, f := range o.files {
		res.RowsWritten += f.Rows
	}
	res.Cells = o.cells.Load()
	res.Duplicates = o.dups.Load()
	res.sharedBloomChunks = o.sharedBloom.Load()
	res.DupExamples = o.dupExamples
	res.Spills = pool.Spills()
	res.SpillBytes = pool.RunBytes()
	res.MergePasses = pool.MergePasses()
	res.PeakMemory = pool.PeakBytes()
}

// ranged reports whether the load sorts each family once and cuts the regions out after the sort
// (writeRanges) rather than sorting every region on its own.
func (spec *Spec) ranged() bool {
	return spec.SplitSample > 0 || len(spec.Splits) >= rangedSplits
}

// regionCount is the number of regions the load writes (at most, with computed splits).
func (spec *Spec) regionCount() int {
	if spec.SplitSample > 0 {
		return spec.SplitSample
	}
	return len(spec.Splits) + 1
}

// outputLeave returns the memory the write phase reserves for its output buffers, as a function of the
// KeyValue bytes to write (planOutput, as writeRanges and writeRegions plan them), for inputFit.
func (spec *Spec) outputLeave(budget int64, sink Sink, families int, rows bool) func(kv int64) int64 {
	workers, files := spec.workers(), 1
	if spec.ranged() {
		workers *= 2
	}
	if rows {
		files = families
	}
	regions := spec.regionCount()
	return func(kv int64) int64 {
		return planOutput(budget, sink, files, workers, kv/int64(max(1, regions*families))).memory(files)
	}
}

// sortBudget is the sorter's share of the memory budget.
func (spec *Spec) sortBudget() int64 {
	memory := spec.Memory
	if memory <= 0 {
		memory = DefaultMemory
	}
	budget := memory - memoryReserve
	if budget < 16<<20 {
		budget = min(memory, 16<<20)
	}
	return budget
}

// workers is the number of mapping workers, and of files written at once.
func (spec *Spec) workers() int {
	if spec.Pipeline.Workers > 0 {
		return spec.Pipeline.Workers
	}
	return runtime.GOMAXPROCS(0)
}
