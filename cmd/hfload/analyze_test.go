package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/gen"
	"github.com/hfload/hfload/jobs"
)

const analyzeOrdersColumns = "HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment"

// runAnalyzeCmd runs `hfload analyze args...` through the root command and returns stdout and the error.
func runAnalyzeCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"analyze"}, args...))
	err := root.Execute()
	return out.String(), err
}

func writeOrders(t *testing.T, dir string, rows int64) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Dataset: "orders", Rows: rows, Seed: 1, Header: true}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnalyzeCommandJSON(t *testing.T) {
	dir := t.TempDir()
	in := writeOrders(t, dir, 2000)
	html := filepath.Join(dir, "report.html")
	out, err := runAnalyzeCmd(t, "--input", in, "--header", "--columns", analyzeOrdersColumns,
		"--timestamp", "1700000000000", "--split-sample", "4", "--json", "--html", html)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	for _, k := range []string{"rows", "cells", "duplicates", "regions", "sizes", "suggested_splits", "warnings", "input"} {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON lacks top-level key %q", k)
		}
	}
	var rep struct {
		Rows            int64    `json:"rows"`
		SuggestedSplits []string `json:"suggested_splits"`
		Warnings        []struct {
			Code string `json:"code"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 2000 || len(rep.SuggestedSplits) != 3 || len(rep.Warnings) == 0 || rep.Warnings[0].Code != "monotonic_lead" {
		t.Errorf("rows %d, splits %v, warnings %+v", rep.Rows, rep.SuggestedSplits, rep.Warnings)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.Contains(page, []byte("monotonic_lead")) {
		t.Errorf("HTML report: %.200s", page)
	}
}

func TestAnalyzeCommandTextAndJobFile(t *testing.T) {
	dir := t.TempDir()
	in := writeOrders(t, dir, 3000)
	job := filepath.Join(dir, "orders.yaml")
	yaml := "input: " + in + "\nheader: true\ncolumns: " + analyzeOrdersColumns + "\ntable: orders\ntimestamp: 1700000000000\n"
	if err := os.WriteFile(job, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runAnalyzeCmd(t, job, "--sample", "500", "--regions", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"input: 1 file(s), 500 rows read, 0 rejected",
		"SAMPLE: stopped after the first 500 rows",
		"rows 500, cells ",
		"suggested split points for 2 regions (1):",
		"create 'orders', 'd', SPLITS => [",
		"[monotonic_lead]",
		"[sample] only the first 500 rows",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	// No output directory was needed, none was written.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("analyze wrote files: %v", entries)
	}
}

func TestAnalyzeCommandExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("k1,v\nk2,v,extra,fields\nk3,v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Rejected rows are reported, not fatal...
	out, err := runAnalyzeCmd(t, "--input", bad, "--columns", "HBASE_ROW_KEY,d:v", "--timestamp", "1")
	if err != nil || !strings.Contains(out, "3 rows read, 1 rejected") || !strings.Contains(out, "[rejected_rows]") {
		t.Errorf("rejects: %v\n%s", err, out)
	}
	// ...unless the job sets a limit: exit 2 as for run.
	_, err = runAnalyzeCmd(t, "--input", bad, "--columns", "HBASE_ROW_KEY,d:v", "--max-rejects", "0", "--set", "max_rejects=0")
	if err != nil {
		t.Errorf("max_rejects 0 means unset for analyze: %v", err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--input", bad}, jobs.ExitUsage}, // no mapping
		{[]string{"--input", bad, "--columns", "HBASE_ROW_KEY,d:v", "--max-rejects", "0", "--sample", "-3"}, jobs.ExitUsage},
		{[]string{"--input", bad, "--columns", "HBASE_ROW_KEY,d:v", "--max-rejects", "1", "--split-uniform", "4"}, jobs.ExitOK},
		{[]string{"--input", filepath.Join(dir, "missing.csv"), "--columns", "HBASE_ROW_KEY,d:v"}, jobs.ExitUsage},
	} {
		_, err := runAnalyzeCmd(t, c.args...)
		if got := jobs.ExitCode(err); got != c.code {
			t.Errorf("analyze %v: exit %d (%v), want %d", c.args, got, err, c.code)
		}
	}
	many := filepath.Join(dir, "many.csv")
	if err := os.WriteFile(many, []byte("k1,v,x\nk2,v,y\nk3,v,z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runAnalyzeCmd(t, "--input", many, "--columns", "HBASE_ROW_KEY,d:v", "--max-rejects", "2")
	if got := jobs.ExitCode(err); got != jobs.ExitRejects {
		t.Errorf("3 bad rows over --max-rejects 2: exit %d (%v), want %d", got, err, jobs.ExitRejects)
	}
}
