package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/kv"
)

// TestRunCellTags: ImportTsv's HBASE_CELL_TTL and HBASE_CELL_VISIBILITY columns reach the HFiles as
// cell tags (visibility first, then TTL, as TextSortReducer writes them), through the sorter and
// sampled splits, and the files pass the full verify; configurations that cannot carry tags are
// refused before reading anything.
func TestRunCellTags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	var csv strings.Builder
	csv.WriteString("id,name,ttl,vis\n")
	for i := 0; i < 3000; i++ {
		ttl, vis := "", ""
		switch i % 3 {
		case 0:
			ttl, vis = "86400000", "secret|admin"
		case 1:
			ttl = "60000"
		}
		fmt.Fprintf(&csv, "k%c%s%05d,n%05d,%s,%s\n", 'a'+i%26, strings.Repeat("x", i%7), i, i, ttl, vis)
	}
	os.WriteFile(in, []byte(csv.String()), 0o644)
	labels := filepath.Join(dir, "labels")
	os.WriteFile(labels, []byte("secret=3\nadmin=4\n"), 0o644)

	job := baseJob(in, filepath.Join(dir, "out"))
	job.Columns = "HBASE_ROW_KEY,d:name,HBASE_CELL_TTL,HBASE_CELL_VISIBILITY"
	job.Labels = labels
	job.Memory = Size(16 << 20)
	job.SplitSample = 3
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyFull})
	if err != nil {
		t.Fatal(err)
	}
	vis, err := kv.VisibilityTags("secret|admin", map[string]int{"secret": 3, "admin": 4})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]byte{
		0: append(append([]byte(nil), vis...), kv.TTLTag(86400000)...),
		1: kv.TTLTag(60000),
		2: nil,
	}
	seen := 0
	for _, f := range res.Manifest.Files {
		r, c, err := hfilewriter.OpenFile(filepath.Join(job.Out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		it := r.Iter()
		for it.Next() {
			cell := it.Cell()
			i, err := strconv.Atoi(string(cell.Value[1:]))
			if err != nil {
				t.Fatalf("value %q: %v", cell.Value, err)
			}
			if !bytes.Equal(cell.Tags, want[i%3]) {
				t.Fatalf("row %d (%s): tags %x, want %x", i, cell.Row, cell.Tags, want[i%3])
			}
			seen++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if seen != 3000 {
		t.Fatalf("read %d cells, want 3000", seen)
	}

	// Refused up front: format v2, visibility without labels.
	bad := baseJob(in, filepath.Join(dir, "out-v2"))
	bad.Columns = job.Columns
	bad.Labels = labels
	bad.FormatVersion = 2
	if _, err := Execute(context.Background(), bad, ExecuteOptions{}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("format v2 with tags: %v", err)
	}
	bad = baseJob(in, filepath.Join(dir, "out-nolabels"))
	bad.Columns = job.Columns
	if _, err := Execute(context.Background(), bad, ExecuteOptions{}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "labels") {
		t.Fatalf("visibility without labels: %v", err)
	}
}
