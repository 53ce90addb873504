package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
)

const testTS = 1700000000000

// e2eRows makes n rows "key,name,amount" with random hex keys (unique), some NULL amounts.
func e2eRows(n int, seed int64) [][3]string {
	rng := rand.New(rand.NewSource(seed))
	seen := map[string]bool{}
	var rows [][3]string
	for len(rows) < n {
		k := fmt.Sprintf("%08x", rng.Uint32())
		if seen[k] {
			continue
		}
		seen[k] = true
		amount := fmt.Sprint(rng.Intn(100000))
		if rng.Intn(10) == 0 {
			amount = ""
		}
		name := fmt.Sprintf("name %d, \"quoted\"", rng.Intn(1000))
		rows = append(rows, [3]string{k, name, amount})
	}
	return rows
}

func writeCSV(t *testing.T, path string, rows [][3]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("key,name,amount\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,\"%s\",%s\n", r[0], strings.ReplaceAll(r[1], `"`, `""`), r[2])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expectedCells is what the rows must become, computed independently of the pipeline, in HBase order.
func expectedCells(rows [][3]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, cellLine(r[0], "d", "name", r[1]))
		if r[2] != "" {
			out = append(out, cellLine(r[0], "d", "amount", r[2]))
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyOfLine(out[i]) < keyOfLine(out[j]) })
	return out
}

func cellLine(row, fam, qual, val string) string {
	c := kv.Cell{Row: []byte(row), Family: []byte(fam), Qualifier: []byte(qual), Timestamp: testTS,
		Type: kv.TypePut, Value: []byte(val)}
	return kv.FormatCellLine(&c)
}

// keyOfLine gives a sortable string for cells that differ only in row and qualifier (same family, ts, type).
func keyOfLine(l string) string {
	f := strings.Split(l, "\t")
	return f[0] + "\x00" + f[1]
}

func baseJob(in, out string) *Job {
	return &Job{
		Name: "e2e", Input: []string{in}, Header: true, Table: "t", Out: out, Timestamp: testTS,
		Columns: "HBASE_ROW_KEY,d:name,d:amount", Memory: Size(64 << 20),
	}
}

// readOutput reads every HFile of a committed run, checks each file lies inside its region and is
// sorted, and returns all cells in region order.
func readOutput(t *testing.T, out string, m *Manifest) []string {
	t.Helper()
	var cells []string
	for _, f := range m.Files {
		start, _ := kv.FromStringBinary(f.RegionStart)
		end, _ := kv.FromStringBinary(f.RegionEnd)
		r, c, err := hfilewriter.OpenFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("%s: verify: %v", f.Path, err)
		}
		it := r.Iter()
		var n int64
		var prev []byte
		for it.Next() {
			cell := it.Cell()
			if len(start) > 0 && bytes.Compare(cell.Row, start) < 0 || len(end) > 0 && bytes.Compare(cell.Row, end) >= 0 {
				t.Fatalf("%s: row %q outside region [%q, %q)", f.Path, cell.Row, start, end)
			}
			k := cell.Key()
			if prev != nil && kv.CompareKeys(prev, k) > 0 { // equal keys: --duplicates keep
				t.Fatalf("%s: keys out of order", f.Path)
			}
			prev = k
			cells = append(cells, kv.FormatCellLine(cell))
			n++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if n != f.Cells {
			t.Fatalf("%s: %d cells, manifest says %d", f.Path, n, f.Cells)
		}
	}
	return cells
}

func TestRunEndToEndCSVWithSplits(t *testing.T) {
	dir := t.TempDir()
	rows := e2eRows(3000, 1)
	in := filepath.Join(dir, "in.csv")
	writeCSV(t, in, rows)
	splitsFile := filepath.Join(dir, "splits.txt")
	os.WriteFile(splitsFile, []byte("4\n8\nc\n"), 0o644)
	out := filepath.Join(dir, "out")
	job := baseJob(in, out)
	job.Splits = splitsFile
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	got := readOutput(t, out, m)
	want := expectedCells(rows)
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cell %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	regions := map[int]bool{}
	for _, f := range m.Files {
		regions[f.Region] = true
	}
	if len(regions) != 4 {
		t.Fatalf("files in %d regions, want 4 (hex keys over splits 4/8/c)", len(regions))
	}
	if m.Counts.RowsRead != 3000 || m.Counts.RowsRejected != 0 || m.Counts.CellsWritten != int64(len(want)) {
		t.Fatalf("counts %+v", m.Counts)
	}
	if _, err := os.Stat(filepath.Join(out, ManifestName)); err != nil {
		t.Fatal("manifest missing")
	}
	if !strings.Contains(strings.Join(m.Commands, "\n"), "completebulkload") {
		t.Fatalf("commands %v", m.Commands)
	}
}

