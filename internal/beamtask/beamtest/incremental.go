package beamtest

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/jobs"
)

// incrementalYAML is an incremental job with a numeric watermark, duplicates, rejects and split_sample
// (state_dir and out are set by CompareIncremental).
const incrementalYAML = `
table: t
header: true
split_sample: 2
duplicates: last
max_rejects: -1
memory: 64MiB
incremental: {watermark: ts, watermark_type: number}
mapping:
  columns:
    - {name: id}
    - {name: name, cell: "d:name"}
    - {name: ts, type: long, cell: "d:ts"}
  rowkey: [id]
`

// incrementalInput writes a CSV file of rows rows with ts from lo upwards (repeating ids: duplicates;
// with bad, a ts that is not a number: a reject, and a quoted newline).
func incrementalInput(t testing.TB, path string, lo, rows int, bad bool) {
	t.Helper()
	rng := rand.New(rand.NewSource(int64(lo*7 + rows)))
	var b strings.Builder
	b.WriteString("id,name,ts\n")
	for r := 0; r < rows; r++ {
		ts := fmt.Sprint(lo + r)
		if bad && r%97 == 5 {
			ts = "soon"
		}
		name := fmt.Sprintf("name %d", rng.Intn(50))
		if bad && r%61 == 3 {
			name = "\"two\nlines\""
		}
		fmt.Fprintf(&b, "%05d,%s,%s\n", rng.Intn(rows*2/3), name, ts)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CompareIncremental runs three incremental runs of one job (state_dir) as `hfload run` does, then the
// same three with load as ExecuteOptions.Load, each time with the same inputs: a.csv; then b.csv too,
// which overlaps the first run's watermark (a.csv is skipped, b.csv's rows at or below the mark are
// filtered); then c.csv too, every row at or below the mark. It fails unless each run's committed
// directory holds the same files with the same bytes (HFiles, rejects, manifest with its counts and
// watermark) in both, and the runs' states record the same watermarks. It returns the distributed
// runs' results.
func CompareIncremental(t *testing.T, load func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error)) []*jobs.ExecuteResult {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	incrementalInput(t, filepath.Join(in, "a.csv"), 1, 300, false)
	incrementalInput(t, filepath.Join(in, "b.csv"), 200, 400, true)
	incrementalInput(t, filepath.Join(in, "c.csv"), 150, 100, false)
	inputs := [][]string{{"a.csv"}, {"a.csv", "b.csv"}, {"a.csv", "b.csv", "c.csv"}}
	// Both sequences use the same paths (manifests name them): the first one's are moved away.
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	run := func(distributed bool) (dirs []string, results []*jobs.ExecuteResult) {
		for i, names := range inputs {
			var ins []string
			for _, n := range names {
				ins = append(ins, filepath.Join(in, n))
			}
			j, err := jobs.ParseJob("incr.yaml", []byte(incrementalYAML), nil)
			if err != nil {
				t.Fatal(err)
			}
			j.Name, j.Input, j.Out, j.StateDir, j.Timestamp = "incr", ins, out, state, 1700000000000
			started := Started.Add(time.Duration(i) * time.Hour)
			eo := jobs.ExecuteOptions{Now: func() time.Time { return started }}
			if distributed {
				eo.Load = load(j)
			}
			res, err := jobs.Execute(context.Background(), j, eo)
			if err != nil {
				t.Fatalf("run %d (distributed %v): %v", i+1, distributed, err)
			}
			if res.Manifest == nil {
				t.Fatalf("run %d (distributed %v): nothing committed: %s", i+1, distributed, res.Message)
			}
			dirs, results = append(dirs, res.OutDir), append(results, res)
		}
		return dirs, results
	}
	wantDirs, wantRes := run(false)
	moved := filepath.Join(dir, "want")
	if err := os.Rename(out, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	gotDirs, gotRes := run(true)
	for i := range wantDirs {
		want := filepath.Join(moved, strings.TrimPrefix(wantDirs[i], out))
		wm, gm := wantRes[i].Manifest, gotRes[i].Manifest
		t.Logf("run %d: counts %+v, watermark %+v", i+1, gm.Counts, gm.Watermark)
		if fmt.Sprint(wm.Watermark) != fmt.Sprint(gm.Watermark) {
			t.Errorf("run %d: watermark %+v, hfload run's %+v", i+1, gm.Watermark, wm.Watermark)
		}
		fa, fb := tree(t, want), tree(t, gotDirs[i])
		// The run ids (random) name the output directories, which the manifests record.
		for _, m := range []struct {
			files    map[string][]byte
			dir, run string
		}{{fa, wantDirs[i], wm.RunID}, {fb, gotDirs[i], gm.RunID}} {
			if b, ok := m.files[jobs.ManifestName]; ok {
				m.files[jobs.ManifestName] = []byte(strings.ReplaceAll(string(b), m.run, "RUN"))
			}
		}
		if len(fa) == 1 { // nothing loaded: the manifest alone
			fa["-"], fb["-"] = nil, nil
		}
		same(t, want, fa, gotDirs[i], fb)
	}
	if c := gotRes[1].Manifest.Counts; c.RowsFiltered == 0 || c.RowsRejected == 0 || c.RowsKeyed == 0 {
		t.Errorf("run 2 should filter, reject and load rows: %+v", c)
	}
	if c := gotRes[2].Manifest.Counts; c.RowsFiltered != 100 || c.RowsKeyed != 0 {
		t.Errorf("run 3 should filter every row of c.csv: %+v", c)
	}
	return gotRes
}
