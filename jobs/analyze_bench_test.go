package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/gen"
)

// BenchmarkAnalyzeVsRun (issue 23 item 11): `hfload analyze` is the check run before a load, so it
// must cost no more than the load itself. Each iteration analyzes and then loads the same 200,000
// generated orders rows (unique keys, as a load with --duplicates error accepts) and reports the
// process CPU seconds of each and their ratio, analyze/run-cpu (target <= 1). Both run with the same
// worker count, in the same process, alternating, so machine load affects them alike.
func BenchmarkAnalyzeVsRun(b *testing.B) {
	dir := b.TempDir()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Dataset: "orders", Rows: 200_000, Seed: 1, Header: true}); err != nil {
		b.Fatal(err)
	}
	in := filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	job := func() *Job {
		return &Job{Input: StringList{in}, Header: true, Columns: ordersColumns, Timestamp: 1700000000000,
			Table: "orders", SplitSample: 4}
	}
	var analyzeCPU, runCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := processCPU()
		if _, err := Analyze(context.Background(), job(), AnalyzeOptions{}); err != nil {
			b.Fatal(err)
		}
		c1 := processCPU()
		j := job()
		j.Out = filepath.Join(dir, fmt.Sprintf("out%d", i))
		if _, err := Execute(context.Background(), j, ExecuteOptions{}); err != nil {
			b.Fatal(err)
		}
		c2 := processCPU()
		analyzeCPU += c1 - c0
		runCPU += c2 - c1
		b.StopTimer()
		os.RemoveAll(j.Out)
		b.StartTimer()
	}
	b.ReportMetric(analyzeCPU.Seconds()/float64(b.N), "analyze-cpu-s/op")
	b.ReportMetric(runCPU.Seconds()/float64(b.N), "run-cpu-s/op")
	if runCPU > 0 {
		b.ReportMetric(analyzeCPU.Seconds()/runCPU.Seconds(), "analyze/run-cpu")
	}
}
