// Package beamtest holds the small jobs the distributed drivers are tested with and the check that a
// driver's output is byte-identical to `hfload run`'s (jobs.Execute with Load). Inputs are generated
// into the test's temporary directory; nothing is committed.
package beamtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// Case is one job: its YAML (input and out are set by Job) and a function writing its inputs.
type Case struct {
	Name   string
	YAML   string
	Inputs func(t testing.TB, dir string) []string
}

// dupsRejectsSampleJob is the job of csv-dups-rejects-sample, also the job of ChunkCase.
const dupsRejectsSampleJob = `
table: t
header: true
split_sample: 3
duplicates: last
max_rejects: -1
memory: 64MiB
mapping:
  columns:
    - {name: id}
    - {name: name, cell: "d:name"}
    - {name: n, type: long, cell: "d:n"}
    - {name: tag, cell: "e:tag"}
  rowkey: [id]
`

// Cases are the jobs every driver must reproduce byte for byte.
func Cases() []Case {
	return []Case{
		{Name: "csv-dups-rejects-sample", YAML: dupsRejectsSampleJob, Inputs: csvInputs(3, 400, true)},
		{Name: "csv-aggregate", YAML: `
table: t
header: true
split_uniform: 4
keyspace: decimal
memory: 64MiB
mapping:
  columns:
    - {name: id}
    - {name: name}
    - {name: n, type: long}
    - {name: tag}
  rowkey: [id]
  cells:
    - {family: d, qualifier: sum, value: n}
    - {family: d, qualifier: cnt, value: _one}
    - {family: d, qualifier: "t:$${tag}", value: n}
aggregate:
  - {cell: "d:sum", op: sum, type: long}
  - {cell: "d:cnt", op: count}
  - {cell: "d:t:*", op: max, type: long}
`, Inputs: csvInputs(2, 500, false)},
		{Name: "parquet-row-groups", YAML: `
table: t
split_sample: 2
duplicates: first
memory: 64MiB
mapping:
  columns:
    - {name: id}
    - {name: name, cell: "d:name"}
    - {name: n, type: long, cell: "d:n"}
  rowkey: [id]
`, Inputs: parquetInputs(2, 700, 100)},
	}
}

// Job parses c's YAML into a job reading ins and writing out, with a fixed timestamp.
func (c Case) Job(t testing.TB, ins []string, out string) *jobs.Job {
	t.Helper()
	j, err := jobs.ParseJob(c.Name+".yaml", []byte(c.YAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	j.Name, j.Input, j.Out, j.Timestamp = c.Name, ins, out, 1700000000000
	return j
}

// Started is the fixed start time both runs of a comparison use (it names the run and the staging dir).
var Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Compare runs c with jobs.Execute as `hfload run` does and again with load as ExecuteOptions.Load,
// and fails unless the two output directories hold the same files with the same bytes (HFiles,
// rejects, manifest). It returns the second run's result.
func Compare(t *testing.T, c Case, load func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error)) *jobs.ExecuteResult {
	t.Helper()
	want, got, res := Runs(t, c, load)
	SameTree(t, want, got)
	return res
}

// Runs runs c with jobs.Execute as `hfload run` does and again with load as ExecuteOptions.Load, and
// returns the two output directories and the second run's result.
func Runs(t *testing.T, c Case, load func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error)) (want, got string, res *jobs.ExecuteResult) {
	t.Helper()
	dir := t.TempDir()
	ins := c.Inputs(t, filepath.Join(dir, "in"))
	now := func() time.Time { return Started }
	// Both runs write to the same path (the manifest names it): the first one's output is moved away.
	got, want = filepath.Join(dir, "out"), filepath.Join(dir, "want")
	if _, err := jobs.Execute(context.Background(), c.Job(t, ins, got), jobs.ExecuteOptions{Now: now}); err != nil {
		t.Fatalf("%s: hfload run: %v", c.Name, err)
	}
	if err := os.Rename(got, want); err != nil {
		t.Fatal(err)
	}
	job := c.Job(t, ins, got)
	res, err := jobs.Execute(context.Background(), job, jobs.ExecuteOptions{Now: now, Load: load(job)})
	if err != nil {
		t.Fatalf("%s: distributed run: %v", c.Name, err)
	}
	return want, got, res
}

