package sorter

import (
	"context"
	"errors"

	"github.com/hfload/hfload/internal/cellrec"
)

// merger merges sources of non-overlapping views into one, with a binary heap of the sources' current
// views ordered by first cell. Each step hands on the longest stretch of the top view that sorts before
// the smallest other view: the whole view when the runner-up is in another row or family (one comparison,
// mostly of cached row prefixes), cell by cell only where views of one row and family interleave.
type merger struct {
	d       *cellrec.Dict
	h       heap[input] // ordered by the inputs' current views
	readers []*runReader
	started bool
	emitted int  // cells bytes of h[0]'s view handed out by the last next
	done    bool // ... and they were all of its view
	out     view
}

// input is a source of a merger and its current view (cur() after its last next): the heap compares
// views without calling the sources.
type input struct {
	v *view
	s source
}

// newMergerOf returns a merger of no sources yet.
func newMergerOf(d *cellrec.Dict) *merger {
	return &merger{d: d, h: heap[input]{less: func(a, b input) bool { return cmpViews(a.v, b.v) < 0 }}}
}

// add adds a source (before the first next).
func (m *merger) add(s source) { m.h.s = append(m.h.s, input{s: s}) }

// newMerger opens the runs (their read buffers must already be reserved) plus an optional extra source.
func newMerger(ctx context.Context, d *cellrec.Dict, runs []*runInfo, extra source) (*merger, error) {
	m := newMergerOf(d)
	for _, r := range runs {
		rr, err := openRun(ctx, d, r)
		if err != nil {
			m.close()
			return nil, err
		}
		m.readers = append(m.readers, rr)
		m.add(rr)
	}
	if extra != nil {
		m.add(extra)
	}
	return m, nil
}

func (m *merger) next() (bool, error) {
	if !m.started {
		m.started = true
		live := m.h.s[:0]
		for _, in := range m.h.s {
			ok, err := in.s.next()
			if err != nil {
				return false, err
			}
			if ok {
				live = append(live, input{v: in.s.cur(), s: in.s})
			}
		}
		clear(m.h.s[len(live):])
		m.h.s = live
		m.h.init()
	} else if m.emitted > 0 {
		if m.done {
			top := &m.h.s[0]
			ok, err := top.s.next()
			if err != nil {
				return false, err
			}
			if ok {
				top.v = top.s.cur()
			} else {
				m.h.pop()
			}
		} else {
			m.h.s[0].v.drop(m.d, m.emitted)
		}
		m.emitted = 0
		if len(m.h.s) > 1 {
			m.h.down(0)
		}
	}
	if len(m.h.s) == 0 {
		return false, nil
	}
	top := m.h.s[0].v
	var bound *view
	if k := m.h.second(); k > 0 {
		bound = m.h.s[k].v
	}
	n := below(m.d, top, bound)
	m.out = *top
	m.out.cells = top.cells[:n]
	m.emitted = n
	m.done = n == len(top.cells)
	return true, nil
}

func (m *merger) cur() *view { return &m.out }

