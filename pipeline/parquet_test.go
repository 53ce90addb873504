package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	xparquet "github.com/xitongsys/parquet-go/parquet"
	xwriter "github.com/xitongsys/parquet-go/writer"
)

// parquetTestSchema covers every flat type the source supports, all nullable.
var parquetTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
	{Name: "str", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "lstr", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts_ms", Type: arrow.FixedWidthTypes.Timestamp_ms, Nullable: true},
	{Name: "ts_us", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	{Name: "ts_ns", Type: arrow.FixedWidthTypes.Timestamp_ns, Nullable: true},
}, nil)

// parquetTestRecord builds rows [first, first+n) of the test table; value (row, col) is derived
// from both so that misplaced values are caught, and roughly one value in 7 is NULL.
func parquetTestRecord(first, n int) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, parquetTestSchema)
	defer b.Release()
	for r := first; r < first+n; r++ {
		for c, fb := range b.Fields() {
			if (r+3*c)%7 == 0 {
				fb.AppendNull()
				continue
			}
			v := int64(r)*31 + int64(c)
			switch fb := fb.(type) {
			case *array.Int8Builder:
				fb.Append(int8(v))
			case *array.Int16Builder:
				fb.Append(int16(-v))
			case *array.Int32Builder:
				fb.Append(int32(v * 1000))
			case *array.Int64Builder:
				fb.Append(-v << 33)
			case *array.Uint8Builder:
				fb.Append(uint8(v))
			case *array.Uint16Builder:
				fb.Append(uint16(v))
			case *array.Uint32Builder:
				fb.Append(uint32(v) | 1<<31)
			case *array.Uint64Builder:
				fb.Append(uint64(v) | 1<<63)
			case *array.Float32Builder:
				fb.Append(float32(v) / 8)
			case *array.Float64Builder:
				fb.Append(float64(v) / 1024)
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(v*101 - 5000))
			case *array.StringBuilder:
				fb.Append(fmt.Sprintf("s%d,\"ü\"", v))
			case *array.LargeStringBuilder:
				fb.Append(strings.Repeat("L", int(v%5)))
			case *array.BinaryBuilder:
				fb.Append([]byte{byte(v), 0, byte(v >> 8)})
			case *array.BooleanBuilder:
				fb.Append(v%2 == 0)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(19000 + v))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(1700000000000 + v))
			default:
				panic(fmt.Sprintf("no test values for %T", fb))
			}
		}
	}
	return b.NewRecord()
}

// parquetReadAll reads every batch of src, checking batch bookkeeping against groupRows.
func parquetReadAll(t *testing.T, src *ParquetSource, groupRows, batchRows int) []*Batch {
	t.Helper()
	var out []*Batch
	var next int64
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if b.FirstRow != next || b.Record == nil || int64(b.NumRows) != b.Record.NumRows() || b.NumRows > batchRows {
			t.Fatalf("batch FirstRow %d (want %d) rows %d", b.FirstRow, next, b.NumRows)
		}
		if g := int(b.FirstRow) / groupRows; b.RowGroup != g || (int(b.FirstRow)+b.NumRows-1)/groupRows != g {
			t.Fatalf("batch rows %d..%d in row group %d: spans groups or wrong group", b.FirstRow, int(b.FirstRow)+b.NumRows, b.RowGroup)
		}
		next += int64(b.NumRows)
		out = append(out, b)
	}
	return out
}

