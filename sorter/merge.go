package sorter

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/hfload/hfload/hfilewriter"
)

// source is a stream of records in (CompareKeys, seq) order. kv is valid until the next call of next.
type source interface {
	next() (bool, error)
	kv() []byte
	seq() uint64
}

// merger merges sources with a binary heap ordered by (CompareKeys, seq).
type merger struct {
	h       []*head
	readers []*runReader
	started bool
	advance bool // the top's current record was handed out; move it on the next call
}

// head caches a source's current record, seq and row prefix so that heap comparisons make no interface
// calls and most of them end on the prefix.
type head struct {
	src    source
	kv     []byte
	seq    uint64
	prefix uint64
}

func (h *head) next() (bool, error) {
	ok, err := h.src.next()
	if !ok || err != nil {
		h.kv = nil
		return false, err
	}
	h.kv, h.seq = h.src.kv(), h.src.seq()
	h.prefix = rowPrefix(h.kv)
	return true, nil
}

// newMerger opens the runs (their read buffers must already be reserved) plus an optional extra source.
func newMerger(ctx context.Context, runs []*runInfo, extra source) (*merger, error) {
	m := &merger{}
	for _, r := range runs {
		rr, err := openRun(ctx, r)
		if err != nil {
			m.close()
			return nil, err
		}
		m.readers = append(m.readers, rr)
		m.h = append(m.h, &head{src: rr})
	}
	if extra != nil {
		m.h = append(m.h, &head{src: extra})
	}
	return m, nil
}

func less(a, b *head) bool {
	if a.prefix != b.prefix {
		return a.prefix < b.prefix
	}
	if c := hfilewriter.CompareKeys(hfilewriter.KVKey(a.kv), hfilewriter.KVKey(b.kv)); c != 0 {
		return c < 0
	}
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	return bytes.Compare(hfilewriter.KVValue(a.kv), hfilewriter.KVValue(b.kv)) < 0
}

func (m *merger) down(i int) {
	h := m.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (m *merger) next() (bool, error) {
	if !m.started {
		m.started = true
		live := m.h[:0]
		for _, s := range m.h {
			ok, err := s.next()
			if err != nil {
				return false, err
			}
			if ok {
				live = append(live, s)
			}
		}
		m.h = live
		for i := len(m.h)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	} else if m.advance && len(m.h) > 0 {
		ok, err := m.h[0].next()
		if err != nil {
			return false, err
		}
		if !ok {
			last := len(m.h) - 1
			m.h[0] = m.h[last]
			m.h = m.h[:last]
		}
		if len(m.h) > 0 {
			m.down(0)
		}
	}
	m.advance = true
	return len(m.h) > 0, nil
}

func (m *merger) kv() []byte  { return m.h[0].kv }
func (m *merger) seq() uint64 { return m.h[0].seq }

// close closes every run reader, removing the run files.
func (m *merger) close() error {
	var errs []error
	for _, r := range m.readers {
		if err := r.close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.readers, m.h = nil, nil
	return errors.Join(errs...)
}

// combineSource folds adjacent records with equal keys of a sorted source.
type combineSource struct {
	p       *Pool
	src     source
	fn      func(dst, a, b []byte) []byte
	seqLast bool
	scratch *[2][]byte
	base    int   // reserved scratch capacity per buffer
	charged int64 // capacity beyond base, charged to the pool
	pending bool  // src holds the head of the next group
	done    bool
	cur     []byte
	sq      uint64
}

func newCombineSource(p *Pool, src source, opts SorterOptions, scratch *[2][]byte) *combineSource {
	base := p.scratchSize()
	for i := range scratch {
		if scratch[i] == nil {
			scratch[i] = make([]byte, 0, base)
		}
	}
	return &combineSource{p: p, src: src, fn: opts.Combine, seqLast: opts.FoldSeqLast, scratch: scratch, base: base}
}

// account charges growth of the scratch buffers beyond their reserved size.
func (c *combineSource) account() {
	var over int64
	for _, b := range c.scratch {
		if cap(b) > c.base {
			over += int64(cap(b) - c.base)
		}
	}
	if over > c.charged {
		c.p.charge(over - c.charged)
		c.charged = over
	}
}

func (c *combineSource) next() (bool, error) {
	if c.done {
		return false, nil
	}
	if !c.pending {
		ok, err := c.src.next()
		if err != nil || !ok {
			c.done = true
			return false, err
		}
	}
	c.pending = false
	acc := append(c.scratch[0][:0], c.src.kv()...)
	c.scratch[0] = acc
	c.sq = c.src.seq()
	slot := 1
	for {
		ok, err := c.src.next()
		if err != nil {
			return false, err
		}
		if !ok {
			c.done = true
			break
		}
		b := c.src.kv()
		if hfilewriter.CompareKeys(hfilewriter.KVKey(acc), hfilewriter.KVKey(b)) != 0 {
			c.pending = true
			break
		}
		out := c.fn(c.scratch[slot][:0], acc, b)
		key, _, n, err := hfilewriter.SplitKeyValue(out)
		if err != nil || n != len(out) || !hfilewriter.Key(key).Valid() ||
			hfilewriter.CompareKeys(key, hfilewriter.KVKey(acc)) != 0 {
			return false, fmt.Errorf("combine returned an invalid record or changed the key %s",
				hfilewriter.Key(hfilewriter.KVKey(acc)))
		}
		if len(out) > 0 && &out[:1][0] == &c.scratch[slot][:1][0] {
			c.scratch[slot] = out // written in place
		} else {
			// The combiner allocated or returned a or b: keep a private copy (b dies with src.next).
			c.scratch[slot] = append(c.scratch[slot][:0], out...)
			out = c.scratch[slot]
		}
		acc = out
		slot ^= 1
		if c.seqLast {
			c.sq = c.src.seq()
		}
	}
	c.account()
	c.cur = acc
	return true, nil
}

func (c *combineSource) kv() []byte  { return c.cur }
func (c *combineSource) seq() uint64 { return c.sq }

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
	}
}
