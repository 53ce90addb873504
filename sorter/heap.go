package sorter

// heap is a binary min-heap ordered by less: the package's one heap, of segment cursors (segOrder),
// record cursors (resolver) and sources (merger).
type heap[T any] struct {
	s    []T
	less func(a, b T) bool
}

// init orders s as a heap.
func (h *heap[T]) init() {
	for i := len(h.s)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// down moves s[i] down to its place.
func (h *heap[T]) down(i int) {
	s := h.s
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h.less(s[r], s[l]) {
			j = r
		}
		if !h.less(s[j], s[i]) {
			return
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
}

// up moves s[i] up to its place.
func (h *heap[T]) up(i int) {
	s := h.s
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(s[i], s[p]) {
			return
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *heap[T]) push(x T) {
	h.s = append(h.s, x)
	h.up(len(h.s) - 1)
}

// pop removes the top (the caller reorders with down(0) when it wants the heap back).
func (h *heap[T]) pop() {
	last := len(h.s) - 1
	h.s[0] = h.s[last]
	var zero T
	h.s[last] = zero
	h.s = h.s[:last]
}

// second returns the index of the smaller child of the top (the runner-up), or -1 when the top is alone.
func (h *heap[T]) second() int {
	switch len(h.s) {
	case 0, 1:
		return -1
	case 2:
		return 1
	}
	if h.less(h.s[2], h.s[1]) {
		return 2
	}
	return 1
}