func TestParquetArrowWriterAllTypes(t *testing.T) {
	const rows, groupRows, batchRows = 1000, 130, 50
	want := parquetTestRecord(0, rows)
	defer want.Release()
	path := filepath.Join(t.TempDir(), "all.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(parquetTestSchema, f,
		parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(groupRows)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	src, err := OpenParquet(path, 2, SourceOptions{BatchRows: batchRows})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.NumRowGroups() != 8 || src.NumRows() != rows {
		t.Fatalf("footer: %d row groups, %d rows", src.NumRowGroups(), src.NumRows())
	}
	for i, f := range src.Schema().Fields() {
		w := parquetTestSchema.Field(i)
		if f.Name != w.Name || !arrow.TypeEqual(f.Type, w.Type) || !f.Nullable {
			t.Fatalf("field %d: %s %s nullable=%v, want %s %s", i, f.Name, f.Type, f.Nullable, w.Name, w.Type)
		}
	}
	if h := src.Header(); len(h) != 19 || h[0] != "i8" || h[18] != "ts_ns" {
		t.Fatalf("header %q", h)
	}
	batches := parquetReadAll(t, src, groupRows, batchRows)
	total := 0
	for _, b := range batches {
		if b.FileIndex != 2 || b.Source != path {
			t.Fatalf("batch source %q %d", b.Source, b.FileIndex)
		}
		for c := 0; c < int(want.NumCols()); c++ {
			lo, hi := b.FirstRow, b.FirstRow+int64(b.NumRows)
			if !array.SliceEqual(want.Column(c), lo, hi, b.Record.Column(c), 0, int64(b.NumRows)) {
				t.Fatalf("column %s rows %d..%d differ", want.ColumnName(c), lo, hi)
			}
		}
		total += b.NumRows
		b.Release()
	}
	if total != rows {
		t.Fatalf("read %d rows, want %d", total, rows)
	}
	// Spot-check one decoded value and one NULL directly, independent of SliceEqual.
	src2, _ := OpenParquet(path, 0, SourceOptions{BatchRows: batchRows})
	defer src2.Close()
	b, err := src2.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	dec := b.Record.Column(10).(*array.Decimal128)
	if got := dec.Value(1).ToString(2); got != "-8.59" { // row 1, col 10: v = 31+10, 41*101-5000 = -859
		t.Errorf("dec[1] = %s, want -8.59", got)
	}
	if !b.Record.Column(0).IsNull(0) || b.Record.Column(3).IsNull(0) { // (0+0)%7 == 0 → NULL; (0+9)%7 != 0
		t.Errorf("null pattern of row 0 wrong")
	}
}

// parquetXRow is written by xitongsys/parquet-go, a Parquet implementation independent of Arrow.
type parquetXRow struct {
	ID     *int64   `parquet:"name=id, type=INT64, repetitiontype=OPTIONAL"`
	Small  *int32   `parquet:"name=small, type=INT32, convertedtype=INT_16, repetitiontype=OPTIONAL"`
	Count  *int32   `parquet:"name=count, type=INT32, repetitiontype=OPTIONAL"`
	Big    *int64   `parquet:"name=big, type=INT64, convertedtype=UINT_64, repetitiontype=OPTIONAL"`
	Ratio  *float32 `parquet:"name=ratio, type=FLOAT, repetitiontype=OPTIONAL"`
	Score  *float64 `parquet:"name=score, type=DOUBLE, repetitiontype=OPTIONAL"`
	Price  *int64   `parquet:"name=price, type=INT64, convertedtype=DECIMAL, scale=2, precision=18, repetitiontype=OPTIONAL"`
	Name   *string  `parquet:"name=name, type=BYTE_ARRAY, convertedtype=UTF8, repetitiontype=OPTIONAL"`
	Active *bool    `parquet:"name=active, type=BOOLEAN, repetitiontype=OPTIONAL"`
	Day    *int32   `parquet:"name=day, type=INT32, convertedtype=DATE, repetitiontype=OPTIONAL"`
	TS     *int64   `parquet:"name=ts, type=INT64, convertedtype=TIMESTAMP_MILLIS, repetitiontype=OPTIONAL"`
	TSUs   *int64   `parquet:"name=ts_us, type=INT64, convertedtype=TIMESTAMP_MICROS, repetitiontype=OPTIONAL"`
	Must   int64    `parquet:"name=must, type=INT64"`
}

func parquetXValue(r int) parquetXRow {
	p := func(v int64, col int) bool { return (r+col)%5 != 0 }
	row := parquetXRow{Must: int64(r) * 3}
	v := int64(r)
	if p(v, 0) {
		row.ID = &v
	}
	if p(v, 1) {
		x := int32(-r % 30000)
		row.Small = &x
	}
	if p(v, 2) {
		x := int32(r * 7)
		row.Count = &x
	}
	if p(v, 3) {
		x := int64(r) * 1_000_003
		row.Big = &x
	}
	if p(v, 4) {
		x := float32(r) / 4
		row.Ratio = &x
	}
	if p(v, 5) {
		x := float64(r) / 3
		row.Score = &x
	}
	if p(v, 6) {
		x := int64(r*101 - 700)
		row.Price = &x
	}
	if p(v, 7) {
		x := fmt.Sprintf("name-%d", r)
		row.Name = &x
	}
	if p(v, 8) {
		x := r%3 == 0
		row.Active = &x
	}
	if p(v, 9) {
		x := int32(18000 + r)
		row.Day = &x
	}
	if p(v, 10) {
		x := int64(1600000000000 + r)
		row.TS = &x
	}
	if p(v, 11) {
		x := int64(1600000000000000 + r)
		row.TSUs = &x
	}
	return row
}

func TestParquetIndependentWriter(t *testing.T) {
	const rows = 3000
	var buf bytes.Buffer
	pw, err := xwriter.NewParquetWriterFromWriter(&buf, new(parquetXRow), 1)
	if err != nil {
		t.Fatal(err)
	}
	pw.CompressionType = xparquet.CompressionCodec_SNAPPY
	for r := 0; r < rows; r++ {
		if err := pw.Write(parquetXValue(r)); err != nil {
			t.Fatal(err)
		}
		if r%700 == 699 {
			if err := pw.Flush(true); err != nil { // end the row group
				t.Fatal(err)
			}
		}
	}
	if err := pw.WriteStop(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	src, err := NewParquetSource(bytes.NewReader(data), int64(len(data)), "x.parquet", 0, SourceOptions{BatchRows: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.NumRowGroups() != 5 || src.NumRows() != rows {
		t.Fatalf("footer: %d row groups, %d rows (want several groups)", src.NumRowGroups(), src.NumRows())
	}
	wantTypes := map[string]arrow.Type{"id": arrow.INT64, "small": arrow.INT16, "count": arrow.INT32, "big": arrow.UINT64,
		"ratio": arrow.FLOAT32, "score": arrow.FLOAT64, "price": arrow.DECIMAL128, "name": arrow.STRING,
		"active": arrow.BOOL, "day": arrow.DATE32, "ts": arrow.TIMESTAMP, "ts_us": arrow.TIMESTAMP, "must": arrow.INT64}
	for _, f := range src.Schema().Fields() {
		if wantTypes[f.Name] != f.Type.ID() {
			t.Errorf("column %s has type %s", f.Name, f.Type)
		}
	}
	seen, lastGroup := 0, -1
	groups := 0
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.RowGroup != lastGroup {
			groups++
			lastGroup = b.RowGroup
		}
		if b.FirstRow != int64(seen) {
			t.Fatalf("FirstRow %d, want %d", b.FirstRow, seen)
		}
		rec := b.Record
		for i := 0; i < b.NumRows; i++ {
			r := seen + i
			w := parquetXValue(r)
			got := parquetXFromArrow(rec, i)
			if g, e := fmt.Sprint(got), parquetXString(w); g != e {
				t.Fatalf("row %d:\n got  %s\n want %s", r, g, e)
			}
		}
		seen += b.NumRows
		b.Release()
	}
	if seen != rows || groups != src.NumRowGroups() {
		t.Fatalf("read %d rows in %d groups, want %d in %d", seen, groups, rows, src.NumRowGroups())
	}
}

// parquetXFromArrow renders row i of rec in the parquetXString form, reading typed Arrow arrays.
func parquetXFromArrow(rec arrow.Record, i int) string {
	var parts []string
	for c := 0; c < int(rec.NumCols()); c++ {
		col := rec.Column(c)
		if col.IsNull(i) {
			parts = append(parts, "NULL")
			continue
		}
		switch a := col.(type) {
		case *array.Int64:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Int32:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Int16:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Uint64:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Float32:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Float64:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Decimal128:
			parts = append(parts, a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale))
		case *array.String:
			parts = append(parts, a.Value(i))
		case *array.Boolean:
			parts = append(parts, fmt.Sprint(a.Value(i)))
		case *array.Date32:
			parts = append(parts, fmt.Sprint(int32(a.Value(i))))
		case *array.Timestamp:
			parts = append(parts, fmt.Sprintf("%d%s", int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit))
		default:
			parts = append(parts, fmt.Sprintf("?%T", a))
		}
	}
	return strings.Join(parts, " ")
}

func parquetXString(w parquetXRow) string {
	s := func(p any, f func() string) string {
		switch v := p.(type) {
		case *int64:
			if v == nil {
				return "NULL"
			}
		case *int32:
			if v == nil {
				return "NULL"
			}
		case *float32:
			if v == nil {
				return "NULL"
			}
		case *float64:
			if v == nil {
				return "NULL"
			}
		case *string:
			if v == nil {
				return "NULL"
			}
		case *bool:
			if v == nil {
				return "NULL"
			}
		}
		return f()
	}
	return strings.Join([]string{
		s(w.ID, func() string { return fmt.Sprint(*w.ID) }),
		s(w.Small, func() string { return fmt.Sprint(*w.Small) }),
		s(w.Count, func() string { return fmt.Sprint(*w.Count) }),
		s(w.Big, func() string { return fmt.Sprint(uint64(*w.Big)) }),
		s(w.Ratio, func() string { return fmt.Sprint(*w.Ratio) }),
		s(w.Score, func() string { return fmt.Sprint(*w.Score) }),
		s(w.Price, func() string { return decimal128.FromI64(*w.Price).ToString(2) }),
		s(w.Name, func() string { return *w.Name }),
		s(w.Active, func() string { return fmt.Sprint(*w.Active) }),
		s(w.Day, func() string { return fmt.Sprint(*w.Day) }),
		s(w.TS, func() string { return fmt.Sprintf("%dms", *w.TS) }),
		s(w.TSUs, func() string { return fmt.Sprintf("%dus", *w.TSUs) }),
		fmt.Sprint(w.Must),
	}, " ")
}

func TestParquetNestedRejected(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Int64Builder).Append(1)
	lb := b.Field(1).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).Append("a")
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = NewParquetSource(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "nested.parquet", 0, SourceOptions{})
	if err == nil || !strings.Contains(err.Error(), `column "tags"`) || !strings.Contains(err.Error(), "only flat columns") {
		t.Errorf("nested column: %v", err)
	}
}

func TestParquetCorrupt(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("PAR1"), []byte("PAR1garbagegarbagePAR1"), bytes.Repeat([]byte{0xff}, 100)} {
		_, err := NewParquetSource(bytes.NewReader(data), int64(len(data)), "bad.parquet", 0, SourceOptions{})
		if err == nil || !strings.Contains(err.Error(), "bad.parquet") {
			t.Errorf("corrupt %q: %v", data, err)
		}
	}
}

func TestParquetViaExpandInputs(t *testing.T) {
	dir := t.TempDir()
	rec := parquetTestRecord(0, 10)
	defer rec.Release()
	f, err := os.Create(filepath.Join(dir, "t.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(parquetTestSchema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	inputs, err := ExpandInputs([]string{filepath.Join(dir, "*.parquet")}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := inputs[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, ok := src.(*ParquetSource); !ok {
		t.Fatalf("source is %T", src)
	}
	b, err := src.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if b.NumRows != 10 || !array.SliceEqual(rec.Column(11), 0, 10, b.Record.Column(11), 0, 10) {
		t.Errorf("rows %d", b.NumRows)
	}
	if _, err := src.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("after last batch: %v", err)
	}
}
