package beamtask

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/engine"
	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// mapCombine reports whether the map tasks fold the cells of equal keys of their unit before the
// shuffle (a MapReduce combiner): the job aggregates (`aggregate:`), every rule gives the same bytes
// however the cells of a key are folded in parts (jobs.RunSpec.CombineAssociative: not a sum of
// doubles), and the run did not turn it off (Task.NoMapCombine). A unit's rows are consecutive in the
// input (its records' seqs are one interval), so its folded cell stands for a consecutive part of the
// key's cells and carries the seq of its first (FoldSeqLast: last) input: the reducers, which fold
// again, order and fold these parts as they would have the cells.
func (t *Task) mapCombine(spec *jobs.RunSpec) bool {
	return spec.Combine != nil && spec.CombineAssociative && !t.NoMapCombine
}

// mapSorters sort one unit's records per target (region·families + family) in one pool within the
// job's sort budget, spilling to a local directory, folding equal keys with the job's aggregate when
// the run combines at the maps (mapCombine).
type mapSorters struct {
	unit    int
	pool    *sorter.Pool
	dir     string
	opts    sorter.SorterOptions
	combine bool
	dict    *cellrec.Dict

	mu      sync.Mutex
	sorters []*sorter.Sorter
}

func newMapSorters(t *Task, spec *jobs.RunSpec, unit, targets int) (*mapSorters, error) {
	dir, err := os.MkdirTemp(t.TmpDir, "hfload-map-")
	if err != nil {
		return nil, fmt.Errorf("%w: spill directory: %w", jobs.ErrIO, err)
	}
	pool, err := engine.NewSortPool(&spec.Spec, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("beam: map: %w", err)
	}
	ms := &mapSorters{unit: unit, pool: pool, dir: dir, sorters: make([]*sorter.Sorter, targets), dict: spec.Mapping.Dict()}
	if t.mapCombine(spec) {
		ms.combine = true
		ms.opts = sorter.SorterOptions{Combine: spec.Combine, CombineErr: spec.CombineErr, FoldSeqLast: spec.FoldSeqLast}
	}
	return ms, nil
}

// of returns the sorter of target, made on first use (the mapping workers call it concurrently).
func (ms *mapSorters) of(target int) *sorter.Sorter {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.sorters[target] == nil {
		ms.sorters[target] = ms.pool.NewSorter(fmt.Sprintf("unit %d target %d", ms.unit, target), ms.opts)
	}
	return ms.sorters[target]
}

// sink routes each batch's records to their targets' sorters: grouped per target into slices reused
// from batch to batch (a pool: the mapping workers call sink concurrently), then added to the sorters
// (which copy them).
func (ms *mapSorters) sink(spec *jobs.RunSpec, splits partition.Splits) func(cb *pipeline.CellBatch) error {
	targets := len(ms.sorters)
	route := router(spec, splits)
	bp := sync.Pool{New: func() any { return &batchRecords{recs: make([][]sorter.Record, targets)} }}
	return func(cb *pipeline.CellBatch) error {
		br := bp.Get().(*batchRecords)
		defer bp.Put(br)
		defer br.reset()
		for i := range cb.Records {
			target := route(cb, i)
			if len(br.recs[target]) == 0 {
				br.used = append(br.used, target)
			}
			br.recs[target] = append(br.recs[target], sorter.Record{Rec: cb.Record(i), Seq: cb.Records[i].Seq})
		}
		for _, target := range br.used {
			if err := ms.of(target).AddRecords(br.recs[target]); err != nil {
				return err
			}
		}
		return nil
	}
}

// each finishes the sorters in target order and calls fn with every record of each, in (key, seq)
// order (rec is reused: fn copies what it keeps), then done with the target. Without combining, the
// records are the sorter's views, each with its seq. Combining, every key of the unit is distinct and
// stands for a part of the key's cells whose seqs lie in the unit's interval, which no other unit's
// overlaps: the views of one (row, family, timestamp, type) are joined into one record (the sorter cuts
// a folded cell off into a view of its own), with the first one's seq, which orders it against other
// units' parts of the same keys as any of its cells' seqs would. It returns how many cells the
// records held (counted only when combining).
func (ms *mapSorters) each(ctx context.Context, fn func(target int, rec []byte, seq uint64, row []byte) error,
	done func(target int) error) (cells int64, err error) {
	var rec, view []byte // the record being joined (combining); a view as a record
	var seq uint64
	flush := func(target int) error {
		if len(rec) == 0 {
			return nil
		}
		err := fn(target, rec, seq, cellrec.Row(rec))
		rec = rec[:0]
		return err
	}
	for target, s := range ms.sorters {
		if s == nil {
			continue
		}
		ms.sorters[target] = nil
		err := func() error {
			defer s.Close()
			it, err := s.Finish(ctx)
			if err != nil {
				return err
			}
			defer it.Close()
			for it.Next() {
				if !ms.combine {
					view = it.AppendRecord(view[:0])
					if err := fn(target, view, it.Seq(), it.Header().Row); err != nil {
						return err
					}
					continue
				}
				cells += int64(ms.dict.Cells(it.Cells()))
				if len(rec) > 0 && sameHeader(rec, it.Header()) {
					rec = append(rec, it.Cells()...)
					continue
				}
				if err := flush(target); err != nil {
					return err
				}
				rec, seq = it.AppendRecord(rec[:0]), it.Seq()
			}
			if err := it.Err(); err != nil {
				return err
			}
			return flush(target)
		}()
		rec = rec[:0]
		if err != nil {
			return cells, fmt.Errorf("beam: sorting unit %d target %d: %w", ms.unit, target, err)
		}
		if err := done(target); err != nil {
			return cells, err
		}
	}
	return cells, nil
}

// sameHeader reports whether record rec's header is h.
func sameHeader(rec []byte, h *cellrec.Header) bool {
	rh, _, err := cellrec.ParseHeader(rec)
	return err == nil && rh.TS == h.TS && rh.Type == h.Type && bytes.Equal(rh.Row, h.Row) && bytes.Equal(rh.Family, h.Family)
}

// close releases the sorters not yet finished, the pool and the spill directory.
func (ms *mapSorters) close() {
	for _, s := range ms.sorters {
		if s != nil {
			s.Close()
		}
	}
	ms.pool.Close()
	os.RemoveAll(ms.dir)
}

// combined is how many cells the unit's combiner folded into others: the cells mapped less those left
// in its sorted records (0 when the maps do not combine).
func (ms *mapSorters) combined(counts pipeline.Counts, cellsOut int64) (int64, error) {
	if !ms.combine {
		return 0, nil
	}
	n := counts.CellsEmitted - cellsOut
	if n < 0 {
		return 0, fmt.Errorf("beam: unit %d: %d cells mapped but %d after combining", ms.unit, counts.CellsEmitted, cellsOut)
	}
	return n, nil
}

// batchRecords are one batch's records grouped per target (used: the targets with records, in order of
// first appearance).
type batchRecords struct {
	recs [][]sorter.Record
	used []int
}

func (b *batchRecords) reset() {
	for _, t := range b.used {
		clear(b.recs[t])
		b.recs[t] = b.recs[t][:0]
	}
	b.used = b.used[:0]
}
