package engine

import (
	"strings"
	"sync/atomic"

	"github.com/hfload/hfload/pipeline"
)

// inputFit projects, while phase 1 reads, whether the sorted records of the whole input will fit the
// sort budget beside the write phase's output buffers (sorter.PoolOptions.WillFit): a sorter that
// reaches half the arena memory then keeps its records instead of spilling them early, when the share
// of the input read so far says the rest fits too. One sorter holding every region's records (many or
// computed splits) would otherwise write most of an input a little larger than half the budget to
// disk and read it back, where one sorter per region of the same records spills nothing.
type inputFit struct {
	total int64        // bytes of the inputs; 0 when the bytes read cannot be projected from
	read  atomic.Int64 // input bytes read so far
	kv    func() int64 // KeyValue bytes routed so far
	// leave is the memory the write phase reserves beside the sorted records for that many KeyValue
	// bytes (its output buffers), room the reservable budget.
	leave func(kv int64) int64
	room  int64
}

// fitMargin is the share of the projection added for what was read but not yet sorted (batches on
// their way) and for an index that grows once more: the projected arena times (1 + 1/fitMargin).
const fitMargin = 8

// inputBytes is the bytes of the inputs that projecting by bytes read works for, or 0: every input's
// size must be known and its bytes read counted as they are on disk (not decompressed text).
func inputBytes(inputs []pipeline.Input) int64 {
	var total int64
	for _, in := range inputs {
		lower := strings.ToLower(in.Path)
		if in.Size <= 0 || strings.HasSuffix(lower, ".gz") || strings.HasSuffix(lower, ".zst") {
			return 0
		}
		total += in.Size
	}
	return total
}

// counting returns a read reporter that counts bytes read and passes them on to report (nil: none).
func (f *inputFit) counting(report func(rows, bytes int64)) func(rows, bytes int64) {
	return func(rows, bytes int64) {
		f.read.Add(bytes)
		if report != nil {
			report(rows, bytes)
		}
	}
}

// scale is the inputs' bytes over the bytes read so far, the factor that projects what was read to the
// whole input (sorter.PoolOptions.InputScale), or 0 when that cannot be projected.
func (f *inputFit) scale() float64 {
	done := min(f.read.Load(), f.total)
	if f.total <= 0 || done <= 0 {
		return 0
	}
	return float64(f.total) / float64(done)
}

// willFit reports whether the arena bytes held now, and the KeyValue bytes routed, scaled by the share
// of the input read, fit the budget with the write phase's buffers.
func (f *inputFit) willFit(arena int64) bool {
	done := min(f.read.Load(), f.total)
	if f.total <= 0 || done <= 0 || f.kv == nil || f.leave == nil {
		return false
	}
	scale := float64(f.total) / float64(done)
	projected := float64(arena) * scale * (1 + 1.0/fitMargin)
	kv := int64(float64(f.kv()) * scale)
	return projected+float64(f.leave(kv)) <= float64(f.room)
}
