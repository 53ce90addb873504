package beamtest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// ChunkCase is a CSV job for cutting files into chunks (beamtask.Options.CSVUnitSize): its first
// input, about 40 KB, has keys repeated near and far (duplicates: last), rejects (a number that is not
// one; a ragged row), blank lines and quoted fields, some holding a line break; the second input is
// gzipped (never cut). split_sample 3.
func ChunkCase() Case {
	return Case{Name: "csv-chunks", YAML: dupsRejectsSampleJob, Inputs: chunkInputs}
}

func chunkInputs(t testing.TB, dir string) []string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(21))
	row := func(b *bytes.Buffer, rows int) {
		for r := 0; r < rows; r++ {
			id := rng.Intn(rows * 2 / 3)
			n := fmt.Sprint(rng.Intn(1000))
			switch rng.Intn(60) {
			case 0:
				n = "x" + n // a reject
			case 1:
				fmt.Fprintf(b, "%06d,ragged\n", id)
				continue
			case 2:
				b.WriteString("\n")
			}
			name := fmt.Sprintf("name %d", rng.Intn(100))
			switch rng.Intn(30) {
			case 0:
				name = fmt.Sprintf("\"two\nlines, %d\"", rng.Intn(9))
			case 1:
				name = fmt.Sprintf("\"a, b %d\"", rng.Intn(9))
			}
			fmt.Fprintf(b, "%06d,%s,%s,g%d\n", id, name, n, rng.Intn(3))
		}
	}
	var big, small bytes.Buffer
	big.WriteString("id,name,n,tag\n")
	row(&big, 1500)
	small.WriteString("id,name,n,tag\n")
	row(&small, 200)
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv.gz")
	if err := os.WriteFile(a, big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(small.Bytes())
	zw.Close()
	if err := os.WriteFile(b, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{a, b}
}

// ChunkSize returns a chunk size in [lo, hi) that cuts the CSV file at path (quotes only around
// whole fields, no escapes) only where a record starts (joins true), or somewhere inside a quoted
// field's line break (joins false); 0 if none.
func ChunkSize(t testing.TB, path string, lo, hi int64, joins bool) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// inQuote[p]: offset p lies inside a quoted field.
	inQuote := make([]bool, len(data)+1)
	q := false
	for i, c := range data {
		inQuote[i] = q
		if c == '"' {
			q = !q
		}
	}
	// goodCut: the first line start at or after c is a record start.
	goodCut := func(c int64) bool {
		nl := bytes.IndexByte(data[c-1:], '\n')
		if nl < 0 {
			return true
		}
		return !inQuote[int(c-1)+nl+1]
	}
	for size := lo; size < hi; size++ {
		ok := true
		for c := size; c < int64(len(data)); c += size {
			ok = ok && goodCut(c)
		}
		if ok == joins {
			return size
		}
	}
	return 0
}
