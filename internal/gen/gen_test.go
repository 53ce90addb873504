package gen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/hfload/hfload/pipeline"
)

func genBytes(t *testing.T, opts Options) ([]byte, int64) {
	t.Helper()
	var buf bytes.Buffer
	n, err := Write(&buf, opts)
	if err != nil {
		t.Fatalf("Write(%+v): %v", opts, err)
	}
	return buf.Bytes(), n
}

// genParseCSV reads generated CSV back with the pipeline's CSV source: rows as field slices,
// NULL as nil.
func genParseCSV(t *testing.T, data []byte, opts pipeline.SourceOptions) ([]string, [][]*string) {
	t.Helper()
	src, err := pipeline.NewCSVSource(bytes.NewReader(data), "gen.csv", 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]*string
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Bad) > 0 {
			t.Fatalf("generated CSV has bad rows: %+v", b.Bad[0])
		}
		for i := 0; i < b.NumRows; i++ {
			row := make([]*string, b.NumCols)
			for j := range row {
				if f, null := b.Field(i, j); !null {
					s := string(f)
					row[j] = &s
				}
			}
			rows = append(rows, row)
		}
	}
	return src.Header(), rows
}

func TestDeterministic(t *testing.T) {
	for _, d := range Datasets() {
		for _, format := range []string{"csv", "parquet"} {
			o := Options{Dataset: d.Name, Rows: 3000, Seed: 42, Format: format, RowGroupRows: 1000, Header: true}
			a, n := genBytes(t, o)
			b, _ := genBytes(t, o)
			if n != 3000 || !bytes.Equal(a, b) {
				t.Errorf("%s/%s: %d rows, same seed gives different bytes", d.Name, format, n)
			}
			o.Seed = 43
			if c, _ := genBytes(t, o); bytes.Equal(a, c) {
				t.Errorf("%s/%s: seed has no effect", d.Name, format)
			}
		}
	}
}

func TestOrdersCSVContent(t *testing.T) {
	data, n := genBytes(t, Options{Dataset: "orders", Rows: 5000, Seed: 1, Header: true})
	header, rows := genParseCSV(t, data, pipeline.SourceOptions{Header: true})
	want := []string{"order_id", "customer_id", "product_id", "order_ts", "quantity", "unit_price", "status", "comment"}
	if strings.Join(header, ",") != strings.Join(want, ",") {
		t.Fatalf("header %q", header)
	}
	if n != 5000 || len(rows) != 5000 {
		t.Fatalf("%d rows written, %d read", n, len(rows))
	}
	price := regexp.MustCompile(`^[0-9]+\.[0-9]{2}$`)
	nulls := make([]int, len(want))
	var quoted, multiline, empty int
	prevTS := ""
	for i, r := range rows {
		for j, f := range r {
			if f == nil {
				nulls[j]++
			}
		}
		if id, _ := strconv.Atoi(*r[0]); id != 1000001+i {
			t.Fatalf("row %d order_id %s", i, *r[0])
		}
		ts, err := time.Parse(time.DateTime, *r[3])
		if err != nil || *r[3] < prevTS || ts.Year() != 2024 {
			t.Fatalf("row %d order_ts %q (prev %q): %v", i, *r[3], prevTS, err)
		}
		prevTS = *r[3]
		if !price.MatchString(*r[5]) {
			t.Fatalf("row %d unit_price %q", i, *r[5])
		}
		if c := r[7]; c != nil {
			quoted += strings.Count(*c, `"`)
			multiline += strings.Count(*c, "\n")
			if *c == "" {
				empty++
			}
		}
	}
	for j, c := range nulls {
		nullable := j == 4 || j == 6 || j == 7
		if (c > 0) != nullable {
			t.Errorf("column %s: %d NULLs", want[j], c)
		}
	}
	if nulls[7] < 2500 || nulls[7] > 3500 || quoted == 0 || multiline == 0 || empty == 0 {
		t.Errorf("comment column: %d NULL, %d quotes, %d line breaks, %d empty", nulls[7], quoted, multiline, empty)
	}
}

func TestTabSeparatorNullMarker(t *testing.T) {
	data, _ := genBytes(t, Options{Dataset: "logs", Rows: 2000, Seed: 7, Separator: '\t', Null: `\N`})
	if !bytes.Contains(data, []byte("\t\\N\n")) {
		t.Fatalf("no \\N marker in output")
	}
	_, rows := genParseCSV(t, data, pipeline.SourceOptions{Separator: '\t', Null: `\N`})
	nullMsgs := 0
	var prev int64
	for i, r := range rows {
		if len(r) != 5 {
			t.Fatalf("row %d has %d fields", i, len(r))
		}
		ts, err := strconv.ParseInt(*r[2], 10, 64)
		if err != nil || ts < prev {
			t.Fatalf("row %d ts %q", i, *r[2])
		}
		prev = ts
		if r[4] == nil {
			nullMsgs++
		}
	}
	if len(rows) != 2000 || nullMsgs == 0 || nullMsgs > 60 {
		t.Errorf("%d rows, %d NULL messages", len(rows), nullMsgs)
	}
}

