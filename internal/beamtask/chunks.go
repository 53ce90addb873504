package beamtask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/pipeline"
)

// CSVLayout is what the chunks of a CSV file after its first need from the file's start: the column
// names (with a header) and the number of fields a row has.
type CSVLayout struct {
	Input  int      `json:"input"`
	Header []string `json:"header,omitempty"`
	Fields int      `json:"fields"`
}

func (t *Task) layout(input int) CSVLayout {
	for _, l := range t.Layouts {
		if l.Input == input {
			return l
		}
	}
	return CSVLayout{Input: input}
}

// SplitCSV cuts every uncompressed CSV input of more than size bytes into chunks of size bytes, each
// its own unit (see Unit); size <= 0 keeps whole files. It reads the start of each file it cuts (the
// header, or the first batch to settle the field count); a file whose start gives no field count
// (no good row in its first batch) stays whole.
func (t *Task) SplitCSV(ctx context.Context, spec *jobs.RunSpec, size int64) error {
	if size <= 0 {
		return nil
	}
	ins := spec.Inputs
	if t.Watermark != nil {
		// An incremental run's launcher reads its inputs through its own watermark filter (no byte
		// ranges there): cut the files as the workers open them, before their filters.
		ws, err := t.Spec(ctx)
		if err != nil {
			return err
		}
		ins = ws.Inputs
	}
	var units []Unit
	for _, u := range t.Units {
		in := ins[u.Input]
		if u.Groups || u.Chunked || !in.Splittable() || in.Size <= size {
			u.Index = len(units)
			units = append(units, u)
			continue
		}
		l, err := csvLayout(ctx, in)
		if err != nil {
			return err
		}
		if l.Fields <= 0 {
			u.Index = len(units)
			units = append(units, u)
			continue
		}
		l.Input = u.Input
		t.Layouts = append(t.Layouts, l)
		n := (in.Size + size - 1) / size
		for k := int64(0); k < n; k++ {
			end := (k + 1) * size
			if k == n-1 {
				end = math.MaxInt64 // to the end, however long the file has become (the checksum tells)
			}
			units = append(units, Unit{Index: len(units), Input: u.Input, Owner: k == 0, Chunked: true, Chunk: int(k), Start: k * size, End: end})
		}
	}
	t.Units = units
	return nil
}

// csvLayout reads the start of in as the whole-file reader does: its header and field count (Fields 0
// when the first batch settles none, or reading it fails: the file is then read whole, and its map
// task reports the error).
func csvLayout(ctx context.Context, in pipeline.Input) (CSVLayout, error) {
	src, err := in.Open()
	if err != nil {
		return CSVLayout{}, fmt.Errorf("%w: open %s: %w", jobs.ErrIO, in.Path, err)
	}
	defer src.Close()
	cs, ok := src.(*pipeline.CSVSource)
	if !ok {
		return CSVLayout{}, nil
	}
	b, err := cs.Next(ctx)
	switch {
	case errors.Is(err, io.EOF):
		return CSVLayout{}, nil
	case err != nil:
		if ctx.Err() != nil {
			return CSVLayout{}, err
		}
		return CSVLayout{}, nil
	}
	rows := b.NumRows
	b.Release()
	if rows == 0 {
		return CSVLayout{}, nil
	}
	return CSVLayout{Header: cs.Header(), Fields: cs.Fields()}, nil
}

// chunkOffset is what a chunk adds to its line numbers and row ordinals to number them as the whole
// file does: the lines and rows of the chunks before it.
type chunkOffset struct{ Lines, Rows int64 }

// chunkOffsets checks that every cut file's chunks join up (each starts where the one before it
// stopped) and returns each chunk unit's offsets, by unit index. spans holds the span every chunk
// unit reported.
func (t *Task) chunkOffsets(spec *jobs.RunSpec, spans map[int]pipeline.CSVSpan) (map[int]chunkOffset, error) {
	offs := map[int]chunkOffset{}
	var cur chunkOffset
	var prev pipeline.CSVSpan
	for _, u := range t.Units {
		if !u.Chunked {
			continue
		}
		sp, ok := spans[u.Index]
		if !ok {
			return nil, fmt.Errorf("beam: unit %d (chunk %d of input %d) reported no span", u.Index, u.Chunk, u.Input)
		}
		if u.Chunk == 0 {
			cur = chunkOffset{}
		} else if sp.Start != prev.End {
			path := fmt.Sprint("input ", u.Input)
			if u.Input < len(spec.Inputs) {
				path = spec.Inputs[u.Input].Path
			}
			return nil, &cutError{path: path, unit: u.Index, cut: u.Start, end: prev.End}
		}
		offs[u.Index] = cur
		cur.Lines += sp.Lines
		cur.Rows += sp.Rows
		prev = sp
	}
	return offs, nil
}

// cutError: a chunk started inside a record (a quoted line break across its cut). The launcher runs
// again without that cut (Task.Recut); the error reaches the user only if that fails too.
type cutError struct {
	path     string
	unit     int
	cut, end int64
}

func (e *cutError) Error() string {
	return fmt.Sprintf("%s: the record that starts before byte %d runs on to byte %d (a quoted field holds a line break), across a cut into work units; "+
		"read the file whole (--csv-unit-size 0)", e.path, e.cut, e.end)
}

func (e *cutError) Unwrap() error { return jobs.ErrConfig }

// Recut prepares a run again after pass (1, 2, ...) failed, if chunks of a cut CSV file did not join
// up: each chunk that did not start where the one before it stopped is merged into that one (its cut
// removed; after a second such failure, the file is read whole). It reads the units' summaries of
// the failed pass (a chunk whose map task did not finish tells nothing) and moves the shared files of
// the next pass to a fresh work area inside the old one (removed with it). It reports whether there is
// something to run again.
func (t *Task) Recut(ctx context.Context, spec *jobs.RunSpec, pass int) (bool, error) {
	if pass > 2 {
		return false, nil
	}
	st, err := t.open(ctx, spec)
	if err != nil {
		return false, err
	}
	bad := map[int]bool{}      // chunk units whose cut goes
	badInput := map[int]bool{} // inputs with a bad cut
	var prev *pipeline.CSVSpan
	for _, u := range t.Units {
		if !u.Chunked {
			continue
		}
		var sum unitSummary
		if err := readJSON(ctx, st, unitSummaryName(u.Index), &sum); err != nil || sum.Span == nil {
			prev = nil
			continue
		}
		if u.Chunk > 0 && prev != nil && sum.Span.Start != prev.End {
			bad[u.Index], badInput[u.Input] = true, true
		}
		prev = sum.Span
	}
	if len(bad) == 0 {
		return false, nil
	}
	var units []Unit
	for _, u := range t.Units {
		switch {
		case u.Chunked && badInput[u.Input] && pass > 1: // read whole
			if u.Chunk > 0 {
				continue
			}
			u.End = math.MaxInt64
		case bad[u.Index]: // merged into the chunk before it
			units[len(units)-1].End = u.End
			continue
		}
		if u.Chunked && u.Chunk > 0 {
			u.Chunk = units[len(units)-1].Chunk + 1
		}
		u.Index = len(units)
		units = append(units, u)
	}
	t.Units = units
	t.Work = strings.TrimSuffix(t.Work, "/") + fmt.Sprintf("/recut-%d", pass)
	t.Recuts++
	return true, nil
}
