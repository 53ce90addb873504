package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// writeTimesParquet writes key (string), name (string), updated (timestamp ms UTC, nullable) rows;
// a zero time is NULL.
func writeTimesParquet(t *testing.T, path, prefix string, times []time.Time) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.BinaryTypes.String},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "updated", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for i, tm := range times {
		bld.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%s%04d", prefix, i))
		bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name %d", i))
		if tm.IsZero() {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(tm.UnixMilli()))
		}
	}
	rec := bld.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWatermarkFiltersParquetRecords(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	var first []time.Time
	for i := 0; i < 100; i++ {
		first = append(first, base.Add(time.Duration(i)*time.Minute))
	}
	writeTimesParquet(t, filepath.Join(dir, "in", "a.parquet"), "a", first)
	job := incrJob(dir)
	job.Input = []string{filepath.Join(dir, "in", "*.parquet")}
	job.Header = false
	job.Columns = "HBASE_ROW_KEY,d:name,d:updated"
	job.Incremental = Incremental{Watermark: "updated", WatermarkType: "time"}
	job.MaxRejects = -1
	ctx := context.Background()
	res, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Manifest.Watermark; w == nil || w.Value != "2024-03-01T01:39:00Z" {
		t.Fatalf("first watermark %+v", w)
	}

	// Interleaved: even rows old (at or below the mark; row 0 exactly at it), odd rows new, the last NULL.
	mark := first[99]
	var second []time.Time
	var want []string
	for i := 0; i < 301; i++ {
		switch {
		case i == 300:
			second = append(second, time.Time{})
		case i%2 == 0:
			second = append(second, mark.Add(-time.Duration(i)*time.Second))
		default:
			second = append(second, mark.Add(time.Duration(i)*time.Millisecond))
			want = append(want, fmt.Sprintf("b%04d", i))
		}
	}
	writeTimesParquet(t, filepath.Join(dir, "in", "b.parquet"), "b", second)
	res2, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res2.Manifest.Counts
	if c.RowsRead != 301 || c.RowsFiltered != 150 || c.RowsKeyed != 150 || c.RowsRejected != 1 {
		t.Fatalf("counts %+v", c)
	}
	if got := rowsOf(t, res2); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("loaded rows differ: got %d, want %d", len(got), len(want))
	}
	// The name cells travel with their keys (columns were filtered together).
	for _, l := range readOutput(t, res2.OutDir, res2.Manifest) {
		f := strings.Split(l, "\t")
		var n int
		fmt.Sscanf(f[0], "b%d", &n)
		if strings.Contains(l, "/d:name/") && !strings.HasSuffix(l, fmt.Sprintf("name %d", n)) {
			t.Fatalf("cell of another row: %s", l)
		}
	}
	if w := res2.Manifest.Watermark; w.Value != mark.Add(299*time.Millisecond).Format(time.RFC3339Nano) {
		t.Errorf("new watermark %s", w.Value)
	}
}

func TestWatermarkByPositionWithoutHeader(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	os.WriteFile(filepath.Join(dir, "in", "a.csv"), []byte("k1,x,5\nk2,y,15\nk3,z,10\n"), 0o644)
	job := incrJob(dir)
	job.Header = false
	job.Incremental = Incremental{Watermark: "2", WatermarkType: "number"}
	res, err := Execute(context.Background(), job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Watermark.Value != "15" {
		t.Errorf("watermark %+v", res.Manifest.Watermark)
	}
	// By name without a header: a clear error, and nothing recorded.
	os.WriteFile(filepath.Join(dir, "in", "b.csv"), []byte("k4,x,20\n"), 0o644)
	job.Incremental.Watermark = "ts"
	_, err = Execute(context.Background(), job, ExecuteOptions{})
	if err == nil || !strings.Contains(err.Error(), "no header") {
		t.Fatalf("by name without header: %v", err)
	}
	if n := len(runsOf(t, job)); n != 1 {
		t.Errorf("failed run recorded: %d runs", n)
	}
}