func TestTargetBytes(t *testing.T) {
	const target = 200 << 10
	data, n := genBytes(t, Options{Dataset: "metrics", TargetBytes: target, Seed: 3})
	if len(data) < target || len(data) > target+200 {
		t.Errorf("%d bytes for target %d", len(data), target)
	}
	if got := bytes.Count(data, []byte("\n")); int64(got) != n {
		t.Errorf("%d lines, %d rows reported", got, n)
	}
	pq, pn := genBytes(t, Options{Dataset: "metrics", TargetBytes: target, Seed: 3, Format: "parquet", RowGroupRows: 2000})
	if len(pq) < target || pn%2000 != 0 {
		t.Errorf("parquet: %d bytes, %d rows for target %d", len(pq), pn, target)
	}
}

// TestParquetMatchesCSV generates each dataset in both formats with the same seed and checks, via
// the pipeline's readers, that every value and NULL agrees.
func TestParquetMatchesCSV(t *testing.T) {
	for _, d := range Datasets() {
		const rows, group = 2500, 1000
		csvData, _ := genBytes(t, Options{Dataset: d.Name, Rows: rows, Seed: 9})
		_, csvRows := genParseCSV(t, csvData, pipeline.SourceOptions{})
		pq, _ := genBytes(t, Options{Dataset: d.Name, Rows: rows, Seed: 9, Format: "parquet", RowGroupRows: group})
		src, err := pipeline.NewParquetSource(bytes.NewReader(pq), int64(len(pq)), d.Name, 0, pipeline.SourceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if src.NumRowGroups() != 3 || src.NumRows() != rows {
			t.Fatalf("%s: %d row groups, %d rows", d.Name, src.NumRowGroups(), src.NumRows())
		}
		if h := src.Header(); len(h) != len(d.Columns) || h[0] != d.Columns[0].Name {
			t.Fatalf("%s: header %q", d.Name, h)
		}
		seen := 0
		for {
			b, err := src.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < b.NumRows; i++ {
				want := csvRows[seen+i]
				for j := range want {
					got := genArrowText(b.Record.Column(j), i)
					if (got == nil) != (want[j] == nil) || (got != nil && *got != *want[j]) {
						t.Fatalf("%s row %d col %s: parquet %v, csv %v", d.Name, seen+i, d.Columns[j].Name, genDeref(got), genDeref(want[j]))
					}
				}
			}
			seen += b.NumRows
			b.Release()
		}
		src.Close()
		if seen != rows {
			t.Fatalf("%s: read %d rows", d.Name, seen)
		}
	}
}

func genDeref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}

// genArrowText renders an Arrow value the way the CSV writer does.
func genArrowText(col arrow.Array, i int) *string {
	if col.IsNull(i) {
		return nil
	}
	var s string
	switch a := col.(type) {
	case *array.Int64:
		s = strconv.FormatInt(a.Value(i), 10)
	case *array.Int32:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Decimal128:
		s = a.Value(i).ToString(2)
	case *array.Timestamp:
		s = time.UnixMilli(int64(a.Value(i))).UTC().Format(time.DateTime)
	case *array.Float64:
		s = strconv.FormatFloat(a.Value(i), 'f', -1, 64)
	case *array.String:
		s = a.Value(i)
	default:
		s = "?unexpected type " + col.DataType().String()
	}
	return &s
}

func TestOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Dataset: "orders"},
		{Dataset: "nope", Rows: 1},
		{Dataset: "orders", Rows: 1, Format: "xml"},
		{Dataset: "orders", Rows: 1, Separator: '"'},
		{Dataset: "orders", Rows: -1},
	} {
		if _, err := Write(io.Discard, o); err == nil {
			t.Errorf("Write(%+v) accepted", o)
		}
	}
	ds := Datasets()
	if len(ds) != 3 || ds[0].Name != "orders" || len(ds[0].Columns) != 8 || ds[0].Columns[5].Type != "decimal(12,2)" || !ds[0].Columns[7].Nullable {
		t.Errorf("Datasets() = %+v", ds)
	}
}

func BenchmarkGenOrdersCSV(b *testing.B) {
	var n int64
	for b.Loop() {
		cw := &genCountingWriter{w: io.Discard}
		if _, err := Write(cw, Options{Dataset: "orders", Rows: 100000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		n = cw.n
	}
	b.SetBytes(n)
}
