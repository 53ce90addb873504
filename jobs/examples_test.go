package jobs

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/gen"
)

// The job files in examples/ must stay valid, and the ones that come with
// commands to run them must run to completion on generated data.

const examplesDir = "../examples"

func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		job, err := LoadJob(f, func(string) (string, bool) { return "", false }, nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := CheckJob(job); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), "hfload gen") || !strings.Contains(string(b), "hfload run") {
			t.Errorf("%s: the header comment does not show how to generate the data and run it", f)
		}
	}
}

// genFile writes rows of dataset to path (CSV with a header, seed 1).
func genFile(t *testing.T, path, dataset string, rows int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if _, err := gen.Write(w, gen.Options{Dataset: dataset, Rows: rows, Seed: 1, Header: true}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// exampleJob loads examples/<name>.yaml with its relative paths moved under root (as if run from a
// repository root at root).
func exampleJob(t *testing.T, name, root string) *Job {
	t.Helper()
	job, err := LoadJob(filepath.Join(examplesDir, name+".yaml"), func(string) (string, bool) { return "", false }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range job.Input {
		job.Input[i] = filepath.Join(root, in)
	}
	job.Out = filepath.Join(root, job.Out)
	if job.StateDir != "" {
		job.StateDir = filepath.Join(root, job.StateDir)
	}
	job.Workers = 2
	job.Memory = Size(64 << 20)
	return job
}

func checkCommitted(t *testing.T, res *ExecuteResult, rows int64) *Manifest {
	t.Helper()
	m, err := LoadManifest(res.OutDir)
	if err != nil {
		t.Fatalf("committed manifest: %v", err)
	}
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if m.Counts.RowsRead != rows || m.Counts.RowsRejected != 0 || m.Counts.CellsWritten == 0 {
		t.Fatalf("counts: %+v", m.Counts)
	}
	readOutput(t, res.OutDir, m) // every file verifies, is sorted and within its region
	return m
}

func TestExampleLogs(t *testing.T) {
	root := t.TempDir()
	genFile(t, filepath.Join(root, "demo-data", "logs.csv"), "logs", 5000)
	res, err := Execute(context.Background(), exampleJob(t, "logs", root), ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := checkCommitted(t, res, 5000)
	if len(res.Splits) != 3 || res.CreateCommand == "" {
		t.Errorf("split_sample 4: splits %v, create %q", res.Splits, res.CreateCommand)
	}
	if !strings.Contains(m.Files[0].FirstKey, "|") {
		t.Errorf("row key %q is not host|event|reverse ts", m.Files[0].FirstKey)
	}
}

func TestExampleOrders(t *testing.T) {
	root := t.TempDir()
	genFile(t, filepath.Join(root, "demo-data", "orders.csv"), "orders", 5000)
	res, err := Execute(context.Background(), exampleJob(t, "orders", root), ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := checkCommitted(t, res, 5000)
	regions := map[int]bool{}
	for _, f := range m.Files {
		regions[f.Region] = true
	}
	if len(regions) != 8 {
		t.Errorf("md5 prefix should reach all 8 uniform regions, got %d", len(regions))
	}
}

func TestExampleOrdersIncremental(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	genFile(t, filepath.Join(root, "demo-data", "orders-day1.csv"), "orders", 3000)
	job := exampleJob(t, "orders-incremental", root)
	res, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m1 := checkCommitted(t, res, 3000)
	if m1.Watermark == nil || m1.Watermark.Column != "order_ts" || m1.Watermark.Type != "time" {
		t.Fatalf("watermark: %+v", m1.Watermark)
	}
	if res, err := Execute(ctx, job, ExecuteOptions{}); err != nil || !res.NothingToDo {
		t.Fatalf("rerun: %+v %v", res, err)
	}
	// Day 2: a cumulative export (day 1's rows and 3000 newer ones).
	genFile(t, filepath.Join(root, "demo-data", "orders-day2.csv"), "orders", 6000)
	res2, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m2 := checkCommitted(t, res2, 6000)
	if m2.Counts.RowsFiltered < 3000 || m2.Counts.RowsKeyed == 0 || m2.Counts.RowsFiltered+m2.Counts.RowsKeyed != 6000 {
		t.Errorf("day 2 counts: %+v", m2.Counts)
	}
	if c, err := CompareWatermarks("time", m2.Watermark.Value, m1.Watermark.Value); err != nil || c <= 0 {
		t.Errorf("watermark did not advance: %s → %s (%v)", m1.Watermark.Value, m2.Watermark.Value, err)
	}
	st, _ := job.OpenState()
	if runs, err := st.Runs(); err != nil || len(runs) != 2 {
		t.Errorf("runs: %d %v", len(runs), err)
	}
}
