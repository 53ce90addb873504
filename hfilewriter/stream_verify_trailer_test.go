package hfilewriter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// streamTestFailAfter takes n bytes and fails every Write after them.
type streamTestFailAfter struct {
	n   int
	buf bytes.Buffer
}

var errStreamTestFail = errors.New("disk full")

func (w *streamTestFailAfter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.n {
		return 0, errStreamTestFail
	}
	return w.buf.Write(p)
}

// TestStreamVerifierTrailerInPlace checks the v3 trailer that arrives whole in one Write, which the
// stream verifier parses there instead of collecting it for Finish: what follows it, a failing write
// after it, and a damaged trailer give the errors they give when the trailer comes in two Writes and is
// collected.
func TestStreamVerifierTrailerInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	cells := matrixTestCells(t, rng, 50, true)
	o := DefaultWriterOptions()
	data := writeCells(t, o, cells)
	at := len(data) - TrailerSizeV3
	if string(data[at:at+len(TrailerMagic)]) != string(TrailerMagic) {
		t.Fatal("no v3 trailer at the end")
	}
	// feed writes data's blocks in one Write, its trailer in one or in two (split), then more bytes
	// (extra, nil: none) to a writer that takes limit bytes; it returns the Write error after the
	// trailer (nil: none) and Finish's.
	feed := func(data []byte, split bool, extra []byte, limit int) (writeErr, finishErr error) {
		t.Helper()
		w := &streamTestFailAfter{n: limit}
		sv, err := NewStreamVerifier(w, o)
		if err != nil {
			t.Fatal(err)
		}
		parts := [][]byte{data[:at], data[at:]}
		if split {
			parts = [][]byte{data[:at], data[at : at+100], data[at+100:]}
		}
		for i, p := range parts {
			if _, err := sv.Write(p); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		if in := sv.trailerIn; split && in != 0 || !split && in != TrailerSizeV3 {
			t.Fatalf("split %v: %d trailer bytes parsed in place", split, in)
		}
		if extra != nil {
			_, writeErr = sv.Write(extra)
		}
		return writeErr, sv.Finish()
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		extra   []byte
		limit   int
		wantErr bool
	}{
		{"whole", data, nil, len(data), false},
		{"a byte after it", data, []byte{0}, len(data) + 1, true},
		{"a failing write after it", data, []byte{0}, len(data), true},
		{"its length prefix damaged", func() []byte {
			d := bytes.Clone(data)
			d[at+len(TrailerMagic)] = 0xFF
			return d
		}(), nil, len(data), true},
		{"its version damaged", func() []byte {
			d := bytes.Clone(data)
			d[len(d)-1] = 9
			return d
		}(), nil, len(data), true},
	} {
		wIn, fIn := feed(tc.data, false, tc.extra, tc.limit)
		wCol, fCol := feed(tc.data, true, tc.extra, tc.limit)
		if fmt.Sprint(wIn) != fmt.Sprint(wCol) || fmt.Sprint(fIn) != fmt.Sprint(fCol) {
			t.Errorf("%s: in place: Write %v, Finish %v; collected: Write %v, Finish %v", tc.name, wIn, fIn, wCol, fCol)
		}
		if (fIn != nil) != tc.wantErr {
			t.Errorf("%s: Finish %v, want an error: %v", tc.name, fIn, tc.wantErr)
		}
	}
}
