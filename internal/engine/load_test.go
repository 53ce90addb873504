package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// memSink keeps every file in memory: a Sink that is not a directory, as an object store's or a
// distributed runner's would be.
type memSink struct {
	mu      sync.Mutex
	files   map[string][]byte
	aborted []string
}

type memFile struct {
	s    *memSink
	name string
	buf  bytes.Buffer
}

func (s *memSink) Create(_ context.Context, family, name string, _ FileOptions) (File, error) {
	return &memFile{s: s, name: family + "/" + name}, nil
}

func (f *memFile) Write(p []byte) (int, error) { return f.buf.Write(p) }

func (f *memFile) Close() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.files == nil {
		f.s.files = map[string][]byte{}
	}
	f.s.files[f.name] = f.buf.Bytes()
	return nil
}

func (f *memFile) Abort() {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.aborted = append(f.s.aborted, f.name)
}

// testSpec maps a small CSV (key, two families) into three regions.
func testSpec(t *testing.T, csv string) *Spec {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs, err := pipeline.ExpandInputs([]string{in}, pipeline.SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.ParseColumns("HBASE_ROW_KEY,a:x,b:y")
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{Table: "t", Inputs: inputs, Mapping: m, Pipeline: pipeline.RunOptions{Timestamp: 1700000000000},
		Splits: partition.Splits{[]byte("k3"), []byte("k6")}, Memory: 64 << 20, TempDir: t.TempDir(),
		Family: func(string) hfilewriter.WriterOptions { return hfilewriter.WriterOptions{} }}
}

func testCSV(rows int) string {
	var sb strings.Builder
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "k%d,x%d,y%d\n", i%10, i, i)
	}
	return sb.String()
}

// TestLoadSinks: the same load through DirSink and through a sink that keeps files in memory writes
// the same files with the same bytes, named <family>/<name>, one per (region, family).
func TestLoadSinks(t *testing.T) {
	csv := testCSV(10)
	dir := t.TempDir()
	res, err := Load(context.Background(), testSpec(t, csv), DirSink{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var mem memSink
	mres, err := Load(context.Background(), testSpec(t, csv), &mem)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 6 || len(mres.Files) != len(res.Files) || len(mem.files) != len(res.Files) || len(mem.aborted) != 0 {
		t.Fatalf("files: dir %d, memory %d (%d kept, %d aborted)", len(res.Files), len(mres.Files), len(mem.files), len(mem.aborted))
	}
	var names []string
	for i, f := range res.Files {
		if mres.Files[i] != f {
			t.Errorf("file %d: %+v through memory, %+v through a directory", i, mres.Files[i], f)
		}
		disk, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(disk, mem.files[filepath.ToSlash(f.Path)]) {
			t.Errorf("%s: bytes differ", f.Path)
		}
		names = append(names, f.Family+fmt.Sprint(f.Region))
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "a0 a1 a2 b0 b1 b2" || res.Cells != 20 {
		t.Fatalf("files %v, %d cells", names, res.Cells)
	}
}

// TestLoadVerifyNeedsReopener: a sink that cannot read files back refuses the modes that re-read
// before anything is read; DirSink can.
func TestLoadVerifyNeedsReopener(t *testing.T) {
	for _, m := range []VerifyMode{VerifyBlocks, VerifyFull} {
		spec := testSpec(t, testCSV(10))
		spec.Verify = m
		if _, err := Load(context.Background(), spec, &memSink{}); err == nil || !strings.Contains(err.Error(), "cannot be read back") {
			t.Errorf("%s into memory: %v", m, err)
		}
		if _, err := Load(context.Background(), spec, DirSink{Dir: t.TempDir()}); err != nil {
			t.Errorf("%s into a directory: %v", m, err)
		}
	}
}

// TestLoadAbortsOnError: a sink that cannot create a file fails the load with its error.
func TestLoadAbortsOnError(t *testing.T) {
	s := &failSink{failAt: 2}
	if _, err := Load(context.Background(), testSpec(t, testCSV(50)), s); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("load: %v", err)
	}
}

type failSink struct {
	memSink
	mu     sync.Mutex
	n      int
	failAt int
}

func (s *failSink) Create(ctx context.Context, family, name string, o FileOptions) (File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n++; s.n == s.failAt {
		return nil, fmt.Errorf("create %s/%s: disk full", family, name)
	}
	return s.memSink.Create(ctx, family, name, o)
}
