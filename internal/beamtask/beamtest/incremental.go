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

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// incrementalYAML is an incremental job with a numeric watermark, duplicates, rejects and split_sample
// (state_dir and out are set by the comparisons).
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

// incrementalRuns writes the inputs into dir/in (once) and runs the job three times with out, state and the
// options opts gives: a.csv; then b.csv too, which overlaps the first run's watermark (a.csv is
// skipped, b.csv's rows at or below the mark are filtered); then c.csv too, every row at or below the
// mark. files(res) reads a run's committed files by name.
func incrementalRuns(t *testing.T, dir, out, state string, opts func(*jobs.Job) jobs.ExecuteOptions,
	files func(*jobs.ExecuteResult) map[string][]byte) ([]*jobs.ExecuteResult, []map[string][]byte) {
	t.Helper()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in, "a.csv")); err != nil { // written once: manifests record mtimes
		incrementalInput(t, filepath.Join(in, "a.csv"), 1, 300, false)
		incrementalInput(t, filepath.Join(in, "b.csv"), 200, 400, true)
		incrementalInput(t, filepath.Join(in, "c.csv"), 150, 100, false)
	}
	var results []*jobs.ExecuteResult
	var trees []map[string][]byte
	for i, names := range [][]string{{"a.csv"}, {"a.csv", "b.csv"}, {"a.csv", "b.csv", "c.csv"}} {
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
		eo := opts(j)
		eo.Now = func() time.Time { return started }
		res, err := jobs.Execute(context.Background(), j, eo)
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if res.Manifest == nil {
			t.Fatalf("run %d: nothing committed: %s", i+1, res.Message)
		}
		f := files(res)
		// The run ids (random) name the output directories, which the manifests record.
		if b, ok := f[jobs.ManifestName]; ok {
			f[jobs.ManifestName] = []byte(strings.ReplaceAll(string(b), res.Manifest.RunID, "RUN"))
		}
		if len(f) == 1 { // nothing loaded: the manifest alone
			f["-"] = nil
		}
		results, trees = append(results, res), append(trees, f)
	}
	return results, trees
}

// sameRuns fails unless two sequences of incremental runs committed the same files with the same bytes
// (HFiles, rejects, manifest with its counts and watermark), run by run, and filtered as planned.
func sameRuns(t *testing.T, wantRes, gotRes []*jobs.ExecuteResult, want, got []map[string][]byte) {
	t.Helper()
	for i := range want {
		wm, gm := wantRes[i].Manifest, gotRes[i].Manifest
		t.Logf("run %d: counts %+v, watermark %+v", i+1, gm.Counts, gm.Watermark)
		if fmt.Sprint(wm.Watermark) != fmt.Sprint(gm.Watermark) {
			t.Errorf("run %d: watermark %+v, hfload run's %+v", i+1, gm.Watermark, wm.Watermark)
		}
		same(t, wantRes[i].OutDir+" (hfload run)", want[i], gotRes[i].OutDir+" (distributed)", got[i])
	}
	if c := gotRes[1].Manifest.Counts; c.RowsFiltered == 0 || c.RowsRejected == 0 || c.RowsKeyed == 0 {
		t.Errorf("run 2 should filter, reject and load rows: %+v", c)
	}
	if c := gotRes[2].Manifest.Counts; c.RowsFiltered != 100 || c.RowsKeyed != 0 {
		t.Errorf("run 3 should filter every row of c.csv: %+v", c)
	}
}

// CompareIncremental runs three incremental runs of one job (state_dir; see incrementalRuns) as
// `hfload run` does, then the same three with load as ExecuteOptions.Load, and fails unless each run's
// committed directory holds the same files with the same bytes in both, and the runs record the same
// watermarks. It returns the distributed runs' results.
func CompareIncremental(t *testing.T, load func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error)) []*jobs.ExecuteResult {
	t.Helper()
	dir := t.TempDir()
	// Both sequences use the same paths (manifests name them): the first one's are removed.
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	files := func(res *jobs.ExecuteResult) map[string][]byte { return tree(t, res.OutDir) }
	wantRes, want := incrementalRuns(t, dir, out, state, func(*jobs.Job) jobs.ExecuteOptions { return jobs.ExecuteOptions{} }, files)
	for _, p := range []string{out, state} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	gotRes, got := incrementalRuns(t, dir, out, state, func(j *jobs.Job) jobs.ExecuteOptions { return jobs.ExecuteOptions{Load: load(j)} }, files)
	sameRuns(t, wantRes, gotRes, want, got)
	return gotRes
}

// CompareIncrementalBucket is CompareIncremental with the output in a bucket (s3://bucket/incr; the S3
// endpoint and credentials are in the environment) and load as ExecuteOptions.LoadBucket: the same
// objects, run by run, and nothing else under the prefix (no work file, no incomplete upload); the work
// files a killed distributed run left are removed by the next run.
func CompareIncrementalBucket(t *testing.T, bucket string, load func(job *jobs.Job) BucketLoad) []*jobs.ExecuteResult {
	t.Helper()
	ctx := context.Background()
	st, err := storage.NewS3(ctx, bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, state := "s3://"+bucket+"/incr", filepath.Join(dir, "state")
	files := func(res *jobs.ExecuteResult) map[string][]byte {
		return objects(t, st, strings.TrimPrefix(res.OutDir, "s3://"+bucket+"/"))
	}
	wantRes, want := incrementalRuns(t, dir, out, state, func(*jobs.Job) jobs.ExecuteOptions { return jobs.ExecuteOptions{} }, files)
	objs, err := st.List(ctx, "incr/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := st.Delete(ctx, o.Key); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	// A distributed run killed before its commit left work files under its run directory: the first
	// run's recover removes them.
	killed := "incr/incr/20260101T000000Z-dead/" + jobs.BucketWorkDir + "/20260101T000000Z-dead/runs/u000000-t000000.run"
	if err := st.Put(ctx, killed, []byte("left by a killed run"), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var notes []string
	gotRes, got := incrementalRuns(t, dir, out, state, func(j *jobs.Job) jobs.ExecuteOptions {
		return jobs.ExecuteOptions{LoadBucket: load(j), Log: func(s string) { notes = append(notes, s) }}
	}, files)
	sameRuns(t, wantRes, gotRes, want, got)
	if !strings.Contains(strings.Join(notes, "\n"), "removed 1 work file of a killed distributed run") {
		t.Errorf("no note of the killed run's work files: %q", notes)
	}
	if objs, err := st.List(ctx, "incr/"); err != nil {
		t.Fatal(err)
	} else {
		for _, o := range objs {
			if strings.Contains(o.Key, jobs.BucketWorkDir) {
				t.Errorf("work file left: %s", o.Key)
			}
		}
	}
	if ups, err := st.Uploads(ctx, "incr/"); err != nil || len(ups) > 0 {
		t.Errorf("incomplete uploads left: %v %v", ups, err)
	}
	return gotRes
}
