package analyze

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Analyzer accumulates the statistics of a stream of CellBatches. Create it with New, feed it with Add
// (safe for concurrent use, batches in any order), then call Suspects; if it reports suspected
// duplicates, feed the same batches again to Confirm (the second pass; see dupFinder); then call Report.
//
// Records of one input row must be contiguous within one CellBatch, as the mapping emits them: a run of
// records with the same Seq and row key is one input row.
//
// Determinism: the report is independent of the order of Add and Confirm calls, except the duplicate
// counts when the second pass ran out of Options.ConfirmBytes (Duplicates.Partial).
//
// Memory: 8 bytes per input row (the row-key fingerprints, until Suspects), the keys of the suspected
// rows in the second pass (at most about ConfirmBytes), the split sampler (SampleCapacity keys), the
// per-column statistics (MaxColumns) and two row keys per CellBatch for the order analysis.
type Analyzer struct {
	opts    Options
	sampler *partition.Sampler
	dups    *dupFinder // own lock
	scratch sync.Pool  // *scratch

	mu      sync.Mutex
	rows    int64
	cells   int64
	bytes   int64
	regions []regionStats
	sizes   sizeTotals
	columns map[columnKey]*columnTotals
	other   columnTotals // columns beyond MaxColumns
	batches []batchOrder
	order   orderTotals
	keys    keyRange
}

// keyRange is the smallest and the largest row key seen, and the shortest and longest key length.
type keyRange struct {
	first, last    []byte
	minLen, maxLen int
	seen           bool
}

// add widens the range by the keys [lo, hi] of lengths [minLen, maxLen].
func (k *keyRange) add(lo, hi []byte, minLen, maxLen int) {
	if !k.seen {
		*k = keyRange{first: bytes.Clone(lo), last: bytes.Clone(hi), minLen: minLen, maxLen: maxLen, seen: true}
		return
	}
	if bytes.Compare(lo, k.first) < 0 {
		k.first = bytes.Clone(lo)
	}
	if bytes.Compare(hi, k.last) > 0 {
		k.last = bytes.Clone(hi)
	}
	k.minLen, k.maxLen = min(k.minLen, minLen), max(k.maxLen, maxLen)
}

type regionStats struct{ cells, bytes int64 }

// sizeTotals are byte sums over all cells.
type sizeTotals struct {
	rowKey, family, qualifier, value, key int64 // key = full flat key (row, family, qualifier + 12 bytes)
	familySave, qualifierSave             int64 // bytes saved by 1-byte families, 2-byte qualifiers
	numericValues, numericSave            int64 // integer texts; bytes saved storing those > 8 bytes as longs
}

type columnKey struct {
	family    uint16
	qualifier string
}

type columnTotals struct {
	cells, valueBytes, numericValues, numericSave int64
}

// batchOrder summarizes one CellBatch's rows in input order, for the ascending-keys analysis.
type batchOrder struct {
	firstSeq, lastSeq uint64
	firstRow, lastRow []byte
}

// orderTotals count consecutive input rows inside batches; boundaries between batches are added at
// Report time from the batchOrder summaries.
type orderTotals struct{ pairs, ascending int64 }

// New returns an Analyzer, or an error for invalid options.
func New(opts Options) (*Analyzer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("analyze options: %w", err)
	}
	if len(o.Families) == 0 {
		return nil, fmt.Errorf("analyze options: no column families")
	}
	return &Analyzer{
		opts:    o,
		sampler: partition.NewSampler(o.SampleCapacity, o.Seed),
		dups:    newDupFinder(o.ConfirmBytes),
		regions: make([]regionStats, o.Splits.Len()),
		columns: make(map[columnKey]*columnTotals),
	}, nil
}

// rowRun is one input row of a batch: records [first, end) share the Seq and row key.
type rowRun struct {
	seq        uint64
	row        []byte
	first, end int
	cells      int64
	bytes      int64
	self       bool // two of its records share family, timestamp and type: a cell may repeat
}

// scratch is one Add's working memory, pooled so that batches reuse it.
type scratch struct {
	runs   []rowRun
	fps    []uint64
	self   []uint64
	dict   [][]columnTotals           // per family, per dictionary qualifier index
	lit    []map[string]*columnTotals // per family, literal qualifiers
	keys   [][]byte                   // Confirm: cell keys of one row
	keyBuf []byte                     // Confirm: their bytes
	heads  []cellrec.Header           // records of the current run
}

