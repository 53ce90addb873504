package jobs

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// regionsServer serves GET /<table>/regions like HBase's REST server (TableInfoModel JSON, keys in
// base64) for regions with the given inner boundaries; other paths are 404 "Not found".
func regionsServer(t *testing.T, table string, splits ...string) *httptest.Server {
	t.Helper()
	bounds := append(append([]string{""}, splits...), "")
	var regions []string
	for i := 0; i+1 < len(bounds); i++ {
		regions = append(regions, fmt.Sprintf(`{"endKey":"%s","id":%d,"location":"rs%d:16020","name":"%s,%s,%d.x.","startKey":"%s"}`,
			base64.StdEncoding.EncodeToString([]byte(bounds[i+1])), 1700000000000+i, i, table, bounds[i], 1700000000000+i,
			base64.StdEncoding.EncodeToString([]byte(bounds[i]))))
	}
	body := fmt.Sprintf(`{"name":"%s","Region":[%s]}`, table, strings.Join(regions, ","))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+table+"/regions" {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "Not found\r\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunSplitsFromRESTServer(t *testing.T) {
	srv := regionsServer(t, "ns1:t", "4", "8", "c")
	dir := t.TempDir()
	rows := e2eRows(2000, 7)
	in := filepath.Join(dir, "in.csv")
	writeCSV(t, in, rows)
	out := filepath.Join(dir, "out")
	job := baseJob(in, out)
	job.Table = "ns1:t"
	if err := job.Set("splits_from", srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), job, ExecuteOptions{Verify: VerifyStream})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	got := readOutput(t, out, m) // checks every file lies inside its region
	want := expectedCells(rows)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%d cells, want %d (or contents differ)", len(got), len(want))
	}
	// Exactly the served regions have files (hex keys fill all four).
	ranges := map[string]bool{}
	for _, f := range m.Files {
		ranges[fmt.Sprintf("[%s,%s)", f.RegionStart, f.RegionEnd)] = true
	}
	var gotRanges []string
	for r := range ranges {
		gotRanges = append(gotRanges, r)
	}
	sort.Strings(gotRanges)
	if w := "[,4) [4,8) [8,c) [c,)"; strings.Join(gotRanges, " ") != w {
		t.Fatalf("file regions %v, want %s", gotRanges, w)
	}
}

func TestSplitsFromValidation(t *testing.T) {
	base := func() *Job {
		return &Job{Input: []string{"a.csv"}, Table: "t", Out: "o", Columns: "HBASE_ROW_KEY,d:a"}
	}
	for _, tc := range []struct {
		name string
		mod  func(j *Job)
		want string
	}{
		{"with splits", func(j *Job) { j.SplitsFrom = "http://h:8080"; j.Splits = "s.txt" }, "splits, splits_from: give at most one"},
		{"with sample", func(j *Job) { j.SplitsFrom = "http://h:8080"; j.SplitSample = 4 }, "splits_from, split_sample: give at most one"},
		{"no table", func(j *Job) { j.SplitsFrom = "http://h:8080"; j.Table = "" }, "splits_from: needs table"},
		{"bad url", func(j *Job) { j.SplitsFrom = "h:8080" }, "splits_from: REST server URL"},
	} {
		j := base()
		tc.mod(j)
		err := j.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	j := base()
	j.SplitsFrom = "https://rest.example.com:8443/gateway/hbase/"
	if err := j.Validate(); err != nil {
		t.Fatalf("valid https URL: %v", err)
	}
}

func TestSplitsFromErrorsAndExitCodes(t *testing.T) {
	srv := regionsServer(t, "t", "m")
	j := &Job{Table: "other", SplitsFrom: srv.URL}
	_, err := j.SplitPoints()
	if !errors.Is(err, ErrConfig) || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "table not found") {
		t.Fatalf("missing table: %v (exit %d)", err, ExitCode(err))
	}
	j.Table = "t"
	s, err := j.SplitPoints()
	if err != nil || len(s) != 1 || string(s[0]) != "m" {
		t.Fatalf("splits %q, err %v", s, err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	j.SplitsFrom = downURL
	_, err = j.SplitPoints()
	if !errors.Is(err, ErrIO) || ExitCode(err) != ExitIO {
		t.Fatalf("unreachable server: %v (exit %d), want ErrIO", err, ExitCode(err))
	}
}

// TestSplitsFromCancelled: cancelling the run's context ends a hanging splits_from request at once
// instead of after the 30 s request timeout.
func TestSplitsFromCancelled(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("id,name,amount\na,b,1\n"), 0o644)
	job := baseJob(in, filepath.Join(dir, "out"))
	job.SplitsFrom = srv.URL
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Execute(ctx, job, ExecuteOptions{})
	if err == nil {
		t.Fatal("a run whose splits_from request was cancelled succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancelled run returned after %v", d)
	}
}
