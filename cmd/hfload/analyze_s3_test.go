package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 20: `hfload analyze` reads s3:// inputs (a prefix of CSV .gz/.zst objects, a Parquet object read
// by ranges) and reports exactly what it reports for the same files on local disk, including the
// duplicates confirmed by a second read of the objects. A missing bucket or object exits 3 naming it.
func TestAnalyzeFromS3MatchesLocal(t *testing.T) {
	srv := gw.Need(t)
	dir := t.TempDir()
	bucket := s3Inputs(t, srv, dir)
	job := filepath.Join(dir, "analyze.yaml")
	// customer_id as the row key repeats: the report has duplicates, confirmed by a second pass.
	os.WriteFile(job, []byte(strings.Replace(s3OrdersMapping, "rowkey: [order_id]", "rowkey: [customer_id]", 1)), 0o644)
	for _, c := range []struct{ name, local, remote string }{
		{"csv", filepath.Join(dir, "in"), "s3://" + bucket + "/in/"},
		{"parquet", filepath.Join(dir, "pq", "orders.parquet"), "s3://" + bucket + "/pq/orders.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, local, stderr := hfload(t, "analyze", job, "--json", "--input", c.local)
			if code != 0 {
				t.Fatalf("local: exit %d: %s", code, stderr)
			}
			code, remote, stderr := hfload(t, "analyze", job, "--json", "--input", c.remote)
			if code != 0 {
				t.Fatalf("bucket: exit %d: %s", code, stderr)
			}
			if stderr != "" {
				t.Errorf("bucket: stderr %q", stderr)
			}
			if !strings.Contains(remote, `"confirmed": true`) {
				t.Errorf("no confirmed duplicates in the report: %.400s", remote)
			}
			// The reject examples name their source: the same file, local or in the bucket.
			local = strings.ReplaceAll(local, filepath.Join(dir, "in")+"/", "s3://"+bucket+"/in/")
			if local != remote {
				t.Fatalf("reports differ:\nlocal  %.600s\nbucket %.600s", local, remote)
			}
		})
	}
	for _, c := range []struct{ input, want string }{
		{"s3://nobucket-" + bucket + "/in/", "the bucket does not exist"},
		{"s3://" + bucket + "/in/missing.csv.gz", "s3://" + bucket + "/in/missing.csv.gz: no such object"},
	} {
		if code, _, stderr := hfload(t, "analyze", job, "--input", c.input); code != 3 || !strings.Contains(stderr, c.want) {
			t.Errorf("analyze --input %s: exit %d: %s", c.input, code, stderr)
		}
	}
}
