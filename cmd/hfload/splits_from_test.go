package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRunSplitsFromFlag checks that --splits-from reaches the job: the run reads the table's regions
// from a fake HBase REST server and writes one file per served region.
func TestRunSplitsFromFlag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ns1:t/regions" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "Not found\r\n")
			return
		}
		b64 := base64.StdEncoding.EncodeToString
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":"ns1:t","Region":[`+
			`{"endKey":"%s","id":1,"location":"h:1","name":"ns1:t,,1.a.","startKey":""},`+
			`{"endKey":"","id":2,"location":"h:1","name":"ns1:t,m,2.b.","startKey":"%s"}]}`, b64([]byte("m")), b64([]byte("m")))
	}))
	defer srv.Close()

	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("id,name\na,1\nk,2\nm,3\nz,4\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := hfload(t, "run", "--input", in, "--header", "--columns", "HBASE_ROW_KEY,d:name",
		"--table", "ns1:t", "--out", out, "--splits-from", srv.URL, "--no-progress", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files []struct {
			RegionStart string `json:"region_start"`
			RegionEnd   string `json:"region_end"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Files {
		got = append(got, "["+f.RegionStart+","+f.RegionEnd+")")
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "[,m) [m,)" {
		t.Fatalf("file regions %v, want [,m) [m,)", got)
	}

	// A table the server does not know: a configuration error (exit 1) naming the cause.
	code, _, stderr = hfload(t, "run", "--input", in, "--header", "--columns", "HBASE_ROW_KEY,d:name",
		"--table", "other", "--out", filepath.Join(dir, "out2"), "--splits-from", srv.URL, "--no-progress")
	if code != 1 || !strings.Contains(stderr, "table not found") {
		t.Fatalf("unknown table: exit %d, stderr %q", code, stderr)
	}
}
