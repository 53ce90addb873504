package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
)

// memSource yields prepared batches.
type memSource struct {
	batches []*Batch
	header  []string
	closed  bool
}

func (s *memSource) Next(ctx context.Context) (*Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(s.batches) == 0 {
		return nil, io.EOF
	}
	b := s.batches[0]
	s.batches = s.batches[1:]
	return b, nil
}
func (s *memSource) Close() error     { s.closed = true; return nil }
func (s *memSource) Header() []string { return s.header }

// memInputs makes files of rows "k<file>-<row>,<value>" with every 7th row carrying a bad number and
// one ragged row per file (from the source).
func memInputs(files, batches, rows int) []Input {
	var ins []Input
	for f := 0; f < files; f++ {
		f := f
		ins = append(ins, Input{Path: fmt.Sprintf("f%d.csv", f), Index: f, Size: 100, Open: func() (Source, error) {
			src := &memSource{header: []string{"k", "v"}}
			for bi := 0; bi < batches; bi++ {
				var rs [][]string
				first := int64(bi * (rows + 1))
				for r := 0; r < rows; r++ {
					v := fmt.Sprint(r)
					if (bi*rows+r)%7 == 3 {
						v = "x" + v
					}
					rs = append(rs, []string{fmt.Sprintf("k%d-%d", f, first+int64(r)), v})
				}
				b := textBatch(fmt.Sprintf("f%d.csv", f), f, first, rs)
				b.Bad = []BadRow{{Line: b.Lines[len(b.Lines)-1] + 1, Reason: "ragged row: 3 fields, want 2", Raw: []byte("a,b,c")}}
				src.batches = append(src.batches, b)
			}
			return src, nil
		}})
	}
	return ins
}

const runYAML = `
columns: [{name: k}, {name: v, type: long, cell: "d:v"}]
rowkey: [{column: k}]
`

// collector is a Sink that copies cells out, keyed by Seq.
type collector struct {
	mu    sync.Mutex
	lines []string
}

func (c *collector) sink() Sink {
	return func(cb *CellBatch) error {
		ls, err := batchLines(cb)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.lines = append(c.lines, ls...)
		c.mu.Unlock()
		return nil
	}
}

func TestRunDeterministic(t *testing.T) {
	m := compileYAML(t, runYAML)
	var outs []string
	var rejs []string
	for _, workers := range []int{1, 4} {
		var c collector
		var rej bytes.Buffer
		counts, err := Run(context.Background(), memInputs(3, 5, 20), m,
			RunOptions{Workers: workers, MaxRejects: -1, Rejects: &rej, Timestamp: 42}, c.sink())
		if err != nil {
			t.Fatal(err)
		}
		// 3 files × 5 batches × (20 rows + 1 bad); 14 of 100 rows per file have a bad number.
		want := Counts{RowsRead: 315, RowsKeyed: 258, RowsRejected: 57, CellsEmitted: 258, BytesRead: 300}
		if counts != want {
			t.Fatalf("workers %d: counts %+v, want %+v", workers, counts, want)
		}
		if counts.RowsRead != counts.RowsKeyed+counts.RowsRejected {
			t.Fatal("counts do not reconcile")
		}
		sort.Strings(c.lines) // scheduling may interleave sink calls; Seq makes the set deterministic
		outs = append(outs, strings.Join(c.lines, "\n"))
		rejs = append(rejs, rej.String())
		if n := strings.Count(rej.String(), "\n"); n != 57 {
			t.Fatalf("%d reject lines", n)
		}
	}
	if outs[0] != outs[1] {
		t.Fatal("cells differ between 1 and 4 workers")
	}
	if rejs[0] != rejs[1] {
		t.Fatal("reject file differs between 1 and 4 workers (must be in input order)")
	}
	if !strings.HasPrefix(rejs[0], `{"source":"f0.csv","line":2,"reason":"ragged row`) &&
		!strings.HasPrefix(rejs[0], `{"source":"f0.csv","line":5,`) {
		t.Fatalf("first reject: %.120s", rejs[0])
	}
}

func TestRunMaxRejects(t *testing.T) {
	m := compileYAML(t, runYAML)
	// 0: the first bad row in input order fails the run, naming file:line and the reason.
	_, err := Run(context.Background(), memInputs(2, 3, 20), m, RunOptions{Workers: 3, Timestamp: 1}, func(*CellBatch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "f0.csv:5: ") || !strings.Contains(err.Error(), `"x3" is not an integer`) {
		t.Fatalf("MaxRejects 0: %v", err)
	}
	if !errors.Is(err, ErrRejectLimit) { // callers map it to an exit code without matching text
		t.Fatalf("MaxRejects 0: %v does not unwrap to ErrRejectLimit", err)
	}
	// N: fails when more than N; the reject file holds exactly N+1 lines.
	var rej bytes.Buffer
	_, err = Run(context.Background(), memInputs(2, 3, 20), m, RunOptions{Workers: 3, MaxRejects: 5, Rejects: &rej, Timestamp: 1},
		func(*CellBatch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "more than 5 rows rejected") || !errors.Is(err, ErrRejectLimit) {
		t.Fatalf("MaxRejects 5: %v", err)
	}
	if n := strings.Count(rej.String(), "\n"); n != 6 {
		t.Fatalf("%d reject lines, want 6", n)
	}
	// Enough headroom: success.
	counts, err := Run(context.Background(), memInputs(2, 3, 20), m, RunOptions{Workers: 3, MaxRejects: 3*2 + 2*9, Timestamp: 1},
		func(*CellBatch) error { return nil })
	if err != nil || counts.RowsRejected != 24 {
		t.Fatalf("MaxRejects 24: %v %+v", err, counts)
	}
}

func TestRunErrors(t *testing.T) {
	m := compileYAML(t, runYAML)
	boom := errors.New("boom")
	_, err := Run(context.Background(), memInputs(2, 5, 10), m, RunOptions{Workers: 2, MaxRejects: -1, Timestamp: 1},
		func(*CellBatch) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("sink error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, memInputs(2, 5, 10), m, RunOptions{Workers: 2, MaxRejects: -1, Timestamp: 1}, func(*CellBatch) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	_, err = Run(context.Background(), memInputs(1, 1, 1), m, RunOptions{}, func(*CellBatch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "RunOptions.Timestamp") {
		t.Fatalf("no timestamp: %v", err)
	}
	openErr := []Input{{Path: "missing.csv", Open: func() (Source, error) { return nil, errors.New("no such file") }}}
	_, err = Run(context.Background(), openErr, m, RunOptions{Timestamp: 1}, func(*CellBatch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Fatalf("open error: %v", err)
	}
}
