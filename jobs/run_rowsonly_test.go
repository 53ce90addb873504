package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/engine"
)

// LoadTo's results carry each file's first and last keys whole (FileResult.FirstKey, as Key.String
// formats them); the run's own load (loadTo with rowsOnly, whose results only feed a manifest) leaves
// them empty and has the same files, rows and everything else.
func TestLoadRowsOnly(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	writeCSV(t, in, e2eRows(500, 1))
	splitsFile := filepath.Join(dir, "splits.txt")
	if err := os.WriteFile(splitsFile, []byte("4\n8\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(name string, rowsOnly bool) *LoadResult {
		job := baseJob(in, filepath.Join(dir, name))
		job.Splits = splitsFile
		spec, err := job.PrepareContext(context.Background(), time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		spec.TempDir = t.TempDir()
		out := filepath.Join(dir, name)
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		lr, err := loadTo(context.Background(), spec, engine.DirSink{Dir: out}, rowsOnly)
		if lr == nil || err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return lr
	}
	whole, rows := load("whole", false), load("rows", true)
	if len(whole.Files) != 4 || len(rows.Files) != len(whole.Files) {
		t.Fatalf("%d and %d files", len(whole.Files), len(rows.Files))
	}
	for i := range whole.Files {
		w, r := whole.Files[i], rows.Files[i]
		if !strings.HasPrefix(w.FirstKey, w.FirstRow+"/d:") || !strings.HasPrefix(w.LastKey, w.LastRow+"/d:") || w.FirstRow == "" {
			t.Fatalf("file %d: keys %q, %q of rows %q, %q", i, w.FirstKey, w.LastKey, w.FirstRow, w.LastRow)
		}
		w.FirstKey, w.LastKey = "", ""
		if r != w {
			t.Fatalf("file %d: rows only %+v, want %+v", i, r, w)
		}
	}
}