func TestRunDeterministicOutput(t *testing.T) {
	dir := t.TempDir()
	rows := e2eRows(5000, 2)
	in := filepath.Join(dir, "in.csv")
	writeCSV(t, in, rows)
	var outs []string
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		job := baseJob(in, out)
		job.SplitSample = 3
		job.Memory = Size(20 << 20)  // small budget: spills happen, output must not change
		job.Workers = []int{1, 4}[i] // nor with how batches interleave across workers
		if _, err := Execute(context.Background(), job, ExecuteOptions{}); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	files := func(out string) map[string][]byte {
		m := map[string][]byte{}
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && !strings.HasPrefix(info.Name(), "_") {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(out, p)
				m[rel] = b
			}
			return nil
		})
		return m
	}
	a, b := files(outs[0]), files(outs[1])
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("file sets differ: %d vs %d", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Fatalf("%s differs between two identical runs", name)
		}
	}
}

func TestRunSampledSplitsEqualBytes(t *testing.T) {
	dir := t.TempDir()
	rows := e2eRows(8000, 3)
	in := filepath.Join(dir, "in.csv")
	writeCSV(t, in, rows)
	out := filepath.Join(dir, "out")
	job := baseJob(in, out)
	job.SplitSample = 4
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Splits) != 3 {
		t.Fatalf("splits %v, want 3", res.Splits)
	}
	perRegion := map[int]int64{}
	for _, f := range res.Manifest.Files {
		perRegion[f.Region] += f.Cells
	}
	total := res.Manifest.Counts.CellsWritten
	for r := 0; r < 4; r++ {
		share := float64(perRegion[r]) / float64(total)
		if share < 0.2 || share > 0.3 {
			t.Fatalf("region %d holds %.2f of the cells, want about 0.25 (%v)", r, share, perRegion)
		}
	}
	if !strings.Contains(res.CreateCommand, "SPLITS") {
		t.Fatalf("create command %q", res.CreateCommand)
	}
	got := readOutput(t, out, res.Manifest)
	if len(got) != len(expectedCells(rows)) {
		t.Fatalf("%d cells", len(got))
	}
}

func TestRunParquetInput(t *testing.T) {
	dir := t.TempDir()
	rows := e2eRows(1000, 4)
	in := filepath.Join(dir, "in.parquet")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.BinaryTypes.String},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for _, r := range rows {
		bld.Field(0).(*array.StringBuilder).Append(r[0])
		bld.Field(1).(*array.StringBuilder).Append(r[1])
		if r[2] == "" {
			bld.Field(2).AppendNull()
		} else {
			var v int64
			fmt.Sscan(r[2], &v)
			bld.Field(2).(*array.Int64Builder).Append(v)
		}
	}
	rec := bld.NewRecord()
	f, _ := os.Create(in)
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	out := filepath.Join(dir, "out")
	job := baseJob(in, out)
	job.Header = false
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
	if err != nil {
		t.Fatal(err)
	}
	got := readOutput(t, out, res.Manifest)
	want := expectedCells(rows)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("parquet cells differ: got %d want %d; first got %q want %q", len(got), len(want), got[0], want[0])
	}
}

