package analyze

import (
	"math"
	"slices"

	"github.com/bits-and-blooms/bloom/v3"
)

// dupTracker estimates how many observed items repeat an earlier one, in one pass with bounded memory.
//
// Every item is tested against and added to a Bloom filter. A repeat always tests positive; a new item
// tests positive with the filter's current false-positive probability fp = (1 - e^(-k·n/m))^k (n items
// inserted so far). Each negative test at rate fp stands for 1/(1-fp) new items, fp/(1-fp) of which
// were expected to test positive falsely, so F = Σ fp/(1-fp) over the negative tests estimates the false
// positives among P positives, and the duplicate estimate is D = P - F. (Spreading F uniformly over all
// tests instead would be biased: duplicates tend to come late, when fp is highest.) The false-positive
// count is roughly Poisson, so the estimate's standard error is about sqrt(F); the stated error bound
// is 2·sqrt(F)+1 (~95%).
//
// Examples come from two exact structures. An adaptive hash sample keeps every key whose 64-bit hash has
// its low `level` bits zero (level grows when more than exactCap keys are kept), with the smallest input
// positions (Seq) it was seen at: a kept key seen at two positions is a confirmed duplicate with both
// positions, independent of arrival order. Keys outside the sample that test positive become candidates
// (the first few): confirmed if seen again at another position, else reported as suspected.
type dupTracker struct {
	filter *bloom.BloomFilter
	m, k   float64

	tests, positives, inserted int64
	fpSum, curFP               float64 // fpSum: expected false positives so far

	sameSeqIsDup bool // cells: a repeat within one input row is a duplicate too; rows: it is not

	level    uint
	exactCap int
	exact    map[string]*occurrences

	maxCands int
	cands    map[string]*occurrences
}

// occurrences are the smallest positions an item was seen at, and how often it was seen.
type occurrences struct {
	hash  uint64
	seqs  []uint64 // ascending, at most maxSeqs
	count int64
}

const maxSeqs = 3

func newDupTracker(expected int64, rate float64, exactCap, maxCands int, sameSeqIsDup bool) *dupTracker {
	if expected < 1 {
		expected = 1
	}
	f := bloom.NewWithEstimates(uint(expected), rate)
	return &dupTracker{
		filter: f, m: float64(f.Cap()), k: float64(f.K()),
		sameSeqIsDup: sameSeqIsDup,
		exactCap:     exactCap, exact: make(map[string]*occurrences),
		maxCands: maxCands, cands: make(map[string]*occurrences),
	}
}

// observe records one item (its bytes, its hash and the position of the input row producing it).
func (d *dupTracker) observe(key []byte, h uint64, seq uint64) {
	if d.exactCap > 0 && h&(uint64(1)<<d.level-1) == 0 {
		e, ok := d.exact[string(key)]
		if !ok {
			e = &occurrences{hash: h}
			d.exact[string(key)] = e
		}
		e.add(seq, d.sameSeqIsDup)
		if len(d.exact) > d.exactCap {
			d.raiseLevel()
		}
	}
	if d.tests&63 == 0 {
		d.curFP = math.Pow(1-math.Exp(-d.k*float64(d.inserted)/d.m), d.k)
	}
	d.tests++
	if !d.filter.TestAndAdd(key) {
		d.inserted++
		d.fpSum += d.curFP / (1 - d.curFP)
		return
	}
	d.positives++
	if d.exactCap > 0 && h&(uint64(1)<<d.level-1) == 0 {
		return // the exact sample has it
	}
	if e, ok := d.cands[string(key)]; ok {
		e.add(seq, d.sameSeqIsDup)
	} else if len(d.cands) < d.maxCands {
		e := &occurrences{hash: h}
		e.add(seq, d.sameSeqIsDup)
		d.cands[string(key)] = e
	}
}

func (d *dupTracker) raiseLevel() {
	for len(d.exact) > d.exactCap {
		d.level++
		mask := uint64(1)<<d.level - 1
		for k, e := range d.exact {
			if e.hash&mask != 0 {
				delete(d.exact, k)
				if e.count > 1 && len(d.cands) < d.maxCands {
					d.cands[k] = e // keep a found duplicate with its earliest positions as an example
				}
			}
		}
	}
}

func (o *occurrences) add(seq uint64, sameSeqIsDup bool) {
	i, found := slices.BinarySearch(o.seqs, seq)
	if found && !sameSeqIsDup {
		return
	}
	o.count++
	if i < maxSeqs {
		o.seqs = slices.Insert(o.seqs, i, seq)
		if len(o.seqs) > maxSeqs {
			o.seqs = o.seqs[:maxSeqs]
		}
	}
}

// estimate returns the false-positive-corrected duplicate count and its ~95% error bound.
func (d *dupTracker) estimate() (dups, errBound int64) {
	if d.tests == 0 {
		return 0, 0
	}
	est := float64(d.positives) - d.fpSum
	if est < 0 {
		est = 0
	}
	return int64(math.Round(est)), int64(math.Ceil(2*math.Sqrt(d.fpSum))) + 1
}

// finalFP is the filter's false-positive probability after the last insert.
func (d *dupTracker) finalFP() float64 {
	return math.Pow(1-math.Exp(-d.k*float64(d.inserted)/d.m), d.k)
}

// sampledEstimate extrapolates the duplicates among exactly tracked keys: each kept key stands for
// 2^level keys.
func (d *dupTracker) sampledEstimate() int64 {
	var dups int64
	for _, e := range d.exact {
		dups += e.count - 1
	}
	return dups << d.level
}

// example is a duplicate found by the tracker.
type example struct {
	key       string
	seqs      []uint64
	confirmed bool
	fromExact bool // confirmed by the exact sample (independent of arrival order)
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

// examples returns up to n duplicates: those confirmed by the exact sample first (the same whatever the
// arrival order), then confirmed candidates, then suspected ones; each group ordered by first position.
func (d *dupTracker) examples(n int) []example {
	var exact, conf, susp []example
	for k, e := range d.exact {
		if e.count > 1 {
			exact = append(exact, example{key: k, seqs: e.seqs, confirmed: true, fromExact: true})
		}
	}
	for k, e := range d.cands {
		if e.count > 1 {
			conf = append(conf, example{key: k, seqs: e.seqs, confirmed: true})
		} else {
			susp = append(susp, example{key: k, seqs: e.seqs})
		}
	}
	slices.SortFunc(exact, compareExamples)
	slices.SortFunc(conf, compareExamples)
	slices.SortFunc(susp, compareExamples)
	out := append(append(exact, conf...), susp...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// hash64 is FNV-1a 64 with a splitmix64 finalizer: cheap, deterministic and well mixed in the low bits.
func hash64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 27
	h *= 0x94D049BB133111EB
	h ^= h >> 31
	return h
}
