package hfilewriter

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// ErrNotSortedText is WriteSortedCellText's answer for cell text it does not write: not in strictly
// ascending key order, or with any error ParseCellText or WriteCells would report. What it wrote to w
// must be discarded; ParseCellText and WriteCells then sort the cells or name the problem.
var ErrNotSortedText = errors.New("cell text not strictly sorted, or not valid")

// streamSegment is the text one parsing goroutine takes at a time (whole lines): small enough that
// the window of segments in flight stays a few MiB, large enough that handing them out costs nothing.
const streamSegment = 256 << 10

// WriteSortedCellText writes the cells of cell text held in data (see ParseCellText) as one HFile to
// w, as WriteCells(ParseCellText(data)) would, byte for byte, when the text is valid and its cells are
// in strictly ascending key order: the common case of a list exported from a table or an HFile. It
// never builds the slice of every cell: goroutines parse segments of lines into small batches that
// the writer takes in order, so the text is parsed on every core while the file is written, and the
// memory is the text's and a window of batches. It leaves data as it was (escapes are decoded into the
// batches) and returns ErrNotSortedText at the first line it cannot write, out of order, a duplicate,
// a parse error or a cell the options refuse: the caller then discards w's bytes and uses ParseCellText
// and WriteCells, which sort, or report the error they always did.
func WriteSortedCellText(w io.Writer, data []byte, labels map[string]int, opts WriterOptions) (WriterStats, error) {
	hw, err := NewWriter(w, opts)
	if err != nil {
		return WriterStats{}, err
	}
	var bounds []int // segment i is data[bounds[i]:bounds[i+1]]
	for start := 0; start < len(data); {
		bounds = append(bounds, start)
		end := min(len(data), start+streamSegment)
		if j := bytes.IndexByte(data[end:], '\n'); j >= 0 {
			end += j + 1
		} else {
			end = len(data)
		}
		start = end
	}
	bounds = append(bounds, len(data))
	nseg := len(bounds) - 1
	workers := max(1, runtime.GOMAXPROCS(0))
	window := 4 * workers
	type batch struct {
		cells []Cell
		p     cellParser
		ok    bool
		ready chan struct{}
	}
	slots := make([]batch, window)
	free := make(chan int, window) // segments the parsers may start: at most window ahead of the writer
	for i := range slots {
		slots[i].ready = make(chan struct{}, 1)
		slots[i].p.copyOut = true
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait() // nothing reads data or the batches once WriteSortedCellText returns
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var seg int
				select {
				case <-stop:
					return
				case seg = <-free:
				}
				if seg < 0 {
					return
				}
				b := &slots[seg%window]
				b.cells, b.p.arena, b.ok = b.cells[:0], b.p.arena[:0], true
				text := data[bounds[seg]:bounds[seg+1]]
				for len(text) > 0 {
					l := text
					if i := bytes.IndexByte(text, '\n'); i >= 0 {
						l, text = text[:i], text[i+1:]
					} else {
						text = nil
					}
					l = bytes.TrimSuffix(l, []byte{'\r'})
					if len(bytes.TrimRight(l, "\r")) == 0 {
						continue
					}
					b.cells = append(b.cells, Cell{})
					if err := b.p.parse(l, labels, &b.cells[len(b.cells)-1]); err != nil {
						b.ok = false
						break
					}
				}
				b.ready <- struct{}{}
			}
		}()
	}
	release := func(seg int) { // lets a parser start segment seg (its slot is free)
		if seg < nseg {
			free <- seg
		} else {
			free <- -1 // one goroutine stops
		}
	}
	for seg := 0; seg < window; seg++ {
		release(seg)
	}
	for seg := 0; seg < nseg; seg++ {
		b := &slots[seg%window]
		<-b.ready
		if !b.ok {
			return WriterStats{}, ErrNotSortedText
		}
		for i := range b.cells {
			if err := hw.Append(&b.cells[i]); err != nil {
				return WriterStats{}, ErrNotSortedText
			}
		}
		release(seg + window)
	}
	if err := hw.Close(); err != nil {
		return WriterStats{}, err
	}
	return hw.Stats(), nil
}
