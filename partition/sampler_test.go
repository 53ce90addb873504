package partition

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestShortestSeparator(t *testing.T) {
	for _, c := range []struct{ lo, hi, want string }{
		{"apple", "banana", "b"},
		{"abc", "abd", "abd"},
		{"ab", "abc", "abc"},
		{"order-0999", "order-1000", "order-1"},
		{"\x01zzz", "\x02", "\x02"},
	} {
		got := string(shortestSeparator([]byte(c.lo), []byte(c.hi)))
		if got != c.want {
			t.Errorf("shortestSeparator(%q, %q) = %q, want %q", c.lo, c.hi, got, c.want)
		}
		if !(c.lo < got && got <= c.hi) {
			t.Errorf("%q does not separate %q and %q", got, c.lo, c.hi)
		}
	}
}

type rowBytes struct {
	row   string
	bytes int64
}

// skewedData: 20000 distinct keys whose sizes grow with the key (bytes of key i = 10 + i/10), each key
// added as several cells, plus a heavy key.
func skewedData() []rowBytes {
	var out []rowBytes
	for i := 0; i < 20000; i++ {
		row := fmt.Sprintf("user%06d", i*7)
		size := int64(10 + i/10)
		out = append(out, rowBytes{row, size / 2}, rowBytes{row, size - size/2})
	}
	return out
}

func regionBytes(s Splits, data []rowBytes) []int64 {
	out := make([]int64, s.Len())
	for _, d := range data {
		out[s.Region([]byte(d.row))] += d.bytes
	}
	return out
}