func (a *Analyzer) getScratch(cb *pipeline.CellBatch) *scratch {
	s, _ := a.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	nf := len(a.opts.Families)
	if len(s.dict) != nf {
		s.dict = make([][]columnTotals, nf)
		s.lit = make([]map[string]*columnTotals, nf)
	}
	for f := range s.dict {
		if n := cb.Dict.Len(); len(s.dict[f]) != n {
			s.dict[f] = make([]columnTotals, n)
		}
	}
	s.runs, s.fps, s.self = s.runs[:0], s.fps[:0], s.self[:0]
	return s
}

// record returns record i of cb, checked (bounds, well-formed, family index, cell count), and its header.
func (a *Analyzer) record(cb *pipeline.CellBatch, i int) (cellrec.Header, []byte, error) {
	ref := &cb.Records[i]
	where := func(format string, args ...any) error {
		return fmt.Errorf("analyze: record %d (file %d row %d): %s", i, pipeline.SeqFile(ref.Seq),
			pipeline.SeqRow(ref.Seq), fmt.Sprintf(format, args...))
	}
	if uint64(ref.Off)+uint64(ref.Len) > uint64(len(cb.Buf)) {
		return cellrec.Header{}, nil, where("bytes [%d, %d) lie outside the buffer of %d", ref.Off,
			uint64(ref.Off)+uint64(ref.Len), len(cb.Buf))
	}
	if int(ref.Family) >= len(a.opts.Families) {
		return cellrec.Header{}, nil, where("family index %d, only %d families", ref.Family, len(a.opts.Families))
	}
	rec := cb.Record(i)
	n, err := cb.Dict.Validate(rec)
	if err != nil {
		return cellrec.Header{}, nil, where("malformed record: %v", err)
	}
	if n != int(ref.Cells) {
		return cellrec.Header{}, nil, where("holds %d cells, its reference says %d", n, ref.Cells)
	}
	h, cells, err := cellrec.ParseHeader(rec)
	if err != nil {
		return cellrec.Header{}, nil, where("malformed record: %v", err)
	}
	return h, cells, nil
}

