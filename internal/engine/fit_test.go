package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/directio"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
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
	// buffers reserved instead of 48 MiB, written in buffers of 256 KiB (fileWriteSize).
	p := planOutput(208<<20, DirSink{}, 1, 4, 250_000)
	if p.planSize != 512<<10 || p.bufSize != 256<<10 || p.memory(1) != 4*directio.WriterMemory(512<<10) {
		t.Fatalf("plan %+v, memory %d", p, p.memory(1))
	}
}

// A file is written in buffers of a power of two of at most a 64th of its planned bytes, from 256 KiB,
// never more than the plan's size; unknown sizes take the plan's.
func TestFileWriteSize(t *testing.T) {
	for _, tc := range []struct {
		size      int
		fileBytes int64
		want      int
	}{
		{4 << 20, 0, 4 << 20},            // unknown
		{4 << 20, 10 << 10, 256 << 10},   // small files: 256 KiB
		{1638400, 47_612_734, 512 << 10}, // customer-order at 1M rows, 5 regions
		{655360, 9_522_546, 256 << 10},   // families-5 at 1M rows
		{4 << 20, 581_950_307, 4 << 20},  // a 1 GB load, 8 regions: the plan's size
		{4 << 20, 128 << 20, 2 << 20},    // 128 MiB files: 2 MiB
		{64 << 10, 10 << 10, 64 << 10},   // never more than the plan's
		{1638400, 1 << 30, 1638400},      // nor rounded past it
	} {
		if got := fileWriteSize(tc.size, tc.fileBytes); got != tc.want {
			t.Errorf("fileWriteSize(%d, %d) = %d, want %d", tc.size, tc.fileBytes, got, tc.want)
		}
	}
	// customer-order at 1M rows: 5 regions on 2 workers, 5 tasks at once; the memory reserved is the
	// plan's (the buffers' share of the budget), the files are written in 512 KiB buffers.
	p := planOutput(208<<20, DirSink{}, 1, 2, 47_612_734).spread(208<<20, DirSink{}, 1, 5)
	if p.bufSize != 512<<10 || p.planSize != 1638400 || p.perFile != directio.WriterMemory(1638400) {
		t.Fatalf("customer-order plan %+v", p)
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

// spread shares the output memory of `workers` tasks among more tasks at once: the same total or
// less, in smaller buffers; a sink whose files buffer themselves gets as many as a quarter of the
// budget holds.
func TestPlanSpread(t *testing.T) {
	p := planOutput(208<<20, DirSink{}, 1, 2, 0)
	s := p.spread(208<<20, DirSink{}, 1, 5)
	if s.workers != 5 || s.bufSize >= p.bufSize || s.memory(1) > p.memory(1) || s.memory(1) < p.memory(1)*9/10 {
		t.Fatalf("spread over 5 tasks: %+v (memory %d) from %+v (memory %d)", s, s.memory(1), p, p.memory(1))
	}
	if q := p.spread(208<<20, DirSink{}, 1, 2); q != p {
		t.Fatalf("spread over as many tasks changed the plan: %+v", q)
	}
	bs := &bufferingSink{fileMemory: 1 << 20}
	b := planOutput(16<<20, bs, 1, 2, 0).spread(16<<20, bs, 1, 6)
	if b.workers != 4 || b.perFile != 1<<20 {
		t.Fatalf("buffering sink, 16 MiB budget, 1 MiB files, 6 tasks: %+v (want 4 at once)", b)
	}
}

// writeTasks runs `at` tasks at once: here 5 region tasks on 2 workers all start before any ends.
func TestWriteTasksAtOnce(t *testing.T) {
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: 64 << 20, TempDir: t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	o := newOutputWriter(&Spec{}, &memSink{}, []string{"f"}, 0, pool)
	started := make(chan struct{}, 5)
	all := make(chan struct{})
	var once sync.Once // two tasks may both see the fifth start
	err = o.writeTasks(context.Background(), 5, 2, 5, func(int) bool { return true }, func(ctx context.Context, region, fam int) error {
		started <- struct{}{}
		if len(started) == 5 {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("region %d: only %d of 5 tasks started", region, len(started))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Sorters that hold all their records in memory are written up to 4 per worker at once; once one has
// a run (a merge that reserves read buffers), as many as workers.
func TestRegionTasksAtOnce(t *testing.T) {
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: 1 << 20, TempDir: t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var ss []*sorter.Sorter
	for i := 0; i < 12; i++ {
		s := pool.NewSorter(fmt.Sprint(i), sorter.SorterOptions{})
		defer s.Close()
		ss = append(ss, s)
	}
	add := func(s *sorter.Sorter, n int) {
		for i := 0; i < n; i++ {
			rec := cellrec.AppendHeader(nil, fmt.Appendf(nil, "row%06d", i), []byte("f"), 1, kv.TypePut)
			rec = cellrec.AppendLiteralCell(rec, []byte("q"), bytes.Repeat([]byte("v"), 100))
			if err := s.Add(rec, uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range ss[:5] {
		add(s, 10)
	}
	if got := regionTasksAtOnce(ss, 2); got != 5 {
		t.Errorf("5 sorters with records, 2 workers: %d at once, want 5", got)
	}
	for _, s := range ss[5:] {
		add(s, 10)
	}
	if got := regionTasksAtOnce(ss, 2); got != 8 {
		t.Errorf("12 sorters with records, 2 workers: %d at once, want 8", got)
	}
	add(ss[0], 20000) // ~2.5 MiB: more than the 1 MiB budget holds
	if ss[0].Runs() == 0 {
		t.Fatal("no run spilled")
	}
	if got := regionTasksAtOnce(ss, 2); got != 2 {
		t.Errorf("a sorter with runs: %d at once, want 2", got)
	}
}

// TestInputFitScale: the factor that projects what was read to the whole input, 0 when it cannot be
// projected, never below 1.
func TestInputFitScale(t *testing.T) {
	for _, c := range []struct {
		total, read int64
		want        float64
	}{{1000, 250, 4}, {1000, 1000, 1}, {1000, 1500, 1}, {0, 250, 0}, {1000, 0, 0}} {
		f := &inputFit{total: c.total}
		f.read.Store(c.read)
		if got := f.scale(); got != c.want {
			t.Errorf("total %d, read %d: scale %v, want %v", c.total, c.read, got, c.want)
		}
	}
}
