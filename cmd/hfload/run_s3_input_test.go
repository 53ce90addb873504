package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/gen"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/internal/storage/s3test"
	"github.com/hfload/hfload/jobs"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// s3Inputs writes the same small export three ways (CSV .gz, CSV .zst, Parquet with several row
// groups) into dir/in and into bucket/in/, with a _SUCCESS marker in both.
func s3Inputs(t *testing.T, srv *s3test.Server, dir string) (bucket string) {
	t.Helper()
	ctx := context.Background()
	srv.Setenv(t) // inherited by the hfload child processes
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.NewS3(ctx, bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	putInputs(t, st, dir)
	return bucket
}

// putInputs writes the test exports (CSV .gz/.zst with a rejected row under in/, Parquet under pq/)
// into dir and into st under the same names.
func putInputs(t *testing.T, st storage.Store, dir string) {
	t.Helper()
	ctx := context.Background()
	files := map[string][]byte{"_SUCCESS": nil}
	var header string
	for i, name := range []string{"part-0.csv.gz", "part-1.csv.zst"} {
		var csv bytes.Buffer
		if _, err := gen.Write(&csv, gen.Options{Dataset: "orders", TargetBytes: 600 << 10, Seed: uint64(11 + i), Header: true}); err != nil {
			t.Fatal(err)
		}
		header, _, _ = strings.Cut(csv.String(), "\n")
		var z bytes.Buffer
		if strings.HasSuffix(name, ".gz") {
			zw := gzip.NewWriter(&z)
			zw.Write(csv.Bytes())
			zw.Close()
		} else {
			zw, _ := zstd.NewWriter(&z)
			zw.Write(csv.Bytes())
			zw.Close()
		}
		files[name] = z.Bytes()
	}
	// A third CSV whose second row is short of fields: a rejected row, so that the rejects file is
	// written too.
	var bad bytes.Buffer
	zw := gzip.NewWriter(&bad)
	zw.Write([]byte(header + "\n9000002\n"))
	zw.Close()
	files["part-2.csv.gz"] = bad.Bytes()
	var pq bytes.Buffer
	if _, err := gen.Write(&pq, gen.Options{Dataset: "orders", Rows: 12000, Seed: 13, Format: "parquet", RowGroupRows: 3000}); err != nil {
		t.Fatal(err)
	}
	files["orders.parquet"] = pq.Bytes()
	for name, data := range files {
		sub := "in"
		if strings.HasSuffix(name, ".parquet") {
			sub = "pq"
		}
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
		if err := os.WriteFile(filepath.Join(dir, sub, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, sub+"/"+name, data, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

const s3OrdersMapping = `header: true
table: orders
timestamp: 1700000000000
split_sample: 3
duplicates: last
max_rejects: -1
mapping:
  columns:
    - {name: order_id}
    - {name: customer_id, type: long, cell: "d:c"}
    - {name: status, cell: "d:s"}
    - {name: unit_price, cell: "d:p"}
  rowkey: [order_id]
`

// Issue 20: CSV (.gz, .zst) and Parquet read from a bucket give byte-identical HFiles, and the
// manifest the same input sizes and checksums, as the same files read from local disk.
func TestRunInputFromS3MatchesLocal(t *testing.T) {
	srv := gw.Need(t)
	dir := t.TempDir()
	bucket := s3Inputs(t, srv, dir)
	for _, c := range []struct{ name, local, remote string }{
		{"csv-dir", filepath.Join(dir, "in"), "s3://" + bucket + "/in/"},
		{"csv-glob", filepath.Join(dir, "in", "part-*"), "s3://" + bucket + "/in/part-*"},
		{"parquet", filepath.Join(dir, "pq", "orders.parquet"), "s3://" + bucket + "/pq/orders.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := filepath.Join(dir, c.name+".yaml")
			os.WriteFile(job, []byte(s3OrdersMapping), 0o644)
			outL, outR := filepath.Join(dir, c.name+"-local"), filepath.Join(dir, c.name+"-remote")
			if code, _, stderr := hfload(t, "run", job, "--no-progress", "--input", c.local, "--out", outL); code != 0 {
				t.Fatalf("local run: exit %d: %s", code, stderr)
			}
			if code, _, stderr := hfload(t, "run", job, "--no-progress", "--input", c.remote, "--out", outR); code != 0 {
				t.Fatalf("remote run: exit %d: %s", code, stderr)
			}
			l, r := hfileSums(t, outL), hfileSums(t, outR)
			if len(l) == 0 || strings.Join(l, "\n") != strings.Join(r, "\n") {
				t.Fatalf("HFiles differ:\nlocal  %v\nremote %v", l, r)
			}
			ml, mr := readManifest(t, outL), readManifest(t, outR)
			if len(ml.Inputs) != len(mr.Inputs) || ml.Counts != mr.Counts {
				t.Fatalf("manifests differ: %+v / %+v", ml.Counts, mr.Counts)
			}
			for i := range ml.Inputs {
				a, b := ml.Inputs[i], mr.Inputs[i]
				if a.Size != b.Size || a.Checksum != b.Checksum || a.Checksum == "" || !strings.HasPrefix(b.Path, "s3://"+bucket+"/") {
					t.Fatalf("input %d: local %+v, remote %+v", i, a, b)
				}
			}
		})
	}
}

// Issue 20: a missing bucket, wrong credentials and a glob that matches nothing are clear errors that
// name the object; storage failures exit 3; no secret is printed.
func TestRunInputFromS3Errors(t *testing.T) {
	srv := gw.Need(t)
	dir := t.TempDir()
	bucket := s3Inputs(t, srv, dir)
	job := filepath.Join(dir, "j.yaml")
	os.WriteFile(job, []byte(s3OrdersMapping), 0o644)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name, input string
		env         []string
		code        int
		want        string
	}{
		{"missing-bucket", "s3://no-such-bucket-x/in/", nil, 3, "s3://no-such-bucket-x/in/: the bucket does not exist"},
		{"wrong-secret", "s3://" + bucket + "/in/", []string{"AWS_SECRET_ACCESS_KEY=wrong-secret-91c"}, 3, "the server rejected the credentials"},
		{"no-match", "s3://" + bucket + "/in/*.tsv", nil, 1, `matches no objects`},
		{"hdfs", "hdfs://nn/x.csv", nil, 1, "HDFS is not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			code, stdout, stderr := hfload(t, "run", job, "--no-progress", "--input", c.input, "--out", out)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr: %s", code, c.code, stderr)
			}
			t.Log(strings.TrimSpace(stderr))
			for _, secret := range []string{srv.SecretKey, "wrong-secret-91c"} {
				if strings.Contains(stdout+stderr, secret) {
					t.Fatal("a secret was printed")
				}
			}
		})
	}
}