// SameCells fails unless outputs a and b (committed directories) hold the same cells, in the same
// order, for every region and family, the same rejects and the same counts, however their HFiles are
// cut; and unless every file of b lies within its region. It returns how many files each has.
func SameCells(t testing.TB, a, b string) (filesA, filesB int) {
	t.Helper()
	ma, mb := manifest(t, a), manifest(t, b)
	ca, cb := ma.Counts, mb.Counts
	ca.FilesWritten, cb.FilesWritten, ca.BytesWritten, cb.BytesWritten = 0, 0, 0, 0
	if ca != cb {
		t.Errorf("counts differ:\n%+v\n%+v", ma.Counts, mb.Counts)
	}
	ra, _ := os.ReadFile(filepath.Join(a, "_rejects.jsonl"))
	rb, _ := os.ReadFile(filepath.Join(b, "_rejects.jsonl"))
	if !bytes.Equal(ra, rb) {
		t.Errorf("rejects differ")
	}
	da, db := cellsByRegion(t, a, ma), cellsByRegion(t, b, mb)
	if strings.Join(keys(da), ",") != strings.Join(keys(db), ",") {
		t.Fatalf("regions·families differ: %v vs %v", keys(da), keys(db))
	}
	for _, k := range keys(da) {
		if !bytes.Equal(da[k], db[k]) {
			t.Errorf("%s: cells differ (%d vs %d bytes of cell text)", k, len(da[k]), len(db[k]))
		}
	}
	for _, f := range mb.Files {
		if f.RegionStart != "" && f.FirstKey < f.RegionStart || f.RegionEnd != "" && f.LastKey >= f.RegionEnd {
			t.Errorf("%s [%s, %s] straddles its region [%s, %s)", f.Path, f.FirstKey, f.LastKey, f.RegionStart, f.RegionEnd)
		}
	}
	return len(ma.Files), len(mb.Files)
}

func manifest(t testing.TB, dir string) *jobs.Manifest {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, jobs.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := jobs.ReadManifest(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// cellsByRegion dumps the cells of every (region, family) of an output, its files in key order.
func cellsByRegion(t testing.TB, dir string, m *jobs.Manifest) map[string][]byte {
	t.Helper()
	files := append([]jobs.OutputFile(nil), m.Files...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].FirstKey < files[j].FirstKey })
	out := map[string][]byte{}
	for _, f := range files {
		r, c, err := hfilewriter.OpenFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, err = r.DumpCellText(&b)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		k := fmt.Sprintf("r%03d/%s", f.Region, f.Family)
		out[k] = append(out[k], b.Bytes()...)
	}
	return out
}

// SameTree fails unless directories a and b hold the same files with the same bytes.
func SameTree(t testing.TB, a, b string) {
	t.Helper()
	same(t, a, tree(t, a), b, tree(t, b))
}

// same fails unless fa and fb (files by name, from a and b) hold the same names and bytes, the
// manifests' run ids aside.
func same(t testing.TB, a string, fa map[string][]byte, b string, fb map[string][]byte) {
	t.Helper()
	if strings.Join(keys(fa), "\n") != strings.Join(keys(fb), "\n") {
		t.Fatalf("different files:\n%s:\n  %s\n%s:\n  %s", a, strings.Join(keys(fa), "\n  "), b, strings.Join(keys(fb), "\n  "))
	}
	for _, k := range keys(fa) {
		if k == jobs.ManifestName { // the run id ends with random hex
			fa[k], fb[k] = runID.ReplaceAll(fa[k], nil), runID.ReplaceAll(fb[k], nil)
		}
		if !bytes.Equal(fa[k], fb[k]) {
			t.Errorf("%s differs (%d vs %d bytes)", k, len(fa[k]), len(fb[k]))
			if strings.HasSuffix(k, ".json") || strings.HasSuffix(k, ".jsonl") {
				t.Logf("want:\n%s\ngot:\n%s", fa[k], fb[k])
			}
		}
	}
	if len(fa) < 2 {
		t.Fatalf("%s: only %d files", a, len(fa))
	}
}

var runID = regexp.MustCompile(`"run_id": "[^"]*"`)

func tree(t testing.TB, root string) map[string][]byte {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string][]byte) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// CSVInputs is csvInputs, for tests' own cases.
func CSVInputs(files, rows int, bad bool) func(t testing.TB, dir string) []string {
	return csvInputs(files, rows, bad)
}

// csvInputs writes files CSV files of rows rows each: ids drawn from a range smaller than the rows (so
// keys repeat within and across files: duplicates), a NULL-able tag, and with bad, some rows whose n is
// not a number (rejects) and a quoted field with a newline.
func csvInputs(files, rows int, bad bool) func(t testing.TB, dir string) []string {
	return func(t testing.TB, dir string) []string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(int64(files*1000 + rows)))
		var paths []string
		for f := 0; f < files; f++ {
			var b strings.Builder
			b.WriteString("id,name,n,tag\n")
			for r := 0; r < rows; r++ {
				id := rng.Intn(rows * files * 3 / 4)
				n := fmt.Sprint(rng.Intn(1000))
				if bad && rng.Intn(50) == 0 {
					n = "x" + n
				}
				name := fmt.Sprintf("name %d", rng.Intn(100))
				if rng.Intn(40) == 0 {
					name = "\"two\nlines, quoted\""
				}
				tag := fmt.Sprintf("g%d", rng.Intn(3))
				if bad && rng.Intn(10) == 0 {
					tag = ""
				}
				fmt.Fprintf(&b, "%06d,%s,%s,%s\n", id, name, n, tag)
			}
			p := filepath.Join(dir, fmt.Sprintf("part-%d.csv", f))
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		return paths
	}
}

