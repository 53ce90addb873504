package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// parquetRecord builds a two-row record with one column of each supported kind; row 1 is mostly NULL.
func parquetRecord(t *testing.T) arrow.Record {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "bin", Type: arrow.BinaryTypes.Binary},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{-5, 6}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"Zoë", ""}, []bool{true, false})
	b.Field(2).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-105), decimal128.FromI64(0)}, []bool{true, false})
	// 2024-03-01 11:00:00.25 UTC
	b.Field(3).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1709290800250000, 0}, []bool{true, false})
	b.Field(4).(*array.Date32Builder).AppendValues([]arrow.Date32{19783, 0}, []bool{true, false}) // 2024-03-01
	b.Field(5).(*array.Float64Builder).AppendValues([]float64{1e21, 0}, []bool{true, false})
	b.Field(6).(*array.Float32Builder).AppendValues([]float32{0.1, 0}, []bool{true, false})
	b.Field(7).(*array.BooleanBuilder).AppendValues([]bool{true, false}, nil)
	b.Field(8).(*array.BinaryBuilder).AppendValues([][]byte{{0, 0xFF}, nil}, []bool{true, false})
	b.Field(9).(*array.Uint64Builder).AppendValues([]uint64{math.MaxUint64, 1}, nil)
	return b.NewRecord()
}

func TestParquetImportTsvText(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:name,d:price,d:ts,d:day,d:f,d:f32,d:ok,d:bin,d:u")
	if err != nil {
		t.Fatal(err)
	}
	m := mustCompile(t, cfg)
	rec := parquetRecord(t)
	b := &Batch{Source: "p.parquet", FileIndex: 2, FirstRow: 100, NumRows: 2, NumCols: 10, Record: rec, RowGroup: 1}
	defer b.Release()
	var cb CellBatch
	if err := m.NewMapper().MapBatch(b, nil, &cb, nil); err != nil {
		t.Fatal(err)
	}
	equalLines(t, cellLines(t, &cb), []string{
		"0 2/100 -5\td:name\t0\tPut\tZo\\xC3\\xAB",
		"0 2/100 -5\td:price\t0\tPut\t-1.05",
		"0 2/100 -5\td:ts\t0\tPut\t2024-03-01 11:00:00.25",
		"0 2/100 -5\td:day\t0\tPut\t2024-03-01",
		"0 2/100 -5\td:f\t0\tPut\t1e+21",
		"0 2/100 -5\td:f32\t0\tPut\t0.1",
		"0 2/100 -5\td:ok\t0\tPut\ttrue",
		"0 2/100 -5\td:bin\t0\tPut\t\\x00\\xFF",
		"0 2/100 -5\td:u\t0\tPut\t18446744073709551615",
		// NULLs produce no cell (the default; ImportTsv with skip.empty.columns)
		"0 2/101 6\td:ok\t0\tPut\tfalse",
		"0 2/101 6\td:u\t0\tPut\t1",
	})
}

func TestParquetTyped(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: id, type: long}
  - {name: price, type: double, cell: "d:p"}
  - {name: ts, type: timestamp}
  - {name: u, type: long, cell: "d:u"}
rowkey: [{column: id, flip_sign: true}]
timestamp: {column: ts}
`)
	rec := parquetRecord(t)
	b := &Batch{Source: "p.parquet", FileIndex: 0, FirstRow: 7, NumRows: 2, NumCols: 10, Record: rec, RowGroup: 3}
	defer b.Release()
	var cb CellBatch
	var rej bytes.Buffer
	mp := m.NewMapper()
	if err := mp.MapBatch(b, nil, &cb, NewRejectSink(&rej, -1)); err != nil {
		t.Fatal(err)
	}
	// Row 0: u = MaxUint64 overflows long; row 1: ts NULL → rejected for the timestamp.
	if cb.Cells() != 0 || mp.Counts().RowsRejected != 2 {
		t.Fatalf("cells %q counts %+v", cellLines(t, &cb), mp.Counts())
	}
	lines := strings.Split(strings.TrimSpace(rej.String()), "\n")
	var r struct {
		Source   string
		RowGroup *int `json:"row_group"`
		Row      *int64
		Line     *int64
		Reason   string
		Raw      []byte `json:"raw_base64"` // the binary column makes raw invalid UTF-8
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatal(err)
	}
	if r.RowGroup == nil || *r.RowGroup != 3 || r.Row == nil || *r.Row != 7 || r.Line != nil ||
		!strings.Contains(r.Reason, `"18446744073709551615" overflows`) ||
		!strings.HasPrefix(string(r.Raw), "-5,Zoë,-1.05,2024-03-01 11:00:00.25,") {
		t.Fatalf("reject %s", lines[0])
	}
	if !strings.Contains(lines[1], `timestamp column \"ts\": value is NULL`) {
		t.Fatalf("reject %s", lines[1])
	}
}

