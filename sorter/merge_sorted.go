package sorter

import (
	"context"
	"fmt"

	"github.com/hfload/hfload/internal/cellrec"
)

// RecordSource is a stream of records already in the sorter's order, such as the views of an Iterator
// written out as records (Iterator.AppendRecord): every cell of a record sorts after every cell of the
// records before it in the stream (by key, then seq, then value). A distributed map task writes such
// streams (sorted runs); its reduce task merges them with MergeSorted instead of sorting again.
type RecordSource interface {
	// Next returns the next record and its seq (rec is valid until the next call), ok false at the end.
	Next() (rec []byte, seq uint64, ok bool, err error)
}

// MergeSorted returns an Iterator over the k-way merge of srcs, folded with opts.Combine when set:
// the same views, in the same order, a Sorter given every record of srcs would give. The sources'
// own memory (their read buffers, held bytes) is accounted against the pool until the Iterator is
// closed. Every record is validated (cellrec.Dict.Validate) and each source is checked to be in
// order: a record that does not sort after the one before it in its source is an error, not a
// silently wrong output. The Iterator must be closed; it does not close the sources.
func (p *Pool) MergeSorted(ctx context.Context, name string, opts SorterOptions, srcs []RecordSource, held int64) (*Iterator, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s := p.NewSorter(name, opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	s.state = stateFinished
	s.spillable.Store(0)
	reserved := held
	if opts.Combine != nil {
		reserved += 2 * int64(p.scratchSize())
	}
	if err := p.reserve(ctx, reserved, nil, true); err != nil {
		s.cleanupLocked()
		return nil, s.errorf("merge: %w", err)
	}
	m := newMergerOf(p.dict)
	for i, src := range srcs {
		m.add(&sortedSource{d: p.dict, src: src, s: s, n: i})
	}
	it := &Iterator{s: s, ctx: ctx, reserved: reserved, m: m, src: m}
	if opts.Combine != nil {
		it.cs = newCombineSource(p, p.dict, m, opts, &it.scratch)
		it.src = it.cs
	}
	return it, nil
}

// AppendRecord appends the current view as a record (internal/cellrec: its header, then its cells) to
// dst: what a map task writes into a sorted run for MergeSorted to read back.
func (it *Iterator) AppendRecord(dst []byte) []byte {
	h := &it.cur.h
	dst = cellrec.AppendHeader(dst, h.Row, h.Family, h.TS, h.Type)
	return append(dst, it.cur.cells...)
}

// sortedSource turns a RecordSource into a source of views, checking each record and the order.
type sortedSource struct {
	d    *cellrec.Dict
	src  RecordSource
	s    *Sorter
	n    int // the source's index, for errors
	v    view
	prev []byte // the previous record (a copy), to check the order
	pv   view
	seen bool
}

func (r *sortedSource) next() (bool, error) {
	rec, seq, ok, err := r.src.Next()
	if err != nil || !ok {
		return false, err
	}
	if _, err := r.d.Validate(rec); err != nil {
		return false, fmt.Errorf("sorted source %d: invalid record of %d bytes: %w", r.n, len(rec), err)
	}
	h, cells, err := cellrec.ParseHeader(rec)
	if err != nil || len(cells) == 0 {
		return false, fmt.Errorf("sorted source %d: invalid record of %d bytes", r.n, len(rec))
	}
	r.v.set(r.d, &h, cells, seq)
	if r.seen {
		// The previous record's last cell must sort before this record's first.
		_, off := r.d.Last(r.pv.cells)
		lq, lv, _ := r.d.Next(r.pv.cells[off:])
		if cmpCells(&r.pv.h, lq, lv, r.pv.seq, &r.v.h, r.v.q, r.v.v, r.v.seq) >= 0 {
			return false, fmt.Errorf("sorted source %d: records out of order at row %q", r.n, h.Row)
		}
	}
	r.prev = append(r.prev[:0], rec...)
	ph, pcells, _ := cellrec.ParseHeader(r.prev)
	r.pv.set(r.d, &ph, pcells, seq)
	r.seen = true
	return true, nil
}

func (r *sortedSource) cur() *view { return &r.v }