func TestRunDuplicatesPolicies(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("key,name,amount\na,first,1\nb,x,2\na,second,3\n"), 0o644)

	job := baseJob(in, filepath.Join(dir, "err"))
	_, err := Execute(context.Background(), job, ExecuteOptions{})
	if !errors.Is(err, ErrDuplicates) {
		t.Fatalf("default policy: err %v, want ErrDuplicates", err)
	}
	if !strings.Contains(err.Error(), "data row 1") || !strings.Contains(err.Error(), "data row 3") {
		t.Fatalf("error should name both rows: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "err", ManifestName)); serr == nil {
		t.Fatal("a failed run must not leave a manifest")
	}
	for _, tc := range []struct{ policy, name, amount string }{{"first", "first", "1"}, {"last", "second", "3"}} {
		out := filepath.Join(dir, tc.policy)
		job := baseJob(in, out)
		job.Duplicates = tc.policy
		res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(readOutput(t, out, res.Manifest), "\n")
		if !strings.Contains(got, cellLine("a", "d", "name", tc.name)) || !strings.Contains(got, cellLine("a", "d", "amount", tc.amount)) {
			t.Fatalf("%s: got\n%s", tc.policy, got)
		}
		if res.Manifest.Counts.Duplicates != 2 || res.Manifest.Counts.CellsWritten != 4 {
			t.Fatalf("%s: counts %+v", tc.policy, res.Manifest.Counts)
		}
	}
}

func TestRunRollsFilesAtRowBoundaries(t *testing.T) {
	dir := t.TempDir()
	rows := e2eRows(40000, 5)
	in := filepath.Join(dir, "in.csv")
	writeCSV(t, in, rows)
	out := filepath.Join(dir, "out")
	job := baseJob(in, out)
	job.MaxFileSize = Size(1 << 20) // the smallest Validate allows; the data makes about 4 MiB of HFiles
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Manifest.Files) < 3 {
		t.Fatalf("%d files, want several with a 1 MiB max file size", len(res.Manifest.Files))
	}
	files := res.Manifest.Files
	for i := 1; i < len(files); i++ {
		last, _ := kv.FromStringBinary(files[i-1].LastKey)
		first, _ := kv.FromStringBinary(files[i].FirstKey)
		if bytes.Compare(last, first) >= 0 {
			t.Fatalf("row %s spans files or files are out of order", files[i].FirstKey)
		}
	}
	if got := readOutput(t, out, res.Manifest); len(got) != len(expectedCells(rows)) {
		t.Fatalf("%d cells", len(got))
	}
}

func TestRunRejectsReconcile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("key,name,amount\na,x,1\nb,y\nc,z,3,extra\nd,w,4\n"), 0o644)
	out := filepath.Join(dir, "out")
	job := baseJob(in, out)
	_, err := Execute(context.Background(), job, ExecuteOptions{})
	if !errors.Is(err, ErrTooManyRejects) || ExitCode(err) != ExitRejects {
		t.Fatalf("max_rejects 0: err %v (exit %d)", err, ExitCode(err))
	}
	job.MaxRejects = -1
	res, err := Execute(context.Background(), job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Manifest.Counts
	if c.RowsRead != 4 || c.RowsRejected < 1 || c.RowsKeyed+c.RowsRejected != c.RowsRead {
		t.Fatalf("counts %+v", c)
	}
	rej, err := os.ReadFile(filepath.Join(out, "_rejects.jsonl"))
	if err != nil || !bytes.Contains(rej, []byte(`"line":`)) {
		t.Fatalf("rejects file: %v %s", err, rej)
	}
	// The manifest lists the input with its size and checksum (taken while the HFiles were written).
	sum, err := ChecksumFile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(in)
	if ins := res.Manifest.Inputs; len(ins) != 1 || ins[0].Path != in || ins[0].Size != st.Size() || ins[0].Checksum != sum {
		t.Fatalf("manifest inputs %+v, want %s with size %d and %s", ins, in, st.Size(), sum)
	}
}