func TestParquetTypedValues(t *testing.T) {
	m := compileYAML(t, `
columns:
  - {name: id, type: long}
  - {name: price, type: double, cell: "d:p"}
  - {name: ts, type: timestamp, cell: "d:ts"}
  - {name: day, type: timestamp, cell: "d:day"}
  - {name: f, type: decimal, cell: "d:f"}
  - {name: ok, type: boolean, cell: "d:ok"}
rowkey: [{column: id, flip_sign: true}]
timestamp: {column: ts}
`)
	rec := parquetRecord(t)
	b := &Batch{Source: "p.parquet", NumRows: 1, NumCols: 10, Record: rec}
	defer b.Release()
	var cb CellBatch
	if err := m.NewMapper().MapBatch(b, nil, &cb, nil); err != nil {
		t.Fatal(err)
	}
	// id -5 flipped: 0x7FFFFFFFFFFFFFFB; -1.05 = 0xBFF0CCCCCCCCCCCD; ts ms 1709290800250 = 0x18DF9ABC47A;
	// day 19783*86400000 = 1709251200000 = 0x18DF74F8400.
	row := `\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFB`
	equalLines(t, cellLines(t, &cb), []string{
		"0 0/0 " + row + "\td:p\t1709290800250\tPut\t\\xBF\\xF0\\xCC\\xCC\\xCC\\xCC\\xCC\\xCD",
		"0 0/0 " + row + "\td:ts\t1709290800250\tPut\t\\x00\\x00\\x01\\x8D\\xF9\\xAB\\xC4z",
		"0 0/0 " + row + "\td:day\t1709290800250\tPut\t\\x00\\x00\\x01\\x8D\\xF7O\\x84\\x00",
		"0 0/0 " + row + "\td:f\t1709290800250\tPut\t1e+21",
		"0 0/0 " + row + "\td:ok\t1709290800250\tPut\t\\xFF",
	})
}

func TestAppendText(t *testing.T) {
	for _, tc := range []struct {
		v    value
		want string
	}{
		{value{kind: vkDecimal, i: 5, scale: 3}, "0.005"},
		{value{kind: vkDecimal, i: -12345, scale: 2}, "-123.45"},
		{value{kind: vkDecimal, i: math.MinInt64, scale: 1}, "-922337203685477580.8"},
		{value{kind: vkDecimal, i: 7, scale: -2}, "700"},
		{value{kind: vkDecimal, i: 0, scale: 2}, "0.00"},
		{value{kind: vkTimeUS, i: -1}, "1969-12-31 23:59:59.999999"},
		{value{kind: vkTimeUS, i: 0}, "1970-01-01 00:00:00"},
		{value{kind: vkDate, i: -1}, "1969-12-31"},
		{value{kind: vkFloat, f: 100}, "100"},
		{value{kind: vkFloat, f: 1e-7}, "1e-07"},
		{value{kind: vkFloat, f: math.Inf(-1)}, "-Inf"},
	} {
		if got := string(appendText(nil, &tc.v)); got != tc.want {
			t.Errorf("appendText(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestArrowDictionary(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"red", "green"}, nil)
	dict := sb.NewArray()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{1, 0, 1}, []bool{true, true, false})
	idx := ib.NewArray()
	defer idx.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	arr := array.NewDictionaryArray(dt, idx, dict)
	defer arr.Release()
	var v value
	var got []string
	for i := 0; i < arr.Len(); i++ {
		if _, err := arrowValue(arr, i, &v, nil); err != nil {
			t.Fatal(err)
		}
		if v.kind == vkNull {
			got = append(got, "NULL")
		} else {
			got = append(got, string(appendText(nil, &v)))
		}
	}
	if strings.Join(got, ",") != "green,red,NULL" {
		t.Fatalf("got %v", got)
	}
}
