package analyze

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// Analyzer accumulates the statistics of a stream of CellBatches. Create it with New, feed it with Add
// (safe for concurrent use, batches in any order) and call Report at the end.
//
// Records of one input row must be contiguous within one CellBatch, as the mapping emits them: a run of
// cells with the same Seq and row key is one input row.
//
// Determinism: every count, size, region figure, the order analysis, the suggested split points and
// the confirmed examples from the exact sample are independent of the order of Add calls. The Bloom
// estimates and the suspected examples depend on which key reaches the filter first, so with concurrent
// Adds they may vary between runs within their stated error; call Add from one goroutine in input order
// for byte-identical reports.
//
// Memory: two Bloom filters sized by Options (ExpectedRows, ExpectedCells, FalsePositiveRate), the
// split sampler (SampleCapacity keys), the exact duplicate samples (ExactSample keys per kind), the
// per-column statistics (MaxColumns) and two row keys per CellBatch for the order analysis.
type Analyzer struct {
	opts    Options
	sampler *partition.Sampler

	mu       sync.Mutex
	rows     int64
	cells    int64
	bytes    int64
	rowDups  *shardedDups // own locks
	cellDups *shardedDups
	regions  []regionStats
	sizes    sizeTotals
	columns  map[columnKey]*columnTotals
	other    columnTotals // columns beyond MaxColumns
	batches  []batchOrder
	order    orderTotals
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
		opts:     o,
		sampler:  partition.NewSampler(o.SampleCapacity, o.Seed),
		rowDups:  newShardedDups(o.ExpectedRows, o.FalsePositiveRate, o.ExactSample, 4*o.MaxExamples, false),
		cellDups: newShardedDups(o.ExpectedCells, o.FalsePositiveRate, o.ExactSample, 4*o.MaxExamples, true),
		regions:  make([]regionStats, o.Splits.Len()),
		columns:  make(map[columnKey]*columnTotals),
	}, nil
}

// rowRun is one input row of a batch: cells [first, end) share the Seq and row key.
type rowRun struct {
	seq        uint64
	row        []byte
	first, end int
	bytes      int64
	region     int
	hash       uint64
}

// Add analyzes one CellBatch: the KeyValues its records expand to (CellBatch.KeyValues). It does not
// keep references to cb. It has the signature of a pipeline.Sink, so `a.Add` can be handed to the
// mapping directly. A malformed record or a family index outside Options.Families is an error.
func (a *Analyzer) Add(cb *pipeline.CellBatch) error {
	if cb == nil || len(cb.Records) == 0 {
		return nil
	}
	buf, cells, err := cb.KeyValues(nil, nil)
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	keys := make([][]byte, len(cells))
	var runs []rowRun
	var sz sizeTotals
	var order orderTotals
	cols := make([]map[string]*columnTotals, len(a.opts.Families)) // per family, by qualifier
	for i, ref := range cells {
		key, value, n, err := kv.SplitKeyValue(buf[ref.Off : ref.Off+ref.Len])
		if err != nil || n != int(ref.Len) || !kv.Key(key).Valid() {
			return fmt.Errorf("analyze: malformed KeyValue record for cell %d (file %d row %d)", i,
				pipeline.SeqFile(ref.Seq), pipeline.SeqRow(ref.Seq))
		}
		if int(ref.Family) >= len(a.opts.Families) {
			return fmt.Errorf("analyze: cell %d has family index %d, only %d families", i, ref.Family, len(a.opts.Families))
		}
		keys[i] = key
		k := kv.Key(key)
		row, fam, qual := k.Row(), k.Family(), k.Qualifier()
		if nr := len(runs); nr == 0 || runs[nr-1].seq != ref.Seq || !bytes.Equal(runs[nr-1].row, row) {
			runs = append(runs, rowRun{seq: ref.Seq, row: row, first: i, end: i})
		}
		r := &runs[len(runs)-1]
		r.end = i + 1
		r.bytes += int64(n)

		sz.rowKey += int64(len(row))
		sz.family += int64(len(fam))
		sz.qualifier += int64(len(qual))
		sz.value += int64(len(value))
		sz.key += int64(len(key))
		sz.familySave += int64(max(0, len(fam)-1))
		sz.qualifierSave += int64(max(0, len(qual)-2))
		fc := cols[ref.Family]
		if fc == nil {
			fc = make(map[string]*columnTotals)
			cols[ref.Family] = fc
		}
		ct := fc[string(qual)]
		if ct == nil {
			ct = &columnTotals{}
			fc[string(qual)] = ct
		}
		ct.cells++
		ct.valueBytes += int64(len(value))
		if isIntegerText(value) {
			save := int64(max(0, len(value)-8))
			sz.numericValues++
			sz.numericSave += save
			ct.numericValues++
			ct.numericSave += save
		}
	}
	cellHashes := make([]uint64, len(keys))
	for i, k := range keys {
		cellHashes[i] = hash64(k)
	}
	for i := range runs {
		runs[i].region = a.opts.Splits.Region(runs[i].row)
		runs[i].hash = hash64(runs[i].row)
		a.sampler.Add(runs[i].row, runs[i].bytes)
	}
	// Input order: the runs sorted by Seq (a batch is normally in order already).
	byseq := runs
	if !slices.IsSortedFunc(runs, func(x, y rowRun) int { return cmpSeq(x.seq, y.seq) }) {
		byseq = slices.Clone(runs)
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

	// Duplicates: shard by shard, each under its own lock, starting at a batch-dependent shard so that
	// concurrent Adds mostly work on different shards.
	start := shardOf(cellHashes[0])
	for n := 0; n < dupShards; n++ {
		s := (start + n) % dupShards
		sh := &a.rowDups.shards[s]
		sh.mu.Lock()
		for _, r := range runs {
			if shardOf(r.hash) == s {
				sh.t.observe(r.row, r.hash, r.seq)
			}
		}
		sh.mu.Unlock()
		sh = &a.cellDups.shards[s]
		sh.mu.Lock()
		for c, h := range cellHashes {
			if shardOf(h) == s {
				sh.t.observe(keys[c], h, cells[c].Seq)
			}
		}
		sh.mu.Unlock()
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	a.rows += int64(len(runs))
	a.cells += int64(len(cells))
	for _, r := range runs {
		a.regions[r.region].cells += int64(r.end - r.first)
		a.regions[r.region].bytes += r.bytes
		a.bytes += r.bytes
	}
	a.sizes.add(sz)
	a.order.pairs += order.pairs
	a.order.ascending += order.ascending
	a.batches = append(a.batches, bo)
	for f, fc := range cols {
		for q, c := range fc {
			k := columnKey{uint16(f), q}
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
	}
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
