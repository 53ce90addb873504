package analyze

import (
	"slices"
	"sync"
)

// dupFinder counts duplicate row keys and duplicate cells exactly, in two passes over the input.
//
// Pass 1 (Analyzer.Add) keeps one 8-byte fingerprint (hash64 of the row key) per input row, and
// separately the fingerprints of the rows that could repeat a cell within themselves (two records of
// one family, timestamp and type). Freeze sorts them: a row key produced by two input rows gives two
// equal fingerprints, and a cell repeated by two input rows repeats their row key, so the fingerprints
// seen twice, with the self ones, are all the suspects there are. Distinct fingerprints prove distinct
// keys: on unique keys there are almost never suspects (two of n distinct keys share a fingerprint
// with probability about n²/2^65) and no second pass is needed.
//
// Pass 2 (Analyzer.Confirm) reads the input again and keeps, for the rows whose fingerprint is a
// suspect, the row key, its input positions and its cells' keys: duplicates are counted on the keys
// themselves, so a fingerprint collision never becomes a reported duplicate. The keys held are bounded
// by Options.ConfirmBytes; beyond it further keys are not tracked and the counts are lower bounds
// (Duplicates.Partial).
type dupFinder struct {
	mu       sync.Mutex
	fps      []uint64 // pass 1: one per input row
	self     []uint64 // pass 1: rows whose records may repeat a cell
	suspects map[uint64]struct{}
	fpRows   int64 // rows whose fingerprint repeats another row's (pass 1's count, before confirmation)
	frozen   bool
	passTwo  bool // Confirm was called

	limit   int64
	held    int64 // bytes of keys held by rows
	partial bool
	rows    map[string]*rowDup
}

// rowDup is one suspected row key seen in pass 2: how many input rows produced it, the smallest of
// their positions, and its cells.
type rowDup struct {
	runs  int64
	seqs  []uint64 // distinct, ascending, at most maxSeqs
	cells map[string]*cellDup
}

// cellDup is one cell key of a suspected row: how often it was produced and the smallest positions of
// the input rows producing it (a position repeats when one input row produced the cell twice).
type cellDup struct {
	count int64
	seqs  []uint64
}

const maxSeqs = 3

// rowOverhead and cellOverhead approximate the memory of one tracked row or cell beyond its key bytes.
const rowOverhead, cellOverhead = 160, 96

func newDupFinder(limit int64) *dupFinder {
	return &dupFinder{limit: limit, rows: map[string]*rowDup{}}
}

// add records pass 1's fingerprints of one batch.
func (d *dupFinder) add(fps, self []uint64) {
	d.mu.Lock()
	d.fps = append(d.fps, fps...)
	d.self = append(d.self, self...)
	d.mu.Unlock()
}

// freeze ends pass 1: it finds the suspected fingerprints and releases the list. It returns how many
// there are. Later calls return the same.
func (d *dupFinder) freeze() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.frozen {
		return len(d.suspects)
	}
	d.frozen = true
	d.suspects = map[uint64]struct{}{}
	slices.Sort(d.fps)
	for i := 0; i < len(d.fps); {
		j := i + 1
		for j < len(d.fps) && d.fps[j] == d.fps[i] {
			j++
		}
		if j-i > 1 {
			d.suspects[d.fps[i]] = struct{}{}
			d.fpRows += int64(j - i - 1)
		}
		i = j
	}
	for _, h := range d.self {
		d.suspects[h] = struct{}{}
	}
	d.fps, d.self = nil, nil
	return len(d.suspects)
}

// suspected reports whether a row key's fingerprint is a suspect (after freeze; safe for concurrent
// use because the set no longer changes).
func (d *dupFinder) suspected(h uint64) bool {
	_, ok := d.suspects[h]
	return ok
}

// track records, in pass 2, one input row of a suspected key with its cells' keys (flat keys, in
// keys, each produced once per occurrence). Call with d.mu held.
func (d *dupFinder) track(row []byte, seq uint64, keys [][]byte) {
	r := d.rows[string(row)]
	if r == nil {
		if d.held > d.limit {
			d.partial = true
			return
		}
		r = &rowDup{cells: map[string]*cellDup{}}
		d.rows[string(row)] = r
		d.held += int64(len(row)) + rowOverhead
	}
	r.runs++
	r.seqs = insertSeq(r.seqs, seq, false)
	for _, k := range keys {
		c := r.cells[string(k)]
		if c == nil {
			c = &cellDup{}
			r.cells[string(k)] = c
			d.held += int64(len(k)) + cellOverhead
		}
		c.count++
		c.seqs = insertSeq(c.seqs, seq, true)
	}
}

// insertSeq inserts seq into the ascending list s, keeping its maxSeqs smallest entries; a seq already
// present is inserted again only if repeats is set.
func insertSeq(s []uint64, seq uint64, repeats bool) []uint64 {
	i, found := slices.BinarySearch(s, seq)
	if (found && !repeats) || i >= maxSeqs {
		return s
	}
	s = slices.Insert(s, i, seq)
	if len(s) > maxSeqs {
		s = s[:maxSeqs]
	}
	return s
}

// example is a confirmed duplicate: a row key or a cell key and the smallest input positions
// producing it.
type example struct {
	key  string
	seqs []uint64
}

// compareExamples orders examples by their positions, then by key.
func compareExamples(a, b example) int {
	if c := slices.Compare(a.seqs, b.seqs); c != 0 {
		return c
	}
	if a.key < b.key {
		return -1
	}
	if a.key > b.key {
		return 1
	}
	return 0
}

// counts returns the confirmed duplicate rows (input rows whose key an earlier input row produced) and
// cells (cells whose key an earlier cell has), and up to n examples of each, by first position.
// Call with d.mu held.
func (d *dupFinder) counts(n int) (rows, cells int64, rowEx, cellEx []example) {
	for k, r := range d.rows {
		if r.runs > 1 {
			rows += r.runs - 1
			rowEx = append(rowEx, example{key: k, seqs: r.seqs})
		}
		for ck, c := range r.cells {
			if c.count > 1 {
				cells += c.count - 1
				cellEx = append(cellEx, example{key: ck, seqs: c.seqs})
			}
		}
	}
	slices.SortFunc(rowEx, compareExamples)
	slices.SortFunc(cellEx, compareExamples)
	return rows, cells, rowEx[:min(n, len(rowEx))], cellEx[:min(n, len(cellEx))]
}