// close closes every run reader (removing the run files unless they are kept for other ranges).
func (m *merger) close() error {
	var errs []error
	for _, r := range m.readers {
		if err := r.close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.readers, m.h.s = nil, nil
	return errors.Join(errs...)
}

// combineSource folds cells with equal keys of a source of non-overlapping views. Within a view cells
// are distinct, so equal keys can only meet across views: the last cell of each view is held back (in
// scratch, as a one-cell record) until the next view shows whether it continues the group.
type combineSource struct {
	p       *Pool
	d       *cellrec.Dict
	src     source
	fn      CombineFunc
	seqLast bool
	scratch *[2][]byte // [0]: the held cell as a record; [1]: the next one, built while folding
	base    int        // reserved scratch capacity per buffer
	charged int64      // capacity beyond base, charged to the pool
	pend    *view      // the source's current view, from its first cell not yet handed on
	held    bool
	hv      view // the held cell, in scratch[0]
	out     view
	value   []byte // fold result scratch
	done    bool
}

func newCombineSource(p *Pool, d *cellrec.Dict, src source, opts SorterOptions, scratch *[2][]byte) *combineSource {
	base := p.scratchSize()
	for i := range scratch {
		if scratch[i] == nil {
			scratch[i] = make([]byte, 0, base)
		}
	}
	return &combineSource{p: p, d: d, src: src, fn: opts.Combine, seqLast: opts.FoldSeqLast, scratch: scratch, base: base}
}

// account charges growth of the scratch buffers beyond their reserved size.
func (c *combineSource) account() {
	var over int64
	for _, b := range c.scratch {
		if cap(b) > c.base {
			over += int64(cap(b) - c.base)
		}
	}
	if cap(c.value) > c.base {
		over += int64(cap(c.value) - c.base)
	}
	if over > c.charged {
		c.p.charge(over - c.charged)
		c.charged = over
	}
}

// hold copies a cell, with its tags when the dictionary's cells carry tags, into scratch[slot] as a
// one-cell record and makes it the held cell.
func (c *combineSource) hold(slot int, h *cellrec.Header, q, value, tags []byte, seq uint64) {
	rec := cellrec.AppendHeader(c.scratch[slot][:0], h.Row, h.Family, h.TS, h.Type)
	rec = c.d.AppendQualifierCellTags(rec, q, value, tags)
	c.scratch[slot] = rec
	hh, cells, _ := cellrec.ParseHeader(rec)
	c.hv.set(c.d, &hh, cells, seq)
	c.held = true
}

func (c *combineSource) next() (bool, error) {
	for {
		if c.pend == nil && !c.done {
			ok, err := c.src.next()
			if err != nil {
				return false, err
			}
			if ok {
				c.pend = c.src.cur()
			} else {
				c.done = true
			}
		}
		if c.pend == nil { // the source is exhausted
			if c.held {
				c.held = false
				c.out = c.hv
				c.account()
				return true, nil
			}
			return false, nil
		}
		p := c.pend
		if c.held {
			if cellrec.Compare(&c.hv.h, c.hv.q, &p.h, p.q) != 0 {
				// The group is complete: hand it on; p is looked at again next time.
				c.held = false
				c.out = c.hv
				c.account()
				return true, nil
			}
			c.value = c.fn(c.value[:0], &c.hv.h, c.hv.q, c.hv.v, p.v)
			// The folded cell takes the seq, and the tags, of its first input (of its last with seqLast).
			seq, tags := c.hv.seq, c.tags(&c.hv)
			if c.seqLast {
				seq, tags = p.seq, c.tags(p)
			}
			// Build the folded cell in the other buffer (the held one's bytes are the fold's input).
			h, q := c.hv.h, c.hv.q
			c.scratch[0], c.scratch[1] = c.scratch[1], c.scratch[0]
			c.hold(0, &h, q, c.value, tags, seq)
			c.advancePend()
			continue
		}
		// Nothing held: hand on all but the last cell of p and hold that one.
		_, lastOff := c.d.Last(p.cells)
		if lastOff > 0 {
			c.out = *p
			c.out.cells = p.cells[:lastOff]
			p.drop(c.d, lastOff)
			return true, nil
		}
		c.hold(0, &p.h, p.q, p.v, c.tags(p), p.seq)
		c.advancePend()
	}
}

// tags returns the tags of the first cell of v (nil when the dictionary's cells carry none).
func (c *combineSource) tags(v *view) []byte {
	_, _, t, _ := c.d.NextTags(v.cells)
	return t
}

// advancePend drops the first cell of the pending view, or the view when that was its last cell.
func (c *combineSource) advancePend() {
	_, _, rest := c.d.Next(c.pend.cells)
	if len(rest) == 0 {
		c.pend = nil
		return
	}
	c.pend.drop(c.d, len(c.pend.cells)-len(rest))
}

func (c *combineSource) cur() *view { return &c.out }

// close returns the charged overflow and shrinks oversized scratch buffers back to their reserved size.
func (c *combineSource) close() {
	if c.charged > 0 {
		c.p.release(c.charged)
		c.charged = 0
		for i := range c.scratch {
			if cap(c.scratch[i]) > c.base {
				c.scratch[i] = make([]byte, 0, c.base)
			}
		}
		c.value = nil
	}
}
