package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// TestRunCSVFiles runs real CSV files through the sources (ExpandInputs) and the mapping.
func TestRunCSVFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.csv", "host,ts,event,n\n"+
		"web1,1700000000,\"boot, cold\",1\n"+
		"web2,1700000001,,2\n"+ // NULL event: skipped
		"web3,1700000002,x\n"+ // ragged (source)
		"web4,1700000003,y,notanumber\n") // bad long (mapping)
	write("b.csv", "host,ts,event,n\nweb1,1700000009,z,9\n")
	m := compileYAML(t, `
columns:
  - {name: host}
  - {name: ts, type: timestamp, format: s}
  - {name: event, cell: "d:event"}
  - {name: n, type: long, cell: "d:n"}
rowkey: [host, "'|'", reverse_timestamp(ts)]
timestamp: {column: ts}
`)
	inputs, err := ExpandInputs([]string{filepath.Join(dir, "*.csv")}, SourceOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	var rej bytes.Buffer
	counts, err := Run(context.Background(), inputs, m, RunOptions{Workers: 2, MaxRejects: -1, Rejects: &rej}, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	if counts.RowsRead != 5 || counts.RowsKeyed != 3 || counts.RowsRejected != 2 || counts.CellsEmitted != 5 || counts.NullsSkipped != 1 {
		t.Fatalf("counts %+v", counts)
	}
	sort.Strings(c.lines)
	// MaxInt64 - 1700000000000 = 0x7FFFFE74301A97FF (computed with Python's int.to_bytes)
	if len(c.lines) != 5 || !strings.HasPrefix(c.lines[0], "0 0/0 web1|\\x7F\\xFF\\xFEt0\\x1A\\x97\\xFF\td:event\t1700000000000\tPut\tboot, cold") {
		t.Fatalf("cells:\n%s", strings.Join(c.lines, "\n"))
	}
	rl := strings.Split(strings.TrimSpace(rej.String()), "\n")
	if len(rl) != 2 || !strings.Contains(rl[0], `"line":4`) || !strings.Contains(rl[1], `"line":5`) ||
		!strings.Contains(rl[1], `"raw":"web4,1700000003,y,notanumber"`) {
		t.Fatalf("rejects:\n%s", rej.String())
	}
}

// TestRunParquetFile writes a Parquet file with arrow's writer and maps it in ImportTsv mode.
func TestRunParquetFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"r1", "", "r3"}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.1, 2, 3e-5}, []bool{true, true, false})
	rec := b.NewRecord()
	b.Release()
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
	rec.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseColumns("HBASE_ROW_KEY,f:v")
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := ExpandInputs([]string{path}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	var rej bytes.Buffer
	counts, err := Run(context.Background(), inputs, mustCompile(t, cfg), RunOptions{MaxRejects: 5, Rejects: &rej, Timestamp: 99}, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, c.lines, []string{"0 0/0 r1\tf:v\t99\tPut\t0.1"}) // r3's NULL value: no cell
	if counts.RowsRejected != 1 || !strings.Contains(rej.String(), `"row_group":0,"row":1,"reason":"empty row key","raw":",2"`) {
		t.Fatalf("counts %+v rejects %s", counts, rej.String())
	}
}
