package partition

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
)

// Sample returns the kept keys in ascending row order.
func (sm *Sampler) Sample() []SampleKey {
	sm.sel.Lock()
	defer sm.sel.Unlock()
	sm.settleLocked()
	es := sm.entries
	order := sm.rowOrder()
	size := 0
	for i := range es {
		size += es[i].n()
	}
	// One copy of the kept rows, in row order, cut into the keys.
	rows := make([]byte, 0, size)
	out := make([]SampleKey, len(order))
	for k, i := range order {
		e := &es[i]
		start := len(rows)
		rows = append(rows, sm.row(e)...)
		out[k] = SampleKey{Row: rows[start:len(rows):len(rows)], Bytes: e.bytes}
	}
	return out
}

// Splits returns split points for n regions of roughly equal bytes according to the sample (weighted
// quantiles). Each split point lies between two neighbouring sampled keys and is shortened to the
// shortest prefix of the upper key that still sorts above the lower one, so all rows of one key stay in
// one region. With fewer distinct sampled keys than n, or keys so heavy that several quantiles fall on
// the same boundary, it returns fewer split points. n <= 1 or an empty sample gives none.
//
// It is SplitsFromSample(sm.Sample(), n) without the sample's copy: the kept keys are read in place
// through their row order (at --split-sample 10000, 65,536 keys: 3.5 MB less fresh memory, each page of
// it a fault with the collector off).
func (sm *Sampler) Splits(n int) Splits {
	if n <= 1 {
		return nil
	}
	sm.sel.Lock()
	defer sm.sel.Unlock()
	sm.settleLocked()
	es := sm.entries
	if len(es) < 2 {
		return nil
	}
	order := sm.rowOrder()
	var bounds []int
	if len(order) > 64*n { // splitBounds' binary search: the cumulated bytes of every key
		cum := make([]float64, len(order)+1)
		for k, i := range order {
			cum[k+1] = cum[k] + float64(max(es[i].bytes, 0))
		}
		bounds = splitBounds(cum, n)
	} else {
		bounds = sm.walkBounds(order, n)
	}
	return cutSplits(bounds, func(k int) []byte { return sm.row(&es[order[k]]) })
}

// walkBounds is splitBounds' walk for the kept keys in row order (order) when it does not search (keys
// at most 64n), the cumulated bytes summed as it goes rather than held for every key: the same sums in
// the same order, so the same boundaries, without 8 bytes a key of fresh memory (512 KB at 65,536 keys,
// each page a fault with GOGC off).
func (sm *Sampler) walkBounds(order []uint32, n int) []int {
	es, keys := sm.entries, len(order)
	weight := func(k int) float64 { return float64(max(es[order[k]].bytes, 0)) }
	total := 0.0
	for k := range keys {
		total += weight(k)
	}
	ones := total == 0 // no sizes given: weigh keys equally (cum[i] = i)
	if ones {
		total = float64(keys)
	}
	var bounds []int
	last, x := 0, 0
	lo, hi := 0.0, 1.0 // cum[x], cum[x+1]
	if !ones {
		hi = weight(0)
	}
	for i := 1; i < n; i++ {
		t := total * float64(i) / float64(n)
		for x < keys-1 && hi < t {
			x++
			lo = hi
			if ones {
				hi = float64(x + 1)
			} else {
				hi += weight(x)
			}
		}
		j := nearerBound(x, keys, t, lo, hi)
		if j <= last {
			continue
		}
		last = j
		bounds = append(bounds, j)
	}
	return bounds
}

// SplitsFromSample computes equal-bytes split points from keys sorted ascending and unique (as Sample
// returns them); see Sampler.Splits.
func SplitsFromSample(keys []SampleKey, n int) Splits {
	if n <= 1 || len(keys) < 2 {
		return nil
	}
	// cum[j] = bytes of keys[0:j]; boundary j (1 <= j < len) separates keys[j-1] and keys[j].
	cum := make([]float64, len(keys)+1)
	for i, k := range keys {
		cum[i+1] = cum[i] + float64(max(k.Bytes, 0))
	}
	return cutSplits(splitBounds(cum, n), func(k int) []byte { return keys[k].Row })
}

// splitBounds returns the boundaries of n regions of equal bytes between keys whose cumulated bytes are
// cum (cum[j] = bytes of keys[0:j]; boundary j, 1 <= j < len(cum)-1, separates keys j-1 and j), each
// the boundary nearest its quantile, ascending and distinct. cum is changed when every key has 0 bytes
// (the keys are then weighed equally).
func splitBounds(cum []float64, n int) []int {
	keys := len(cum) - 1
	total := cum[keys]
	if total == 0 { // no sizes given: weigh keys equally
		for i := range cum {
			cum[i] = float64(i)
		}
		total = cum[keys]
	}
	var bounds []int
	last, x := 0, 0
	// With many keys a split point (more than 64: --split-sample 8 of 65,536), a binary search over the
	// boundaries left; with few, a walk.
	search := keys > 64*n
	for i := 1; i < n; i++ {
		t := total * float64(i) / float64(n)
		// First boundary whose preceding bytes reach t (sort.Search's answer, found from the last one on:
		// t grows with i and cum with j), then the nearer of it and the one before.
		if search {
			x += sort.Search(keys-1-x, func(j int) bool { return cum[x+j+1] >= t })
		}
		for x < keys-1 && cum[x+1] < t {
			x++
		}
		j := nearerBound(x, keys, t, cum[x], cum[x+1])
		if j <= last {
			continue
		}
		last = j
		bounds = append(bounds, j)
	}
	return bounds
}

