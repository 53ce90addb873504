package jobs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/hfload/hfload/pipeline"
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
	if rej, err := os.ReadFile(filepath.Join(res2.OutDir, "_rejects.jsonl")); err != nil ||
		!strings.Contains(string(rej), `"row":300,"reason":"watermark column updated is NULL"`) {
		t.Errorf("rejects: %s %v", rej, err)
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

// oneBatch is a Source with one batch.
type oneBatch struct{ b *pipeline.Batch }

func (o *oneBatch) Next(context.Context) (*pipeline.Batch, error) {
	if o.b == nil {
		return nil, io.EOF
	}
	b := o.b
	o.b = nil
	return b, nil
}
func (o *oneBatch) Close() error     { return nil }
func (o *oneBatch) Header() []string { return []string{"id", "v"} }

func TestWatermarkSplitsParquetBatchesWithExactRows(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	//          rows:  0   1   2   3   4    5   6   7
	vals := []int64{11, 12, 5, 13, -1, 14, 15, 3} // mark 10; -1 = NULL
	for i, v := range vals {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		if v < 0 {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.Int64Builder).Append(v)
		}
	}
	rec := bld.NewRecord()
	f, err := newWatermarkFilter("v", "number", -1, &Watermark{Column: "v", Type: "number", Value: "10"})
	if err != nil {
		t.Fatal(err)
	}
	in := f.wrap([]pipeline.Input{{Path: "x.parquet", Open: func() (pipeline.Source, error) {
		return &oneBatch{b: &pipeline.Batch{Source: "x.parquet", FirstRow: 100, NumRows: 8, NumCols: 2, Record: rec}}, nil
	}}})
	src, err := in[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		b, err := src.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids := b.Record.Column(0).(*array.Int64)
		var s []string
		for i := 0; i < b.NumRows; i++ {
			if ids.Value(i) != b.FirstRow-100+int64(i) {
				t.Fatalf("batch FirstRow %d row %d has id %d", b.FirstRow, i, ids.Value(i))
			}
			s = append(s, fmt.Sprint(ids.Value(i)))
		}
		for _, bad := range b.Bad {
			s = append(s, fmt.Sprintf("bad@%d", bad.Line))
		}
		got = append(got, fmt.Sprintf("%d:[%s]", b.FirstRow, strings.Join(s, " ")))
		b.Release()
	}
	src.Close()
	if want := "100:[0 1 bad@104] 103:[3] 105:[5 6]"; strings.Join(got, " ") != want {
		t.Errorf("batches %s, want %s", strings.Join(got, " "), want)
	}
	if f.Filtered() != 2 || f.Result().Value != "15" {
		t.Errorf("filtered %d, mark %v", f.Filtered(), f.Result())
	}
}

// The fast path must agree with the layouts: same instant for what it takes, and nothing it refuses
// that they would take differently.
func TestParseDateTimeFastAgreesWithLayouts(t *testing.T) {
	for _, s := range []string{"2024-01-02 03:04:05", "2024-01-02T03:04:05", "2024-01-02T03:04:05Z", "2024-02-29 23:59:59",
		"2023-02-29 00:00:00", "2024-02-30 00:00:00", "2024-13-01 00:00:00", "2024-01-01 24:00:00", "2024-01-01 00:60:00",
		"2024-1-01 00:00:00", "2024-01-01 00:00:0x", "2024-01-02T03:04:05+02:00", "2024-01-02 03:04:05.5", "2024-01-02"} {
		fast, ok := parseDateTimeFast(s)
		v, err := parseWatermarkValue("time", s, nil)
		if ok && (err != nil || !fast.Equal(v.t)) {
			t.Errorf("%s: fast %v, layouts %v %v", s, fast, v.t, err)
		}
		var slow time.Time
		var serr error = fmt.Errorf("no layout")
		for _, l := range timeLayouts {
			if tm, e := time.Parse(l, s); e == nil {
				slow, serr = tm, nil
				break
			}
		}
		if (serr == nil) != (err == nil) || (err == nil && !slow.Equal(v.t)) {
			t.Errorf("%s: parseWatermarkValue %v %v, layouts %v %v", s, v.t, err, slow, serr)
		}
	}
}
