package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func inputWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func inputGzip(t *testing.T, s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func inputZstd(t *testing.T, s string) []byte {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// inputRows opens in and returns its rows as "f1|f2|..." strings (NULL as <NULL>) plus its header.
func inputRows(t *testing.T, in Input) ([]string, []string) {
	t.Helper()
	src, err := in.Open()
	if err != nil {
		t.Fatalf("open %s: %v", in.Path, err)
	}
	defer src.Close()
	var header []string
	if h, ok := src.(HeaderSource); ok {
		header = h.Header()
	}
	var rows []string
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("next %s: %v", in.Path, err)
		}
		if b.FileIndex != in.Index || b.Source != in.Path {
			t.Fatalf("batch of %s says file %d %q", in.Path, b.FileIndex, b.Source)
		}
		for i := 0; i < b.NumRows; i++ {
			var parts []string
			for j := 0; j < b.NumCols; j++ {
				f, null := b.Field(i, j)
				if null {
					parts = append(parts, csvNull)
				} else {
					parts = append(parts, string(f))
				}
			}
			rows = append(rows, strings.Join(parts, "|"))
		}
	}
	return rows, header
}

func TestExpandInputsGlobsAndCompression(t *testing.T) {
	dir := t.TempDir()
	plain := "id,v\n1,a\n2,\n"
	inputWrite(t, filepath.Join(dir, "part-2.csv"), []byte(plain))
	inputWrite(t, filepath.Join(dir, "part-1.csv.gz"), inputGzip(t, "id,v\n3,\"g,z\"\n"))
	inputWrite(t, filepath.Join(dir, "part-3.CSV.zst"), inputZstd(t, "id,v\r\n4,zst\r\n"))
	inputWrite(t, filepath.Join(dir, "x.tsv"), []byte("id\tv\n5\tt\n"))
	inputs, err := ExpandInputs([]string{filepath.Join(dir, "part-*"), filepath.Join(dir, "x.tsv")}, SourceOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, in := range inputs {
		if in.Index != i {
			t.Errorf("input %d has index %d", i, in.Index)
		}
		st, _ := os.Stat(in.Path)
		if in.Size != st.Size() {
			t.Errorf("%s size %d, want %d", in.Path, in.Size, st.Size())
		}
		names = append(names, filepath.Base(in.Path))
	}
	if want := []string{"part-1.csv.gz", "part-2.csv", "part-3.CSV.zst", "x.tsv"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("inputs %q, want %q", names, want)
	}
	want := [][]string{{"3|g,z"}, {"1|a", "2|" + csvNull}, {"4|zst"}, {"5|t"}}
	for i, in := range inputs {
		rows, header := inputRows(t, in)
		if !reflect.DeepEqual(rows, want[i]) || !reflect.DeepEqual(header, []string{"id", "v"}) {
			t.Errorf("%s: rows %q header %q, want %q", in.Path, rows, header, want[i])
		}
	}
}

func TestExpandInputsStdin(t *testing.T) {
	for name, data := range map[string][]byte{
		"plain": []byte("1,x\n2,y\n"),
		"gzip":  inputGzip(t, "1,x\n2,y\n"),
		"zstd":  inputZstd(t, "1,x\n2,y\n"),
	} {
		inputs, err := inputExpand(context.Background(), []string{"-"}, SourceOptions{}, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) != 1 || inputs[0].Path != "-" || inputs[0].Size != -1 {
			t.Fatalf("%s: inputs %+v", name, inputs)
		}
		rows, _ := inputRows(t, inputs[0])
		if want := []string{"1|x", "2|y"}; !reflect.DeepEqual(rows, want) {
			t.Errorf("%s: rows %q", name, rows)
		}
	}
}

func TestExpandInputsDirectory(t *testing.T) {
	dir := t.TempDir()
	inputWrite(t, filepath.Join(dir, "b.csv"), []byte("2\n"))
	inputWrite(t, filepath.Join(dir, "a.csv"), []byte("1\n"))
	inputWrite(t, filepath.Join(dir, "_SUCCESS"), nil)
	inputWrite(t, filepath.Join(dir, ".a.csv.crc"), nil)
	inputWrite(t, filepath.Join(dir, "notes.md"), nil)
	inputs, err := ExpandInputs([]string{dir}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 2 || filepath.Base(inputs[0].Path) != "a.csv" || filepath.Base(inputs[1].Path) != "b.csv" {
		t.Fatalf("inputs %+v", inputs)
	}
}

func TestExpandInputsErrors(t *testing.T) {
	dir := t.TempDir()
	inputWrite(t, filepath.Join(dir, "data.dat"), []byte("1\n"))
	inputWrite(t, filepath.Join(dir, "data.parquet.gz"), []byte("x"))
	cases := []struct {
		paths []string
		opts  SourceOptions
		want  string
	}{
		{nil, SourceOptions{}, "no input paths"},
		{[]string{filepath.Join(dir, "*.csv")}, SourceOptions{}, "matches no files"},
		{[]string{filepath.Join(dir, "missing.csv")}, SourceOptions{}, "no such file"},
		{[]string{filepath.Join(dir, "data.dat")}, SourceOptions{}, "cannot tell the format"},
		{[]string{filepath.Join(dir, "data.parquet.gz")}, SourceOptions{}, "compressed Parquet"},
		{[]string{"-"}, SourceOptions{Format: "json"}, "unknown input format"},
		{[]string{filepath.Join(dir, "[")}, SourceOptions{}, "glob"},
	}
	for _, c := range cases {
		_, err := ExpandInputs(c.paths, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ExpandInputs(%q): %v, want error containing %q", c.paths, err, c.want)
		}
	}
	// An explicit format reads any extension.
	inputs, err := ExpandInputs([]string{filepath.Join(dir, "data.dat")}, SourceOptions{Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := inputRows(t, inputs[0]); !reflect.DeepEqual(rows, []string{"1"}) {
		t.Errorf("rows %q", rows)
	}
	// A corrupt gzip file fails at Open with the file name.
	inputWrite(t, filepath.Join(dir, "bad.csv.gz"), []byte("not gzip"))
	inputs, err = ExpandInputs([]string{filepath.Join(dir, "bad.csv.gz")}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inputs[0].Open(); err == nil || !strings.Contains(err.Error(), "bad.csv.gz") {
		t.Errorf("corrupt gzip: %v", err)
	}
}

func TestInputTruncatedCompressed(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 0; i < 20000; i++ {
		sb.WriteString("12345,some text that compresses\n")
	}
	gz := inputGzip(t, sb.String())
	zs := inputZstd(t, sb.String())
	inputWrite(t, filepath.Join(dir, "cut.csv.gz"), gz[:len(gz)/2])
	inputWrite(t, filepath.Join(dir, "cut.csv.zst"), zs[:len(zs)/2])
	inputs, err := ExpandInputs([]string{filepath.Join(dir, "cut.*")}, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		src, err := in.Open()
		if err != nil {
			t.Fatalf("%s: open: %v", in.Path, err)
		}
		rows := 0
		for {
			b, err := src.Next(context.Background())
			if err == nil {
				rows += b.NumRows
				continue
			}
			if errors.Is(err, io.EOF) {
				t.Errorf("%s: truncated stream read to a clean EOF after %d rows", in.Path, rows)
			} else if !strings.Contains(err.Error(), in.Path) {
				t.Errorf("%s: error without file name: %v", in.Path, err)
			}
			break
		}
		src.Close()
	}
}