// nearerBound returns the boundary of keys keys nearer the quantile t of boundaries x (lo bytes before
// it) and x+1 (hi bytes before it, hi >= t), never the first (0) nor past the last (keys-1): the step
// splitBounds and walkBounds share.
func nearerBound(x, keys int, t, lo, hi float64) int {
	j := x + 1
	if j > 1 && t-lo < hi-t {
		j--
	}
	return min(j, keys-1)
}

// cutSplits returns the split points of the boundaries bounds between the keys whose rows row returns:
// each the shortest separator of the keys either side, all cut from one buffer (not one allocation each:
// --split-sample 10000 makes 9,999 of them).
func cutSplits(bounds []int, row func(k int) []byte) Splits {
	if len(bounds) == 0 {
		return nil
	}
	// Each boundary's separator length, computed once.
	lens := make([]int, len(bounds))
	size := 0
	for k, j := range bounds {
		lens[k] = separatorLen(row(j-1), row(j))
		size += lens[k]
	}
	buf := make([]byte, 0, size)
	out := make(Splits, len(bounds))
	for k, j := range bounds {
		start := len(buf)
		buf = append(buf, row(j)[:lens[k]]...)
		out[k] = buf[start:len(buf):len(buf)]
	}
	return out
}

// separatorLen is the length of shortestSeparator(lo, hi): the prefix of hi it keeps. The common prefix
// is found eight bytes at a time while both rows have them (the first differing bit's byte), then a
// byte at a time.
func separatorLen(lo, hi []byte) int {
	l := 0
	for l+8 <= len(lo) && l+8 <= len(hi) {
		if x := binary.BigEndian.Uint64(lo[l:]) ^ binary.BigEndian.Uint64(hi[l:]); x != 0 {
			return l + bits.LeadingZeros64(x)/8 + 1 // the byte where they differ lies in hi
		}
		l += 8
	}
	for l < len(lo) && l < len(hi) && lo[l] == hi[l] {
		l++
	}
	if l >= len(hi) { // cannot happen for lo < hi; keep hi whole
		return len(hi)
	}
	return l + 1
}

// shortestSeparator returns the shortest prefix s of hi with lo < s <= hi (lo < hi required).
func shortestSeparator(lo, hi []byte) []byte {
	return slices.Clone(hi[:separatorLen(lo, hi)])
}

// rowOrder returns the indexes of the kept keys (entries) in ascending row order (sm.sel held, after
// settleLocked), in sm.order's memory: a stable LSD radix sort of the indexes on the first 16 row bytes
// (zero-padded, skipping the bytes all keys share), then a comparison of whole rows within each run of
// keys whose 16 bytes tie. A shorter row that is a prefix of a longer one pads with zeros, so a
// difference in the 16 bytes is the rows' order. Sorting the keys themselves by bytes.Compare through a
// function value took ~1,400 instructions a key at 65,536 keys.
func (sm *Sampler) rowOrder() []uint32 {
	es := sm.entries
	n := len(es)
	if cap(sm.order) < 2*n {
		sm.order = fresh[uint32](2*n, 2*n)
	}
	src, dst := sm.order[:n], sm.order[n:2*n]
	for i := range src {
		src[i] = uint32(i)
	}
	if n < 2 {
		return src
	}
	// The 16 bytes of each key go into the second row buffer (selectLocked's, free between selections:
	// it holds the kept rows, so it has room for them when the rows average 16 bytes or more), not into
	// fresh memory (1 MB at 65,536 keys).
	if cap(sm.spare) < 16*n {
		sm.spare = fresh[byte](0, 16*n)
	}
	pre := sm.spare[:16*n]
	var counts [16][256]uint32
	for i := range es {
		p := (*[16]byte)(pre[16*i : 16*i+16])
		if row := sm.row(&es[i]); len(row) >= 16 {
			*p = [16]byte(row)
		} else {
			*p = [16]byte{}
			copy(p[:], row)
		}
		// One line a byte: a loop over the 16 took ~8 instructions a byte, these take two.
		counts[0][p[0]]++
		counts[1][p[1]]++
		counts[2][p[2]]++
		counts[3][p[3]]++
		counts[4][p[4]]++
		counts[5][p[5]]++
		counts[6][p[6]]++
		counts[7][p[7]]++
		counts[8][p[8]]++
		counts[9][p[9]]++
		counts[10][p[10]]++
		counts[11][p[11]]++
		counts[12][p[12]]++
		counts[13][p[13]]++
		counts[14][p[14]]++
		counts[15][p[15]]++
	}
	for d := 15; d >= 0; d-- {
		c := &counts[d]
		if c[pre[d]] == uint32(n) {
			continue // every key has this byte
		}
		var pos uint32
		for b, k := range c {
			c[b] = pos
			pos += k
		}
		for _, i := range src {
			b := pre[16*int(i)+d]
			dst[c[b]] = i
			c[b]++
		}
		src, dst = dst, src
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && [16]byte(pre[16*int(src[j]):]) == [16]byte(pre[16*int(src[i]):]) {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(src[i:j], func(a, b uint32) int { return bytes.Compare(sm.row(&es[a]), sm.row(&es[b])) })
		}
		i = j
	}
	return src
}
