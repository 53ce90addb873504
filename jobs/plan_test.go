package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanEstimatesFromSample(t *testing.T) {
	root := t.TempDir()
	genFile(t, filepath.Join(root, "demo-data", "orders.csv"), "orders", 20000)
	job := exampleJob(t, "orders", root)
	rp, err := PlanJob(context.Background(), job, PlanOptions{Sample: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Sample.Rows != 2000 || rp.Sample.Keyed != 2000 {
		t.Fatalf("sample: %+v", rp.Sample)
	}
	// Extrapolated from 10% of the file: within 3% of the truth.
	if rp.Estimate.Rows < 19400 || rp.Estimate.Rows > 20600 {
		t.Errorf("estimated rows %d, want ~20000", rp.Estimate.Rows)
	}
	// The run's real numbers, to compare the cell and byte estimates with.
	res, err := Execute(context.Background(), job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	real := res.Manifest.Counts.CellsWritten
	if d := float64(rp.Estimate.Cells-real) / float64(real); d < -0.05 || d > 0.05 {
		t.Errorf("estimated cells %d, run wrote %d", rp.Estimate.Cells, real)
	}
	if len(rp.Regions) != 8 || rp.Estimate.Files != 8 {
		t.Errorf("regions %d, files %d", len(rp.Regions), rp.Estimate.Files)
	}
	if len(rp.KeyExamples) != 5 || !strings.Contains(rp.KeyExamples[0], `\x80\x00\x00\x00\x00\x0FBA`) {
		t.Errorf("key examples: %v", rp.KeyExamples) // order 1000001 with the sign bit flipped
	}
	var txt bytes.Buffer
	if err := rp.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"load", "orders.csv", "sample: 2000 rows", "REGION", "row keys"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, txt.String())
		}
	}
	var js bytes.Buffer
	if err := rp.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back RunPlan
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Estimate != rp.Estimate {
		t.Errorf("JSON round trip: %v", err)
	}
}

func TestPlanWarnsAndShowsIncrementalInputs(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	// Keys increasing with the input, two rows with one key, one bad row.
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 300))
	job := incrJob(dir)
	job.Columns = "HBASE_ROW_KEY,d:name,HBASE_TS_KEY"
	job.MaxRejects = -1
	if _, err := Execute(context.Background(), job, ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	b := "key,name,ts\nb1,x,5\nb1,x,5\nb2,y,notanumber\n"
	for i := 3; i < 200; i++ {
		b += "b" + string(rune('a'+i%26)) + strings.Repeat("z", i) + ",n,7\n"
	}
	os.WriteFile(filepath.Join(dir, "in", "b.csv"), []byte(b), 0o644)
	rp, err := PlanJob(context.Background(), job, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]string{}
	for _, in := range rp.Inputs {
		actions[filepath.Base(in.Path)] = in.Action
	}
	if actions["a.csv"] != "skip" || actions["b.csv"] != "load" || !strings.Contains(rp.Summary, "skip 1") {
		t.Errorf("inputs: %v (%s)", actions, rp.Summary)
	}
	w := strings.Join(rp.Warnings, "\n")
	for _, want := range []string{"no split points", "share their key", "rejected"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q: %s", want, w)
		}
	}
	if rp.Sample.Rejected != 1 || len(rp.Rejects) != 1 || len(rp.Duplicates) != 1 || rp.Duplicates[0] != "b1" {
		t.Errorf("sample %+v rejects %v dups %v", rp.Sample, rp.Rejects, rp.Duplicates)
	}

	// A changed loaded input: shown, and the plan says the run would fail.
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 301))
	rp, err = PlanJob(context.Background(), job, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rp.Summary, "would fail (exit 5)") {
		t.Errorf("summary: %s", rp.Summary)
	}
}

func TestPlanWarnsOnIncreasingKeys(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 500))
	job := incrJob(dir)
	job.StateDir = ""
	rp, err := PlanJob(context.Background(), job, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rp.Warnings, "\n"), "row keys increase") {
		t.Errorf("warnings: %v", rp.Warnings)
	}
}

func TestCheckJobReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.yaml")
	os.WriteFile(p, []byte(`input: [x.csv]
table: t
out: o
splits: `+filepath.Join(dir, "missing-splits.txt")+`
families:
  zz: {compression: zstd}
mapping:
  columns:
    - {name: a, type: nosuchtype, cell: "d:a"}
  rowkey: [a]
`), 0o644)
	job, err := LoadJob(p, func(string) (string, bool) { return "", false }, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckJob(job)
	if !errors.Is(err, ErrConfig) || ExitCode(err) != ExitUsage {
		t.Fatalf("check: %v", err)
	}
	for _, want := range []string{"bad.yaml:8: mapping: column 1 (a)", "nosuchtype", "missing-splits.txt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	p2 := filepath.Join(dir, "bad2.yaml")
	os.WriteFile(p2, []byte("input: [x.csv]\ntable: t\nout: o\ncolumns: HBASE_ROW_KEY,d:a\nfamilies:\n  zz: {compression: zstd}\n"), 0o644)
	job, _ = LoadJob(p2, func(string) (string, bool) { return "", false }, nil)
	if err := CheckJob(job); err == nil || !strings.Contains(err.Error(), `"zz" is not a family`) {
		t.Errorf("unknown family: %v", err)
	}
	if err := CheckJob(exampleJob(t, "orders", dir)); err != nil {
		t.Errorf("good job: %v", err)
	}
}

func TestPlanSplitSampleRegions(t *testing.T) {
	root := t.TempDir()
	genFile(t, filepath.Join(root, "demo-data", "logs.csv"), "logs", 4000)
	rp, err := PlanJob(context.Background(), exampleJob(t, "logs", root), PlanOptions{Sample: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Regions) != 4 || rp.Estimate.Rows != 4000 || rp.Sample.WholeInputs != 1 {
		t.Fatalf("regions %d, rows %d, whole %d", len(rp.Regions), rp.Estimate.Rows, rp.Sample.WholeInputs)
	}
	var cells int64
	for _, r := range rp.Regions {
		// Equal bytes: each region within 10% of a quarter.
		if q := rp.Estimate.KVBytes / 4; r.KVBytes < q*9/10 || r.KVBytes > q*11/10 {
			t.Errorf("region %d: %d bytes of %d", r.Index, r.KVBytes, rp.Estimate.KVBytes)
		}
		cells += r.Cells
	}
	if cells != rp.Estimate.Cells || rp.Estimate.Cells != rp.Sample.Cells {
		t.Errorf("cells: regions %d, estimate %d, sample %d", cells, rp.Estimate.Cells, rp.Sample.Cells)
	}
}
