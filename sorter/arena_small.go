package sorter

// This file holds the comparison sort of the radix sort's small buckets: a quicksort on the entries in
// place, with the cached row words compared inline and the records read only on ties.

// keyCmp compares the cached row words of x and y: -1 or 1 when they decide, 0 when they tie (then
// the records do: tieLess). Small enough to inline, unlike compare.
func keyCmp(x, y *entry) int {
	switch {
	case x.prefix < y.prefix:
		return -1
	case x.prefix > y.prefix:
		return 1
	case x.next < y.next:
		return -1
	case x.next > y.next:
		return 1
	}
	return 0
}

// less reports whether x sorts before y (compare < 0).
func (a *arena) less(x, y *entry) bool {
	c := keyCmp(x, y)
	return c < 0 || c == 0 && a.tieLess(x, y)
}

// tieLess is less for entries whose cached words are equal: the records decide.
func (a *arena) tieLess(x, y *entry) bool { return a.compare(x, y) < 0 }

// insertionMax is the length up to which sortSmall sorts by insertion.
const insertionMax = 12

// sortSmall sorts v by compare. It is meant for the radix sort's buckets of fewer than radixCutoff
// entries, where slices.SortFunc's closure calls and 32-byte entry copies per comparison cost more
// than the comparisons: a quicksort with a median-of-three pivot, recursing into the smaller part,
// and insertion sort below insertionMax entries. On any input it stays correct; its worst case
// (quadratic) is bounded by the small size it is used for. The comparisons in its loops are written
// out (keyCmp, then tieLess on a tie) because less does not inline.
func (a *arena) sortSmall(v []entry) {
	for len(v) > insertionMax {
		p := a.partition(v)
		if p < len(v)-1-p {
			a.sortSmall(v[:p])
			v = v[p+1:]
		} else {
			a.sortSmall(v[p+1:])
			v = v[:p]
		}
	}
	for i := 1; i < len(v); i++ {
		if c := keyCmp(&v[i], &v[i-1]); c > 0 || c == 0 && !a.tieLess(&v[i], &v[i-1]) {
			continue
		}
		e := v[i]
		v[i] = v[i-1]
		j := i - 1
		for ; j > 0; j-- {
			if c := keyCmp(&e, &v[j-1]); c > 0 || c == 0 && !a.tieLess(&e, &v[j-1]) {
				break
			}
			v[j] = v[j-1]
		}
		v[j] = e
	}
}

// partition moves the median of v's first, middle and last entries to its sorted place p, every entry
// that sorts before it before p and the others after, and returns p (len(v) >= 3).
func (a *arena) partition(v []entry) int {
	m, l := len(v)/2, len(v)-1
	if a.less(&v[m], &v[0]) {
		v[m], v[0] = v[0], v[m]
	}
	if a.less(&v[l], &v[m]) {
		v[l], v[m] = v[m], v[l]
		if a.less(&v[m], &v[0]) {
			v[m], v[0] = v[0], v[m]
		}
	}
	// v[0] <= v[m] <= v[l]: the pivot goes to the front, v[l] bounds the scan from above.
	v[0], v[m] = v[m], v[0]
	pv := v[0]
	i, j := 1, l
	for {
		for {
			if c := keyCmp(&v[i], &pv); c > 0 || c == 0 && !a.tieLess(&v[i], &pv) {
				break
			}
			i++
		}
		for {
			if c := keyCmp(&pv, &v[j]); c > 0 || c == 0 && !a.tieLess(&pv, &v[j]) {
				break
			}
			j--
		}
		if i >= j {
			break
		}
		v[i], v[j] = v[j], v[i]
		i++
		j--
	}
	v[0], v[j] = v[j], v[0]
	return j
}
