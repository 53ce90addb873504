package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// bufferingSink is memSink whose files say they hold fileMemory bytes of buffers of their own (as an
// object store's uploads hold their parts); it records how many were open at once.
type bufferingSink struct {
	memSink
	fileMemory int64
	mu         sync.Mutex
	open, most int
}

func (s *bufferingSink) FileMemory() int64 { return s.fileMemory }

func (s *bufferingSink) Create(ctx context.Context, family, name string, o FileOptions) (File, error) {
	f, err := s.memSink.Create(ctx, family, name, o)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.open++
	s.most = max(s.most, s.open)
	s.mu.Unlock()
	return &countedFile{File: f, s: s}, nil
}

type countedFile struct {
	File
	s *bufferingSink
}

func (f *countedFile) done() {
	f.s.mu.Lock()
	f.s.open--
	f.s.mu.Unlock()
}

func (f *countedFile) Close() error { defer f.done(); return f.File.Close() }
func (f *countedFile) Abort()       { defer f.done(); f.File.Abort() }

// TestLoadReservesSinkBuffers: the buffers a BufferingSink's files hold are reserved from the memory
// budget for every file written at once (they show in the accounted peak), fewer files are written at
// once when their buffers would take more than a quarter of the budget, and a file whose buffers exceed
// what the budget can reserve is refused with a message naming --memory.
func TestLoadReservesSinkBuffers(t *testing.T) {
	for _, c := range []struct {
		fileMemory int64
		most       int // files open at once, at most
	}{{1 << 20, 4}, {3 << 20, 1}} {
		spec := testSpec(t, uniqueCSV(3000))
		spec.Pipeline.Workers = 4 // 64 MiB: a 16 MiB sort budget, a quarter is 4 MiB
		sink := &bufferingSink{fileMemory: c.fileMemory}
		res, err := Load(context.Background(), spec, sink)
		if err != nil {
			t.Fatal(err)
		}
		if len(sink.files) != 6 || sink.most > c.most || sink.most < 1 {
			t.Fatalf("file buffers of %d bytes: %d files, %d open at once (want at most %d)", c.fileMemory, len(sink.files), sink.most, c.most)
		}
		if res.PeakMemory < c.fileMemory {
			t.Fatalf("file buffers of %d bytes: accounted peak %d does not include them", c.fileMemory, res.PeakMemory)
		}
	}
	// Given splits, and computed ones (the ranged path plans the output while it sorts): the same message.
	for _, sampled := range []bool{false, true} {
		spec := testSpec(t, uniqueCSV(30))
		if sampled {
			spec.Splits, spec.SplitSample = nil, 3
		}
		_, err := Load(context.Background(), spec, &bufferingSink{fileMemory: 64 << 20})
		if err == nil || !strings.HasPrefix(err.Error(), "output buffers: one file being uploaded holds 64 MiB of part buffers") ||
			!strings.Contains(err.Error(), "raise --memory") {
			t.Fatalf("buffers larger than the budget, sampled %v: %v", sampled, err)
		}
	}
}

// uniqueCSV is testCSV with a row key of its own per row (spread over the three regions).
func uniqueCSV(rows int) string {
	var sb strings.Builder
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "k%d%05d,x%d,y%d\n", i%10, i, i, i)
	}
	return sb.String()
}