// Add analyzes one CellBatch, reading its records in place (without expanding them into KeyValues). It
// does not keep references to cb. It has the signature of a pipeline.Sink, so `a.Add` can be handed to
// the mapping directly. A malformed record or a family index outside Options.Families is an error. Add
// after Suspects is an error.
func (a *Analyzer) Add(cb *pipeline.CellBatch) error {
	if cb == nil || len(cb.Records) == 0 {
		return nil
	}
	s := a.getScratch(cb)
	defer a.scratch.Put(s)
	var sz sizeTotals
	var order orderTotals
	var cells int64
	for i := range cb.Records {
		ref := &cb.Records[i]
		h, cellBytes, err := a.record(cb, i)
		if err != nil {
			return err
		}
		if nr := len(s.runs); nr == 0 || s.runs[nr-1].seq != ref.Seq || !bytes.Equal(s.runs[nr-1].row, h.Row) {
			s.runs = append(s.runs, rowRun{seq: ref.Seq, row: h.Row, first: i})
			s.heads = s.heads[:0]
		}
		r := &s.runs[len(s.runs)-1]
		r.end = i + 1
		r.cells += int64(ref.Cells)
		r.bytes += int64(ref.KVBytes)
		if !r.self {
			for _, o := range s.heads {
				if o.TS == h.TS && o.Type == h.Type && bytes.Equal(o.Family, h.Family) {
					r.self = true
				}
			}
			s.heads = append(s.heads, h)
		}

		n := int64(ref.Cells)
		cells += n
		rl, fl := int64(len(h.Row)), int64(len(h.Family))
		sz.rowKey += n * rl
		sz.family += n * fl
		sz.familySave += n * max(0, fl-1)
		kv := n * (8 + 12 + rl + fl)
		dictCols, litCols := s.dict[ref.Family], s.lit[ref.Family]
		for c := cellBytes; len(c) > 0; {
			var q, v, tags []byte
			code := c[0] // a one-byte qualifier code: odd = dictionary index code>>1
			q, v, tags, c = cb.Dict.NextTags(c)
			ql, vl := int64(len(q)), int64(len(v))
			sz.qualifier += ql
			sz.qualifierSave += max(0, ql-2)
			sz.value += vl
			kv += ql + vl
			if cb.Dict.Tagged() {
				kv += 2 + int64(len(tags)) // int16 tagsLen | tags
			}
			var ct *columnTotals
			if code < 0x80 && code&1 == 1 {
				ct = &dictCols[code>>1]
			} else {
				if litCols == nil {
					litCols = map[string]*columnTotals{}
					s.lit[ref.Family] = litCols
				}
				if ct = litCols[string(q)]; ct == nil {
					ct = &columnTotals{}
					litCols[string(q)] = ct
				}
			}
			ct.cells++
			ct.valueBytes += vl
			if isIntegerText(v) {
				save := max(0, vl-8)
				sz.numericValues++
				sz.numericSave += save
				ct.numericValues++
				ct.numericSave += save
			}
		}
		if kv != int64(ref.KVBytes) {
			return fmt.Errorf("analyze: record %d (file %d row %d): stands for %d bytes of KeyValues, its reference says %d",
				i, pipeline.SeqFile(ref.Seq), pipeline.SeqRow(ref.Seq), kv, ref.KVBytes)
		}
	}
	sz.key = sz.rowKey + sz.family + sz.qualifier + 12*cells

	var batchBytes int64
	var kr keyRange
	for i := range s.runs {
		r := &s.runs[i]
		if i == 0 {
			kr = keyRange{first: r.row, last: r.row, minLen: len(r.row), maxLen: len(r.row)}
		} else {
			if bytes.Compare(r.row, kr.first) < 0 {
				kr.first = r.row
			} else if bytes.Compare(r.row, kr.last) > 0 {
				kr.last = r.row
			}
			kr.minLen, kr.maxLen = min(kr.minLen, len(r.row)), max(kr.maxLen, len(r.row))
		}
		h := hash64(r.row)
		s.fps = append(s.fps, h)
		if r.self {
			s.self = append(s.self, h)
		}
		a.sampler.Offer(r.row, r.bytes)
		batchBytes += r.bytes
	}
	a.sampler.Count(int64(len(s.runs)), batchBytes)

	// Input order: the runs sorted by Seq (a batch is normally in order already).
	byseq := s.runs
	if !slices.IsSortedFunc(byseq, func(x, y rowRun) int { return cmpSeq(x.seq, y.seq) }) {
		byseq = slices.Clone(s.runs)
		slices.SortStableFunc(byseq, func(x, y rowRun) int { return cmpSeq(x.seq, y.seq) })
	}
	for i := 1; i < len(byseq); i++ {
		if pipeline.SeqFile(byseq[i].seq) != pipeline.SeqFile(byseq[i-1].seq) {
			continue
		}
		order.pairs++
		if bytes.Compare(byseq[i].row, byseq[i-1].row) >= 0 {
			order.ascending++
		}
	}
	bo := batchOrder{
		firstSeq: byseq[0].seq, lastSeq: byseq[len(byseq)-1].seq,
		firstRow: slices.Clone(byseq[0].row), lastRow: slices.Clone(byseq[len(byseq)-1].row),
	}

	a.dups.mu.Lock()
	frozen := a.dups.frozen
	a.dups.mu.Unlock()
	if frozen {
		return fmt.Errorf("analyze: Add after Suspects")
	}
	a.dups.add(s.fps, s.self)

	a.mu.Lock()
	defer a.mu.Unlock()
	a.rows += int64(len(s.runs))
	a.cells += cells
	a.bytes += batchBytes
	for i := range s.runs {
		r := &s.runs[i]
		rg := &a.regions[a.opts.Splits.Region(r.row)]
		rg.cells += r.cells
		rg.bytes += r.bytes
	}
	a.sizes.add(sz)
	a.order.pairs += order.pairs
	a.order.ascending += order.ascending
	a.batches = append(a.batches, bo)
	a.keys.add(kr.first, kr.last, kr.minLen, kr.maxLen)
	for f := range s.dict {
		for qi := range s.dict[f] {
			if c := &s.dict[f][qi]; c.cells > 0 {
				a.addColumn(uint16(f), cb.Dict.At(qi), c)
				*c = columnTotals{}
			}
		}
		for q, c := range s.lit[f] {
			a.addColumn(uint16(f), []byte(q), c)
		}
		if len(s.lit[f]) > 64 { // many literal qualifiers: do not keep them all in the pool
			s.lit[f] = nil
		} else {
			for _, c := range s.lit[f] {
				*c = columnTotals{}
			}
		}
	}
	return nil
}

