package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestCSVPlainLinesQuoteWindow reads long inputs of quote-free lines with a rare quoted field or escape
// byte (some in the line that crosses a multiple of cleanWindow, some right after one, some in the
// last field) twice: through plainLines, which searches for quotes and escape bytes cleanWindow bytes at
// a time, and with every record through parseRecord. The batches must be equal field for field.
func TestCSVPlainLinesQuoteWindow(t *testing.T) {
	type batch struct {
		NumRows       int
		Data, RawData []byte
		Ends, RawEnds []int32
		Nulls         []bool
		Lines         []int64
		Bad           []BadRow
	}
	rng := rand.New(rand.NewSource(23))
	quotedRows := 0
	for iter := 0; iter < 120; iter++ {
		opts := SourceOptions{Separator: ',', ExpectedFields: 3, BatchRows: []int{1, 7, 1000}[iter%3]}
		if iter/2%4 == 1 {
			opts.Escape = '\\'
		}
		if iter/2%4 == 2 {
			opts.Dialect = DialectMySQL // an escape byte outside quotes: plainLines leaves the line
		}
		var in []byte
		// Half the inputs with the window cut to 1-80 bytes, so that it ends at every place in a line.
		window := cleanWindow
		if iter%2 == 1 {
			window = 1 + rng.Intn(80)
		}
		for len(in) < 3*cleanWindow+rng.Intn(2*cleanWindow) {
			// Every tenth line or so has a quote (or an escape byte), and so does each line where the window's
			// edge may fall, some as the line's last byte.
			special := rng.Intn(10) == 0 || len(in)%cleanWindow > cleanWindow-80 || window < cleanWindow && rng.Intn(3) == 0
			for f := 0; f < 3; f++ {
				if f > 0 {
					in = append(in, ',')
				}
				word := fmt.Sprintf("v%d", rng.Intn(1_000_000))
				switch {
				case special && rng.Intn(3) == 0:
					in = append(in, '"')
					in = append(in, word...)
					in = append(in, '"')
				case special && rng.Intn(4) == 0 && f == 2: // the line's last byte
					in = append(in, word...)
					in = append(in, []byte{'\\', '"'}[rng.Intn(2)])
				case special && rng.Intn(4) == 0:
					in = append(in, word[:1]...)
					in = append(in, '\\', 'x')
					in = append(in, word[1:]...)
				default:
					in = append(in, word...)
				}
			}
			in = append(in, '\n')
		}
		var res [2][]batch
		for k := range res {
			src, err := NewCSVSource(bytes.NewReader(in), "w.csv", 0, opts)
			if err != nil {
				t.Fatal(err)
			}
			src.noPlainLines, src.cleanWindow = k == 1, window
			for {
				b, err := src.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				res[k] = append(res[k], batch{b.NumRows, append([]byte(nil), b.Data...), append([]byte(nil), b.RawData...),
					slices.Clone(b.Ends), slices.Clone(b.RawEnds), slices.Clone(b.Nulls), slices.Clone(b.Lines), b.Bad})
				if k == 0 {
					for i := 0; i < b.NumRows; i++ {
						if bytes.IndexByte(b.Raw(i), '"') >= 0 {
							quotedRows++
						}
					}
				}
			}
		}
		if !reflect.DeepEqual(res[0], res[1]) {
			for i := range min(len(res[0]), len(res[1])) {
				if !reflect.DeepEqual(res[0][i], res[1][i]) {
					t.Fatalf("iteration %d (options %+v), batch %d:\nplainLines  %+v\nparseRecord %+v", iter, opts, i, res[0][i], res[1][i])
				}
			}
			t.Fatalf("iteration %d (options %+v): %d batches through plainLines, %d through parseRecord", iter, opts, len(res[0]), len(res[1]))
		}
	}
	if quotedRows < 1000 {
		t.Fatalf("only %d rows with quotes: the inputs hardly test the window", quotedRows)
	}
}

// TestCSVPlainLinesQuoteWindowEdges puts a quote or an escape byte at each place of a line (first byte,
// last byte, the ones around a separator) after 0-3 quote-free lines, with every window of 1-40 bytes:
// plainLines must give the batches parseRecord gives.
func TestCSVPlainLinesQuoteWindowEdges(t *testing.T) {
	const clean = "ab,cd,ef\n"
	target := []byte("gh,ij,kl")
	for _, esc := range []bool{false, true} {
		opts := SourceOptions{Separator: ',', ExpectedFields: 3, BatchRows: 100}
		special := byte('"')
		if esc {
			opts.Escape, special = '\\', '\\'
		}
		for before := 0; before < 4; before++ {
			for at := 0; at < len(target); at++ {
				line := slices.Clone(target)
				line[at] = special
				in := []byte(strings.Repeat(clean, before) + string(line) + "\n" + clean + clean)
				for window := 1; window <= 40; window++ {
					var res [2]string
					for k := range res {
						src, err := NewCSVSource(bytes.NewReader(in), "e.csv", 0, opts)
						if err != nil {
							t.Fatal(err)
						}
						src.noPlainLines, src.cleanWindow = k == 1, window
						b, err := src.Next(context.Background())
						if err != nil {
							t.Fatalf("Next: %v", err)
						}
						res[k] = fmt.Sprintf("%d %q %v %v %q %v", b.NumRows, b.Data, b.Ends, b.Nulls, b.RawData, len(b.Bad))
					}
					if res[0] != res[1] {
						t.Fatalf("input %q, window %d:\nplainLines  %s\nparseRecord %s", in, window, res[0], res[1])
					}
				}
			}
		}
	}
}
