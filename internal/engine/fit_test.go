package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/directio"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// A file of about fileBytes bytes gets buffers of at least twice its size (from 256 KiB), never more
// than the budget's; unknown sizes keep the budget's.
func TestFileBufferSize(t *testing.T) {
	for _, tc := range []struct {
		size      int
		fileBytes int64
		want      int
	}{
		{4 << 20, 0, 4 << 20},          // unknown
		{4 << 20, 10 << 10, 256 << 10}, // tiny files: 256 KiB
		{4 << 20, 200 << 10, 512 << 10},
		{4 << 20, 1 << 20, 2 << 20},
		{4 << 20, 50 << 20, 4 << 20}, // large files: the budget's size
		{64 << 10, 10 << 10, 64 << 10},
	} {
		if got := fileBufferSize(tc.size, tc.fileBytes); got != tc.want {
			t.Errorf("fileBufferSize(%d, %d) = %d, want %d", tc.size, tc.fileBytes, got, tc.want)
		}
	}
	// 1,000 regions of ~250 KB on the 256 MiB benchmark budget, 4 range merges at once: 6 MiB of
	// buffers reserved instead of 48 MiB.
	p := planOutput(208<<20, DirSink{}, 1, 4, 250_000)
	if p.bufSize != 512<<10 || p.memory(1) != 4*directio.WriterMemory(512<<10) {
		t.Fatalf("plan %+v, memory %d", p, p.memory(1))
	}
}

// Only inputs whose on-disk size the bytes read are counted against can be projected from.
func TestInputBytes(t *testing.T) {
	in := func(path string, size int64) pipeline.Input { return pipeline.Input{Path: path, Size: size} }
	for _, tc := range []struct {
		ins  []pipeline.Input
		want int64
	}{
		{[]pipeline.Input{in("a.csv", 100), in("b.parquet", 50)}, 150},
		{[]pipeline.Input{in("a.csv", 100), in("b.CSV.GZ", 50)}, 0},
		{[]pipeline.Input{in("a.csv.zst", 100)}, 0},
		{[]pipeline.Input{in("-", -1)}, 0},
		{nil, 0},
	} {
		if got := inputBytes(tc.ins); got != tc.want {
			t.Errorf("inputBytes(%v) = %d, want %d", tc.ins, got, tc.want)
		}
	}
}

// willFit scales what is held by the share of the input read, adds the margin and the write phase's
// buffers, and says no while nothing can be projected.
func TestInputFitProjects(t *testing.T) {
	f := &inputFit{total: 1000, kv: func() int64 { return 300 }, room: 1000,
		leave: func(kv int64) int64 { return kv / 10 }}
	for _, tc := range []struct {
		read, arena int64
		want        bool
	}{
		{0, 100, false},   // nothing read yet
		{500, 400, true},  // 800 + 100 margin + 60 buffers
		{500, 420, false}, // 840 + 105 + 60
		{2000, 800, true}, // read past the size (counted at most total): 800 + 100 + 30
	} {
		f.read.Store(tc.read)
		if got := f.willFit(tc.arena); got != tc.want {
			t.Errorf("read %d, arena %d: willFit %v, want %v", tc.read, tc.arena, got, tc.want)
		}
	}
	f.total = 0
	f.read.Store(500)
	if f.willFit(1) {
		t.Error("willFit without a known input size")
	}
}

// fitSpec is a load of rows of ~170 bytes into 20 regions (the ranged path) on a 16 MiB sort budget,
// from in (written as given, gzipped if its name ends in .gz).
func fitSpec(t *testing.T, name string, rows int, memory int64) *Spec {
	t.Helper()
	var text bytes.Buffer
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&text, "k%07d,%s%d\n", (i*7919)%rows, strings.Repeat("x", 150), i)
	}
	data := text.Bytes()
	if strings.HasSuffix(name, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data = z.Bytes()
	}
	in := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs, err := pipeline.ExpandInputs([]string{in}, pipeline.SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.ParseColumns("HBASE_ROW_KEY,d:v")
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var splits partition.Splits
	for r := 1; r < 20; r++ {
		splits = append(splits, fmt.Appendf(nil, "k%07d", r*rows/20))
	}
	return &Spec{Table: "t", Inputs: inputs, Mapping: m, Pipeline: pipeline.RunOptions{Timestamp: 1700000000000, Workers: 2},
		Splits: splits, Memory: memory, TempDir: t.TempDir()}
}

// TestLoadKeepsAnInputThatFits: one sorter holds the records of all 20 regions; they take more than
// half the 16 MiB sort budget (where a lone sorter spills early) and less than all of it. With a plain
// CSV input the bytes read project that, and nothing is spilled; the same rows gzipped cannot be
// projected from and spill early, as before. The HFiles are the same bytes as a run with memory to spare.
func TestLoadKeepsAnInputThatFits(t *testing.T) {
	const rows = 45_000
	load := func(spec *Spec) (*Result, map[string][]byte) {
		t.Helper()
		var sink memSink
		res, err := Load(context.Background(), spec, &sink)
		if err != nil {
			t.Fatal(err)
		}
		return res, sink.files
	}
	_, want := load(fitSpec(t, "in.csv", rows, 1<<30))
	res, got := load(fitSpec(t, "in.csv", rows, 64<<20))
	if res.Spills != 0 {
		t.Errorf("plain input: %d spills (peak %d KiB)", res.Spills, res.PeakMemory>>10)
	}
	if res.PeakMemory < 9<<20 {
		t.Errorf("peak %d KiB: the records do not pass half the budget, the case this test is about", res.PeakMemory>>10)
	}
	gres, gz := load(fitSpec(t, "in.csv.gz", rows, 64<<20))
	if gres.Spills == 0 {
		t.Errorf("gzipped input: no spill (peak %d KiB)", gres.PeakMemory>>10)
	}
	if len(want) != 20 {
		t.Fatalf("%d files, want 20", len(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) || !bytes.Equal(gz[name], b) {
			t.Errorf("%s differs from the run with memory to spare", name)
		}
	}
}