// parquetInputs writes files Parquet files of rows rows in row groups of group rows, with repeated ids.
func parquetInputs(files, rows, group int) func(t testing.TB, dir string) []string {
	return func(t testing.TB, dir string) []string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(int64(rows)))
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.BinaryTypes.String},
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		}, nil)
		var paths []string
		for f := 0; f < files; f++ {
			p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", f))
			fh, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(group)))
			w, err := pqarrow.NewFileWriter(schema, fh, props, pqarrow.DefaultWriterProps())
			if err != nil {
				t.Fatal(err)
			}
			bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for r := 0; r < rows; r++ {
				bld.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%06d", rng.Intn(rows*files/2)))
				if rng.Intn(20) == 0 {
					bld.Field(1).AppendNull()
				} else {
					bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", rng.Intn(100)))
				}
				bld.Field(2).(*array.Int64Builder).Append(int64(rng.Intn(1000)))
			}
			rec := bld.NewRecord()
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		return paths
	}
}

// InputsIn makes c's inputs objects: each file c.Inputs writes is stored in st under in/<c.Name>/
// and named by its URL, base + "/in/<c.Name>/<file>" (base: "s3://bucket", "gs://bucket", …).
func InputsIn(c Case, st storage.Store, base string) Case {
	local := c.Inputs
	c.Inputs = func(t testing.TB, dir string) []string {
		var urls []string
		for _, p := range local(t, dir) {
			key := "in/" + c.Name + "/" + filepath.Base(p)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(context.Background(), key, b, storage.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			urls = append(urls, base+"/"+key)
		}
		return urls
	}
	return c
}

// BucketLoad is a jobs.ExecuteOptions.LoadBucket.
type BucketLoad = func(ctx context.Context, spec *jobs.RunSpec, out *jobs.BucketStaging, work string) (*jobs.LoadResult, error)

// CompareIn is Compare for an output in a bucket of any store (s3, gs, azblob; its endpoint and
// credentials in the environment): c runs with jobs.Execute into <bucket>/<c.Name> as `hfload run --out
// s3://…` does, its objects are kept and removed, then it runs with load as ExecuteOptions.LoadBucket
// into the same prefix. It fails unless both runs left the same objects with the same bytes (HFiles,
// rejects, manifest), nothing else (no work files) and no incomplete upload.
func CompareIn(t *testing.T, c Case, bucket storage.Location, load func(job *jobs.Job) BucketLoad) *jobs.ExecuteResult {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	ins := c.Inputs(t, filepath.Join(dir, "in"))
	now := func() time.Time { return Started }
	st, err := storage.OpenBucket(ctx, storage.Location{Scheme: bucket.Scheme, Bucket: bucket.Bucket}, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := c.Name
	out := bucket.Scheme + "://" + bucket.Bucket + "/" + prefix
	tmp := t.TempDir() // the manifest records the job's tmp_dir: the same for both runs
	job := c.Job(t, ins, out)
	job.TmpDir = tmp
	if _, err := jobs.Execute(ctx, job, jobs.ExecuteOptions{Now: now}); err != nil {
		t.Fatalf("%s: hfload run --out %s: %v", c.Name, out, err)
	}
	want := objects(t, st, prefix)
	for k := range want {
		if err := st.Delete(ctx, prefix+"/"+k); err != nil {
			t.Fatal(err)
		}
	}
	job = c.Job(t, ins, out)
	job.TmpDir = tmp
	res, err := jobs.Execute(ctx, job, jobs.ExecuteOptions{Now: now, LoadBucket: load(job)})
	if err != nil {
		t.Fatalf("%s: distributed run --out %s: %v", c.Name, out, err)
	}
	got := objects(t, st, prefix)
	same(t, out+" (hfload run)", want, "(distributed)", got)
	if ups, err := st.Uploads(ctx, prefix+"/"); err != nil || len(ups) > 0 {
		t.Errorf("incomplete uploads left under %s: %v %v", out, ups, err)
	}
	return res
}

// objects reads every object under prefix/ into a map by key relative to prefix.
func objects(t testing.TB, st storage.Store, prefix string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	objs, err := st.List(ctx, prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range objs {
		r, err := st.Reader(ctx, o.Key, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(o.Key, prefix+"/")] = b
	}
	return out
}