func TestSamplerEqualBytes(t *testing.T) {
	data := skewedData()
	sm := NewSampler(2000, 42)
	for _, d := range data {
		sm.Add([]byte(d.row), d.bytes)
	}
	st := sm.Stats()
	if st.Adds != int64(len(data)) || st.Kept != 2000 || st.Complete {
		t.Fatalf("stats %+v", st)
	}
	s := sm.Splits(8)
	if len(s) != 7 {
		t.Fatalf("got %d split points: %q", len(s), s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	rb := regionBytes(s, data)
	var total, lo, hi int64 = 0, 1 << 62, 0
	for _, b := range rb {
		total += b
		lo, hi = min(lo, b), max(hi, b)
	}
	// Equal keys would give regions of very different bytes here (sizes grow 20x across the key space).
	t.Logf("bytes per region %v (max/min %.3f)", rb, float64(hi)/float64(lo))
	if float64(hi)/float64(lo) > 1.25 {
		t.Errorf("regions not balanced by bytes: %v", rb)
	}
	// Split points are short prefixes, not whole keys.
	for _, k := range s {
		if len(k) >= len("user000000") {
			t.Errorf("split point %q not shortened", k)
		}
	}
}

// TestSamplerOrderIndependent: the same data added in another order, or from several goroutines,
// gives the same sample and split points.
func TestSamplerOrderIndependent(t *testing.T) {
	data := skewedData()
	a := NewSampler(500, 7)
	for _, d := range data {
		a.Add([]byte(d.row), d.bytes)
	}
	shuffled := append([]rowBytes(nil), data...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := NewSampler(500, 7)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(shuffled); i += 4 {
				b.Add([]byte(shuffled[i].row), shuffled[i].bytes)
			}
		}(w)
	}
	wg.Wait()
	if fmt.Sprintf("%v", a.Sample()) != fmt.Sprintf("%v", b.Sample()) {
		t.Fatal("samples differ with Add order")
	}
	if fmt.Sprintf("%q", a.Splits(5)) != fmt.Sprintf("%q", b.Splits(5)) {
		t.Fatal("split points differ with Add order")
	}
	// Kept keys carry their exact byte totals.
	exact := map[string]int64{}
	for _, d := range data {
		exact[d.row] += d.bytes
	}
	for _, k := range a.Sample() {
		if exact[string(k.Row)] != k.Bytes {
			t.Fatalf("key %q: %d bytes, want %d", k.Row, k.Bytes, exact[string(k.Row)])
		}
	}
	c := NewSampler(500, 8)
	for _, d := range data {
		c.Add([]byte(d.row), d.bytes)
	}
	if fmt.Sprintf("%v", a.Sample()) == fmt.Sprintf("%v", c.Sample()) {
		t.Fatal("different seeds gave the same sample")
	}
}

// TestSamplerDuplicatesAndFewKeys: a key's duplicates are never split apart, and fewer distinct keys
// than regions give fewer regions.
func TestSamplerDuplicatesAndFewKeys(t *testing.T) {
	sm := NewSampler(100, 1)
	for i := 0; i < 1000; i++ {
		sm.Add([]byte("b-heavy"), 100) // 100000 bytes, most of the data
	}
	for _, k := range []string{"a", "c", "d"} {
		sm.Add([]byte(k), 1000)
	}
	st := sm.Stats()
	if !st.Complete || st.Kept != 4 || st.Bytes != 103000 || st.SampleBytes != 103000 {
		t.Fatalf("stats %+v", st)
	}
	s := sm.Splits(10)
	if len(s) > 3 {
		t.Fatalf("%d split points from 4 distinct keys: %q", len(s), s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// The heavy key stays whole and gets a region to itself: quantiles 1/10..9/10 all fall inside it.
	want := keys("b", "c")
	if fmt.Sprintf("%q", s) != fmt.Sprintf("%q", want) {
		t.Fatalf("splits %q, want %q", s, want)
	}
	if NewSampler(10, 1).Splits(4) != nil {
		t.Fatal("empty sampler gave split points")
	}
	one := NewSampler(10, 1)
	one.Add([]byte("x"), 5)
	if one.Splits(4) != nil {
		t.Fatal("one key gave split points")
	}
}

func BenchmarkSamplerAdd(b *testing.B) {
	sm := NewSampler(10000, 1)
	rows := make([][]byte, 4096)
	for i := range rows {
		rows[i] = []byte(fmt.Sprintf("%08x-order-%d", uint32(i)*2654435761, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := rows[i&4095]
		r[0] = byte(i >> 12)
		sm.Add(r, 100)
	}
}

// Offer with Count once per batch is Add: the same sample, splits and totals.
func TestOfferAndCountEqualAdd(t *testing.T) {
	a, b := NewSampler(500, 3), NewSampler(500, 3)
	var rows, total int64
	for i := 0; i < 20000; i++ {
		row := []byte(fmt.Sprintf("row%06d", (i*7919)%12000))
		n := int64(10 + i%37)
		a.Add(row, n)
		b.Offer(row, n)
		rows, total = rows+1, total+n
		if i%1000 == 999 {
			b.Count(rows, total)
			rows, total = 0, 0
		}
	}
	b.Count(rows, total)
	if sa, sb := a.Stats(), b.Stats(); sa != sb {
		t.Fatalf("stats differ: Add %+v, Offer+Count %+v", sa, sb)
	}
	sa, sb := a.Splits(8), b.Splits(8)
	if len(sa) != 7 || len(sa) != len(sb) {
		t.Fatalf("splits: %d and %d, want 7", len(sa), len(sb))
	}
	for i := range sa {
		if !bytes.Equal(sa[i], sb[i]) {
			t.Fatalf("split %d: %q vs %q", i, sa[i], sb[i])
		}
	}
}

// The kept keys are exactly the capacity distinct rows of lowest (priority, row), with exact bytes.
func TestSamplerKeepsBottomK(t *testing.T) {
	const capacity = 300
	sm := NewSampler(capacity, 11)
	want := map[string]int64{}
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 50000; i++ {
		row := fmt.Sprintf("k%05d", rng.Intn(9000))
		n := int64(1 + rng.Intn(100))
		sm.Add([]byte(row), n)
		want[row] += n
	}
	type pr struct {
		prio uint64
		row  string
	}
	var all []pr
	for row := range want {
		all = append(all, pr{sm.priority([]byte(row)), row})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].prio != all[j].prio {
			return all[i].prio < all[j].prio
		}
		return all[i].row < all[j].row
	})
	keep := map[string]bool{}
	for _, p := range all[:capacity] {
		keep[p.row] = true
	}
	got := sm.Sample()
	if len(got) != capacity {
		t.Fatalf("kept %d keys, want %d", len(got), capacity)
	}
	for _, k := range got {
		if !keep[string(k.Row)] {
			t.Fatalf("kept %q, which is not among the %d lowest priorities", k.Row, capacity)
		}
		if k.Bytes != want[string(k.Row)] {
			t.Fatalf("%q: %d bytes, want %d", k.Row, k.Bytes, want[string(k.Row)])
		}
	}
}

// BenchmarkSamplerOfferDistinct offers distinct decimal keys in ascending order with the capacity a run
// uses (like an orders export keyed by id): the inserts and evictions of a bottom-k sample.
func BenchmarkSamplerOfferDistinct(b *testing.B) {
	sm := NewSampler(65536, 1)
	row := make([]byte, 0, 20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		row = strconv.AppendInt(row[:0], int64(1000000+i), 10)
		sm.Offer(row, 66)
	}
}

// sortEntries orders candidates as the comparison sort by (priority, row) it replaced does, up to
// equal (priority, row) pairs, which selectLocked merges: here with priorities drawn from small sets
// (many distinct rows share one, many share all but one byte, some all bytes), rows repeated, and in
// every other round a sorted prefix (the last selection's keys) merged with the rest.
func TestSortEntriesAsComparisonSort(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := 0; round < 300; round++ {
		n := 1 + rng.Intn(2000)
		sm := NewSampler(n, 1)
		prios := make([]uint64, 1+rng.Intn(40))
		for i := range prios {
			switch round % 3 {
			case 0:
				prios[i] = rng.Uint64()
			case 1: // differ in one byte only
				prios[i] = 0x0102030405060700 | uint64(rng.Intn(256))<<(8*uint(rng.Intn(8)))
			default:
				prios[i] = uint64(rng.Intn(3)) << 63
			}
		}
		type cand struct {
			prio uint64
			row  string
		}
		cands := make([]cand, n)
		for i := range cands {
			cands[i] = cand{prios[rng.Intn(len(prios))], fmt.Sprintf("r%d", rng.Intn(1+n/2))}
		}
		byPrioRow := func(a, b cand) int {
			if c := cmp.Compare(a.prio, b.prio); c != 0 {
				return c
			}
			return strings.Compare(a.row, b.row)
		}
		if round%2 == 1 { // a sorted prefix, as a selection leaves its kept keys
			sm.sorted = rng.Intn(n + 1)
			slices.SortFunc(cands[:sm.sorted], byPrioRow)
		}
		for _, c := range cands {
			sm.entries = append(sm.entries, sampleEntry{prio: c.prio, bytes: int64(rng.Intn(100)), pos: entryPos(len(sm.rows), len(c.row))})
			sm.rows = append(sm.rows, c.row...)
		}
		want := slices.Clone(cands)
		slices.SortStableFunc(want, byPrioRow)
		sm.sortEntries()
		for i := range want {
			g, w := &sm.entries[i], want[i]
			if g.prio != w.prio || string(sm.row(g)) != w.row {
				t.Fatalf("round %d, %d candidates: entry %d is (%x, %q), want (%x, %q)", round, n, i, g.prio, sm.row(g), w.prio, w.row)
			}
		}
	}
}

// priority is FNV-1a 64 over the row, byte by byte, then the seeded finalizer: split points depend on
// its values, so the unrolled loop must give exactly what one byte a step gives, for every length.
func TestPriorityIsBytewiseFNV(t *testing.T) {
	sm := NewSampler(1, 7)
	seed := uint64(7)
	ref := func(row []byte) uint64 {
		h := uint64(14695981039346656037)
		for _, c := range row {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= seed * 0x9E3779B97F4A7C15
		h ^= h >> 30
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 27
		h *= 0x94D049BB133111EB
		h ^= h >> 31
		return h
	}
	rng := rand.New(rand.NewSource(9))
	for n := 0; n <= 40; n++ {
		row := make([]byte, n)
		for i := range row {
			row[i] = byte(1 + rng.Intn(255))
		}
		if got, want := sm.priority(row), ref(row); got != want {
			t.Fatalf("%d-byte row %x: priority %x, want %x", n, row, got, want)
		}
	}
	// A known value, so that a change to both would show too.
	if got := NewSampler(1, 1).priority([]byte("C000123-0000012345")); got != 0x3225eea4437528f1 {
		t.Fatalf("priority of C000123-0000012345 with seed 1: %#x, want 0x3225eea4437528f1", got)
	}
}

// Sample returns the kept keys sorted by bytes.Compare, each once, whatever their shared prefixes:
// rows equal in their first 16 bytes, rows that are prefixes of others (also with zero bytes after
// the prefix, which pad like a missing byte), the empty row and rows shorter than a word.
func TestSampleSortedByRow(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	prefixes := []string{"", "a", "ab\x00", "C000123-", "C000123-00000123", "C000123-00000123\x00", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	for round := 0; round < 50; round++ {
		sm := NewSampler(50+rng.Intn(400), int64(round))
		want := map[string]int64{}
		base := make([]byte, 24)
		for i := range base {
			base[i] = "\x00\x01az\xff"[rng.Intn(5)]
		}
		for i := 0; i < 2000; i++ {
			var row string
			if i%2 == 0 {
				row = prefixes[rng.Intn(len(prefixes))]
				for j := rng.Intn(4); j > 0; j-- {
					row += string([]byte{"\x00\x01az\xff"[rng.Intn(5)]})
				}
			} else { // the base row, one byte changed, cut anywhere: rows that first differ at any position
				b := slices.Clone(base)
				b[rng.Intn(len(b))] = "\x00\x01az\xff"[rng.Intn(5)]
				row = string(b[:rng.Intn(len(b)+1)])
			}
			sm.Add([]byte(row), int64(i%13))
			want[row] += int64(i % 13)
		}
		got := sm.Sample()
		if len(got) == 0 {
			t.Fatal("empty sample")
		}
		for i, k := range got {
			if i > 0 && bytes.Compare(got[i-1].Row, k.Row) >= 0 {
				t.Fatalf("round %d: key %d %q after %q", round, i, k.Row, got[i-1].Row)
			}
			if w, ok := want[string(k.Row)]; !ok || w != k.Bytes {
				t.Fatalf("round %d: key %q with %d bytes, want %d (seen %v)", round, k.Row, k.Bytes, w, ok)
			}
		}
	}
}

// BenchmarkSamplerSplitsOrders is the sampled path of a run on bench-shapes' customer-order keys
// ("C041092-0001340975", ~20 rows per customer, in input order): one offer per row, then Splits(10000)
// with the capacity a run uses.
func BenchmarkSamplerSplitsOrders(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewSource(1))
	rows := make([][]byte, n)
	for i := range rows {
		rows[i] = []byte(fmt.Sprintf("C%06d-%010d", rng.Intn(n/20), i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sm := NewSampler(65536, 1)
		for _, r := range rows {
			sm.Offer(r, 77)
		}
		if s := sm.Splits(10000); len(s) != 9999 {
			b.Fatalf("%d split points", len(s))
		}
	}
}

// The selection sets aside the new candidates above a cutoff and drops them unsorted only when the
// capacity best keys are all below it: the sample stays the exact bottom-k with exact bytes when keys
// are offered once, many times within one batch, again after they were kept (their new offers above the
// cutoff while they are kept), or in waves of one key set.
func TestSamplerCutoffKeepsBottomK(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	type offer struct {
		row   string
		bytes int64
	}
	patterns := map[string]func(capacity int) []offer{
		"distinct": func(capacity int) []offer {
			var o []offer
			for i := 0; i < 7*capacity; i++ {
				o = append(o, offer{fmt.Sprintf("d%07d", i), int64(1 + i%50)})
			}
			return o
		},
		"repeated in a batch": func(capacity int) []offer {
			var o []offer
			for i := 0; i < 3*capacity; i++ {
				for r := 0; r < 1+i%7; r++ {
					o = append(o, offer{fmt.Sprintf("r%07d", i), int64(1 + r)})
				}
			}
			return o
		},
		"again after kept": func(capacity int) []offer {
			var o []offer
			for wave := 0; wave < 4; wave++ {
				for i := 0; i < 2*capacity; i++ {
					o = append(o, offer{fmt.Sprintf("w%07d", (i*7919)%(2*capacity)), int64(1 + wave + i%9)})
				}
			}
			return o
		},
		"random": func(capacity int) []offer {
			var o []offer
			for i := 0; i < 10*capacity; i++ {
				o = append(o, offer{fmt.Sprintf("x%07d", rng.Intn(3*capacity)), int64(1 + rng.Intn(100))})
			}
			return o
		},
	}
	for name, gen := range patterns {
		for _, capacity := range []int{1, 7, 64, 1000} {
			offers := gen(capacity)
			sm := NewSampler(capacity, 21)
			want := map[string]int64{}
			for _, o := range offers {
				sm.Add([]byte(o.row), o.bytes)
				want[o.row] += o.bytes
			}
			rows := make([]string, 0, len(want))
			for r := range want {
				rows = append(rows, r)
			}
			slices.SortFunc(rows, func(a, b string) int {
				if c := cmp.Compare(sm.priority([]byte(a)), sm.priority([]byte(b))); c != 0 {
					return c
				}
				return strings.Compare(a, b)
			})
			keep := rows[:min(capacity, len(rows))]
			slices.Sort(keep)
			got := sm.Sample()
			if len(got) != len(keep) {
				t.Fatalf("%s, capacity %d: kept %d keys, want %d", name, capacity, len(got), len(keep))
			}
			for i, k := range got {
				if string(k.Row) != keep[i] || k.Bytes != want[keep[i]] {
					t.Fatalf("%s, capacity %d: key %d is %q with %d bytes, want %q with %d", name, capacity, i,
						k.Row, k.Bytes, keep[i], want[keep[i]])
				}
			}
			if st := sm.Stats(); st.Complete != (len(rows) <= capacity) {
				t.Fatalf("%s, capacity %d: complete %v with %d distinct keys", name, capacity, st.Complete, len(rows))
			}
		}
	}
}

// A selection that drops candidates set aside above its cutoff evicts keys even when exactly capacity
// keys lie below the cutoff: the sample is no longer complete and the threshold falls to the worst kept.
func TestSelectDropsAsideEvicts(t *testing.T) {
	const capacity = 10
	sm := NewSampler(capacity, 1)
	add := func(prio uint64, row string) {
		sm.entries = append(sm.entries, sampleEntry{prio: prio, bytes: 1, pos: entryPos(len(sm.rows), len(row))})
		sm.rows = append(sm.rows, row...)
	}
	// Ten keys in the first range of priorities, each offered twice (20 candidates: capacity and a margin
	// of 8), the last one at the range's end; thirty keys far above.
	for i := 0; i < capacity; i++ {
		p := uint64(i + 1)
		if i == capacity-1 {
			p = 1<<53 - 1
		}
		add(p, fmt.Sprintf("low%02d", i))
		add(p, fmt.Sprintf("low%02d", i))
	}
	for i := 0; i < 30; i++ {
		add(5<<53+uint64(i), fmt.Sprintf("high%02d", i))
	}
	sm.selectLocked()
	if len(sm.entries) != capacity || !sm.evicted || sm.threshold.Load() != 1<<53-1 {
		t.Fatalf("kept %d, evicted %v, threshold %#x; want %d, true, %#x", len(sm.entries), sm.evicted,
			sm.threshold.Load(), capacity, uint64(1<<53-1))
	}
	for i := range sm.entries {
		e := &sm.entries[i]
		if want := fmt.Sprintf("low%02d", i); string(sm.row(e)) != want || e.bytes != 2 {
			t.Fatalf("key %d is %q with %d bytes, want %q with 2", i, sm.row(e), e.bytes, want)
		}
	}
}