var _ = partition.Splits{}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 61052796: "58.2 MiB", 3 << 30: "3.0 GiB"} {
		if got := HumanSize(n); got != want {
			t.Errorf("HumanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// A job file whose mapping names CSV columns, run with progress reporting (the progress wrapper must pass
// the CSV header through) and a typed long column.
func TestRunJobFileNamedColumnsWithProgress(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("key,name,amount\nb,x,2\na,y,\n"), 0o644)
	yml := fmt.Sprintf(`
input: [%s]
header: true
table: t
out: %s
timestamp: %d
mapping:
  columns:
    - {name: key}
    - {name: name, cell: "d:name"}
    - {name: amount, type: long, cell: "d:amount"}
  rowkey: [key]
`, in, filepath.Join(dir, "out"), testTS)
	job, err := ParseJob("job.yaml", []byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var events int
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyBlocks, Progress: func(Progress) { events++ }})
	if err != nil {
		t.Fatal(err)
	}
	got := readOutput(t, filepath.Join(dir, "out"), res.Manifest)
	want := []string{cellLine("a", "d", "name", "y"), `b` + "\t" + `d:amount` + "\t1700000000000\tPut\t" + `\x00\x00\x00\x00\x00\x00\x00\x02`, cellLine("b", "d", "name", "x")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if events == 0 {
		t.Fatal("no progress events")
	}
}

// --duplicates keep writes every copy; with small blocks, copies of one key straddle block boundaries
// (the index key then equals the previous block's last key) and every verify mode accepts the files.
func TestRunKeepDuplicatesAcrossBlocks(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	var b strings.Builder
	b.WriteString("key,name,amount\n")
	for r := 0; r < 300; r++ {
		for c := 0; c < 4; c++ {
			fmt.Fprintf(&b, "row%04d,name-%d,%d\n", r, c, c)
		}
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	for _, mode := range []VerifyMode{VerifyStream, VerifyBlocks, VerifyFull} {
		out := filepath.Join(dir, string(mode))
		job := baseJob(in, out)
		job.Duplicates = "keep"
		job.BlockSize = Size(1024)
		res, err := Execute(context.Background(), job, ExecuteOptions{Verify: mode})
		if err != nil {
			t.Fatalf("--verify %s: %v", mode, err)
		}
		c := res.Manifest.Counts
		if c.CellsWritten != 2400 || c.Duplicates != 0 {
			t.Fatalf("--verify %s: counts %+v, want all 2400 cells written", mode, c)
		}
		if got := len(readOutput(t, out, res.Manifest)); got != 2400 {
			t.Fatalf("--verify %s: read back %d cells", mode, got)
		}
	}
}

// Two input rows with one key whose cells only partly overlap: the later row's view of the sorted cells
// starts with the duplicate (amount) and goes on with a cell the earlier row lacks (extra). Each policy
// keeps the right amount, and the cells after a dropped duplicate are still written.
func TestRunDuplicatesPartialOverlap(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("key,name,amount,extra\na,first,1,\nb,x,2,\na,,3,z\n"), 0o644)
	for _, tc := range []struct {
		policy      string
		want        []string
		cells, dups int64 // written, and dropped as duplicates
	}{
		{"first", []string{cellLine("a", "d", "amount", "1"), cellLine("a", "d", "extra", "z"), cellLine("a", "d", "name", "first")}, 5, 1},
		{"last", []string{cellLine("a", "d", "amount", "3"), cellLine("a", "d", "extra", "z"), cellLine("a", "d", "name", "first")}, 5, 1},
		{"keep", []string{cellLine("a", "d", "amount", "1"), cellLine("a", "d", "amount", "3"), cellLine("a", "d", "extra", "z"),
			cellLine("a", "d", "name", "first")}, 6, 0},
	} {
		out := filepath.Join(dir, tc.policy)
		job := baseJob(in, out)
		job.Columns = "HBASE_ROW_KEY,d:name,d:amount,d:extra"
		job.Duplicates = tc.policy
		res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		var rowA []string
		for _, c := range readOutput(t, out, res.Manifest) {
			if strings.HasPrefix(c, "a\t") || strings.HasPrefix(c, "a/") || strings.HasPrefix(c, "a ") {
				rowA = append(rowA, c)
			}
		}
		if strings.Join(rowA, "\n") != strings.Join(tc.want, "\n") {
			t.Fatalf("%s: row a is\n%s\nwant\n%s", tc.policy, strings.Join(rowA, "\n"), strings.Join(tc.want, "\n"))
		}
		if c := res.Manifest.Counts; c.Duplicates != tc.dups || c.CellsWritten != tc.cells {
			t.Fatalf("%s: counts %+v", tc.policy, c)
		}
	}
}