// hfileSums lists "<family>/<file> <sha256>" of every HFile under out, sorted.
func hfileSums(t *testing.T, out string) []string {
	t.Helper()
	var sums []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		if d.IsDir() || !strings.Contains(rel, string(filepath.Separator)) || strings.HasPrefix(rel, ".") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		sums = append(sums, filepath.ToSlash(rel)+" "+hex.EncodeToString(h[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(sums)
	return sums
}

func readManifest(t *testing.T, out string) *jobs.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, jobs.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m jobs.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// Issue 20: an incremental job over a bucket (state_dir local): the second run has nothing to do, a
// new object is loaded by the third, and a changed one exits 5.
func TestRunIncrementalFromS3(t *testing.T) {
	srv := gw.Need(t)
	ctx := context.Background()
	srv.Setenv(t)
	dir := t.TempDir()
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.NewS3(ctx, bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	put := func(key, text string) {
		var z bytes.Buffer
		zw, _ := zstd.NewWriter(&z)
		zw.Write([]byte(text))
		zw.Close()
		if err := st.Put(ctx, key, z.Bytes(), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("in/a.csv.zst", "id,name,ts\n1,a,10\n2,b,20\n")
	job := filepath.Join(dir, "inc.yaml")
	os.WriteFile(job, []byte(`input: ["s3://`+bucket+`/in/*.csv.zst"]
header: true
table: t
out: `+filepath.Join(dir, "out")+`
state_dir: `+filepath.Join(dir, "state")+`
incremental: {watermark: ts, watermark_type: number}
columns: HBASE_ROW_KEY,d:name,d:ts
`), 0o644)
	if code, _, errOut := hfload(t, "run", job, "--no-progress"); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if code, out, errOut := hfload(t, "run", job, "--no-progress"); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("rerun: %d %q %s", code, out, errOut)
	}
	put("in/b.csv.zst", "id,name,ts\n3,c,30\n")
	if code, out, errOut := hfload(t, "run", job, "--no-progress", "--json"); code != 0 || !strings.Contains(out, "b.csv.zst") || strings.Contains(out, "a.csv.zst") {
		t.Fatalf("new object: %d %q %s", code, out, errOut)
	}
	put("in/a.csv.zst", "id,name,ts\n1,a,10\n2,b,21\n")
	if code, _, errOut := hfload(t, "run", job, "--no-progress"); code != 5 || !strings.Contains(errOut, "--reload") {
		t.Fatalf("changed object: %d %s", code, errOut)
	}
}