// addColumn adds one batch's totals of a column (a.mu held).
func (a *Analyzer) addColumn(f uint16, q []byte, c *columnTotals) {
	if c.cells == 0 {
		return
	}
	k := columnKey{f, string(q)}
	g := a.columns[k]
	if g == nil {
		if len(a.columns) >= a.opts.MaxColumns {
			g = &a.other
		} else {
			g = &columnTotals{}
			a.columns[k] = g
		}
	}
	g.cells += c.cells
	g.valueBytes += c.valueBytes
	g.numericValues += c.numericValues
	g.numericSave += c.numericSave
}

// Suspects ends the first pass and returns the number of suspected duplicate row keys: row-key
// fingerprints that two input rows share, or rows that may repeat a cell within themselves. Zero means
// there is no duplicate row key and no duplicate cell (exactly: distinct fingerprints are distinct
// keys), and no second pass is needed. Otherwise feed the same input again to Confirm.
func (a *Analyzer) Suspects() int { return a.dups.freeze() }

// Confirm is the second pass (see Suspects): it takes the same batches as Add, in any order and
// concurrently, and keeps the keys of the suspected rows so that Report counts duplicates on the keys
// themselves. It does not keep references to cb.
func (a *Analyzer) Confirm(cb *pipeline.CellBatch) error {
	if cb == nil || len(cb.Records) == 0 {
		return nil
	}
	a.Suspects() // freezes if the caller did not
	s := a.getScratch(cb)
	defer a.scratch.Put(s)
	first, seq, row := 0, uint64(0), []byte(nil)
	flush := func(end int) error {
		if end > first && a.dups.suspected(hash64(row)) {
			return a.confirmRow(cb, s, first, end, row, seq)
		}
		return nil
	}
	for i := range cb.Records {
		h, _, err := a.record(cb, i)
		if err != nil {
			return err
		}
		if ref := &cb.Records[i]; i == 0 || ref.Seq != seq || !bytes.Equal(h.Row, row) {
			if err := flush(i); err != nil {
				return err
			}
			first, seq, row = i, ref.Seq, h.Row
		}
	}
	return flush(len(cb.Records))
}

// confirmRow tracks one suspected input row: records [first, end) of cb.
func (a *Analyzer) confirmRow(cb *pipeline.CellBatch, s *scratch, first, end int, row []byte, seq uint64) error {
	s.keys, s.keyBuf = s.keys[:0], s.keyBuf[:0]
	var offs []int
	for i := first; i < end; i++ {
		h, cells, err := a.record(cb, i)
		if err != nil {
			return err
		}
		for len(cells) > 0 {
			var q []byte
			q, _, cells = cb.Dict.Next(cells)
			offs = append(offs, len(s.keyBuf))
			s.keyBuf = cellrec.AppendKey(s.keyBuf, &h, q)
		}
	}
	for j, off := range offs {
		e := len(s.keyBuf)
		if j+1 < len(offs) {
			e = offs[j+1]
		}
		s.keys = append(s.keys, s.keyBuf[off:e])
	}
	a.dups.mu.Lock()
	a.dups.passTwo = true
	a.dups.track(row, seq, s.keys)
	a.dups.mu.Unlock()
	return nil
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *sizeTotals) add(o sizeTotals) {
	s.rowKey += o.rowKey
	s.family += o.family
	s.qualifier += o.qualifier
	s.value += o.value
	s.key += o.key
	s.familySave += o.familySave
	s.qualifierSave += o.qualifierSave
	s.numericValues += o.numericValues
	s.numericSave += o.numericSave
}

// isIntegerText reports whether v is a canonical decimal integer that fits an int64: an optional '-',
// then digits without leading zeros (so that converting it to a long and back gives the same text).
func isIntegerText(v []byte) bool {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 19 || (d[0] == '0' && len(d) > 1) || (len(v) > len(d) && d[0] == '0') {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	if len(d) == 19 { // compare against 9223372036854775807 / ...808
		limit := "9223372036854775807"
		if len(v) > len(d) {
			limit = "9223372036854775808"
		}
		return string(d) <= limit
	}
	return true
}
