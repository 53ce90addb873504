package pipeline

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/hfload/hfload/internal/kv"
)

// TestConstantColumnCSV maps a CSV whose rows get the constant column: every row's cell holds the long 1,
// the other fields are unchanged (NULLs included), and the header names the new column.
func TestConstantColumnCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	os.WriteFile(path, []byte("k,v\na,x\nb,\n\"c,1\",\"y\nz\"\n"), 0o644)
	inputs, err := ExpandInputs([]string{path}, SourceOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	inputs = WithConstantColumn(inputs, "_one", "1")
	src, err := inputs[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	if h := src.(HeaderSource).Header(); strings.Join(h, ",") != "k,v,_one" {
		t.Fatalf("header %q", h)
	}
	src.Close()

	m := mustCompile(t, &MappingConfig{
		Columns: []ColumnConfig{{Name: "k"}, {Name: "v", Cell: "d:v"}, {Name: "_one", Type: "long", Cell: "d:n"}},
		RowKey:  []PartConfig{{Column: "k"}},
	})
	var mu sync.Mutex
	var got []string
	_, err = Run(context.Background(), inputs, m, RunOptions{Timestamp: 1}, func(cb *CellBatch) error {
		mu.Lock()
		defer mu.Unlock()
		buf, refs, err := checkedKeyValues(cb)
		if err != nil {
			return err
		}
		for _, c := range refs {
			kvb := buf[c.Off : c.Off+c.Len]
			k := kv.Key(kv.KVKey(kvb))
			got = append(got, string(k.Row())+"/"+string(k.Qualifier())+"="+kv.ToStringBinary(kv.KVValue(kvb)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	one := kv.ToStringBinary(binary.BigEndian.AppendUint64(nil, 1))
	// Each row's cells in HBase order: qualifier n before v.
	want := "a/n=" + one + " a/v=x b/n=" + one + " c,1/n=" + one + " c,1/v=y\\x0Az"
	if strings.Join(got, " ") != want {
		t.Fatalf("cells\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestConstantColumnNeedsHeader: a headerless CSV cannot find the column by name.
func TestConstantColumnNeedsHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	os.WriteFile(path, []byte("a,1\n"), 0o644)
	inputs, err := ExpandInputs([]string{path}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WithConstantColumn(inputs, "_one", "1")[0].Open(); err == nil || !strings.Contains(err.Error(), "needs a header") {
		t.Fatalf("err = %v", err)
	}
	path2 := filepath.Join(t.TempDir(), "dup.csv")
	os.WriteFile(path2, []byte("_one\n1\n"), 0o644)
	inputs, _ = ExpandInputs([]string{path2}, SourceOptions{Header: true})
	if _, err := WithConstantColumn(inputs, "_one", "1")[0].Open(); err == nil || !strings.Contains(err.Error(), "already a column") {
		t.Fatalf("err = %v", err)
	}
}

// TestConstantColumnParquet: Parquet records get a string column of the constant.
func TestConstantColumnParquet(t *testing.T) {
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
	inputs, err := ExpandInputs([]string{filepath.Join(dir, "t.parquet")}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := WithConstantColumn(inputs, "_one", "1")[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := src.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	nc := int(parquetTestSchema.NumFields())
	if int(b.Record.NumCols()) != nc+1 || b.NumCols != nc+1 || b.Record.Schema().Field(nc).Name != "_one" || b.Record.NumRows() != 10 {
		t.Fatalf("record: %d columns, schema %v", b.Record.NumCols(), b.Record.Schema())
	}
	col := b.Record.Column(nc).(*array.String)
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) || col.Value(i) != "1" {
			t.Fatalf("row %d: %q", i, col.Value(i))
		}
	}
	if got, want := b.Record.Column(0).String(), rec.Column(0).String(); got != want {
		t.Fatalf("column 0 changed: %s vs %s", got, want)
	}
}
