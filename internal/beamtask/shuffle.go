package beamtask

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// How map tasks hand their records to the reduce tasks (Task.Shuffle).
const (
	// ShuffleFiles: run files on the shared storage, only their names through the runner's shuffle
	// (MapReduce's map-output design; the default).
	ShuffleFiles = "files"
	// ShuffleBeam: the records themselves through the runner's GroupByKey on (region, family), as
	// blocks of framed records (one per mapped batch and target), streamed into the reducer's sorter.
	ShuffleBeam = "beam"
)

// shuffleBeam reports whether the records go through the runner's shuffle.
func (t *Task) shuffleBeam() bool { return t.Shuffle == ShuffleBeam }

// ParseShuffle checks a --shuffle value ("" is ShuffleFiles).
func ParseShuffle(s string) (string, error) {
	switch s {
	case "", ShuffleFiles:
		return ShuffleFiles, nil
	case ShuffleBeam:
		return ShuffleBeam, nil
	}
	return "", fmt.Errorf("%w: --shuffle %q: want files or beam", jobs.ErrConfig, s)
}

// framedBlock is one batch's records of one target, framed as in a run file (appendFrame).
type framedBlock struct {
	target int
	frames []byte
	n      int64
}

// MapRecords is Map for the record shuffle (ShuffleBeam): the unit's records, routed to their targets,
// are handed to emit as blocks of framed records (one per mapped batch and target, a copy emit may
// keep) instead of being written to run files. emit is called from the caller's goroutine only (a
// runner's emitter is not safe for concurrent use). The unit's summary counts each target's records
// and bytes (RunRef without a path) for Collect to reconcile with the reducers.
func MapRecords(ctx context.Context, t *Task, spec *jobs.RunSpec, unit int, splits partition.Splits, emit func(target int, block []byte)) (*InputSum, error) {
	st, err := t.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	if t.mapCombine(spec) {
		return mapRecordsCombined(ctx, t, spec, st, unit, splits, emit)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	blocks := make(chan framedBlock, 8)
	out := func(target int, frames []byte, n int64) error {
		select {
		case blocks <- framedBlock{target: target, frames: append([]byte(nil), frames...), n: n}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var sum *unitSummary
	var is *InputSum
	var merr error
	go func() {
		defer close(blocks)
		sum, is, merr = mapUnit(ctx, t, spec, st, attemptID(), unit, framingSink(spec, splits, unit, out))
	}()
	targets := (len(splits) + 1) * len(spec.Mapping.Families())
	records, bytes := make([]int64, targets), make([]int64, targets)
	for b := range blocks {
		emit(b.target, b.frames)
		records[b.target] += b.n
		bytes[b.target] += int64(len(b.frames))
	}
	if merr != nil {
		return nil, merr
	}
	for target, n := range records {
		if n > 0 {
			sum.Runs = append(sum.Runs, RunRef{Target: target, Records: n, Bytes: bytes[target]})
		}
	}
	if err := sum.put(ctx, st); err != nil {
		return nil, err
	}
	return is, nil
}

// combinedBlockSize is about how many bytes of framed records a block of a combining map holds.
const combinedBlockSize = 256 << 10

// mapRecordsCombined is MapRecords for a map that combines (Task.mapCombine): the unit's records are
// sorted and folded per target first (as Map does for run files), then emitted target by target in
// blocks of about combinedBlockSize bytes, in order.
func mapRecordsCombined(ctx context.Context, t *Task, spec *jobs.RunSpec, st *stores, unit int, splits partition.Splits,
	emit func(target int, block []byte)) (*InputSum, error) {
	ms, err := newMapSorters(t, spec, unit, (len(splits)+1)*len(spec.Mapping.Families()))
	if err != nil {
		return nil, err
	}
	defer ms.close()
	sum, is, err := mapUnit(ctx, t, spec, st, attemptID(), unit, ms.sink(spec, splits))
	if err != nil {
		return nil, err
	}
	head := blockHeader(unit)
	var block []byte
	var ref RunRef
	flush := func(target int) {
		if len(block) > len(head) {
			emit(target, block)
			ref.Bytes += int64(len(block))
		}
		block = nil
	}
	add := func(target int, rec []byte, seq uint64, _ []byte) error {
		if block == nil {
			block = append(make([]byte, 0, combinedBlockSize+len(rec)+2*binary.MaxVarintLen64), head...)
		}
		block = appendFrame(block, rec, seq)
		ref.Records++
		if len(block) >= combinedBlockSize {
			flush(target)
		}
		return nil
	}
	done := func(target int) error {
		flush(target)
		if ref.Records > 0 {
			ref.Target = target
			sum.Runs = append(sum.Runs, ref)
		}
		ref = RunRef{}
		return nil
	}
	cells, err := ms.each(ctx, add, done)
	if err != nil {
		return nil, err
	}
	if sum.Combined, err = ms.combined(sum.Counts, cells); err != nil {
		return nil, err
	}
	sum.Spills, sum.SpillBytes = ms.pool.Spills(), ms.pool.RunBytes()
	if err := sum.put(ctx, st); err != nil {
		return nil, err
	}
	return is, nil
}

// framingSink frames each batch's records per target, after a header naming the unit (blockHeader),
// into buffers reused from batch to batch (a pool: the mapping workers call it concurrently), and
// hands them to out target by target.
func framingSink(spec *jobs.RunSpec, splits partition.Splits, unit int, out func(target int, frames []byte, n int64) error) func(*pipeline.CellBatch) error {
	targets := (len(splits) + 1) * len(spec.Mapping.Families())
	route := router(spec, splits)
	head := blockHeader(unit)
	pool := sync.Pool{New: func() any { return &batchFrames{frames: make([][]byte, targets), counts: make([]int64, targets)} }}
	return func(cb *pipeline.CellBatch) error {
		bf := pool.Get().(*batchFrames)
		defer pool.Put(bf)
		defer bf.reset()
		for i := range cb.Records {
			target := route(cb, i)
			if bf.counts[target] == 0 {
				bf.used = append(bf.used, target)
				bf.frames[target] = append(bf.frames[target], head...)
			}
			bf.frames[target] = appendFrame(bf.frames[target], cb.Record(i), cb.Records[i].Seq)
			bf.counts[target]++
		}
		for _, target := range bf.used {
			if err := out(target, bf.frames[target], bf.counts[target]); err != nil {
				return err
			}
		}
		return nil
	}
}

// blockHeader starts every record block: uvarint(unit), so that the reducer gives the records of a
// CSV chunk the row ordinals of the whole file (the rows of the chunks before it, from the maps' spans).
func blockHeader(unit int) []byte { return binary.AppendUvarint(nil, uint64(unit)) }

// batchFrames are one batch's records framed per target (used: the targets with records, in order of
// first appearance).
type batchFrames struct {
	frames [][]byte
	counts []int64
	used   []int
}

func (b *batchFrames) reset() {
	for _, t := range b.used {
		b.frames[t], b.counts[t] = b.frames[t][:0], 0
	}
	b.used = b.used[:0]
}

// ReduceRecords is Reduce for the record shuffle: the blocks MapRecords emitted for one target, in any
// order (the sorter orders equal keys by their sequence numbers), are streamed into the sorter and the
// region's HFiles written as by `hfload run`. sums are every map task's InputSum (the name seed, and
// the spans of CSV chunks: a chunk's records get the row ordinals of the whole file, as in Reduce). A
// target is never cut into sub-ranges here (its records reach one task; the reduce size does not
// apply); Collect still refuses more than 32 files.
func ReduceRecords(ctx context.Context, t *Task, spec *jobs.RunSpec, splits partition.Splits, target int, blocks func(*[]byte) bool, sums []InputSum) error {
	seed, err := t.NameSeed(sums)
	if err != nil {
		return err
	}
	offs, err := t.chunkOffsets(spec, spans(sums))
	if err != nil {
		return err
	}
	if max := spec.Pipeline.MaxRejects; max >= 0 && chunkRejects(sums) > max {
		return nil // as in Reduce: the run fails in Collect, with hfload run's message
	}
	st, err := t.open(ctx, spec)
	if err != nil {
		return err
	}
	plan := targetPlan{Target: target}
	var records int64
	feed := func(add func(rec []byte, seq uint64) error) error {
		var b []byte
		for blocks(&b) {
			plan.Bytes += int64(len(b))
			n, err := decodeBlock(b, offs, add)
			records += n
			if err != nil {
				return fmt.Errorf("region·family %d: %w", target, err)
			}
		}
		return nil
	}
	if err := reduce(ctx, t, st, spec, splits, SubTask{Target: target, Subs: 1}, seed, feed, &records); err != nil {
		return err
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return fmt.Errorf("beam: %w", err)
	}
	return st.put(ctx, planName(target), b)
}

// decodeBlock calls add for every record of the block b (blockHeader, then records framed by
// appendFrame), its seq shifted by the rows before its unit (offs: chunkOffsets), and returns how
// many there were.
func decodeBlock(b []byte, offs map[int]chunkOffset, add func(rec []byte, seq uint64) error) (int64, error) {
	unit, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, fmt.Errorf("corrupt record block (no header)")
	}
	b = b[k:]
	shift := uint64(offs[int(unit)].Rows)
	var n int64
	for len(b) > 0 {
		l, k := binary.Uvarint(b)
		if k <= 0 || l == 0 || l-1 > uint64(len(b)-k) {
			return n, fmt.Errorf("corrupt record block (record %d)", n)
		}
		rec := b[k : k+int(l-1)]
		b = b[k+int(l-1):]
		seq, k := binary.Uvarint(b)
		if k <= 0 {
			return n, fmt.Errorf("corrupt record block (record %d)", n)
		}
		b = b[k:]
		if err := add(rec, seq+shift); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
