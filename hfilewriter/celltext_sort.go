package hfilewriter

import "slices"

// radixSortEntries sorts s as slices.SortFunc(s, cmp) would (cmp orders any two entries, no ties):
// a stable LSD radix sort on the row's first 16 bytes (p1, p2), skipping the byte positions where every
// entry has the same byte (zero padding, common prefixes), then each run of entries with equal words
// sorted by cmp, which decides on the rest of the key. Runs are short when rows differ in their first 16
// bytes (one row's cells); buf (len(s)) is scratch.
func radixSortEntries(s, buf []sortEntry, cmp func(x, y sortEntry) int) {
	if len(s) < 256 {
		slices.SortFunc(s, cmp)
		return
	}
	var counts [16][256]int
	for i := range s {
		p1, p2 := s[i].p1, s[i].p2
		for b := 0; b < 8; b++ {
			counts[b][byte(p1>>(56-8*b))]++
			counts[8+b][byte(p2>>(56-8*b))]++
		}
	}
	src, dst := s, buf
	for pos := 15; pos >= 0; pos-- { // least significant byte first
		c := &counts[pos]
		if c[entryByte(&src[0], pos)] == len(src) {
			continue // one value at this position: the pass would not move anything
		}
		var offs [256]int
		sum := 0
		for v := range c {
			offs[v] = sum
			sum += c[v]
		}
		for i := range src {
			v := entryByte(&src[i], pos)
			dst[offs[v]] = src[i]
			offs[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j].p1 == s[i].p1 && s[j].p2 == s[i].p2 {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(s[i:j], cmp)
		}
		i = j
	}
}

// entryByte is byte pos (0 most significant) of the entry's 16 row bytes.
func entryByte(e *sortEntry, pos int) byte {
	if pos < 8 {
		return byte(e.p1 >> (56 - 8*pos))
	}
	return byte(e.p2 >> (56 - 8*(pos-8)))
}
